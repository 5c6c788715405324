"""`mafialab view` at corpus scale: wall time and peak memory over replicated probed games.

Usage: python benchmarks/viewer_scale.py [GAMES ...] [--jobs N]   (default: 100 1000)

Plays one probed mafiascope7 game of scripted agents (default battery), copies it under
fresh game ids into a corpus of each size (in a temporary folder, removed afterwards), and
runs ``mafialab view CORPUS --out SITE --cache CACHE`` in a child process three times: the
first build (empty site, empty summary cache), the same again (nothing changed: every game's
files and summary are reused), then a rebuild into the same site after 100 more games were
added (only those are built; the index, pages and corpus figures are rewritten).
Peak memory is the largest sum, sampled every 50 ms, of the resident memory of the child and
its worker processes. Prints JSON: per size, seconds, peak RSS (MiB), games built and site
data (MB) of each run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE

ADDED = 100
"""Games added before the rebuild."""


def replicate(src: Path, dst: Path, new_id: str) -> None:
    """Copy a game's logs to ``dst`` under ``new_id`` (every record's game id replaced)."""
    dst.mkdir(parents=True)
    old_id = json.loads((src / GAME_FILE).read_text(encoding="utf-8").splitlines()[0])["game_id"]
    for name in (GAME_FILE, PROBES_FILE, CALLS_FILE):
        if (src / name).is_file():
            (dst / name).write_text((src / name).read_text(encoding="utf-8").replace(old_id, new_id), encoding="utf-8")


def _tree_rss(p: psutil.Process) -> int:
    total = 0
    for q in [p, *p.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):  # a worker that just ended
            total += q.memory_info().rss
    return total


def run_view(corpus: Path, site: Path, cache: Path, jobs: int) -> dict[str, float]:
    """One ``mafialab view`` in a child process: seconds, peak RSS of its process tree, what it printed."""
    args = [sys.executable, "-m", "mafialab", "view", str(corpus), "-o", str(site), "--cache", str(cache)]
    if jobs:
        args += ["--jobs", str(jobs)]
    log = site.parent / f"{site.name}.log"
    t0 = time.perf_counter()
    with log.open("w") as fh:
        child = subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT, text=True)
        proc = psutil.Process(child.pid)
        peak = 0
        while child.poll() is None:
            with contextlib.suppress(psutil.Error):  # the child just ended
                peak = max(peak, _tree_rss(proc))
            time.sleep(0.05)
    out = log.read_text()
    if child.returncode != 0:
        raise SystemExit(f"view failed ({child.returncode}):\n{out}")
    line = " ".join(x for x in out.splitlines() if "Built" in x or "built" in x)
    return {"s": round(time.perf_counter() - t0, 1), "peak_rss_mib": round(peak / 2**20), "says": line[-160:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[100, 1000])
    ap.add_argument("--jobs", type=int, default=0, help="view --jobs (0: its default)")
    a = ap.parse_args()
    out: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        play = ["play", "-r", "mafiascope7", "-a", "scripted", "-p", "default", "-o", str(root / "src")]
        subprocess.run([sys.executable, "-m", "mafialab", *play], check=True, stdout=subprocess.DEVNULL)
        src = next(p.parent for p in (root / "src").rglob(GAME_FILE))
        for n in a.sizes:
            corpus, site, cache = root / f"c{n}", root / f"site{n}", root / f"cache{n}"
            for i in range(n):
                replicate(src, corpus / f"g{i:06d}", f"copy-{i:06d}")
            row = {"first": run_view(corpus, site, cache, a.jobs)}
            row["unchanged"] = run_view(corpus, site, cache, a.jobs)
            for i in range(n, n + ADDED):
                replicate(src, corpus / f"g{i:06d}", f"copy-{i:06d}")
            row[f"added_{ADDED}"] = run_view(corpus, site, cache, a.jobs)
            size = sum(p.stat().st_size for p in (site / "data").rglob("*") if p.is_file())
            row["site_data_mb"] = round(size / 1e6, 1)  # type: ignore[assignment]
            out[str(n)] = row
            shutil.rmtree(corpus)
            shutil.rmtree(site)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
