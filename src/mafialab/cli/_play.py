"""``mafialab play``: play K seeded games and log them."""

from __future__ import annotations

import asyncio
from collections import Counter
from functools import partial
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from mafialab.agents import AgentSpecError, make_agent
from mafialab.cli._app import app, console, fail
from mafialab.harness import GameObserver, GameResult, play_game
from mafialab.probes import ProbeBattery, ProbeBatteryError, make_probe_observer, resolve_battery
from mafialab.rules import RuleSet, RuleSetError, load_rules


def parse_seat_overrides(items: list[str], n_seats: int) -> dict[int, str]:
    """Parse ``--seat N=SPEC`` options into ``{seat: spec}``.

    Raises:
        ValueError: Malformed item or seat out of range (message names the item).
    """
    out: dict[int, str] = {}
    for item in items:
        seat_s, sep, spec = item.partition("=")
        if not sep or not seat_s.strip().isdigit() or not spec.strip():
            raise ValueError(f"--seat: expected N=SPEC (e.g. 3=scripted), got {item!r}")
        seat = int(seat_s)
        if seat >= n_seats:
            raise ValueError(f"--seat: seat {seat} out of range 0..{n_seats - 1}")
        out[seat] = spec.strip()
    return out


def _advance(progress: Progress, task: TaskID, _record: object) -> None:
    progress.advance(task)


def _unprobed_specs(specs: list[str], rules: RuleSet, seed: int) -> list[str]:
    """Agent specs among ``specs`` whose agents cannot answer probes (no ``probe`` method)."""
    mute = {sp for s, sp in enumerate(specs) if not callable(getattr(make_agent(sp, s, rules, seed), "probe", None))}
    return sorted(mute)


async def _play_many(
    rules: RuleSet,
    specs: list[str],
    seeds: list[int],
    out: Path,
    progress: Progress,
    battery: ProbeBattery | None = None,
) -> list[GameResult]:
    results = []
    task = progress.add_task("games", total=len(seeds))
    probe_task = progress.add_task("probes", total=None) if battery is not None else None
    for seed in seeds:
        agents = [make_agent(specs[s], s, rules, seed) for s in range(rules.n_seats)]
        observers: list[GameObserver] = []
        if battery is not None and probe_task is not None:
            tick = partial(_advance, progress, probe_task)
            obs = make_probe_observer(battery, agents, rules, seed, out=out, on_record=tick)
            observers = [obs] if obs is not None else []
        results.append(await play_game(rules, agents, seed, out=out, observers=observers))
        progress.advance(task)
    return results


@app.command()
def play(
    rules: str = typer.Option(
        "werewolf7", "--rules", "-r", help="Rule set: mafiascope7, werewolf7, arena12, or a YAML path."
    ),
    agents: str = typer.Option(
        "scripted", "--agents", "-a", help="Agent spec for every seat: scripted, random (or a model string)."
    ),
    seat: list[str] = typer.Option([], "--seat", help="Per-seat override N=SPEC (seats from 0); repeatable."),
    seed: int = typer.Option(0, "--seed", "-s", help="Seed of the first game; game i uses seed+i."),
    games: int = typer.Option(1, "--games", "-k", min=1, help="Number of games."),
    out: Path = typer.Option(Path("runs"), "--out", "-o", help="Directory for game logs (one sub-directory per game)."),
    probes: str = typer.Option(
        "none",
        "--probes",
        "-p",
        help="Private belief probes after every public message and round end: none, default, suspicion, "
        "or a battery YAML (a MafiaScope config with an introspection: block works too). "
        "Answers go to probes.jsonl beside game.jsonl; see docs/probes.md.",
    ),
) -> None:
    """Play GAMES seeded games and write their logs under OUT/<game_id>/game.jsonl."""
    try:
        rs = load_rules(rules)
    except RuleSetError as err:
        fail(str(err))
    try:
        overrides = parse_seat_overrides(seat, rs.n_seats)
        specs = [overrides.get(s, agents) for s in range(rs.n_seats)]
        for s, spec in enumerate(specs):
            make_agent(spec, s, rs, seed)  # validate every spec before playing
    except (ValueError, AgentSpecError) as err:
        fail(str(err))
    try:
        battery = resolve_battery(probes)
    except ProbeBatteryError as err:
        fail(str(err))
    if battery is not None:
        mute = _unprobed_specs(specs, rs, seed)
        if mute:
            console.print(f"[yellow]warning:[/] {', '.join(mute)} agents cannot answer probes; not probed")
    seeds = list(range(seed, seed + games))
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        try:
            results = asyncio.run(_play_many(rs, specs, seeds, out, progress, battery))
        except ValueError as err:
            fail(str(err))
    t = Table("game", "seed", "winner", "rounds", "eliminations")
    for r in results:
        elim = "; ".join(f"r{rnd} {name} ({cause})" for rnd, name, cause in r.eliminations)
        t.add_row(r.game_id, str(r.seed), rs.lexicon.team_name(r.winner) if r.winner else "-", str(r.rounds), elim)
    console.print(t)
    wins = Counter(r.winner for r in results)
    console.print(
        f"{len(results)} game(s) of {rs.id}: "
        + ", ".join(f"{rs.lexicon.team_name(w)} {n}" for w, n in wins.items() if w)
        + f". Logs in {out}/"
    )
