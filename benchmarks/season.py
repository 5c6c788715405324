"""Season throughput: a scripted arena12 season judged by a mock judge, and the seating planner.

Usage: python benchmarks/season.py [--games 50] [--entries 16] [--parallel 4]
Prints JSON: wall seconds for planning the seating (and for a 40-entry, 200-game plan),
for playing + judging the season, for building the index, and games per second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from mafialab.arena import build_index, plan_seating, run_season, season_from_dict
from mafialab.models import ChatRequest, MockModel
from mafialab.rules import ARENA12


def judge(request: ChatRequest) -> dict:
    names = request.json_schema["properties"]["mvp"]["enum"]
    return {
        "headline": "h",
        "recap": "r",
        "mvp": names[0],
        "players": [{"name": n, "deception": 5, "detection": 5, "influence": i % 11} for i, n in enumerate(names)],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=50)
    ap.add_argument("--entries", type=int, default=16)
    ap.add_argument("--parallel", type=int, default=4)
    args = ap.parse_args()
    t = time.perf_counter()
    plan_seating(40, ARENA12, list(range(200)), 0)
    plan_big = time.perf_counter() - t
    roster = [{"agent": "scripted" if i % 2 else "random", "name": f"e{i}"} for i in range(args.entries)]
    cfg = season_from_dict(
        {
            "name": "bench",
            "games": args.games,
            "roster": roster,
            "judges": ["mock/j"],
            "parallelism": {"games": args.parallel},
        }
    )
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "s"
        t = time.perf_counter()
        asyncio.run(run_season(cfg, out, judges={"mock/j": MockModel(judge, name="mock/j")}))
        season_s = time.perf_counter() - t
        t = time.perf_counter()
        build_index(out)
        index_s = time.perf_counter() - t
    print(
        json.dumps(
            {
                "games": args.games,
                "entries": args.entries,
                "plan_40x200_s": round(plan_big, 3),
                "season_s": round(season_s, 2),
                "games_per_s": round(args.games / season_s, 1),
                "index_s": round(index_s, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
