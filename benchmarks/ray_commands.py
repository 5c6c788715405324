"""``season run``, ``fork run -n`` and ``bifurcate run`` through ``--ray local`` give a local run's files.

Runs each command twice as a user types it, once locally and once as Ray tasks on a local
instance (scripted and random agents, so no model server), and compares what they wrote:
every game's ``game.jsonl`` (clock fields aside) and ``probes.jsonl`` (in key order, clock and
latency aside), the season's slots and leaderboard, the bifurcation's samples, points and fork
outcomes. Prints JSON: per command, the number of games compared, whether all are equal and
the two wall times (interpreter and Ray start included).

Usage: nice -n 15 python benchmarks/ray_commands.py [--games 20] [--replicas 20] [--resamples 40 --keep 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from mafialab.record import GAME_FILE, PROBES_FILE, probe_sort_key, read_records, strip_clock

ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}


def _run(args: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mafialab", *args], capture_output=True, text=True, env=ENV)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return round(time.perf_counter() - t0, 2)


def _games(root: Path) -> dict[str, Any]:
    out = {}
    for f in sorted(root.rglob(GAME_FILE)):
        probes = (
            sorted(read_records(f.parent / PROBES_FILE), key=probe_sort_key)
            if (f.parent / PROBES_FILE).is_file()
            else []
        )
        for p in probes:
            p.pop("ts", None)
            p.pop("latency_ms", None)
        out[str(f.parent.relative_to(root))] = (strip_clock(read_records(f)), probes)
    return out


def _season_extra(out: Path) -> Any:
    slots = json.loads((out / "season.json").read_text())["slots"]
    board = json.loads((out / "index.json").read_text())["leaderboard"]
    return [{k: v for k, v in s.items() if k != "history"} for s in slots], board


def _bif_extra(out: Path) -> Any:
    samples = {
        f.name: sorted(read_records(f), key=lambda r: r["sample_idx"]) for f in sorted((out / "samples").iterdir())
    }
    forks = sorted(read_records(out / "forks.jsonl"), key=lambda r: (r["point_id"], r["variant_idx"]))
    return samples, read_records(out / "points.jsonl"), forks


def _compare(name: str, tmp: Path, args: list[str], extra: Any = None) -> dict[str, Any]:
    walls = {mode: _run([*args, *flags, "--out", str(tmp / f"{name}-{mode}")])
             for mode, flags in (("local", []), ("ray", ["--ray", "local"]))}  # fmt: skip
    a, b = _games(tmp / f"{name}-local"), _games(tmp / f"{name}-ray")
    equal = a == b and (extra is None or extra(tmp / f"{name}-local") == extra(tmp / f"{name}-ray"))
    return {"games": len(a), "equal": equal, "wall_s": walls}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=20, help="season games")
    ap.add_argument("--replicas", type=int, default=20, help="fork replicas")
    ap.add_argument("--resamples", type=int, default=40)
    ap.add_argument("--keep", type=int, default=8)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mafialab-ray-commands-"))
    season = tmp / "season.yaml"
    season.write_text(yaml.safe_dump({
        "name": "bench", "rules": "werewolf7", "games": args.games, "seed": 5, "probes": "suspicion",
        "roster": [{"agent": "scripted", "name": f"s{i}"} for i in range(5)]
        + [{"agent": "random", "name": f"r{i}"} for i in range(5)],
    }))  # fmt: skip
    report: dict[str, Any] = {"logs": str(tmp)}
    report["season run"] = _compare("season", tmp, ["season", "run", str(season)], _season_extra)
    _run(["play", "-r", "mafiascope7", "-a", "scripted", "-s", "3", "--probes", "suspicion", "--out", str(tmp / "p")])
    parent = next(d for d in (tmp / "p").iterdir() if (d / GAME_FILE).is_file())
    cmd = [sys.executable, "-m", "mafialab", "fork", "steps", str(parent), "--format", "json"]
    steps = json.loads(subprocess.run(cmd, capture_output=True, text=True, env=ENV, check=True).stdout)
    vote = next(s for s in steps if s["kind"] == "vote")
    report["fork run -n"] = _compare(
        "fork", tmp, ["fork", "run", str(parent), "--at", str(vote["id"]), "-n", str(args.replicas), "--probes",
                      "suspicion"],
    )  # fmt: skip
    report["bifurcate run"] = _compare(
        "bifurcate", tmp, ["bifurcate", "run", str(parent), "--points", "innocent-votes", "--resamples",
                           str(args.resamples), "--keep", str(args.keep), "--sampler", "scripted"],
        _bif_extra,
    )  # fmt: skip
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
