"""Time and peak memory of `export parquet` at corpus scale, and DuckDB vs Polars over the result.

Usage: python benchmarks/export_scale.py [--games 100,1000] [--work DIR]

Plays two probed games (mafiascope7 and werewolf7, scripted agents, default battery; about
1.5 MB of logs each), replicates them with fresh game ids into corpora of each size, and
exports each corpus in a child process (so its peak RSS is the export's own). Prints a table:
games, wall seconds, seconds per game, peak RSS (MiB), dataset size (MiB); the RSS of a
child that only imports mafialab is printed as the floor. Then, where DuckDB and Polars are
installed, times one corpus query on the largest export with each (7 runs each, alternating;
both must give the same numbers): the mean stated confidence of role_assessment answers per rule set.
The corpora (about 1.5 GB at 1,000 games) live under --work (default a temporary folder) and
are removed afterwards. Do not run it at 10,000 games on a small disk (about 15 GB).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CHILD = """
import json, resource, sys, time
from pathlib import Path
from mafialab.analysis import export_parquet
import pyarrow.parquet
t0 = time.perf_counter()
if sys.argv[1] != "-":  # "-": the floor, imports only
    export_parquet(Path(sys.argv[1]), Path(sys.argv[2]), skipped=[])
print(json.dumps({"s": time.perf_counter() - t0, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

DUCKDB_QUERY = """
SELECT g.rules_id, avg(TRY_CAST(a.confidence AS DOUBLE)) AS mean_confidence, count(*) AS n
FROM (SELECT game_id, unnest(from_json(answer_parsed, '[{"confidence": "VARCHAR"}]')) AS a
      FROM read_parquet('{out}/probes/*.parquet') WHERE probe_id = 'role_assessment') p
JOIN read_parquet('{out}/games/*.parquet') g USING (game_id)
GROUP BY g.rules_id ORDER BY g.rules_id
"""


def play_sources(work: Path) -> list[Path]:
    """One probed game per rule set, played with the CLI; their directories."""
    games = []
    for rules, seed in (("mafiascope7", 3), ("werewolf7", 4)):
        out = work / "src" / rules
        subprocess.run([sys.executable, "-m", "mafialab", "play", "--rules", rules, "--agents", "scripted",
                        "--probes", "default", "--seed", str(seed), "--out", str(out)],
                       check=True, capture_output=True)  # fmt: skip
        (game,) = [p for p in out.iterdir() if (p / "game.jsonl").is_file()]
        games.append(game)
    return games


def replicate(sources: list[Path], n: int, root: Path) -> Path:
    """``n`` games under ``root``: copies of ``sources`` in turn, each with a fresh game id."""
    texts = [(g.name, {f.name: f.read_bytes() for f in g.iterdir() if f.suffix == ".jsonl"}) for g in sources]
    for i in range(n):
        old, files = texts[i % len(texts)]
        new = f"{old}-copy{i:06d}"
        (root / new).mkdir(parents=True)
        for name, data in files.items():
            (root / new / name).write_bytes(data.replace(old.encode(), new.encode()))
    return root


def child(*args: str) -> dict[str, Any]:
    res = subprocess.run([sys.executable, "-c", CHILD, *args], check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def size_mib(p: Path) -> float:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) / 2**20


def queries(out: Path, rounds: int = 7) -> None:
    """Time the same corpus query with DuckDB and with Polars (alternating, ``rounds`` each)."""
    engines: dict[str, Any] = {}
    try:
        import duckdb
    except ImportError:
        print("duckdb: not installed")
    else:
        con = duckdb.connect()
        engines["duckdb " + duckdb.__version__] = lambda: con.sql(DUCKDB_QUERY.replace("{out}", str(out))).fetchall()
    try:
        import polars as pl
    except ImportError:
        print("polars: not installed")
    else:

        def run() -> list[tuple[Any, ...]]:
            conf = pl.col("a").struct.field("confidence").cast(pl.Float64, strict=False)
            p = (
                pl.scan_parquet(out / "probes" / "*.parquet")
                .filter(pl.col("probe_id") == "role_assessment")
                .select("game_id", pl.col("answer_parsed").str.json_decode(
                    pl.List(pl.Struct({"confidence": pl.String}))).alias("a"))
                .explode("a")
                .select("game_id", conf.alias("c"))
            )  # fmt: skip
            g = pl.scan_parquet(out / "games" / "*.parquet").select("game_id", "rules_id")
            q = p.join(g, on="game_id").group_by("rules_id").agg(pl.col("c").mean(), pl.len()).sort("rules_id")
            return q.collect().rows()

        engines["polars " + pl.__version__] = run
    times: dict[str, list[float]] = {name: [] for name in engines}
    results: dict[str, Any] = {}
    for _ in range(rounds):
        for name, fn in engines.items():
            t0 = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t0)
    print(f"\nmean role_assessment confidence per rule set, over the largest export ({rounds} runs each):")
    for name, ts in times.items():
        res = [(r, round(m, 3), n) for r, m, n in results[name]]
        print(f"{name:<16} min {min(ts):.3f} s  median {statistics.median(ts):.3f} s   {res}")
    if len(results) == 2:
        a, b = results.values()
        same = [(r, n) for r, _, n in a] == [(r, n) for r, _, n in b] and all(
            abs(x[1] - y[1]) < 1e-9 for x, y in zip(a, b, strict=True)
        )
        print("same numbers:", same)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default="100,1000", help="corpus sizes, comma-separated")
    ap.add_argument("--work", type=Path, default=None, help="folder for the corpora (default: a temporary one)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.games.split(",")]
    work = Path(tempfile.mkdtemp(prefix="export-scale-", dir=args.work))
    try:
        sources = play_sources(work)
        floor = child("-")
        print(f"imports only: {floor['rss_kib'] / 1024:.0f} MiB RSS")
        print(f"{'games':>7} {'wall s':>8} {'s/game':>8} {'peak RSS MiB':>13} {'dataset MiB':>12} {'logs MiB':>9}")
        last = None
        for n in sizes:
            root = replicate(sources, n, work / f"logs{n}")
            out = work / f"out{n}"
            r = child(str(root), str(out))
            print(f"{n:>7} {r['s']:>8.1f} {r['s'] / n:>8.3f} {r['rss_kib'] / 1024:>13.0f} {size_mib(out):>12.1f} "
                  f"{size_mib(root):>9.0f}")  # fmt: skip
            if last is not None:
                shutil.rmtree(last, ignore_errors=True)
            shutil.rmtree(root)
            last = out
        if last is not None:
            queries(last)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
