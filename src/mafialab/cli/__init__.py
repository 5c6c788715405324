"""The ``mafialab`` command line: parses and prints; the work lives in the library."""

import sys

from rich.markup import escape

from mafialab.cli import (
    _beliefshift,
    _bifurcate,
    _bus,
    _export,
    _fork,
    _import,
    _judge,
    _models,
    _play,
    _report,
    _retest,
    _rules,
    _season,
    _view,
)
from mafialab.cli._app import app, err_console

# The command tree, registered here and nowhere else, in the order `mafialab --help` lists it.
# A command module defines its functions (or its own sub-app) and does no registering.
app.command("play")(_play.play)
app.add_typer(_rules.rules_app, name="rules")
app.add_typer(_models.models_app, name="models")
app.command("report")(_report.report)
app.command("view")(_view.view)
app.add_typer(_export.export_app, name="export")
app.add_typer(_import.import_app, name="import")
app.command("judge")(_judge.judge)
app.add_typer(_season.season_app, name="season")
app.add_typer(_beliefshift.bs_app, name="beliefshift")
app.add_typer(_fork.fork_app, name="fork")
app.add_typer(_bifurcate.bifurcate_app, name="bifurcate")
app.command("retest")(_retest.retest)
app.add_typer(_bus.bus_app, name="bus")


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
        err_console.print(f"[bold red]error:[/] {escape(where + str(why))}", highlight=False, markup=True)
        sys.exit(2)


__all__ = ["app", "main"]
