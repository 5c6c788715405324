"""`mafialab import kaggle` throughput and peak memory on synthesised Kaggle Werewolf corpora.

Usage: python benchmarks/import_kaggle.py [--episodes 1000] [--report] [--work DIR] [--json FILE]

Builds a folder of ``--episodes`` replays by repeating the fixture replays of
``tests/data/kaggle/replays`` (kaggle-environments 1.33.2, random agents) under fresh episode ids,
then runs, as a user types it and in a child process, ``mafialab import kaggle SRC --out DST``
(and with ``--report``, ``mafialab report DST --by agent --format json --no-cache``). Prints
episodes per second, wall seconds and the child's peak RSS (``ru_maxrss``, MiB) for the first
import and for a re-run into the same DST (every game already there: the resume path). The work
folder (``--work``, default a temporary folder) is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "data" / "kaggle" / "replays"
CHILD = (
    "import atexit, resource, sys\n"
    "atexit.register(lambda: print(f'maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}', file=sys.stderr))\n"
    "from mafialab.cli import main\n"
    "sys.argv = ['mafialab', *sys.argv[1:]]\n"
    "main()\n"
)


def synthesise(src: Path, n: int) -> None:
    """``n`` replays in ``src``: the fixtures in turn, each with a fresh ``id``."""
    replays = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.json"))]
    src.mkdir(parents=True)
    for i in range(n):
        r = dict(replays[i % len(replays)])
        r["id"] = f"synth-{i:06d}"
        (src / f"episode-{i:06d}.json").write_text(json.dumps(r), encoding="utf-8")


def run(args: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"mafialab {' '.join(args)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    rss = next((int(line.split()[1]) for line in p.stderr.splitlines() if line.startswith("maxrss ")), 0)
    return {"seconds": round(wall, 2), "peak_rss_mib": round(rss / 1024, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(dir=a.work, prefix="import-kaggle-"))
    try:
        src, dst = work / "replays", work / "logs"
        synthesise(src, a.episodes)
        mb = sum(p.stat().st_size for p in src.iterdir()) / 2**20
        rows: dict[str, Any] = {"episodes": a.episodes, "replays_mib": round(mb, 1)}
        first = run(["import", "kaggle", str(src), "--out", str(dst)])
        rows["import"] = {**first, "episodes_per_s": round(a.episodes / first["seconds"], 1)}
        again = run(["import", "kaggle", str(src), "--out", str(dst)])
        rows["import_again"] = {**again, "episodes_per_s": round(a.episodes / again["seconds"], 1)}
        if a.report:
            rows["report_by_agent"] = run(["report", str(dst), "--by", "agent", "--format", "json", "--no-cache"])
        print("| step | episodes | seconds | episodes/s | peak RSS (MiB) |\n| --- | --- | --- | --- | --- |")
        for key in ("import", "import_again", "report_by_agent"):
            if key in rows:
                r = rows[key]
                per_s = r.get("episodes_per_s", "")
                print(f"| {key} | {a.episodes} | {r['seconds']} | {per_s} | {r['peak_rss_mib']} |")
        print(f"replays: {rows['replays_mib']} MiB")
        if a.json is not None:
            a.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
