"""``mafialab fork``: fork a recorded game at a step, intervene, replay N times; compare; sweep."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from mafialab._words import team_wins
from mafialab.agents import parse_seat_overrides
from mafialab.analysis import Rate, fmt_p, fmt_rate
from mafialab.cli._app import console, count, err_console, fail, progress_bar, refuse_seats_on_ray, time_words
from mafialab.cli._options import (
    ONE_GAME,
    AgentSpec,
    InPath,
    OneGame,
    OutDir,
    Prices,
    TableOrJson,
    arg_message,
    check_agent_spec,
    checked,
    game_log,
    load_price_option,
    ray_option,
    refusing,
    seat_option,
    seed_option,
)
from mafialab.config import json_error
from mafialab.counterfactual import (
    BatchSummary,
    Inject,
    Intervention,
    Night,
    PrivateBelief,
    Resample,
    branch_specs,
    compare_batches,
    estimate_fork,
    fork_steps,
    one_batch,
    resolve_step,
    run_fork,
    sweep,
)
from mafialab.harness import PreflightError, RayConnectError, ReplayMismatch, freeze_startup_heap
from mafialab.record import GameLog, LogFormatError, iter_game_dirs, read_game
from mafialab.rules import RuleSet, winner_name, winners_line

BRANCHES = "a folder of branches (the --out of `mafialab fork run`)"

fork_app = typer.Typer(help="Fork a recorded game at a step and replay it with a change.", no_args_is_help=True)


def _seat(text: str, names: list[str], what: str, role: str = "seat") -> int:
    t = text.strip()
    if t.isdigit() and int(t) < len(names):
        return int(t)
    if t in names:
        return names.index(t)
    raise ValueError(f"{what}: unknown {role} {t!r} (a seat number 0..{len(names) - 1} or a name: {', '.join(names)})")


def parse_intervention(
    names: list[str], inject: str | None, resample: bool, belief: str | None, night: str | None
) -> Intervention:
    """The intervention given by the ``fork run`` options (at most one; default resample).

    Raises:
        ValueError: More than one given, or a malformed value (the message names the option).
    """
    given = [x for x in (inject, belief, night) if x is not None] + ([True] if resample else [])
    if len(given) > 1:
        raise ValueError("give only one of --inject, --resample, --belief, --night")
    if inject is not None:
        try:
            data = json.loads(inject)
        except json.JSONDecodeError as err:
            example = '{"target": "Casey", "text": "..."}'
            raise ValueError(f"--inject: {json_error(err)}; e.g. '{example}'") from None
        if not isinstance(data, dict):
            raise ValueError("--inject: expected a JSON object with target and/or text")
        target = data.get("target")
        if isinstance(target, int) and not isinstance(target, bool):  # a seat number: that seat's name
            data = {**data, "target": names[_seat(str(target), names, "--inject", "target")]}
        elif target is not None and not isinstance(target, str):
            raise ValueError(
                f"--inject: target: give the player's name or seat number ({', '.join(names)}), "
                f"or null for no vote; got {json.dumps(target)}"
            )
        try:
            return Inject.model_validate({"no_vote": data.get("target") is None and "target" in data, **data})
        except ValidationError as err:
            e = err.errors()[0]
            raise ValueError(f"--inject: {'.'.join(map(str, e['loc']))}: {e['msg']}") from None
    if belief is not None:
        seat, sep, text = belief.partition("=")
        if not sep or not text.strip():
            raise ValueError(f"--belief: expected SEAT=TEXT, got {belief!r}")
        return PrivateBelief(seat=_seat(seat, names, "--belief"), text=text.strip())
    if night is not None:
        seat, sep, target = night.partition("=")
        if not sep:
            raise ValueError(f"--night: expected SEAT=TARGET, got {night!r}")
        return Night(seat=_seat(seat, names, "--night"), target=_seat(target, names, "--night", "target"))
    return Resample()


def _check_seats(log: GameLog, seats: dict[int, str], seed: int) -> None:
    """Fail (code 2) naming ``--seat N=SPEC`` when a spec given on the command line cannot be built."""
    for s, spec in seats.items():
        check_agent_spec(spec, seat_option(s, seats), log.header.rules, s, seed)


@fork_app.command("steps")
@checked
def steps_cmd(
    game: Annotated[Path, InPath(ONE_GAME)] = typer.Argument(
        ..., help="Game directory (mafialab game, branch, or imported MafiaScope game)."
    ),
    fmt: TableOrJson = typer.Option(TableOrJson.table, "--format", help="table or json."),
) -> None:
    """List the forkable steps of GAME: id, round, phase, seat, kind and what was done."""
    with refusing(LogFormatError, name="GAME"):
        log = read_game(game, warn=False)  # each problem is printed once, below
    with refusing(LogFormatError, ReplayMismatch):
        steps = fork_steps(log)
    # a repeated line loses nothing (its first copy is kept); any other skipped line, and any
    # run of seq numbers no line holds (lines deleted), is a lost event
    lost = [why for why in log.problems if ": repeated seq " not in why]

    def kept_order(why: str) -> bool:  # a problem of order or of numbers, not a line skipped
        return " missing before this line " in why or " out of order (" in why

    for why in log.problems:
        label = "damaged" if kept_order(why) else "skipped"
        err_console.print(f"[yellow]{label}:[/] {escape(why)}", highlight=False, soft_wrap=True)
    if lost:  # replay, and so the list, stops at the first gap
        n_order = sum(1 for why in lost if kept_order(why))
        what = " and ".join(
            part
            for part in (
                count(len(lost) - n_order, "unreadable line") if len(lost) > n_order else "",
                count(n_order, "place") + " where events are missing or out of order" if n_order else "",
            )
            if part
        )
        err_console.print(
            f"[yellow]warning:[/] {what} in the log (the first at {escape(lost[0].split(': ', 1)[0])}): "
            f"a fork replays the log only as far as it still follows the game ({count(len(steps), 'step')} listed)",
            highlight=False,
            soft_wrap=True,
        )
    if steps.stop is not None:
        err_console.print(
            f"[yellow]the list stops[/] at {escape(steps.stop.reason)}",
            highlight=False,
            soft_wrap=True,
        )
    elif not steps and not lost:
        err_console.print(
            f"{escape(str(game))}: the game has no decisions to fork at (it ended or was stopped before the first)",
            highlight=False,
            soft_wrap=True,
        )
    if fmt == "json":
        rows = [{**s.__dict__, "label": s.label} for s in steps]
        console.print_json(json.dumps(rows, ensure_ascii=False))
        return
    t = Table("id", "step", "round", "phase", "seat", "kind", "done")
    for s in steps:
        t.add_row(str(s.id), s.label, str(s.round), s.phase, f"{s.seat} {s.name}", s.kind, s.done)
    console.print(t)


@fork_app.command("run")
@checked
def run_cmd(
    game: Annotated[Path, OneGame()] = typer.Argument(..., help="Parent game directory."),
    at: str = typer.Option(..., "--at", help="Fork step: a decision id or round:phase:index (see `fork steps`)."),
    inject: str | None = typer.Option(
        None,
        "--inject",
        help='Replace the answer: JSON {"target": NAME or SEAT, "text": ...}; a team vote {"choice": "approve"}.',
    ),
    resample: bool = typer.Option(False, "--resample", help="Ask the seat again from its frozen context (default)."),
    belief: str | None = typer.Option(None, "--belief", help="SEAT=TEXT: a private line in one seat's context."),
    night: str | None = typer.Option(None, "--night", help="SEAT=TARGET: override the seat's next night action."),
    n: int = typer.Option(1, "-n", min=1, help="Replicas of the fork."),
    seed: int = seed_option("Seed of the batch (with the replica: each branch's seed).", "-s"),
    agents: Annotated[str | None, AgentSpec()] = typer.Option(
        None, "--agents", "-a", help="Agent spec for every seat (default: parent's)."
    ),
    seat: list[str] = typer.Option([], "--seat", help="Per-seat agent N=SPEC; repeatable."),
    temperature: float | None = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature."),
    probes: str = typer.Option("none", "--probes", "-p", help="Probe battery for the continuation."),
    parallel: int = typer.Option(1, "--parallel", "-j", min=1, help="Branches played at the same time."),
    prices: Annotated[Path | None, Prices()] = typer.Option(None, "--prices", help="YAML price table."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the calls and cost estimate; play nothing."),
    out: Annotated[Path, OutDir()] = typer.Option(..., "--out", "-o", help="Directory for the branches."),
    ray_address: str | None = ray_option(
        "Play the replicas", "the branches land in OUT as in a local run (--resample answers are drawn here first)"
    ),
) -> None:
    """Fork GAME at --at, apply one change, and play the continuation N times into OUT.

    Run again with the same options to resume: branches of the batch already in OUT are kept.
    """
    log = game_log(game)
    table = load_price_option(prices)
    with refusing(LogFormatError, ReplayMismatch, ValueError, PreflightError, ImportError, RayConnectError, out=out):
        names = [s.name for s in sorted(log.header.roster, key=lambda s: s.seat)]
        overrides = parse_seat_overrides(seat, len(names))
        _check_seats(log, overrides, seed)
        iv = parse_intervention(names, inject, resample, belief, night)
        step = resolve_step(fork_steps(log), at)
        refuse_seats_on_ray(ray_address, branch_specs(log, agents, overrides))
        if dry_run:
            est = estimate_fork(log, step, n, probes=probes != "none", agents=agents)
            cost = f"${est.cost_usd:.4f}" if est.cost_usd is not None else "unknown (unpriced)"
            console.print(
                f"fork of {log.game_id} at step {step.id} ({step.label}, {step.name} {step.kind}), "
                f"{iv.type}: {count(n, 'branch', 'branches')}, about {count(round(est.calls), 'model call')} "
                f"({est.calls_per_branch:.1f} per branch), estimated cost {cost}, "
                f"{time_words(est.seconds)}. Basis: {est.basis}; time: {est.time_basis}.",
                highlight=False,
                soft_wrap=True,
            )
            return
        freeze_startup_heap()  # a long driver: keep the start-up heap out of full GC passes
        with progress_bar() as bar:
            task = bar.add_task("branches" if ray_address is None else f"branches (ray {ray_address})", total=n)
            batch = asyncio.run(
                run_fork(
                    log,
                    step,
                    iv,
                    n=n,
                    seed=seed,
                    agents=agents,
                    seats=overrides,
                    temperature=temperature,
                    probes=probes,
                    parallel=parallel,
                    out=out,
                    prices=table,
                    ray=ray_address,
                    progress=lambda b: bar.advance(task),
                )
            )
    t = Table("branch", "replica", "winner", "fallbacks")
    for b in batch.branches:
        t.add_row(b.game_id, str(b.replica), winner_name(b.winner, log.header.rules), f"{b.fallbacks}/{b.decisions}")
    console.print(t)
    idle = [b for b in batch.branches if not b.applied]
    if idle and isinstance(iv, Night):
        err_console.print(
            f"[yellow]warning:[/] --night: the override never took effect in "
            f"{count(len(idle), 'branch', 'branches')} of {len(batch.branches)}: no night action of seat "
            f"{iv.seat} ({escape(next(s.name for s in log.header.roster if s.seat == iv.seat))}) followed "
            f"step {step.id} (the game ended first), so {'that branch changes' if len(idle) == 1 else 'those change'} "
            "nothing",
            highlight=False,
            soft_wrap=True,
        )
    won = winners_line(Counter(b.winner for b in batch.branches), log.header.rules)
    resumed = f" ({batch.resumed} already in {escape(str(out))}, kept)" if batch.resumed else ""
    console.print(
        f"batch {batch.batch}: {count(len(batch.branches), 'branch', 'branches')}{resumed} of {batch.parent_id} "
        f"at step {step.id} ({iv.type}); "
        f"won: {won}. Logs in {escape(str(out))}/",
        highlight=False,
    )


@fork_app.command("compare")
@checked
def compare_cmd(
    dir_a: Annotated[Path, InPath(BRANCHES, "folder")] = typer.Argument(..., help="Branches of batch A."),
    dir_b: Annotated[Path, InPath(BRANCHES, "folder")] = typer.Argument(..., help="Branches of batch B."),
    batch_a: str | None = typer.Option(None, "--batch-a", help="Batch id in DIR_A when it holds several."),
    batch_b: str | None = typer.Option(None, "--batch-b", help="Batch id in DIR_B when it holds several."),
    fmt: TableOrJson = typer.Option(TableOrJson.table, "--format", help="table or json."),
) -> None:
    """P(each team wins) per batch (Wilson 95 %), the difference (Newcombe 95 %), Fisher exact p, n."""
    sides: list[BatchSummary] = []
    for name, folder, batch in (("DIR_A", dir_a, batch_a), ("DIR_B", dir_b, batch_b)):
        try:
            sides.append(one_batch(folder, batch))
        except (LogFormatError, ValueError) as err:
            fail(arg_message(name, err))
    with refusing(ValueError):  # the same batch on both sides
        res = compare_batches(sides[0], sides[1])
    if fmt == "json":
        console.print_json(json.dumps(res))
        return
    rules = _rules_of(dir_a)
    t = Table(
        "", "batch", "step", "intervention", "n", *(f"P({team_wins(winner_name(w, rules))})" for w in ("town", "mafia"))
    )
    for k in ("a", "b"):
        s = res[k]
        t.add_row(
            k.upper(), s["batch"], str(s["step"]), s["intervention"].get("type", "?"), str(s["n"]),
            fmt_rate(Rate.from_dict(s["town"])), fmt_rate(Rate.from_dict(s["mafia"])),
        )  # fmt: skip
    console.print(t)
    for team in ("town", "mafia"):
        d = res["difference"][team]
        if d["diff"] is None:
            continue
        console.print(
            f"{winner_name(team, rules)}: A - B = {d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}] (Newcombe 95 %), "
            f"Fisher exact p = {fmt_p(d['fisher_p'])} (two-sided), n = {res['a']['n']} vs {res['b']['n']}",
            highlight=False,
        )


def _rules_of(folder: Path) -> list[RuleSet]:
    """The rule set of the first game under ``folder`` (a batch's branches share their parent's), to name teams.

    Empty when no game there can be read: the teams then keep their ids (``town``, ``mafia``).
    """
    for d in iter_game_dirs(folder)[:1]:
        try:
            return [read_game(d, warn=False).header.rules]
        except (LogFormatError, OSError, ValueError):
            return []
    return []


@fork_app.command("sweep")
@checked
def sweep_cmd(
    game: Annotated[Path, OneGame()] = typer.Argument(..., help="Parent game directory."),
    n: int = typer.Option(..., "-n", min=1, help="Replicas per step."),
    steps: list[str] = typer.Option([], "--steps", help="Steps to fork (default: every public step); repeatable."),
    seed: int = seed_option("Seed of the sweep.", "-s"),
    agents: Annotated[str | None, AgentSpec()] = typer.Option(
        None, "--agents", "-a", help="Agent spec for every seat (default: parent's)."
    ),
    parallel: int = typer.Option(1, "--parallel", "-j", min=1, help="Branches played at the same time."),
    out: Annotated[Path, OutDir()] = typer.Option(..., "--out", "-o", help="Directory for the branches."),
    fmt: TableOrJson = typer.Option(TableOrJson.table, "--format", help="table or json."),
) -> None:
    """Fork GAME at every public step with a fresh draw, N times each: P(each team wins) per step."""
    game_log(game)  # read by the check of GAME
    chosen = [x for s in steps for x in s.split(",") if x.strip()]
    freeze_startup_heap()  # a long driver: keep the start-up heap out of full GC passes
    with refusing(LogFormatError, ReplayMismatch, ValueError, PreflightError, out=out):
        rows = asyncio.run(sweep(game, n, steps=chosen or None, seed=seed, out=out, agents=agents, parallel=parallel))
    if fmt == "json":
        data = [
            {"step": r.step.id, "label": r.step.label, "seat": r.step.seat, "kind": r.step.kind, "batch": r.batch.batch,
             "n": r.n, "town": r.town, "mafia": r.mafia}
            for r in rows
        ]  # fmt: skip
        console.print_json(json.dumps(data))
        return
    rules = _rules_of(game)
    wins = (f"P({team_wins(winner_name(w, rules))})" for w in ("town", "mafia"))
    t = Table("step", "round:phase:index", "seat", "kind", "n", *wins)
    for r in rows:
        t.add_row(
            str(r.step.id),
            r.step.label,
            r.step.name,
            r.step.kind,
            str(r.n),
            fmt_rate(Rate.from_dict(r.town)),
            fmt_rate(Rate.from_dict(r.mafia)),
        )
    console.print(t)
