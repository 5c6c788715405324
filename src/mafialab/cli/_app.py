"""The ``mafialab`` Typer application and shared CLI helpers."""

from __future__ import annotations

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
