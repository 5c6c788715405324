"""Full garbage-collection pauses of a long driver, with and without the start-up heap frozen.

Runs the command a user types, ``mafialab season run`` (``--rules``, default mafiascope7;
every seat an ``openai/...`` model answered by a local stub server after ``--latency``
seconds; the ``--probes`` battery, default ``default``; two games at a time), in a child
process, twice per round: as
shipped (``mafialab.harness.freeze_startup_heap`` freezes the start-up heap) and with
:func:`gc.freeze` made a no-op (the heap before this change). The child times every
collection with :data:`gc.callbacks` and reports the generation-2 (full) ones after start-up
(after the helper's call, which is a no-op in the arm without freezing): how many, the total
and the longest pause, and how many objects were frozen.

Usage: nice -n 15 python benchmarks/gc_pauses.py [--games 6] [--rounds 2] [--latency 0.02]
       [--rules mafiascope7] [--probes default]
Prints JSON: one row per run and the medians per arm.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from mafialab.rules import load_rules
from mafialab.testing import OpenAIStub

CHILD = r"""
import atexit, gc, json, os, sys, time
pauses, started, mark = [], {}, []
real_freeze = gc.freeze
def freeze():  # where the start-up ends: the helper's call (a no-op in the arm without freezing)
    mark.append(len(pauses))
    if os.environ["GC_ARM"] == "freeze":
        real_freeze()
gc.freeze = freeze
def timer(phase, info):
    if phase == "start":
        started["t"] = time.perf_counter()
    elif info["generation"] == 2:
        pauses.append(time.perf_counter() - started["t"])
gc.callbacks.append(timer)
def report():
    with open(os.environ["GC_REPORT"], "w") as f:
        json.dump({"startup": pauses[: mark[0]], "pauses": pauses[mark[0] :], "frozen": gc.get_freeze_count()}, f)
atexit.register(report)
from mafialab.cli import app
sys.argv = ["mafialab", *sys.argv[1:]]
app()
"""


def run_once(arm: str, season: Path, work: Path) -> dict[str, Any]:
    """One ``season run`` in a child process; its full-collection pauses."""
    report = work / f"{arm}.json"
    out = work / f"season-{arm}-{time.monotonic_ns()}"
    env = {**os.environ, "GC_ARM": arm, "GC_REPORT": str(report), "COLUMNS": "200"}
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "season", "run", str(season), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"season run failed ({arm}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    got = json.loads(report.read_text())
    p = got["pauses"]
    return {
        "arm": arm,
        "frozen_objects": got["frozen"],
        "gen2_at_startup": len(got["startup"]),
        "gen2_collections": len(p),
        "gen2_total_ms": round(1000 * sum(p), 1),
        "gen2_max_ms": round(1000 * max(p, default=0.0), 1),
        "gen2_mean_ms": round(1000 * statistics.mean(p), 1) if p else 0.0,
        "command_s": round(wall, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2, help="runs per arm (alternating)")
    ap.add_argument("--latency", type=float, default=0.02, help="seconds per call at the stub server")
    ap.add_argument("--rules", default="mafiascope7")
    ap.add_argument("--probes", default="default")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="mafialab-gc-") as tmp,
        OpenAIStub(latency_s=args.latency).in_thread() as stub,
    ):
        work = Path(tmp)
        spec = f"openai/stub?base_url={stub.base_url}"
        season = work / "season.yaml"
        roster = [{"agent": spec, "name": f"m{i}"} for i in range(load_rules(args.rules).n_seats)]
        season.write_text(
            yaml.safe_dump(
                {
                    "name": "gc",
                    "rules": args.rules,
                    "games": args.games,
                    "seed": 0,
                    "roster": roster,
                    "probes": args.probes,
                    "parallelism": {"games": 2},
                }
            )
        )
        for _ in range(args.rounds):
            for arm in ("no-freeze", "freeze"):
                rows.append(run_once(arm, season, work))
    medians = {
        arm: {
            k: round(statistics.median(r[k] for r in rows if r["arm"] == arm), 1)
            for k in ("gen2_collections", "gen2_total_ms", "gen2_max_ms", "gen2_mean_ms", "command_s")
        }
        for arm in ("no-freeze", "freeze")
    }
    print(json.dumps({"games": args.games, "latency_s": args.latency, "runs": rows, "median": medians}, indent=1))


if __name__ == "__main__":
    main()
