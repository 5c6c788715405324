"""Concurrency of model calls: the same seeded games played sequentially and concurrently.

A local OpenAI-compatible stub server on 127.0.0.1 answers every call after a fixed latency
(valid JSON for the request's schema, chosen deterministically from the prompt, so both runs
play the same games). Every seat is an LLM agent on the ``openai`` backend.

* sequential: one call in flight at a time (``max_concurrency=1``), games one after another;
* concurrent: all games at once (``play --parallel K``), the engine's independent decisions
  (simultaneous night actions, secret votes) asked together, ``max_concurrency=64``;
* critical path: per game, (preflight + dependent batches of decisions) x latency; the
  longest game's path is the least wall time any schedule can reach.

Target: concurrent wall time within 1.5x of the critical path.

Usage: python benchmarks/concurrency.py [--games 8] [--latency 0.2] [--rules werewolf7]
Prints JSON: calls, sequential_s, concurrent_s, critical_path_s and their ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from mafialab.agents import make_llm_agent
from mafialab.harness import GameResult, play_game
from mafialab.models import ModelPool
from mafialab.rules import load_rules
from mafialab.testing import OpenAIStub


async def run(rules_name: str, seeds: list[int], base_url: str, concurrency: int, parallel: bool):
    rules = load_rules(rules_name)
    pool = ModelPool()
    spec = f"openai/stub?base_url={base_url}&max_concurrency={concurrency}"
    batches: dict[int, int] = {}

    async def one(seed: int) -> GameResult:
        agents = [make_llm_agent(spec, s, rules, seed, pool=pool) for s in range(rules.n_seats)]
        batches[seed] = 0

        def count(_state: object) -> None:
            batches[seed] += 1

        return await play_game(rules, agents, seed, on_batch=count)

    t0 = time.perf_counter()
    if parallel:
        results = await asyncio.gather(*(one(s) for s in seeds))
    else:
        results = [await one(s) for s in seeds]
    return time.perf_counter() - t0, list(results), batches


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per call at the stub server")
    ap.add_argument("--rules", default="werewolf7")
    args = ap.parse_args()
    seeds = list(range(args.games))
    async with OpenAIStub(latency_s=args.latency) as stub:
        seq_s, seq_res, _ = await run(args.rules, seeds, stub.base_url, 1, parallel=False)
        calls_seq = len(stub.requests)
        stub.requests.clear()
        stub.max_in_flight = 0
        con_s, con_res, batches = await run(args.rules, seeds, stub.base_url, 64, parallel=True)
        calls = len(stub.requests)
        peak = stub.max_in_flight
    same = [(r.winner, r.decisions, r.eliminations) for r in seq_res] == [
        (r.winner, r.decisions, r.eliminations) for r in con_res
    ]
    critical = max(batches[s] + 1 for s in seeds) * args.latency  # +1: the preflight call
    print(
        json.dumps(
            {
                "rules": args.rules,
                "games": args.games,
                "latency_s": args.latency,
                "calls": calls,
                "calls_sequential_run": calls_seq,
                "same_games": same,
                "peak_in_flight": peak,
                "sequential_s": round(seq_s, 3),
                "concurrent_s": round(con_s, 3),
                "critical_path_s": round(critical, 3),
                "sequential_over_concurrent": round(seq_s / con_s, 2),
                "concurrent_over_critical_path": round(con_s / critical, 3),
                "target_met": con_s <= 1.5 * critical,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
