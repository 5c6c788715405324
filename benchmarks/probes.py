"""Probe cost with scripted agents: probe calls per game and per decision, seconds per game.

Usage: python benchmarks/probes.py [--games 20] [--rules mafiascope7,werewolf7,arena12]
       [--batteries default,suspicion]
Prints JSON, one object per (rules, battery): mean decisions, probe calls, calls per
decision, and wall seconds per game (scripted agents, no log written). The calls-per-decision
ratio is what an LLM pays on top of the game's own calls (docs/probes.md, "Cost").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.probes import make_probe_observer
from mafialab.rules import load_rules


def run(rules_name: str, battery: str, games: int) -> dict[str, object]:
    rules = load_rules(rules_name)
    decisions, calls = [], []
    t0 = time.perf_counter()
    for seed in range(games):
        agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
        runner = make_probe_observer(battery, agents, rules, seed, out=None)
        assert runner is not None
        res = asyncio.run(play_game(rules, agents, seed, observers=[runner]))
        decisions.append(res.decisions)
        calls.append(runner.calls)
    elapsed = time.perf_counter() - t0
    return {
        "rules": rules_name,
        "battery": battery,
        "games": games,
        "decisions_per_game": statistics.mean(decisions),
        "probe_calls_per_game": statistics.mean(calls),
        "probe_calls_per_decision": round(statistics.mean(c / d for c, d in zip(calls, decisions, strict=True)), 2),
        "seconds_per_game": round(elapsed / games, 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--rules", default="mafiascope7,werewolf7,arena12")
    ap.add_argument("--batteries", default="default,suspicion")
    args = ap.parse_args()
    for r in args.rules.split(","):
        for b in args.batteries.split(","):
            print(json.dumps(run(r, b, args.games)))


if __name__ == "__main__":
    main()
