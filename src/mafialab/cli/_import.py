"""``mafialab import``: convert logs of other tools into mafialab logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from mafialab.cli._app import console, count, err_console, fail, os_error_message, output_option_for, progress_bar
from mafialab.cli._options import InPath, OutDir, checked
from mafialab.record import LogFormatError, import_kaggle, import_mafiascope

import_app = typer.Typer(
    help="Import logs of other tools (MafiaScope, Kaggle Game Arena Werewolf) or a Hugging Face dataset folder as"
    " mafialab logs.",
    no_args_is_help=True,
)


def _import_failed(err: OSError) -> NoReturn:
    """Fail naming the option of the output path ``err`` concerns, else ``SRC``."""
    option = output_option_for(err.filename)
    if option is not None:  # creating or writing the output (a disk that fills up, a folder taken away)
        fail(os_error_message(err, option))
    fail(os_error_message(err, "SRC") if err.filename else f"SRC: {err}")


@import_app.command("mafiascope")
@checked
def import_mafiascope_cmd(
    src: Path = typer.Argument(
        ..., help="MafiaScope logs directory, corpus directory, one game directory, or a bifurcation directory."
    ),
    out: Annotated[Path, OutDir(inputs=["src"])] = typer.Option(
        ..., "--out", "-o", help="Directory to write mafialab game directories into."
    ),
) -> None:
    """Convert MafiaScope game directories (game.jsonl, introspection.jsonl, state.jsonl).

    A bifurcation directory (points.json, fork_results.jsonl, optional summary.json,
    forks/<id>/game.jsonl) becomes a mafialab bifurcation directory for `bifurcate report`.

    Unreadable lines are reported as FILE:LINE and skipped; the exit code is 0 when every
    game was written (even with skipped lines) and 1 when a game could not be imported.
    """
    try:
        with progress_bar() as bar:
            task = bar.add_task("games imported", total=None)
            rep = import_mafiascope(src, out, on_game=lambda done, n: bar.update(task, completed=done, total=n))
    except OSError as err:
        _import_failed(err)
    except ValueError as err:
        fail(f"SRC: {err}")
    t = Table("game", "rules", "events", "probes", "snapshots", "failed turns", "foreign", "finished")
    for g in rep.games:
        t.add_row(
            g.game_id[:8],
            g.rules_id or "-",
            str(g.events),
            str(g.probes),
            str(g.snapshots),
            str(g.failed_turns),
            str(g.foreign),
            "yes" if g.finished else "[yellow]no[/]",
        )
    console.print(t)
    for p in rep.problems:
        err_console.print(f"[yellow]skipped:[/] {escape(str(p))}", highlight=False, markup=True, soft_wrap=True)
    if rep.bifurcation is not None:
        console.print(
            f"bifurcation: {count(rep.points, 'point')}, {count(rep.forks, 'fork outcome')} "
            f"written to {rep.bifurcation}"
        )
    console.print(f"imported {len(rep.imported)} of {count(len(rep.games), 'game')} into {escape(str(out))}")
    if len(rep.imported) < len(rep.games):
        raise typer.Exit(1)


@import_app.command("kaggle")
@checked
def import_kaggle_cmd(
    src: Path = typer.Argument(
        ..., help="A Kaggle Werewolf replay (.json) or a folder of them (searched recursively)."
    ),
    out: Annotated[Path, OutDir(inputs=["src"])] = typer.Option(
        ..., "--out", "-o", help="Directory to write mafialab game directories into."
    ),
) -> None:
    """Convert Kaggle Game Arena Werewolf replays (kaggle-environments 1.33.2) into mafialab logs.

    Each replay becomes OUT/<episode id>/game.jsonl (and calls.jsonl where the replay records token
    usage or cost), under its kaggle-werewolf* rule set. A game already imported into OUT is
    skipped, so an interrupted import resumes where it stopped. The exit code is 1 when a replay
    could not be imported. See docs/import-kaggle.md.
    """
    try:
        with progress_bar() as bar:
            task = bar.add_task("replays imported", total=None)
            rep = import_kaggle(src, out, on_game=lambda done, n: bar.update(task, completed=done, total=n))
    except OSError as err:
        _import_failed(err)
    rules = sorted({g.rules_id for g in rep.games if g.rules_id})
    skipped = [p for p in rep.problems if p.endswith("; skipped")]
    for p in rep.problems:
        if not p.endswith("; skipped"):
            err_console.print(
                f"[yellow]not imported:[/] {escape(str(p))}", highlight=False, markup=True, soft_wrap=True
            )
    console.print(
        f"imported {len(rep.imported) - len(skipped)} of {count(len(rep.games), 'replay')} into {escape(str(out))}"
        + (f" ({len(skipped)} already there, skipped)" if skipped else "")
        + (f"; rule sets: {', '.join(rules)}" if rules else "")
    )
    if len(rep.imported) < len(rep.games):
        raise typer.Exit(1)


@import_app.command("hf")
@checked
def import_hf_cmd(
    src: Annotated[Path, InPath("a dataset folder of `mafialab export hf`", kind="folder")] = typer.Argument(
        ..., help="A dataset folder written by `mafialab export hf`."
    ),
    out: Annotated[Path, OutDir(inputs=["src"])] = typer.Option(
        ..., "--out", "-o", help="Directory to write the game folders into."
    ),
) -> None:
    """Turn a Hugging Face dataset folder of `mafialab export hf` back into game logs (docs/export.md).

    Each game goes to its folder under OUT as it was under the exported directory, and each
    belief-shift benchmark file to its path; an existing game folder or file is never overwritten.
    """
    from mafialab.analysis import import_hf
    from mafialab.beliefshift import BeliefShiftFormatError, restore_benches

    try:
        with progress_bar() as bar:
            task = bar.add_task("games written", total=None)
            games = import_hf(src, out, on_game=lambda done, n: bar.update(task, completed=done, total=n))
        benches = restore_benches(src, out)
    except FileExistsError as err:
        fail(f"--out: {err}")
    except FileNotFoundError as err:
        fail(f"SRC: {err}")
    except OSError as err:
        option = output_option_for(err.filename)
        fail(os_error_message(err, option) if option is not None else f"SRC: {err}")
    except (LogFormatError, BeliefShiftFormatError) as err:
        fail(f"SRC: {err}")
    more = f" and {count(len(benches), 'benchmark file')}" if benches else ""
    console.print(f"imported {count(len(games), 'game')}{more} into {escape(str(out))}")
