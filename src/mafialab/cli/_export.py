"""``mafialab export``: game logs as tables (Parquet) and belief edges (temporal graph)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape

from mafialab.cli._app import count, err_console, fail, os_error_message, output_option_for, progress_bar
from mafialab.cli._options import Games, OutDir, OutFile, arg_message, checked, ray_option, refusing
from mafialab.harness import RayConnectError
from mafialab.record import LogFormatError

export_app = typer.Typer(
    help="Export game logs as tables for pandas/DuckDB, Hugging Face datasets or temporal-graph tools.",
    no_args_is_help=True,
)


@export_app.command("parquet")
@checked
def export_parquet_cmd(
    directory: Annotated[Path, Games()] = typer.Argument(..., help="Directory of game logs."),
    out: Annotated[Path, OutDir(not_above="directory", file_suffix=".parquet")] = typer.Option(
        ..., "--out", "-o", help="Output directory (a dataset folder per table), or a single FILE.parquet."
    ),
    force: bool = typer.Option(
        False, "--force", help="Rebuild from scratch, replacing what exists (else an export of DIRECTORY is updated)."
    ),
    ray: str | None = ray_option(
        "Turn each game into its rows",
        "workers read DIRECTORY at the same path (shared storage) and this process writes the files of a local run",
    ),
) -> None:
    """Write the games, seats, events, probes and calls tables as Parquet, game by game (docs/export.md).

    Run again into the same --out, only the games added or changed since are read.

    With --ray the games are read and turned into rows on a Ray cluster; this process
    writes the part files in the order of the games (docs/scaling.md).
    """
    from mafialab.analysis import export_parquet

    unread: list[str] = []
    counts: dict[str, int] = {}
    try:
        with progress_bar() as bar:
            task = bar.add_task("games read", total=None)
            written = export_parquet(
                directory,
                out,
                overwrite=force,
                skipped=unread,
                counts=counts,
                ray=ray,
                on_game=lambda done, n: bar.update(task, completed=done, total=n),
            )
        for why in unread:  # as `report` and `view` do: a game that cannot be read is left out, named
            err_console.print(f"[yellow]skipped:[/] {escape(why)}", highlight=False, soft_wrap=True)
        if counts.get("unchanged"):
            err_console.print(
                f"updated {escape(str(out))}: {count(counts['read'], 'game')} read, {counts['unchanged']} unchanged; "
                f"{count(counts['parts_written'], 'part')} written, {counts['parts_removed']} removed",
                style="dim",
            )
        else:
            for p in written:
                err_console.print(f"wrote {escape(str(p))}", style="dim")
    except (ImportError, RayConnectError) as err:  # before OSError: a RayConnectError is a ConnectionError
        fail(str(err))
    except (OSError, LogFormatError) as err:
        _export_failed(err)


def _export_failed(err: OSError | LogFormatError) -> NoReturn:
    """Fail with what ``export parquet`` / ``export hf`` say when the export raised ``err``."""
    from mafialab.analysis import OutputExistsError

    if isinstance(err, OutputExistsError):
        if err.other_root is not None:
            fail(f"--out: {err.path} holds an export of {err.other_root}, not of DIRECTORY (use --force to replace it)")
        fail(f"--out: {err.path} exists (use --force to replace it)")
    if isinstance(err, FileExistsError):
        fail(f"--out: {err}")
    if isinstance(err, OSError):
        if output_option_for(err.filename) is None:
            fail(str(err))
        fail(os_error_message(err))
    fail(arg_message("DIRECTORY", err))


@export_app.command("hf")
@checked
def export_hf_cmd(
    directory: Annotated[Path, Games()] = typer.Argument(..., help="Directory of game logs."),
    out: Annotated[Path, OutDir(not_above="directory")] = typer.Option(
        ..., "--out", "-o", help="The dataset folder (Parquet per table and a README.md dataset card)."
    ),
    license: str = typer.Option(
        "unknown", "--license", help="The card's licence id (Hugging Face Hub ids: cc-by-4.0, mit, other ...)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Rebuild from scratch, replacing what exists (else an export of DIRECTORY is updated)."
    ),
) -> None:
    """Write the tables as a Hugging Face dataset folder, loadable with `datasets.load_dataset` (docs/export.md).

    The folder of `export parquet` plus the belief-shift benchmark files under DIRECTORY
    (beliefshift_benches, beliefshift_items) and a dataset card (README.md): one config per table,
    schemas, licence, rule sets, models, counts and the mafialab version. Nothing is uploaded:
    push the folder with your own tools (`huggingface-cli upload`). Run again into the same
    --out, only the games added or changed since are read.
    """
    from mafialab.analysis import export_hf
    from mafialab.beliefshift import bench_tables

    if out.suffix == ".parquet":
        fail(f"--out: {out}: a Hugging Face dataset is a folder; give a folder name, not FILE.parquet")
    unread: list[str] = []
    try:
        with progress_bar() as bar:
            task = bar.add_task("games read", total=None)
            card = export_hf(directory, out, overwrite=force, license=license, skipped=unread,
                             on_game=lambda done, n: bar.update(task, completed=done, total=n),
                             extra=bench_tables(directory))  # fmt: skip
        for why in unread:
            err_console.print(f"[yellow]skipped:[/] {escape(why)}", highlight=False, soft_wrap=True)
        err_console.print(f"wrote {escape(str(out))} (dataset card {escape(str(card))})", style="dim")
    except (OSError, LogFormatError) as err:
        _export_failed(err)


@export_app.command("tgn")
@checked
def export_tgn_cmd(
    directory: Annotated[Path, Games()] = typer.Argument(..., help="Directory of game logs."),
    out: Annotated[Path | None, OutFile(force="force", suffixes=(".csv", ".parquet"))] = typer.Option(
        None, "--out", "-o", help="Write to FILE (.csv or .parquet); default stdout CSV."
    ),
    force: bool = typer.Option(False, "--force", help="Replace FILE if it exists."),
) -> None:
    """Belief edges (source, target, time, weight, label) from probe answers (docs/export.md)."""
    from mafialab.analysis import belief_edges

    with refusing(FileNotFoundError, LogFormatError, name="DIRECTORY"):
        df = belief_edges(directory)
    if out is None:
        df.to_csv(sys.stdout, index=False)
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.suffix == ".parquet":
            df.to_parquet(out, index=False)
        else:
            df.to_csv(out, index=False)
    except OSError as err:
        fail(os_error_message(err))
