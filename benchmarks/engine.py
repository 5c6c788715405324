"""Engine throughput: scripted 7-player games per second on one core, and per-step overhead.

Usage: python benchmarks/engine.py [--games 500] [--rules mafiascope7,werewolf7]
Prints JSON. Runs in one process (one core). "engine only" drives GameState with a trivial
policy (first legal option) to isolate the engine; "scripted" plays full games through the
async harness with scripted agents and no log; "scripted+log" also writes game.jsonl.
Target (issue 2): >= 1,000 scripted 7-player games per minute per core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from mafialab.agents import make_agent
from mafialab.engine import Action, GameState
from mafialab.harness import play_game
from mafialab.rules import load_rules


def engine_only(rules, seeds) -> tuple[float, int]:
    steps = 0
    t0 = time.perf_counter()
    for seed in seeds:
        s = GameState(rules, seed)
        while not s.is_terminal:
            for d in s.pending():
                s.apply(
                    Action(
                        decision=d.id,
                        seat=d.seat,
                        target=d.options[(seed + d.id) % len(d.options)] if d.wants_target else None,
                        text="ok" if d.needs_text else None,
                    )
                )
                steps += 1
    return time.perf_counter() - t0, steps


async def scripted(rules, seeds, out: Path | None) -> tuple[float, int]:
    decisions = 0
    t0 = time.perf_counter()
    for seed in seeds:
        agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
        res = await play_game(rules, agents, seed, out=out)
        decisions += res.decisions
    return time.perf_counter() - t0, decisions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=500)
    ap.add_argument("--rules", default="mafiascope7,werewolf7")
    args = ap.parse_args()
    report = {}
    seeds = range(args.games)
    for name in args.rules.split(","):
        rules = load_rules(name)
        t_eng, steps = engine_only(rules, seeds)
        t_scr, dec = asyncio.run(scripted(rules, seeds, None))
        with tempfile.TemporaryDirectory() as tmp:
            t_log, _ = asyncio.run(scripted(rules, seeds, Path(tmp)))
        report[name] = {
            "games": args.games,
            "engine_only": {"games_per_s": round(args.games / t_eng, 1), "us_per_step": round(1e6 * t_eng / steps, 1)},
            "scripted": {
                "games_per_s": round(args.games / t_scr, 1),
                "games_per_min": round(60 * args.games / t_scr),
                "us_per_decision": round(1e6 * t_scr / dec, 1),
            },
            "scripted_with_log": {
                "games_per_s": round(args.games / t_log, 1),
                "games_per_min": round(60 * args.games / t_log),
            },
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
