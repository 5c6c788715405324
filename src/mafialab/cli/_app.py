"""The ``mafialab`` Typer application and shared CLI helpers."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console

app = typer.Typer(
    name="mafialab",
    help="mafialab: play, probe, measure and view Mafia-family games between LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``code`` (no traceback)."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, markup=True)
    raise typer.Exit(code)
