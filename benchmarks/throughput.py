"""A probed game against a fixed-latency server, run as a user would: wall time vs critical path.

A local OpenAI-compatible stub (``mafialab.testing.OpenAIStub``) answers every call after
``--latency`` seconds (valid JSON for the request's schema, chosen from the prompt). The game
is played by the command a user types, in a child process::

    mafialab play -r mafiascope7 -s 0 --agents "openai/stub?base_url=..." --probes default

with the default concurrency settings. From the run's own ``calls.jsonl``, ``probes.jsonl``
and ``game.jsonl`` the script computes:

* one-after-another time: Σ of every call's latency (preflight, game, probes), what a
  harness that makes one call at a time (as MafiaScope does) would take;
* critical path: the least time any schedule could take. The game's decisions are
  replayed batch by batch (decisions pending together are independent); a batch lasts as
  long as its slowest decision (its attempts one after another). A probe can start when its
  trigger's batch is over and the answers it splices in have arrived (``{prev_<id>}``: the
  same step's probe; ``{last_<id>}``: the seat's previous answer to that probe), so the
  path is the longest over game steps and probe chains, plus the preflight calls;
* the shared-prefix share and server-cached tokens of the closing ``call_summary`` record.

Targets (issue 14): wall time (first request at the server to the last answer) ≤ 1.2 x
critical path; shared-prefix share ≥ 90 %. The child process's total time and CPU time
(interpreter start and imports included) are printed too.

Usage: nice -n 15 python benchmarks/throughput.py [--latency 0.2] [--rules mafiascope7]
       [--seed 0] [--probes default] [--out DIR]
Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mafialab.harness import initial_state, recorded_actions
from mafialab.probes import resolve_battery
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE, probe_sort_key, read_game, read_records
from mafialab.testing import OpenAIStub


def critical_path(game_dir: Path, battery: str, preflight_s: float) -> dict[str, Any]:
    """Critical path of a recorded game (seconds), from its own logs (see the module doc)."""
    log = read_game(game_dir)
    calls = [c for c in read_records(game_dir / CALLS_FILE) if c.get("kind") == "call"]
    by_decision: dict[int, float] = {}
    for c in calls:
        if c.get("decision") is not None:
            by_decision[int(c["decision"])] = by_decision.get(int(c["decision"]), 0.0) + c["latency_ms"] / 1000
    actions = {a.decision: a for a in recorded_actions(log.events)}
    state = initial_state(log)
    batch_end_of_seq: dict[int, float] = {}
    t = preflight_s
    for ev in state.events:
        batch_end_of_seq[ev.seq] = t
    steps = 0
    while not state.is_terminal:
        batch = state.pending()
        dur = max((by_decision.get(d.id, 0.0) for d in batch), default=0.0)
        before = len(state.events)
        for d in batch:
            state.apply(actions[d.id])
        t += dur
        steps += 1
        for ev in state.events[before:]:
            batch_end_of_seq[ev.seq] = t
    game_s = t
    bat = resolve_battery(battery)
    fields = {p.id: p.placeholders() for p in bat.probes} if bat is not None else {}
    probes = sorted((r for r in read_records(game_dir / PROBES_FILE) if r.get("kind") == "probe"), key=probe_sort_key)
    end: dict[tuple[int, int, str], float] = {}
    last_end: dict[tuple[int, str], float] = {}
    deepest = 0.0
    for r in probes:
        seat, pid, after = int(r["seat"]), str(r["probe_id"]), int(r["after_seq"])
        start = batch_end_of_seq.get(after, game_s)
        for f in fields.get(pid, ()):
            if f.startswith("prev_"):
                start = max(start, end.get((after, seat, f[5:]), 0.0))
            elif f.startswith("last_"):
                start = max(start, last_end.get((seat, f[5:]), 0.0))
        e = start + r["latency_ms"] / 1000
        end[(after, seat, pid)] = e
        last_end[(seat, pid)] = e  # records are in key order: later triggers see this one as "last"
        deepest = max(deepest, e)
    return {"game_steps": steps, "game_path_s": round(game_s, 3), "critical_path_s": round(max(game_s, deepest), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per call at the stub server")
    ap.add_argument("--rules", default="mafiascope7")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--probes", default="default")
    ap.add_argument("--out", type=Path, default=None, help="keep the logs here (default: a temporary folder)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="mafialab-throughput-"))
    stamps: list[float] = []
    stub = OpenAIStub(latency_s=args.latency)
    answer = stub._answer

    async def timed(*a: Any) -> Any:  # first request in, last answer out
        stamps.append(time.perf_counter())
        res = await answer(*a)
        stamps.append(time.perf_counter())
        return res

    stub._answer = timed  # type: ignore[method-assign]
    with stub.in_thread():
        spec = f"openai/stub?base_url={stub.base_url}"
        cmd = [sys.executable, "-m", "mafialab", "play", "-r", args.rules, "-s", str(args.seed), "--agents", spec,
               "--probes", args.probes, "--out", str(out)]  # fmt: skip
        t0 = time.perf_counter()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
        process_s = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        process_cpu_s = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        requests = len(stub.requests)
        peak = stub.max_in_flight
    if proc.returncode != 0:
        sys.exit(f"mafialab play failed:\n{proc.stdout}\n{proc.stderr}")
    (game_dir,) = [p.parent for p in out.rglob(GAME_FILE)]
    lines = read_records(game_dir / CALLS_FILE)
    calls = [c for c in lines if c.get("kind") == "call"]
    summary = next((c for c in lines if c.get("kind") == "call_summary"), {})
    preflight_calls = requests - len(calls)
    preflight_s = preflight_calls * args.latency
    cp = critical_path(game_dir, args.probes, preflight_s)
    wall = stamps[-1] - stamps[0]
    one_by_one = sum(c["latency_ms"] for c in calls) / 1000 + preflight_s
    share = summary.get("shared_prefix_share")
    print(
        json.dumps(
            {
                "rules": args.rules,
                "seed": args.seed,
                "probes": args.probes,
                "latency_s": args.latency,
                "requests": requests,
                "game_calls": sum(1 for c in calls if c["purpose"] != "probe"),
                "probe_calls": sum(1 for c in calls if c["purpose"] == "probe"),
                "preflight_calls": preflight_calls,
                "peak_in_flight": peak,
                **cp,
                "wall_s": round(wall, 3),
                "process_s": round(process_s, 3),
                "process_cpu_s": round(process_cpu_s, 3),
                "one_after_another_s": round(one_by_one, 3),
                "wall_over_critical_path": round(wall / cp["critical_path_s"], 3),
                "shared_prefix_share": share,
                "cached_tokens": summary.get("cached_tokens"),
                "target_wall_met": wall <= 1.2 * cp["critical_path_s"],
                "target_prefix_met": share is not None and share >= 0.9,
                "play_summary_line": next((ln for ln in proc.stdout.splitlines() if "prefix reuse" in ln), ""),
                "logs": str(game_dir),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
