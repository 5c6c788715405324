"""`mafialab report` at corpus scale: wall time and peak memory over replicated probed games.

Usage: python benchmarks/corpus_scale.py [GAMES ...]   (default: 100 1000)

Plays one probed mafiascope7 game of scripted agents (default battery), copies it under fresh
game ids into corpora of each size (in a temporary folder, removed afterwards), and runs
``mafialab report --format json`` on each in a child process three ways: without the cache,
filling an empty cache, and from the filled cache after 10 % more games were added. Prints
JSON: per size, seconds and peak RSS (MiB, the child's ``ru_maxrss``) of each run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE


def _replicate(src: Path, dst: Path, new_id: str) -> None:
    dst.mkdir(parents=True)
    old_id = json.loads((src / GAME_FILE).read_text().splitlines()[0])["game_id"]
    for name in (GAME_FILE, PROBES_FILE, CALLS_FILE):
        if (src / name).is_file():
            (dst / name).write_text((src / name).read_text().replace(old_id, new_id))


_CHILD = (
    "import atexit, resource, sys\n"
    "atexit.register(lambda: print('maxrss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr))\n"
    "from mafialab.cli import main\n"
    "sys.argv = ['mafialab', *sys.argv[1:]]\n"
    "main()\n"
)
"""A ``mafialab`` process that prints its own peak RSS (KiB, Linux) on exit."""


def _run(args: list[str]) -> dict[str, float]:
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-c", _CHILD, "report", *args, "-f", "json"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    kib = int(next(x for x in reversed(res.stderr.splitlines()) if x.startswith("maxrss")).split()[1])
    return {"s": round(time.perf_counter() - t0, 2), "peak_rss_mib": round(kib / 1024, 1)}


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [100, 1000]
    out: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        play = ["play", "-r", "mafiascope7", "-a", "scripted", "-p", "default", "-o", str(root / "src")]
        subprocess.run([sys.executable, "-c", _CHILD, *play], check=True, stdout=subprocess.DEVNULL)
        src = next(p.parent for p in (root / "src").rglob(GAME_FILE))
        for n in sizes:
            corpus, cache = root / f"c{n}", root / f"cache{n}"
            for i in range(n):
                _replicate(src, corpus / f"g{i:06d}", f"copy-{i:06d}")
            row = {
                "no_cache": _run([str(corpus), "--no-cache"]),
                "fill_cache": _run([str(corpus), "--cache", str(cache)]),
            }
            for i in range(n, n + max(1, n // 10)):
                _replicate(src, corpus / f"g{i:06d}", f"copy-{i:06d}")
            row["added_10pct"] = _run([str(corpus), "--cache", str(cache)])
            out[str(n)] = row
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
