"""Viewer benchmark: site build time and peak memory; time to first render in chromium.

Usage: python benchmarks/viewer.py [--games 100] [--branches 500] [--shared ../shared] [--no-shared] [--no-browser]

Measures, each build in a fresh subprocess (peak RSS of that process):
  1. ``--games`` probed scripted games (rule sets mafiascope7, werewolf7, arena12 in turn),
     played by ``mafialab play --agents scripted --probes default``.
  2. Every corpus of the shared MafiaScope recordings, imported first (needs the importer,
     ``mafialab.record.import_mafiascope``; skipped with a note otherwise).
  3. Time to first render (navigation start to the game view drawn) of the largest game of
     each site (by log size; an arena12 game with the default battery logs about 28 MB), in
     headless Debian chromium.
  4. A site with ``--branches`` branches of one probed scripted mafiascope7 game (``fork
     run`` with resample at public steps, 10 replicas a batch, scripted continuations): its
     build, and the first render of a branch page (prefix dimmed, fork step marked) and of
     the parent's page (its branch tree and sensitivity strip).

Targets (issue 5): 100 probed games build in < 30 s and < 2 GiB; a 3 MB game renders in < 1 s.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from mafialab.testing import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
RULES = ("mafiascope7", "werewolf7", "arena12")


def _tree_rss_mib() -> float:
    """Resident memory of this process and its children (Linux /proc), MiB."""
    pids = [os.getpid()]
    try:
        kids = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    except OSError:
        kids = []
    pids += [int(k) for k in kids]
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def build_child(src: str, out: str) -> None:
    """Build one site and print wall time, CPU time and peak RSS (run in a fresh process).

    ``peak_rss_mib`` is the largest sum, sampled every 50 ms, of the resident memory of this
    process and its worker processes (the number to hold against the 2 GiB target).
    """
    from mafialab.viewer import build_site

    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_rss_mib())

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t0 = time.perf_counter()
    s = build_site(Path(src), Path(out))
    dt = time.perf_counter() - t0
    done.set()
    th.join()
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    print(json.dumps({
        "games": len(s.games), "seconds": round(dt, 2), "cpu_seconds": round(cpu, 1),
        "peak_rss_mib": round(max(peak[0], me.ru_maxrss / 1024), 1),
        "peak_rss_mib_one_process": round(max(me.ru_maxrss, kids.ru_maxrss) / 1024, 1),
        "data_mb": round(s.bytes_written / 1e6, 1), "skipped": len(s.skipped),
    }))  # fmt: skip


def measure_build(src: Path, out: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--build-child", str(src), str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def make_probed_games(out: Path, n: int) -> str:
    """Play ``n`` scripted games with the default probe battery under ``out`` (rule sets in turn)."""
    per = [n // len(RULES) + (i < n % len(RULES)) for i in range(len(RULES))]
    for rules, k in zip(RULES, per, strict=True):
        if k:
            subprocess.run(
                [sys.executable, "-m", "mafialab", "play", "--rules", rules, "--agents", "scripted",
                 "--probes", "default", "--games", str(k), "--out", str(out)],
                check=True, capture_output=True,
            )  # fmt: skip
    return "mafialab play --agents scripted --probes default"


def first_render(site: Path, logs: Path) -> dict:
    """Time to first render of the largest game (by log size) of ``site``: median of 3 loads, ms.

    Measured from navigation start to the game view drawn (transcript, graph and agent
    panels), including loading ``index.js``, the game file and every seat file.
    """
    from playwright.sync_api import sync_playwright

    from mafialab.record import iter_game_dirs, read_game

    def log_size(d: Path) -> int:
        return sum(f.stat().st_size for f in d.glob("*.jsonl"))

    largest = max(iter_game_dirs(logs), key=log_size)
    gid = read_game(largest).game_id
    times = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        for _ in range(3):
            pg = b.new_page(viewport={"width": 1500, "height": 1000})
            pg.goto((site / "index.html").as_uri() + "#/game/" + gid, wait_until="commit")
            pg.wait_for_selector("#panels .card, .notes .note", timeout=30_000)
            times.append(pg.evaluate("performance.now()"))
            pg.close()
        b.close()
    times.sort()
    index_js = (site / "data" / "index.js").read_text(encoding="utf-8")
    index = json.loads(index_js[len('MAFIALAB_DATA("index","index",') : index_js.rindex(");")])
    fid = next(r["file"] for r in index["games"] if r["id"] == gid)
    files = [site / "data" / "g" / f"{fid}.js", *(site / "data" / "s" / fid).glob("*.js")]
    return {
        "game": gid,
        "log_mb": round(log_size(largest) / 1e6, 2),
        "loaded_data_mb": round(sum(f.stat().st_size for f in files) / 1e6, 2),
        "first_render_ms": round(times[1]),
    }


def make_branches(out: Path, n: int) -> str:
    """A probed scripted mafiascope7 parent and ``n`` branches of it under ``out`` (10 replicas a batch)."""
    import asyncio

    from mafialab.agents import make_agent
    from mafialab.counterfactual import Resample, fork_steps, run_fork
    from mafialab.harness import play_game
    from mafialab.probes import make_probe_observer
    from mafialab.record import read_game
    from mafialab.rules import load_rules

    async def make() -> None:
        rules = load_rules("mafiascope7")
        agents = [make_agent("scripted", s, rules, 1) for s in range(rules.n_seats)]
        obs = make_probe_observer("suspicion", agents, rules, 1, out=out, game_id="parent")
        await play_game(rules, agents, 1, out=out, game_id="parent", observers=[obs] if obs else [])
        parent = read_game(out / "parent")
        public = [s for s in fork_steps(parent) if s.public]
        left, k = n, 0
        while left > 0:
            step = public[k % len(public)]
            reps = min(10, left)
            await run_fork(parent, step, Resample(), n=reps, seed=k // len(public), out=out / "forks",
                           agents="scripted", check_remote=False)  # fmt: skip
            left -= reps
            k += 1

    asyncio.run(make())
    return "probed (suspicion battery) scripted mafiascope7 parent; fork run --resample, 10 replicas a batch"


def render_branch(site: Path) -> dict:
    """First render (median of 3, ms) of a branch page and of its parent's page with the tree."""
    from playwright.sync_api import sync_playwright

    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    index = json.loads(text[len('MAFIALAB_DATA("index","index",') : text.rindex(");")])
    branch = next(r["id"] for r in index["games"] if r.get("parent"))
    out = {"branch": branch, "batches": len(index.get("batches", [])), "index_mb": round(len(text) / 1e6, 2)}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        for name, frag, sel in (("branch_page_ms", "#/game/" + branch, "#transcript li.forkstep"),
                                ("parent_page_ms", "#/game/parent", "ul.branchtree li.batchnode"),
                                ("dashboard_ms", "#/", "tr.treerow li.batchnode")):  # fmt: skip
            times = []
            for _ in range(3):
                pg = b.new_page(viewport={"width": 1500, "height": 1000})
                pg.goto((site / "index.html").as_uri() + frag, wait_until="commit")
                pg.wait_for_selector(sel, timeout=60_000)
                times.append(pg.evaluate("performance.now()"))
                pg.close()
            out[name] = round(sorted(times)[1])
        b.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--branches", type=int, default=500, help="Branches of the branch site (0: skip it).")
    ap.add_argument("--no-shared", action="store_true", help="Skip the shared MafiaScope corpora.")
    ap.add_argument("--build-child", nargs=2, metavar=("SRC", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.build_child:
        build_child(*args.build_child)
        return
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        sites = {}
        if args.games > 0:
            t0 = time.perf_counter()
            how = make_probed_games(t / "probed", args.games)
            result["probed"] = {"made_by": how, "play_seconds": round(time.perf_counter() - t0, 1)}
            result["probed"].update(measure_build(t / "probed", t / "site-probed"))
            sites["probed"] = (t / "site-probed", t / "probed")
        if args.branches > 0:
            t0 = time.perf_counter()
            how = make_branches(t / "branches", args.branches)
            result["branches"] = {"made_by": how, "make_seconds": round(time.perf_counter() - t0, 1)}
            result["branches"].update(measure_build(t / "branches", t / "site-branches"))
            if not args.no_browser and CHROMIUM.exists():
                result["branches"]["render"] = render_branch(t / "site-branches")
        ms = args.shared / "data" / "mafiascope"
        rec = importlib.import_module("mafialab.record")
        importer = getattr(rec, "import_mafiascope", None)
        if args.no_shared:
            result["shared"] = "skipped: --no-shared"
        elif importer is None:
            result["shared"] = "skipped: the MafiaScope importer is not installed"
        elif not ms.is_dir():
            result["shared"] = f"skipped: {ms} not found"
        else:
            result["shared"] = {}
            for corpus in sorted(p.name for p in ms.iterdir() if p.is_dir() and p.name != "configs"):
                dst = t / "imported" / corpus
                importer(ms / corpus, dst)
                result["shared"][corpus] = measure_build(dst, t / f"site-{corpus}")
                sites[corpus] = (t / f"site-{corpus}", dst)
        if not args.no_browser and CHROMIUM.exists():
            result["first_render"] = {name: first_render(s, lg) for name, (s, lg) in sites.items()}
        else:
            result["first_render"] = "skipped: chromium not found or --no-browser"
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
