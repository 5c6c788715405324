"""`report`, `view` and `export parquet` at corpus scale: wall time and peak memory, first run and re-run.

Usage: python benchmarks/corpus_scale.py [--sizes 100,1000] [--added 100] [--source play|shared|DIR]
                                         [--commands report,view,export] [--work DIR] [--json FILE]

Builds corpora of each size from real recorded probed games replicated under fresh game ids:

* ``--source play`` (default): two probed games played with the CLI (mafiascope7 and werewolf7,
  scripted agents, default battery; about 1.5 MB of logs each);
* ``--source shared``: the MafiaScope ``en_demo`` corpus of ``$MAFIALAB_SHARED/data/mafiascope``
  converted by ``mafialab import mafiascope`` (imported games: probes, no model calls);
* ``--source DIR``: the games under DIR (e.g. another ``mafialab import`` output).

For each size it runs, as a user types them and each in its own child process, ``mafialab report
CORPUS --format json --cache C``, ``mafialab view CORPUS --out SITE`` and ``mafialab export parquet
CORPUS --out OUT`` (a first run into empty outputs), then adds ``--added`` games (100) and runs the
three again into the same cache, site and export (the re-run). Each run's wall time and peak RSS
are printed: the child's own peak (``ru_maxrss`` of ``RUSAGE_SELF``) and its largest worker
process's (``RUSAGE_CHILDREN``; ``view`` builds pages in worker processes), in MiB. The children
get ``XDG_CACHE_HOME`` under the work folder, so nothing is written outside it.

Everything is built under a temporary folder (``--work`` chooses where) and removed afterwards;
the disk used is printed. At 10,000 probed games that is about 18 GB (logs, site, dataset): run it
on a machine with the disk and the time for it. Prints a Markdown table, and JSON with ``--json``.
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

from mafialab.record import GAME_FILE, iter_game_dirs

CHILD = (
    "import atexit, resource, sys\n"
    "def _peak():\n"
    "    s = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "    c = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "    print(f'maxrss {s} {c}', file=sys.stderr)\n"
    "atexit.register(_peak)\n"
    "from mafialab.cli import main\n"
    "sys.argv = ['mafialab', *sys.argv[1:]]\n"
    "main()\n"
)
"""A ``mafialab`` process that prints its own and its largest child's peak RSS (KiB, Linux) on exit."""

COMMANDS = ("report", "view", "export")


def mafialab(args: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run ``mafialab ARGS`` in a child process: wall seconds and peak RSS (MiB) of it and its largest child."""
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)  # fmt: skip
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"mafialab {' '.join(args)} failed ({res.returncode}):\n{res.stderr[-3000:]}")
    peak = next(x for x in reversed(res.stderr.splitlines()) if x.startswith("maxrss")).split()
    return {"s": round(wall, 1), "rss_mib": round(int(peak[1]) / 1024), "child_rss_mib": round(int(peak[2]) / 1024)}


def sources(kind: str, work: Path, env: dict[str, str]) -> list[Path]:
    """The recorded probed games to replicate (their folders)."""
    if kind == "play":
        games = []
        for rules, seed in (("mafiascope7", 3), ("werewolf7", 4)):
            out = work / "src" / rules
            subprocess.run([sys.executable, "-m", "mafialab", "play", "--rules", rules, "--agents", "scripted",
                            "--probes", "default", "--seed", str(seed), "--out", str(out)],
                           check=True, capture_output=True, env=env)  # fmt: skip
            games += iter_game_dirs(out)
        return games
    if kind == "shared":
        shared = os.environ.get("MAFIALAB_SHARED")
        if not shared:
            raise SystemExit("--source shared needs MAFIALAB_SHARED (the folder holding data/mafiascope)")
        out = work / "src" / "en_demo"
        subprocess.run([sys.executable, "-m", "mafialab", "import", "mafiascope",
                        str(Path(shared) / "data" / "mafiascope" / "en_demo"), "--out", str(out)],
                       check=True, capture_output=True, env=env)  # fmt: skip
        return iter_game_dirs(out)
    games = iter_game_dirs(Path(kind))
    if not games:
        raise SystemExit(f"--source: no game under {kind}")
    return games


def replicate(games: list[Path], ids: range, root: Path) -> None:
    """Copies of ``games`` in turn under ``root``, one per number in ``ids``, each with a fresh game id."""
    texts = []
    for g in games:
        old = json.loads((g / GAME_FILE).read_text(encoding="utf-8").splitlines()[0])["game_id"]
        texts.append((old, {f.name: f.read_bytes() for f in g.iterdir() if f.suffix == ".jsonl"}))
    for i in ids:
        old, files = texts[i % len(texts)]
        new = f"scale-{i:06d}"
        (root / new).mkdir(parents=True)
        for name, data in files.items():
            (root / new / name).write_bytes(data.replace(old.encode(), new.encode()))


def disk_mib(p: Path) -> float:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 2**20


def argv(command: str, corpus: Path, out: Path) -> list[str]:
    if command == "report":
        return ["report", str(corpus), "--format", "json", "--cache", str(out)]
    if command == "view":
        return ["view", str(corpus), "--out", str(out)]
    return ["export", "parquet", str(corpus), "--out", str(out)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000", help="corpus sizes, comma-separated (e.g. 100,1000,10000)")
    ap.add_argument("--added", type=int, default=100, help="games added before the re-run (0: no re-run)")
    ap.add_argument("--source", default="play", help="play, shared, or a folder of recorded games")
    ap.add_argument("--commands", default=",".join(COMMANDS), help="of report,view,export")
    ap.add_argument("--work", type=Path, default=None, help="where the temporary folder goes")
    ap.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    commands = [c for c in args.commands.split(",") if c]
    if set(commands) - set(COMMANDS):
        raise SystemExit(f"--commands: of {','.join(COMMANDS)}")
    work = Path(tempfile.mkdtemp(prefix="corpus-scale-", dir=args.work))
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "xdg-cache")}
    results: dict[str, Any] = {"source": args.source, "added": args.added, "sizes": {}}
    try:
        games = sources(args.source, work, env)
        log_mib = sum(disk_mib(g) for g in games) / len(games)
        results["mib_per_game"] = round(log_mib, 2)
        print(f"source: {len(games)} game(s), {log_mib:.2f} MiB of logs each; work folder {work}", flush=True)
        floor = mafialab(["--help"], env)
        results["floor_rss_mib"] = floor["rss_mib"]
        print(f"mafialab --help: {floor['s']} s, {floor['rss_mib']} MiB (start-up floor)", flush=True)
        for n in sizes:
            corpus = work / f"corpus{n}"
            replicate(games, range(n), corpus)
            row: dict[str, Any] = {}
            outs = {c: work / f"{c}{n}" for c in commands}
            for c in commands:
                row[c] = {"first": mafialab(argv(c, corpus, outs[c]), env)}
                print(f"{n} games, {c}, first run: {row[c]['first']}", flush=True)
            replicate(games, range(n, n + args.added), corpus)
            for c in commands if args.added else ():
                row[c]["rerun"] = mafialab(argv(c, corpus, outs[c]), env)
                print(f"{n} + {args.added} games, {c}, re-run: {row[c]['rerun']}", flush=True)
            row["disk_mib"] = round(disk_mib(work), 1)
            print(f"{n} games: {row['disk_mib']:.0f} MiB of disk (corpus, outputs, cache)", flush=True)
            results["sizes"][str(n)] = row
            for p in (corpus, *outs.values()):
                shutil.rmtree(p, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nremoved {work}\n")
    print("| games | command | first run s | first peak RSS MiB (largest worker) | "
          f"re-run after +{args.added} s | re-run / first | re-run peak RSS MiB (largest worker) |")  # fmt: skip
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for n, row in results["sizes"].items():
        for c in commands:
            f, r = row[c]["first"], row[c].get("rerun")
            again = f"{r['s']} | {r['s'] / f['s']:.0%} | {r['rss_mib']} ({r['child_rss_mib']})" if r else "– | – | –"
            print(f"| {int(n):,} | {c} | {f['s']} | {f['rss_mib']} ({f['child_rss_mib']}) | {again} |")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
