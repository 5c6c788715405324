"""Bifurcation throughput: resamples per second and forks per minute against a fixed-latency stub.

A parent game is played with scripted agents (probed, so its innocent votes have
quadrants). A local OpenAI-compatible stub on 127.0.0.1 answers every call after a fixed
latency with a valid JSON answer chosen from the request's seed, so resamples differ. One
point is run with ``--resamples K --keep M``: the voter is resampled on the stub, and every
seat of the continuation is an LLM agent on the stub too. Timestamps of finished samples
and forks split the run into its two phases.

Targets: resamples overlap (resamples/s close to ``parallel / latency``); forks play
concurrently (forks/min well above ``60 / (calls per fork x latency)``).

With ``--max-n N`` (default 16) one resample request asks for up to N answers with the
server's ``n`` (the stub honours it), so the resamples take ``ceil(K / N)`` requests;
``--max-n 1`` measures concurrent single calls.

Usage: python benchmarks/bifurcation.py [--resamples 200] [--keep 8] [--latency 0.05] [--parallel 32] [--max-n 16]
Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from mafialab.agents import make_agent
from mafialab.counterfactual import run_bifurcation
from mafialab.harness import play_game
from mafialab.probes import make_probe_observer
from mafialab.record import read_game
from mafialab.rules import load_rules
from mafialab.testing import OpenAIStub, schema_instance


def responder(body: dict[str, Any]) -> str:
    """A schema-valid answer picked by the request's seed (so resamples differ)."""
    rf = body.get("response_format") or {}
    schema = (rf.get("json_schema") or {}).get("schema")
    if schema is None:
        return "I have nothing to add."
    salt = json.dumps(body.get("messages", [])[-1:]) + str(body.get("seed"))
    return json.dumps(schema_instance(schema, salt))


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--keep", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.05, help="seconds per call at the stub server")
    ap.add_argument("--parallel", type=int, default=32)
    ap.add_argument("--max-n", type=int, default=16, help="answers per resample request (the server's n)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mafialab-bench-bif-"))
    rules = load_rules("mafiascope7")
    agents = [make_agent("scripted", s, rules, 3) for s in range(rules.n_seats)]
    obs = make_probe_observer("default", agents, rules, 3, out=tmp / "parents", game_id="parent")
    await play_game(rules, agents, 3, out=tmp / "parents", game_id="parent", observers=[obs] if obs else [])
    parent = read_game(tmp / "parents" / "parent")
    marks: dict[str, list[float]] = {"sample": [], "fork": []}
    async with OpenAIStub(latency_s=args.latency, responder=responder) as stub:
        spec = f"openai/stub?base_url={stub.base_url}&max_concurrency={args.parallel}"
        t0 = time.perf_counter()
        res = await run_bifurcation(
            parent,
            "random:1",
            tmp / "bif",
            resamples=args.resamples,
            keep=args.keep,
            sampler=f"{spec}&max_n={args.max_n}",
            agents=spec,
            parallel=args.parallel,
            check_remote=False,
            progress=lambda kind, n: marks[kind].append(time.perf_counter()),
        )
        end = time.perf_counter()
        calls = len(stub.requests)
        n_requests = sum(1 for b in stub.requests if b.get("n", 1) > 1)
        n_answers = sum(b.get("n", 1) for b in stub.requests if b.get("n", 1) > 1)
    sampling_s = (max(marks["sample"]) - t0) if marks["sample"] else 0.0
    forking_s = end - (max(marks["sample"]) if marks["sample"] else t0)
    print(
        json.dumps(
            {
                "resamples": res.samples,
                "forks": res.forks,
                "latency_s": args.latency,
                "parallel": args.parallel,
                "calls": calls,
                "max_n": args.max_n,
                "requests_with_n": n_requests,
                "answers_in_n_requests": n_answers,
                "sampling_s": round(sampling_s, 3),
                "resamples_per_s": round(res.samples / sampling_s, 1) if sampling_s else None,
                "resamples_per_s_ceiling": round(args.parallel * args.max_n / args.latency, 1),
                "forking_s": round(forking_s, 3),
                "forks_per_min": round(60 * res.forks / forking_s, 1) if forking_s else None,
                "calls_per_fork": round((calls - n_requests - (res.samples - n_answers)) / res.forks, 1)
                if res.forks
                else None,
                "fork_errors": res.errors,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
