"""The ``mafialab`` Typer application and shared CLI helpers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

app = typer.Typer(
    name="mafialab",
    help="mafialab: play, probe, measure and view Mafia-family games between LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
console = Console()
err_console = Console(stderr=True)


def _print_version(value: bool) -> None:
    if value:
        from mafialab import __version__

        console.print(f"mafialab {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the mafialab version and exit."
    ),
) -> None:
    """mafialab: play, probe, measure and view Mafia-family games between LLM agents."""


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``code`` (no traceback).

    ``message`` is plain text: square brackets in it (``mafialab[embedded]``, a path, model
    text) are printed as they are, never read as Rich markup.
    """
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    raise typer.Exit(code)


def progress_bar() -> Progress:
    """The progress bar every long-running command shows (description, bar, n/total, elapsed)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


# ------------------------------------------------ output paths, checked before any work
def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (``.`` for a relative path with none)."""
    p = path
    while not p.exists() and not p.is_symlink():
        if p.parent == p:
            break
        p = p.parent
    return p


def _check_writable_place(path: Path, option: str, what: str) -> None:
    """Fail unless every existing ancestor of ``path`` is a folder, the closest one writable."""
    base = _nearest_existing(path.parent if path.parent != path else path)
    if base.exists() and not base.is_dir():
        fail(f"{option}: {path} cannot be created: {base} is a file, not a folder")
    if base.exists() and not os.access(base, os.W_OK | os.X_OK):
        fail(f"{option}: cannot write {what} {path}: {base} is not writable (permissions or a read-only disk)")


def check_out_dir(path: Path, option: str = "--out") -> Path:
    """Check that ``path`` can be the folder a command writes into (created when missing).

    Args:
        path: The folder given on the command line.
        option: The option's name, for the message (``--out``, ``--plots``).

    Returns:
        ``path``, unchanged.

    Raises:
        typer.Exit: (through :func:`fail`, code 2) ``path`` is a file, an
            ancestor of it is a file, or the folder (or the closest existing ancestor) is not
            writable.
    """
    if path.exists() and not path.is_dir():
        fail(f"{option}: {path} is a file; give a folder (it is created when missing)")
    if path.is_dir():
        if not os.access(path, os.W_OK | os.X_OK):
            fail(f"{option}: cannot write into the folder {path}: it is not writable (permissions or a read-only disk)")
        return path
    _check_writable_place(path, option, "the folder")
    return path


def check_out_file(path: Path, option: str = "--out") -> Path:
    """Check that ``path`` can be the file a command writes (its folder created when missing).

    Args:
        path: The file given on the command line.
        option: The option's name, for the message.

    Returns:
        ``path``, unchanged.

    Raises:
        typer.Exit: (through :func:`fail`, code 2) ``path`` is a folder, an
            ancestor of it is a file, or the file (or the closest existing folder above it) is
            not writable.
    """
    if path.is_dir():
        fail(f"{option}: {path} is a folder; give a file name (e.g. {path / 'out.jsonl'})")
    if path.exists():
        if not os.access(path, os.W_OK):
            fail(f"{option}: cannot write the file {path}: it is not writable (permissions or a read-only disk)")
        return path
    _check_writable_place(path, option, "the file")
    return path


def os_error_message(err: OSError, option: str = "--out") -> str:
    """An ``OSError`` raised while writing, as ``OPTION: PATH: reason`` (no ``[Errno N]``)."""
    where = f"{err.filename}: " if err.filename else ""
    return f"{option}: {where}{err.strerror or err}"


def ray_option(work: str, where: str) -> Any:
    """The ``--ray auto|local|ADDRESS`` option of a command that fans ``work`` out as Ray tasks.

    Args:
        work: What runs as tasks, as the help's first words (``"Play the games"``).
        where: Where the results land (``"the logs land in OUT as in a local run"``).
    """
    return typer.Option(
        None,
        "--ray",
        help=f"{work} as Ray tasks: auto (an existing cluster), local (one started for the run) or a cluster "
        f"ADDRESS; {where}. Needs mafialab\\[ray].",
    )


RAY_SEATS = "--ray: remote and human seats are served by this process; play them without --ray"
"""Why a remote or human seat cannot go with ``--ray`` (no worker serves the agent API)."""


def refuse_seats_on_ray(ray: str | None, specs: list[str]) -> None:
    """Fail (code 2) when ``ray`` is given and one of the agent ``specs`` is a remote or human seat."""
    from mafialab.remote import is_seat_spec

    if ray is not None and any(is_seat_spec(sp) for sp in specs):
        fail(RAY_SEATS)
