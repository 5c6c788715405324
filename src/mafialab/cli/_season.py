"""``mafialab season``: run, resume, plan and rank seasons."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from mafialab.arena import (
    INDEX_FILE,
    LEADERBOARD_MD,
    ProgressFn,
    SeasonConfig,
    SeasonConfigError,
    SeasonError,
    Slot,
    game_rows,
    leaderboard_rows,
    load_manifest,
    load_season,
    plan_season,
    render_markdown,
    resume_season,
    run_season,
    write_index,
)
from mafialab.cli._app import console, fail, progress_bar
from mafialab.engine import deal_roles
from mafialab.models import ModelSpecError

season_app = typer.Typer(help="Seasons: many games, balanced seating, judges, leaderboards.", no_args_is_help=True)


def _show_board(out: Path, markdown: bool) -> None:
    index = write_index(out)
    if markdown:
        console.print(render_markdown(index), markup=False, highlight=False, soft_wrap=True)
        return
    head, rows = leaderboard_rows(index)
    t = Table(*head, title=Text(f"Season {index.season}: {index.games_counted}/{index.games_planned} games counted"))
    for r in rows:
        t.add_row(*(Text(c) for c in r))
    console.print(t)
    head, rows = game_rows(index)
    g = Table(*head, title="Games")
    for r in rows:
        g.add_row(*(Text(c) for c in r))  # model text: never parsed as markup
    console.print(g)
    console.print(f"Wrote {out / INDEX_FILE} and {out / LEADERBOARD_MD}", highlight=False)


def _drive(coro_factory: Callable[[ProgressFn], Coroutine[Any, Any, Any]], total: int, done: int) -> None:
    """Run a season coroutine with a progress bar; errors become clear CLI failures."""
    with progress_bar() as progress:
        task = progress.add_task("games", total=total, completed=done)

        def on(event: str, slot: Slot) -> None:
            if event == "judged":
                progress.advance(task)
            elif event == "replaced":
                console.print(f"degraded game replaced: slot {slot.slot} now plays seed {slot.seed}", highlight=False)
            elif event == "failed":
                console.print(f"[red]game failed[/]: {slot.game_id}", highlight=False)

        try:
            asyncio.run(coro_factory(on))
        except (SeasonError, SeasonConfigError, ModelSpecError, ImportError) as err:
            fail(str(err))
        except KeyboardInterrupt:
            fail("interrupted; finished games are kept, continue with `mafialab season resume DIR`", code=130)


@season_app.command("run")
def season_run(
    file: Path = typer.Argument(..., help="Season YAML file (see docs/arena.md)."),
    out: Path = typer.Option(..., "--out", "-o", help="Season directory to create."),
    no_preflight: bool = typer.Option(False, "--no-preflight", help="Skip the backend reachability check."),
) -> None:
    """Play a season: balanced seating, integrity gate, judging, leaderboard and index.json."""
    try:
        cfg: SeasonConfig = load_season(file)
    except SeasonConfigError as err:
        fail(str(err))
    if no_preflight:
        cfg = cfg.model_copy(update={"limits": cfg.limits.model_copy(update={"preflight": False})})
    _drive(lambda on: run_season(cfg, out, progress=on), cfg.games, 0)
    _show_board(out, markdown=False)


@season_app.command("resume")
def season_resume(
    out: Path = typer.Argument(..., help="Season directory (holds season.json)."),
) -> None:
    """Resume a season: rerun games without an outcome from their own seed, judge the rest."""
    try:
        m = load_manifest(out)
    except SeasonError as err:
        fail(str(err))
    done = sum(s.status == "judged" for s in m.slots)
    _drive(lambda on: resume_season(out, progress=on), len(m.slots), done)
    _show_board(out, markdown=False)


@season_app.command("leaderboard")
def season_leaderboard(
    out: Path = typer.Argument(..., help="Season directory (holds season.json)."),
    markdown: bool = typer.Option(False, "--markdown", "--md", help="Print Markdown instead of tables."),
) -> None:
    """Print the leaderboard and rewrite index.json and leaderboard.md."""
    try:
        load_manifest(out)
    except SeasonError as err:
        fail(str(err))
    _show_board(out, markdown)


@season_app.command("plan")
def season_plan(file: Path = typer.Argument(..., help="Season YAML file.")) -> None:
    """Show the seating plan (entry per seat per game) without playing."""
    try:
        cfg = load_season(file)
    except SeasonConfigError as err:
        fail(str(err))
    m = plan_season(cfg)
    rules = cfg.load_rules()
    t = Table("game", "seed", *rules.seat_names[: rules.n_seats])
    for s in m.slots:
        roles = deal_roles(rules, s.seed)
        t.add_row(
            str(s.slot),
            str(s.seed),
            *(
                f"{cfg.roster[e].name}{'*' if rules.role(r).team == 'mafia' else ''}"
                for e, r in zip(s.seating, roles, strict=True)
            ),
        )
    console.print(t)
    console.print("* = mafia seat", highlight=False)
