"""The ``mafialab`` command line: parses and prints; the work lives in the library."""

import sys

from mafialab.cli import (  # noqa: F401  (registers commands)
    _beliefshift,
    _bifurcate,
    _export,
    _import,
    _judge,
    _models,
    _play,
    _report,
    _rules,
    _season,
    _view,
)
from mafialab.cli._app import app, err_console


def main() -> None:
    """Console-script entry point.

    A file-system error that reaches this point (an output directory that is read-only or
    is a file, a full disk) is printed as ``error: PATH: reason`` and exits with code 2
    instead of a traceback; what was written before it stays on disk.
    """
    try:
        app()
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        why = err.strerror or str(err)
        err_console.print(f"[bold red]error:[/] {where}{why}", highlight=False, markup=True)
        sys.exit(2)


__all__ = ["app", "main"]
