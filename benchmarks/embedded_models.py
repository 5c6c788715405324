"""Embedded-model comparison: legal-move rate, valid-JSON rate, seconds per decision.

Plays the same seeded werewolf7 games with every seat on one embedded model (llama.cpp in
process) and reports, per model and prompt layout:

* ``legal_move_rate``: share of model calls whose answer was a usable legal move (right
  JSON fields, a legal target name, non-empty text);
* ``valid_json_rate``: share of calls whose answer parsed as a JSON object;
* ``first_try_rate`` / ``fallback_rate``: share of decisions answered at the first call /
  settled by the seeded-random fallback;
* ``s_per_decision``: wall seconds of model calls per decision (both attempts);
* ``cached_prompt_share``: prompt tokens llama.cpp reused from the previous call's prompt
  (its prefix cache) over all prompt tokens; the prefix-caching layout
  (``shared_first``: rules and public transcript before the seat's own text) is compared with
  ``seat_first``.

Win rates are not compared (they measure the table, not the model's reliability).

Because played games differ between models (different answers, different game lengths) and
this machine's load drifts, a second section times every model on the SAME fixed decision
prompts (rendered from scripted werewolf7 games), alternating the models call by call:
``fixed_prompts`` gives the median and mean seconds per decision and the legal-move rate on
those prompts.

A third section, ``--threads auto,1,2``, times thread settings of ``--layout-model`` on the
same fixed prompts (``auto``: the backend's own choice, :func:`mafialab.models.embedded_threads`;
a number: ``?n_threads=N``), alternating call by call, while ``--load N`` busy processes
(one spinning Python loop each) compete for the cores; ``--load`` applies to every section.

Usage: python benchmarks/embedded_models.py [--games 3] [--models smollm2,gemma3-270m]
       [--layouts shared_first,seat_first] [--layout-model smollm2]
       [--threads auto,1,2 --threads-calls 4] [--load N]
Prints JSON, one entry per (model, layout), per thread setting.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import time
from collections.abc import Iterator
from typing import Any

from mafialab.agents import make_llm_agent
from mafialab.harness import play_game
from mafialab.models import ModelPool
from mafialab.rules import load_rules

JSON_ERRORS = ("not a JSON object", "empty answer", "not JSON", "empty")


async def bench(model: str, layout: str, seeds: list[int], rules_name: str, pool: ModelPool) -> dict[str, object]:
    rules = load_rules(rules_name)
    records = []
    decisions = 0
    wall = 0.0
    for seed in seeds:
        agents = [make_llm_agent(f"local/{model}?layout={layout}", s, rules, seed, pool=pool) for s in range(7)]
        t0 = time.perf_counter()
        res = await play_game(rules, agents, seed)
        wall += time.perf_counter() - t0
        decisions += res.decisions
        records.extend(res.calls)
    calls = len(records)
    usable = sum(r.status in ("ok", "retried") for r in records)
    bad_json = sum(1 for r in records if r.error and any(k in r.error for k in JSON_ERRORS))
    first = sum(r.status == "ok" for r in records)
    fallback = sum(r.status == "fallback" for r in records)
    prompt = sum(r.prompt_tokens for r in records)
    cached = sum(r.cached_tokens or 0 for r in records)
    return {
        "model": f"local/{model}",
        "layout": layout,
        "games": len(seeds),
        "decisions": decisions,
        "calls": calls,
        "legal_move_rate": round(usable / calls, 3),
        "valid_json_rate": round(1 - bad_json / calls, 3),
        "first_try_rate": round(first / decisions, 3),
        "fallback_rate": round(fallback / decisions, 3),
        "s_per_decision": round(sum(r.latency_ms for r in records) / 1000 / decisions, 3),
        "game_wall_s_per_decision": round(wall / decisions, 3),
        "prompt_tokens_per_call": round(prompt / calls, 1),
        "completion_tokens_per_call": round(sum(r.completion_tokens for r in records) / calls, 1),
        "cached_prompt_share": round(cached / prompt, 3) if prompt else 0.0,
    }


async def scripted_jobs(n: int) -> list[tuple[Any, Any, Any]]:
    """``n`` decisions (renderer agent, decision, view) from scripted werewolf7 games, in game order."""
    from mafialab.agents import LLMAgent, ScriptedAgent
    from mafialab.engine import GameState
    from mafialab.models import MockModel

    rules = load_rules("werewolf7")
    jobs = []
    seed = 100
    while len(jobs) < n:
        st = GameState(rules, seed)
        scripted = [ScriptedAgent(s, rules, seed) for s in range(7)]
        render = [LLMAgent(s, rules, seed, MockModel([])) for s in range(7)]
        while not st.is_terminal and len(jobs) < n:
            batch = st.pending()
            for d in batch:
                jobs.append((render[d.seat], d, st.view(d.seat)))
            acts = await asyncio.gather(*(scripted[d.seat].decide(d, st.view(d.seat)) for d in batch))
            for a in acts:
                st.apply(a)
        seed += 1
    return jobs


def decision_request(agent: Any, d: Any, view: Any, seed: int) -> Any:
    """The game-facing ``ChatRequest`` ``agent`` (an ``LLMAgent``) sends for decision ``d``, seeded ``seed``."""
    from mafialab.agents import decision_schema
    from mafialab.models import ChatRequest

    msgs, _ = agent.decision_messages(d, view)
    return ChatRequest(
        messages=msgs,
        json_schema=decision_schema(d, view, agent._text_cap(d)),
        max_tokens=agent._max_tokens(d),
        seed=seed,
        purpose=d.kind,
    )


async def prefix_effect(model: str, n: int, pool: ModelPool, reps: int = 2) -> list[dict[str, object]]:
    """Prompt processing only (``max_tokens=1``) of the same decisions in game order, per layout.

    llama.cpp keeps the previous prompt's tokens; a layout whose prompts share longer prefixes
    from call to call evaluates fewer new tokens. Layout blocks alternate ``reps`` times.
    """
    from mafialab.agents import decision_schema
    from mafialab.models import ChatRequest

    jobs = await scripted_jobs(n)
    backend = pool.get(f"local/{model}")
    rows: dict[str, dict[str, float]] = {}
    for _ in range(reps):
        for layout in ("shared_first", "seat_first"):
            acc = rows.setdefault(layout, {"s": 0.0, "prompt": 0, "cached": 0, "calls": 0})
            for agent, d, view in jobs:
                agent.renderer.layout = layout
                msgs, _ = agent.decision_messages(d, view)
                req = ChatRequest(
                    messages=msgs,
                    json_schema=decision_schema(d, view, 300),
                    max_tokens=1,
                    seed=0,
                )
                t0 = time.perf_counter()
                resp = await backend.chat(req)
                acc["s"] += time.perf_counter() - t0
                acc["prompt"] += resp.usage.prompt_tokens
                acc["cached"] += resp.usage.cached_tokens or 0
                acc["calls"] += 1
    return [
        {
            "model": f"local/{model}",
            "prefix_effect_layout": layout,
            "calls": int(a["calls"]),
            "prompt_tokens_per_call": round(a["prompt"] / a["calls"], 1),
            "uncached_tokens_per_call": round((a["prompt"] - a["cached"]) / a["calls"], 1),
            "cached_prompt_share": round(a["cached"] / a["prompt"], 3),
            "s_per_call_prompt_only": round(a["s"] / a["calls"], 3),
        }
        for layout, a in rows.items()
    ]


async def fixed_prompts(models: list[str], n: int, pool: ModelPool) -> list[dict[str, object]]:
    """Time each model on the same decision prompts, alternating models call by call."""
    import statistics

    jobs = await scripted_jobs(n)
    backends = {m: pool.get(f"local/{m}") for m in models}
    times: dict[str, list[float]] = {m: [] for m in models}
    legal: dict[str, int] = dict.fromkeys(models, 0)
    for i, (agent, d, view) in enumerate(jobs):
        req = decision_request(agent, d, view, i)
        order = models if i % 2 == 0 else list(reversed(models))
        for m in order:
            t0 = time.perf_counter()
            resp = await backends[m].chat(req)
            times[m].append(time.perf_counter() - t0)
            legal[m] += isinstance(agent._interpret(d, view, resp), type(agent._fallback(d)))
    return [
        {
            "model": f"local/{m}",
            "fixed_prompts": len(jobs),
            "legal_move_rate": round(legal[m] / len(jobs), 3),
            "median_s_per_decision": round(statistics.median(times[m]), 3),
            "mean_s_per_decision": round(statistics.mean(times[m]), 3),
        }
        for m in models
    ]


def _spin() -> None:
    while True:
        pass


@contextlib.contextmanager
def busy(n: int) -> Iterator[None]:
    """``n`` processes spinning on a core each for the duration of the block (``--load``)."""
    procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.join(5)


async def threads_under_load(model: str, settings: list[str], n: int, pool: ModelPool) -> list[dict[str, object]]:
    """Seconds per decision of ``model`` under each thread setting, on the same prompts, alternating."""
    import statistics

    jobs = await scripted_jobs(n)
    specs = {t: f"local/{model}" + ("" if t == "auto" else f"?n_threads={t}") for t in settings}
    backends = {t: pool.get(spec) for t, spec in specs.items()}
    times: dict[str, list[float]] = {t: [] for t in settings}
    load0 = os.getloadavg()[0]
    for i, (agent, d, view) in enumerate(jobs):
        req = decision_request(agent, d, view, i)
        for t in settings if i % 2 == 0 else list(reversed(settings)):
            t0 = time.perf_counter()
            await backends[t].chat(req)
            times[t].append(time.perf_counter() - t0)
    return [
        {
            "model": f"local/{model}",
            "threads": t,
            "n_threads": getattr(backends[t], "n_threads", None),
            "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "load_avg_1min_before": round(load0, 2),
            "calls": len(times[t]),
            "median_s_per_decision": round(statistics.median(times[t]), 3),
            "mean_s_per_decision": round(statistics.mean(times[t]), 3),
        }
        for t in settings
    ]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=3)
    ap.add_argument("--models", default="smollm2,gemma3-270m")
    ap.add_argument("--layouts", default="shared_first,seat_first")
    ap.add_argument("--layout-model", default="smollm2", help="the model whose layouts are compared")
    ap.add_argument("--rules", default="werewolf7")
    ap.add_argument("--fixed", type=int, default=40, help="fixed decision prompts timed per model (0: skip)")
    ap.add_argument("--prefix", type=int, default=60, help="decisions for the prefix-cache layout test (0: skip)")
    ap.add_argument("--threads", default="", help="thread settings to compare, e.g. auto,1,2 (empty: skip)")
    ap.add_argument("--threads-calls", type=int, default=4, help="fixed prompts per thread setting")
    ap.add_argument("--load", type=int, default=0, help="busy processes running during every measurement")
    args = ap.parse_args()
    with busy(args.load):
        await measure(args)


async def measure(args: argparse.Namespace) -> None:
    seeds = list(range(args.games))
    pool = ModelPool()
    out: list[dict[str, object]] = []
    if args.threads:
        for row in await threads_under_load(args.layout_model, args.threads.split(","), args.threads_calls, pool):
            out.append({**row, "load": args.load})
            print(json.dumps(out[-1]), flush=True)
    if args.prefix:
        for row in await prefix_effect(args.layout_model, args.prefix, pool):
            out.append(row)
            print(json.dumps(row), flush=True)
    if args.fixed:
        for row in await fixed_prompts(args.models.split(","), args.fixed, pool):
            out.append(row)
            print(json.dumps(row), flush=True)
    for model in args.models.split(","):
        if args.games == 0:
            break
        layouts = args.layouts.split(",") if model == args.layout_model else ["shared_first"]
        for layout in layouts:
            out.append(await bench(model, layout, seeds, args.rules, pool))
            print(json.dumps(out[-1]), flush=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
