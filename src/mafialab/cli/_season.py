"""``mafialab season``: run, resume, plan and rank seasons."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from mafialab.arena import (
    EFFECTS_NOTE,
    EVALUATION_FILE,
    INDEX_FILE,
    LEADERBOARD_MD,
    MANIFEST_FILE,
    POOL_PROTOCOL,
    RATINGS_NOTE,
    PoolError,
    ProgressFn,
    SeasonConfig,
    SeasonConfigError,
    SeasonError,
    Slot,
    effect_rows,
    entry_codes,
    evaluate_entrant,
    freeze_pool,
    games_needed,
    load_manifest,
    load_pool,
    load_season,
    pilot_sd,
    plan_season,
    render_markdown,
    resume_season,
    run_season,
    season_warnings,
    terminal_game_rows,
    terminal_tables,
    write_index,
)
from mafialab.cli._app import console, count, fail, program, progress_bar, refuse_seats_on_ray, shell_word
from mafialab.cli._options import YAML_FILE, Finite, InPath, OutDir, OutFile, checked, ray_option, refusing
from mafialab.engine import deal_roles
from mafialab.harness import RayConnectError, freeze_startup_heap
from mafialab.models import ModelSpecError
from mafialab.record import iter_game_dirs

season_app = typer.Typer(help="Seasons: many games, balanced seating, judges, leaderboards.", no_args_is_help=True)


def _table(title: str, head: list[str], rows: list[list[str]], keep: tuple[str, ...] = ()) -> Table:
    """A rich table whose cells wrap rather than being cut to "sc…".

    Columns in ``keep`` (entry names) get the width of their longest value (up to 28), so a
    name is shown whole; longer text folds onto the next line.
    """
    t = Table(title=Text(title), title_justify="left")
    for i, h in enumerate(head):
        width = max([len(h), *(len(r[i]) for r in rows)]) if h in keep or h == "#" else None
        t.add_column(h, overflow="fold", min_width=min(width, 28) if width else None)
    for r in rows:
        t.add_row(*(Text(c) for c in r))  # model text: never parsed as markup
    return t


def _show_board(out: Path, markdown: bool) -> None:
    index = write_index(out)
    if markdown:
        console.print(render_markdown(index), markup=False, highlight=False, soft_wrap=True)
        return
    console.print(
        f"Season {index.season}: {index.games_counted}/{count(index.games_planned, 'game')} counted ({index.rules_id})",
        highlight=False,
    )
    for title, head, rows in terminal_tables(index):
        console.print(_table(title, head, rows, keep=("entry",)))
    console.print(
        "win rate: share won, wins/seats, [95% interval in %]; † no interval: fewer than 2 games "
        "behind the value; judge scores: mean [95% interval]",
        style="dim",
        highlight=False,
    )
    if index.effects is not None:
        head, rows = effect_rows(index.effects)
        console.print(_table(f"Name and speaking-position effects ({count(index.games_counted, 'game')})", head, rows))
        console.print(EFFECTS_NOTE, style="dim", highlight=False)
    if index.ratings is not None:
        console.print(RATINGS_NOTE + (f"; {index.gte_note}" if index.gte_note else ""), style="dim", highlight=False)
    head, rows = terminal_game_rows(index)
    console.print(_table("Games", head, rows))
    console.print(f"Wrote {escape(str(out / INDEX_FILE))} and {escape(str(out / LEADERBOARD_MD))}", highlight=False)


RAY_OPTION = ray_option("Play the games", "the logs land in OUT as in a local run, judging stays here")
SEASON_DIR = "a season folder (the --out of `mafialab season run`, holding season.json)"


def _drive(
    coro_factory: Callable[[ProgressFn], Coroutine[Any, Any, Any]], total: int, done: int, ray: str | None = None
) -> None:
    """Run a season coroutine with a progress bar; errors become clear CLI failures."""
    with progress_bar() as progress:
        task = progress.add_task("games" if ray is None else f"games (ray {ray})", total=total, completed=done)

        def on(event: str, slot: Slot) -> None:
            if event == "judged":
                progress.advance(task)
            elif event == "replaced":
                console.print(f"degraded game replaced: slot {slot.slot} now plays seed {slot.seed}", highlight=False)
            elif event == "failed":
                console.print(f"[red]game failed[/]: {slot.game_id}", highlight=False)

        try:
            freeze_startup_heap()  # a long driver: keep the start-up heap out of full GC passes
            asyncio.run(coro_factory(on))
        except (SeasonError, SeasonConfigError, ModelSpecError, ImportError, RayConnectError) as err:
            fail(str(err))
        except KeyboardInterrupt:
            fail("interrupted; finished games are kept, continue with `mafialab season resume DIR`", code=130)


@season_app.command("run")
@checked
def season_run(
    file: Annotated[Path, InPath(YAML_FILE, "file")] = typer.Argument(
        ..., help="Season YAML file (see docs/arena.md)."
    ),
    out: Annotated[Path, OutDir()] = typer.Option(..., "--out", "-o", help="Season directory to create."),
    no_preflight: bool = typer.Option(False, "--no-preflight", help="Skip the backend reachability check."),
    ray_address: str | None = RAY_OPTION,
) -> None:
    """Play a season: balanced seating, integrity gate, judging, leaderboard and index.json."""
    if (out / MANIFEST_FILE).exists():  # before the roster's warnings: the season there is kept
        fail(
            f"--out: {out} already holds a season; continue it with `{program()} season resume {shell_word(out)}` "
            "or choose another --out"
        )
    others = iter_game_dirs(out) if out.is_dir() else []
    if others:  # a season's report and viewer read its whole folder: other games would be pooled in
        fail(
            f"--out: {out} already holds {count(len(others), 'recorded game')} that are not this season's "
            f"(first: {others[0]}); a season needs a folder of its own: choose another --out"
        )
    with refusing(SeasonConfigError, name="FILE"):
        cfg: SeasonConfig = load_season(file)
    refuse_seats_on_ray(ray_address, [e.agent for e in cfg.roster])
    if no_preflight:
        cfg = cfg.model_copy(update={"limits": cfg.limits.model_copy(update={"preflight": False})})
    with refusing(SeasonConfigError):
        for why in season_warnings(cfg):
            console.print(f"[yellow]warning:[/] {escape(str(why))}", highlight=False)
    _drive(lambda on: run_season(cfg, out, progress=on, ray=ray_address), cfg.games, 0, ray_address)
    _show_board(out, markdown=False)


@season_app.command("resume")
@checked
def season_resume(
    out: Annotated[Path, InPath(SEASON_DIR, "folder")] = typer.Argument(
        ..., help="Season directory (holds season.json)."
    ),
    ray_address: str | None = RAY_OPTION,
) -> None:
    """Resume a season: rerun games without an outcome from their own seed, judge the rest."""
    with refusing(SeasonError, name="OUT"):
        m = load_manifest(out)
    refuse_seats_on_ray(ray_address, [e.agent for e in m.config.roster])
    done = sum(s.status == "judged" for s in m.slots)
    _drive(lambda on: resume_season(out, progress=on, ray=ray_address), len(m.slots), done, ray_address)
    _show_board(out, markdown=False)


@season_app.command("leaderboard")
@checked
def season_leaderboard(
    out: Annotated[Path, InPath(SEASON_DIR, "folder")] = typer.Argument(
        ..., help="Season directory (holds season.json)."
    ),
    markdown: bool = typer.Option(False, "--markdown", "--md", help="Print Markdown instead of tables."),
) -> None:
    """Print the leaderboard and rewrite index.json and leaderboard.md."""
    with refusing(SeasonError, name="OUT"):
        load_manifest(out)
    _show_board(out, markdown)


@season_app.command("plan")
@checked
def season_plan(
    file: Annotated[Path, InPath(YAML_FILE, "file")] = typer.Argument(..., help="Season YAML file."),
    interval_width: Annotated[float | None, Finite("win-rate points", 0)] = typer.Option(
        None,
        "--interval-width",
        help="Also print the games needed for a 95% interval of this full width on every entry's win rate "
        "(0-1; 0.2 = ±10 points); needs --pilot or --prior-sd (docs/arena.md, 'Power for planning').",
    ),
    pilot: Annotated[Path | None, InPath(SEASON_DIR, "folder")] = typer.Option(
        None, "--pilot", help="A pilot season folder whose seat-game win variance sizes the season."
    ),
    prior_sd: Annotated[float | None, Finite("win SD", 0)] = typer.Option(
        None, "--prior-sd", help="Assumed standard deviation of a seat-game's win (0-0.5; 0.5 is the safe maximum)."
    ),
) -> None:
    """Show the seating plan (entry per seat per game) without playing; with --interval-width, the games needed."""
    if interval_width is None and (pilot is not None or prior_sd is not None):
        fail("--interval-width: needed with --pilot or --prior-sd (the interval width to plan for)")
    if interval_width is not None and (pilot is None) == (prior_sd is None):
        fail("--interval-width: give exactly one of --pilot SEASON_DIR or --prior-sd X (where the variance comes from)")
    with refusing(SeasonConfigError, name="FILE"):
        cfg = load_season(file)
    for why in season_warnings(cfg):
        console.print(f"[yellow]warning:[/] {escape(str(why))}", highlight=False)
    m = plan_season(cfg)
    rules = cfg.load_rules()
    codes = entry_codes(len(cfg.roster))
    legend = Table(
        "code", "entry", "agent", "games", "seats", "mafia seats", title=Text("Roster"), title_justify="left"
    )
    seats = [0] * len(cfg.roster)
    mafia = [0] * len(cfg.roster)
    games = [set() for _ in cfg.roster]  # type: ignore[var-annotated]
    deals = {s.slot: s.roles or deal_roles(rules, s.seed) for s in m.slots}
    for s in m.slots:
        for e, r in zip(s.seating, deals[s.slot], strict=True):
            seats[e] += 1
            games[e].add(s.slot)
            mafia[e] += rules.role(r).team == "mafia"
    for i, entry in enumerate(cfg.roster):
        legend.add_row(codes[i], Text(entry.name), Text(entry.agent), str(len(games[i])), str(seats[i]), str(mafia[i]))
    for col in legend.columns:
        col.overflow = "fold"
    console.print(legend)
    t = Table("game", "seed", *[str(i) for i in range(rules.n_seats)], title=Text("Seats (entry code, * = mafia)"),
              title_justify="left")  # fmt: skip
    for s in m.slots:
        t.add_row(
            str(s.slot),
            str(s.seed),
            *(
                f"{codes[e]}{'*' if rules.role(r).team == 'mafia' else ''}"
                for e, r in zip(s.seating, deals[s.slot], strict=True)
            ),
        )
    console.print(t)
    console.print(
        f"seats numbered from 0 ({', '.join(rules.seat_names[: rules.n_seats])})", style="dim", highlight=False
    )
    if cfg.deals.mode != "seeded" or cfg.deals.shuffle_names:
        console.print(
            f"deals: {cfg.deals.mode.replace('_', ' ')}, {count(cfg.rotations(), 'game')} per block"
            + (", table names shuffled per game" if cfg.deals.shuffle_names else ""),
            highlight=False,
        )
    if interval_width is not None:
        _print_power(cfg, interval_width, pilot, prior_sd)


def _print_power(cfg: SeasonConfig, width: float, pilot: Path | None, prior_sd: float | None) -> None:
    """The power lines of ``season plan --interval-width`` (arena's ``games_needed``)."""
    with refusing(SeasonError, name="--pilot"), refusing(ValueError):
        if pilot is not None:
            sd, n = pilot_sd(pilot)
            source = f"pilot {pilot}: SD {sd:.3f} over {count(n, 'seat-game')}"
        else:
            sd, source = float(prior_sd or 0), f"prior SD {prior_sd:g}"
        p = games_needed(width, sd, len(cfg.roster), cfg.load_rules().n_seats)
    console.print(
        f"Power: a 95% interval {width:g} wide (±{width / 2:g}) on every entry's win rate needs "
        f"{count(p['seat_games_per_entry'], 'seat-game')} per entry = {count(p['games'], 'game')} "
        f"with {count(len(cfg.roster), 'entry', 'entries')} ({source}; n = ⌈(2·{p['z']:.2f}·SD/W)²⌉, "
        f"games = ⌈n·E/N⌉); this file plans {count(cfg.games, 'game')}",
        highlight=False,
    )


@season_app.command("freeze-pool")
@checked
def season_freeze_pool(
    season_dir: Annotated[Path, InPath(SEASON_DIR, "folder")] = typer.Argument(
        ..., metavar="SEASON_DIR", help="A finished season folder (holds season.json)."
    ),
    out: Annotated[Path, OutFile(suffixes=(".json",))] = typer.Option(
        ..., "--out", "-o", help="The pool file to write (JSON, protocol mafialab-pool/1)."
    ),
) -> None:
    """Freeze a season into a shareable reference pool: pinned players, deals, seats and ratings."""
    with refusing(SeasonError, PoolError, name="SEASON_DIR"):
        pool = freeze_pool(season_dir, out)
    console.print(
        f"Wrote {escape(str(out))}: pool of {count(len(pool.roster), 'entry', 'entries')}, "
        f"{count(len(pool.deals), 'deal')} ({POOL_PROTOCOL}, sha256 {pool.sha256})",
        highlight=False,
    )


@season_app.command("evaluate")
@checked
def season_evaluate(
    new_model: str = typer.Argument(
        ..., metavar="NEW_MODEL", help="The entrant's agent spec (a model string, scripted or random)."
    ),
    pool: Annotated[Path, InPath("a pool file (from `season freeze-pool`)", "file")] = typer.Option(
        ..., "--pool", help="The frozen pool file."
    ),
    out: Annotated[Path, OutDir()] = typer.Option(
        ..., "--out", "-o", help="Folder for the evaluation's games and evaluation.json (rerun to continue)."
    ),
    name: str | None = typer.Option(None, "--name", help="The entrant's name (default: NEW_MODEL)."),
    no_preflight: bool = typer.Option(False, "--no-preflight", help="Skip the backend reachability check."),
) -> None:
    """Rate NEW_MODEL against a frozen pool on its deals and seats, the pool's ratings held fixed."""
    if out.is_dir() and not (out / MANIFEST_FILE).exists() and iter_game_dirs(out):
        fail(f"--out: {out} already holds recorded games; an evaluation needs a folder of its own")
    with refusing(PoolError, name="--pool"):
        n_games = len(load_pool(pool).deals)
    with progress_bar() as progress:
        task = progress.add_task("games", total=n_games)

        def on(event: str, slot: Slot) -> None:
            if event == "judged":
                progress.advance(task)

        try:
            res = asyncio.run(
                evaluate_entrant(new_model, pool, out, name=name, preflight=not no_preflight, progress=on)
            )
        except (PoolError, SeasonError, SeasonConfigError, ModelSpecError, ImportError) as err:
            fail(str(err))
    r = res["rating"]
    console.print(
        f"{res['entrant']['name']}: OpenSkill μ {r['mu']:.2f} σ {r['sigma']:.2f} (ordinal {r['ordinal']:.2f}), "
        f"rank {res['rank']} among {res['pool_size']} pool entries; {res['wins']}/{res['games_counted']} games won; "
        f"pool {res['pool_season']} sha256 {res['pool_sha256']} (its ratings unchanged)",
        highlight=False,
    )
    console.print(f"Wrote {escape(str(out / EVALUATION_FILE))}", highlight=False)
