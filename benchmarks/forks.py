"""Forks per minute against the fixed-latency stub server.

A parent game is played by LLM agents (``openai`` backend) against a local OpenAI-compatible
stub that answers every call after a fixed latency; then the parent is forked at a day step
with ``--resample`` and the continuation is played N times, K branches at a time (the
library call behind ``mafialab fork run -n N --parallel K``). Branches are written to a
temporary directory, as the CLI writes them.

Reported: forks per minute (N / wall seconds x 60), model calls, calls per branch, and the
critical path of one branch (its dependent batches x latency), for comparison.

Usage: python benchmarks/forks.py [--forks 16] [--parallel 16] [--latency 0.2] [--rules mafiascope7-v2]
Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from mafialab.agents import make_llm_agent
from mafialab.counterfactual import Resample, fork_steps, run_fork
from mafialab.harness import play_game
from mafialab.models import ModelPool
from mafialab.record import read_game
from mafialab.rules import load_rules
from mafialab.testing import OpenAIStub


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--forks", type=int, default=16, help="replicas of the fork (N)")
    ap.add_argument("--parallel", type=int, default=16, help="branches played at the same time (K)")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per call at the stub server")
    ap.add_argument("--rules", default="mafiascope7-v2")
    args = ap.parse_args()
    rules = load_rules(args.rules)
    tmp = Path(tempfile.mkdtemp(prefix="mafialab-bench-forks-"))
    async with OpenAIStub(latency_s=args.latency) as stub:
        spec = f"openai/stub?base_url={stub.base_url}&max_concurrency=256"
        pool = ModelPool()
        agents = [make_llm_agent(spec, s, rules, 0, pool=pool) for s in range(rules.n_seats)]
        parent = await play_game(rules, agents, 0, out=tmp / "runs")
        assert parent.path is not None
        steps = [s for s in fork_steps(read_game(parent.path)) if s.round == 1 and s.phase == "day"]
        step = steps[0]
        stub.requests.clear()
        batches: list[int] = []
        t0 = time.perf_counter()
        batch = await run_fork(
            parent.path,
            step,
            Resample(),
            n=args.forks,
            parallel=args.parallel,
            agents=spec,
            out=tmp / "forks",
            check_remote=False,
        )
        wall = time.perf_counter() - t0
        calls = len(stub.requests)
    decisions = [b.decisions for b in batch.branches]
    del batches
    print(
        json.dumps(
            {
                "rules": rules.id,
                "latency_s": args.latency,
                "fork_step": step.id,
                "forks": args.forks,
                "parallel": args.parallel,
                "wall_s": round(wall, 3),
                "forks_per_minute": round(args.forks / wall * 60, 1),
                "calls": calls,
                "calls_per_branch": round(calls / args.forks, 1),
                "mean_decisions_per_branch": round(sum(decisions) / len(decisions), 1),
                "sequential_estimate_s": round(calls * args.latency, 1),
                "winners": {w: sum(1 for b in batch.branches if b.winner == w) for w in ("town", "mafia")},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
