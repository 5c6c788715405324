"""Files written all at once: the one atomic writer (a temporary file beside the target, fsync, rename).

Every file mafialab replaces whole (a rewritten points file, a season's index, a benchmark
file, the viewer's ``index.js``, a game's files from a Ray worker, assembled model weights)
goes through :func:`atomic_path` or :func:`write_atomic`, so a reader or a run killed part-way
sees the old file or the new one, never a mix. Below every layer: no mafialab imports.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (a no-op where folders cannot be opened, e.g. Windows)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_path(path: Path | str) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one rename.

    The caller writes the temporary file (by any means: a writer, a library that takes a
    path). When the block ends without an exception the file is fsynced, renamed over
    ``path`` and the folder fsynced; on an exception the temporary file is removed and
    ``path`` is left as it was. Each call gets its own temporary name, so two writers of one
    path never share a temporary file (the last rename wins). A block that writes nothing
    leaves an empty ``path``.

    Args:
        path: The file to replace (its folder is created if missing).

    Yields:
        The temporary file's path (``.<name>.<random>.tmp`` in the same folder).

    Raises:
        IsADirectoryError: ``path`` is a folder (checked before the block runs).
        OSError: The file cannot be written or renamed (``path`` is unchanged).
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(21, "is a directory, not a file", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with tmp.open("rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_atomic(path: Path | str, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8) all at once (:func:`atomic_path`).

    Raises:
        IsADirectoryError: ``path`` is a folder.
        OSError: The file cannot be written (``path`` is unchanged).
    """
    with atomic_path(path) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
