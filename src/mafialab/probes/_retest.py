"""Test-retest: re-ask a probe battery on frozen contexts to measure sampling noise (MafiaScope §7).

At K probe points of a recorded game (seeded draw among the points where the game was
probed with ``suspicion_ranking``), every alive seat's view is rebuilt from the log and the
battery is asked R times, each repeat from a fresh copy of the agent with its own seed and
no chained answers. The top-suspect flip rate between consecutive repeats is the floor
``mafialab report`` prints beside the observed flip rate
(:func:`mafialab.analysis.retest_floor`). It lives in ``probes`` (not ``counterfactual``):
it only rebuilds views from the log and runs the probe runner, no fork is played.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from mafialab.engine import derive_seed
from mafialab.harness import replay
from mafialab.probes._battery import resolve_battery
from mafialab.probes._runner import ProbeRunner, Trigger
from mafialab.record import (
    PROBES_FILE,
    RETEST_FILE,
    GameLog,
    JsonlWriter,
    RetestRecord,
    iter_probe_records,
    read_game,
)
from mafialab.rules import RuleSet

AgentBuilder = Callable[[str, int, RuleSet, int], Any]
"""``build(spec, seat, rules, seed) -> agent`` (default :func:`mafialab.agents.make_agent`)."""


def _specs(plog: GameLog, agents: str | None, temperature: float | None) -> list[str]:
    """Agent spec per seat: ``agents`` or the roster's, with ``temperature`` added to model specs."""
    from mafialab.agents import is_model_spec
    from mafialab.models import parse_model_spec

    out = []
    for s in sorted(plog.header.roster, key=lambda r: r.seat):
        spec = agents or s.agent
        if temperature is not None and is_model_spec(spec):
            model, opts = parse_model_spec(spec)
            opts = {"temperature": temperature, **opts}
            spec = f"{model}?{urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in opts.items()})}"
        out.append(spec)
    return out


@dataclass(frozen=True)
class RetestPoint:
    """A frozen probe point: the views of every alive seat after event ``after_seq``.

    Attributes:
        round: Round.
        msg_index: Public message index (-1: round end).
        after_seq: ``seq`` of the last event in the views.
        phase: Phase word of the original probes.
        kind: Trigger kind (``message`` or ``round_end``).
    """

    round: int
    msg_index: int
    after_seq: int
    phase: str
    kind: str


def probe_points(plog: GameLog) -> list[RetestPoint]:
    """The points where ``plog`` was probed with ``suspicion_ranking`` or a ``logprob`` probe, in game order.

    Raises:
        ValueError: The game has no ``probes.jsonl`` or no such probe (the message says so).
    """
    path = plog.path / PROBES_FILE
    if not path.is_file():
        raise ValueError(f"{plog.path}: no {PROBES_FILE}; retest needs a probed game (mafialab play --probes)")
    seen: dict[int, RetestPoint] = {}
    for _, rec in iter_probe_records(plog.path, game_id=plog.game_id):  # another game's records: skipped, named
        wanted = rec.get("probe_id") == "suspicion_ranking" or rec.get("distribution")
        if not wanted or not isinstance(rec.get("after_seq"), int):
            continue
        after = int(rec["after_seq"])
        if after > 0 and after not in seen:
            kind = "round_end" if rec.get("trigger") == "round_end" else "message"
            seen[after] = RetestPoint(
                int(rec.get("round", 0)), int(rec.get("msg_index", 0)), after, str(rec.get("phase") or ""), kind
            )
    if not seen:
        raise ValueError(f"{path}: no suspicion_ranking or logprob probes to retest")
    return [seen[k] for k in sorted(seen)]


async def run_retest(
    game: Path | GameLog,
    out: Path,
    *,
    points: int = 40,
    repeats: int = 5,
    battery: str = "suspicion",
    agents: str | None = None,
    temperature: float | None = None,
    seed: int = 0,
    build_agent: AgentBuilder | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Re-ask ``battery`` ``repeats`` times at ``points`` frozen probe points of ``game``.

    Appends one :class:`~mafialab.record.RetestRecord` per answer to ``out/retest.jsonl``.

    Args:
        game: A probed game directory (or its log) that replays.
        out: Output directory (created).
        points: K, points drawn (seeded) among the game's probe points (all if fewer).
        repeats: R >= 2 repeats per point.
        battery: Probe battery (built-in name or YAML path); it should hold
            ``suspicion_ranking`` for the floor.
        agents: Agent spec for every seat (default: the game's roster specs).
        temperature: Sampling temperature added to model specs.
        seed: Seed of the draw of points and of every repeat.
        build_agent: Agent factory (tests).
        progress: Called with the number of records after each repeat.

    Returns:
        Records written.

    Raises:
        ValueError: Bad K or R, an unknown battery, an unprobed game, or agents that cannot
            be built (the message names the option).
        mafialab.harness.ReplayMismatch: The game does not replay.
    """
    from mafialab.agents import make_agent

    if points < 1 or repeats < 2:
        raise ValueError(f"--points must be >= 1 and --repeats >= 2 (got {points}, {repeats})")
    plog = game if isinstance(game, GameLog) else read_game(Path(game))
    bat = resolve_battery(battery)
    if bat is None:
        raise ValueError("--battery: a battery is needed (e.g. suspicion)")
    all_points = probe_points(plog)
    chosen = sorted(random.Random(seed).sample(all_points, min(points, len(all_points))), key=lambda p: p.after_seq)
    state = replay(plog)
    specs = _specs(plog, agents, temperature)
    build = build_agent or make_agent
    try:
        base = [build(s, i, state.rules, seed) for i, s in enumerate(specs)]
    except Exception as err:
        raise ValueError(
            f"--agents: cannot build the agents ({err}); the game was played by "
            f"{sorted({s.agent for s in plog.header.roster})}"
        ) from None
    gid = plog.header.game_id
    written = 0
    with JsonlWriter(Path(out) / RETEST_FILE, clock=None) as w:
        for k, pt in enumerate(chosen):
            alive_names = [
                state.names[s]
                for s in range(state.n_seats)
                if not any(ev.kind == "elimination" and ev.seat == s and ev.seq <= pt.after_seq for ev in state.events)
            ]
            for r in range(repeats):
                copies: list[Any] = []
                for a in base:
                    c = copy.copy(a)
                    if hasattr(c, "seed"):
                        c.seed = derive_seed(seed, f"retest:{gid}:{pt.after_seq}:{r}")
                    if hasattr(c, "set_call_sink"):
                        c.set_call_sink(None)
                    copies.append(c)
                runner = ProbeRunner(bat, copies, game_id=gid)
                trig = Trigger(pt.kind, pt.round, pt.msg_index, None, pt.after_seq, pt.phase)  # type: ignore[arg-type]
                recs = await runner.run_trigger(trig, state)
                for rec in recs:
                    w.write(
                        RetestRecord(
                            game_id=gid,
                            point=k,
                            round=pt.round,
                            msg_index=pt.msg_index,
                            after_seq=pt.after_seq,
                            player=rec.player,
                            alive=alive_names,
                            probe_id=rec.probe_id,
                            repeat=r,
                            answer_raw=rec.answer_raw,
                            answer_parsed=rec.answer_parsed,
                            parse_ok=rec.parse_ok,
                            model=rec.model,
                            error=rec.error,
                            distribution=rec.distribution,
                        )
                    )
                    written += 1
                if progress is not None:
                    progress(len(recs))
    return written


def logprob_retest_floor(records: Sequence[Any]) -> dict[str, Any] | None:
    """The retest floor of the logprob readout: what re-asking on a frozen context changes.

    Repeats of one ``logprob`` probe on one frozen context (``(game, point, player,
    probe)``), in repeat order; each consecutive pair is compared.

    Args:
        records: :class:`mafialab.record.RetestRecord` objects (those without a
            ``distribution`` are ignored).

    Returns:
        ``pairs``, ``flips`` (most probable candidate changed), ``flip_rate`` and
        ``max_tv`` (largest total-variation distance between two repeats); ``None`` when
        there is no pair. Expected: no flip and a distance of 0 (no sampling), within
        the floating-point noise of the backend.
    """
    groups: dict[tuple[str, int, str, str], list[Any]] = {}
    for r in records:
        if r.distribution:
            groups.setdefault((r.game_id, r.point, r.player, r.probe_id), []).append(r)
    pairs = flips = 0
    max_tv = 0.0
    for recs in groups.values():
        recs.sort(key=lambda r: r.repeat)
        for a, b in pairwise(recs):
            tv = _total_variation(a.distribution, b.distribution)
            pairs += 1
            flips += max(a.distribution, key=a.distribution.get) != max(b.distribution, key=b.distribution.get)
            max_tv = max(max_tv, tv or 0.0)
    if pairs == 0:
        return None
    return {"pairs": pairs, "flips": flips, "flip_rate": flips / pairs, "max_tv": max_tv}


def _total_variation(a: dict[str, float], b: dict[str, float]) -> float:
    """Total-variation distance of two distributions over the same candidates (0 when equal)."""
    keys = set(a) | set(b)
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in keys)


def _retest_sync(*args: Any, **kwargs: Any) -> int:
    """:func:`run_retest` from synchronous code."""
    return asyncio.run(run_retest(*args, **kwargs))
