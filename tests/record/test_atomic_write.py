"""The one atomic writer: whole files or none, never a shared temporary file, no copies elsewhere."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from mafialab.record import atomic_path, write_atomic

SRC = Path(__file__).resolve().parents[2] / "src" / "mafialab"


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path):
    target = tmp_path / "points.jsonl"
    write_atomic(target, "old\n")
    with pytest.raises(RuntimeError, match="killed"), atomic_path(target) as tmp:
        tmp.write_text("half of the new", encoding="utf-8")
        raise RuntimeError("killed")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["points.jsonl"]
    write_atomic(target, b"\xe2\x9c\x93 bytes\n")
    assert target.read_text(encoding="utf-8") == "\u2713 bytes\n"
    write_atomic(tmp_path / "new" / "deep.txt", "made")  # the folder is made
    assert (tmp_path / "new" / "deep.txt").read_text(encoding="utf-8") == "made"


def test_a_folder_is_refused_before_anything_is_written(tmp_path: Path):
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path, "x")
    assert list(tmp_path.iterdir()) == []


def test_writers_of_one_file_at_once_never_mix_or_fail(tmp_path: Path):
    target = tmp_path / "index.js"
    texts = [f"writer {i}: " + str(i) * 20_000 + "\n" for i in range(8)]
    errors: list[BaseException] = []

    def write(text: str) -> None:
        try:
            for _ in range(20):
                write_atomic(target, text)
        except BaseException as err:  # a shared temporary name fails here
            errors.append(err)

    threads = [threading.Thread(target=write, args=(t,)) for t in texts]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert target.read_text(encoding="utf-8") in texts  # one writer's whole text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.js"]


def test_no_module_replaces_files_by_itself():
    """Temporary-file-then-rename lives in ``mafialab._files`` alone (directories may be renamed)."""
    pattern = re.compile(r"\bos\.replace\(|\btmp\w*\.replace\(|\.with_suffix\(\"[^\"]*\.(tmp|part)\"\)")
    found = [
        f"{path.relative_to(SRC)}:{n}"
        for path in SRC.rglob("*.py")
        if path.name != "_files.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
