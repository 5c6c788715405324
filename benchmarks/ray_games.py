"""Scripted games through ``play --ray local`` give the same logs as a local run.

Plays ``--games`` werewolf7 games (scripted agents, suspicion battery) twice with the
command a user types, once locally and once as Ray tasks on a local instance, and compares
every game's ``game.jsonl`` (clock fields aside) and ``probes.jsonl`` (in key order, clock
and latency aside). Prints JSON: games, equal, wall times.

Usage: nice -n 15 python benchmarks/ray_games.py [--games 100] [--rules werewolf7]
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

from mafialab.record import GAME_FILE, PROBES_FILE, iter_game_dirs, probe_sort_key, read_records, strip_clock


def _logs(root: Path) -> dict[str, Any]:
    out = {}
    for d in iter_game_dirs(root):
        probes = sorted(read_records(d / PROBES_FILE), key=probe_sort_key) if (d / PROBES_FILE).is_file() else []
        for p in probes:
            p.pop("ts", None)
            p.pop("latency_ms", None)
        out[d.name] = (strip_clock(read_records(d / GAME_FILE)), probes)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--rules", default="werewolf7")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mafialab-ray-bench-"))
    base = [sys.executable, "-m", "mafialab", "play", "-r", args.rules, "-a", "scripted", "--games", str(args.games),
            "--probes", "suspicion"]  # fmt: skip
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    walls = {}
    for name, extra in (("local", []), ("ray", ["--ray", "local"])):
        t0 = time.perf_counter()
        proc = subprocess.run([*base, *extra, "-o", str(tmp / name)], capture_output=True, text=True, env=env)
        walls[name] = round(time.perf_counter() - t0, 2)
        if proc.returncode != 0:
            sys.exit(f"{name} run failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    a, b = _logs(tmp / "local"), _logs(tmp / "ray")
    differ = sorted(g for g in set(a) | set(b) if a.get(g) != b.get(g))
    print(json.dumps({"games": len(a), "games_ray": len(b), "equal": not differ, "differ": differ[:5],
                      "wall_s": walls, "logs": str(tmp)}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
