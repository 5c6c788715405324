"""Belief-shift pipeline speed: annotate, freeze, run (mock model) and report.

Usage: python benchmarks/beliefshift.py [--games 20] [--models 40] [--corpus PATH]
Prints JSON. Games are scripted werewolf7 games (or, with --corpus, an already imported
mafialab log directory such as an import of corpus_v2). "run" uses an instant mock model, so
it measures the harness (prompt building, parsing, concurrency, writing), not a model. The
report is built over --models copies of the results (the paper's 40 configurations).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import tempfile
import time
from pathlib import Path

from mafialab.agents import make_agent
from mafialab.beliefshift import (
    RulesAnnotator,
    RunOptions,
    annotate_games,
    build_report,
    freeze,
    load_logs,
    read_annotations,
    read_results,
    run_bench,
    write_annotations,
    write_report,
)
from mafialab.beliefshift._schema import LABELS
from mafialab.harness import play_game
from mafialab.models import MockModel
from mafialab.rules import WEREWOLF7


def answers(req):
    names = list(req.json_schema["properties"])
    h = hashlib.sha256(req.messages[-1].content.encode()).digest()
    return {n: LABELS[h[i] % 7] for i, n in enumerate(names)}


async def main(args: argparse.Namespace) -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.corpus:
            logs = Path(args.corpus)
        else:
            logs = root / "games"
            for seed in range(args.games):
                agents = [make_agent("scripted", s, WEREWOLF7, seed) for s in range(7)]
                await play_game(WEREWOLF7, agents, seed, out=logs)
        games = load_logs([logs])
        t = time.perf_counter()
        res = await annotate_games(games, RulesAnnotator())
        out["annotate_s"] = round(time.perf_counter() - t, 3)
        out["messages"] = len(res.header.scanned)
        out["annotations"] = len(res.annotations)
        write_annotations(root / "ann.jsonl", res)
        t = time.perf_counter()
        bench = freeze(games, read_annotations(root / "ann.jsonl"))
        out["freeze_s"] = round(time.perf_counter() - t, 3)
        out["observations"] = bench.header.n_observations
        t = time.perf_counter()
        s = await run_bench(bench.header, bench.items, MockModel(answers), root / "r.jsonl", RunOptions(concurrency=32))
        out["run_mock_s"] = round(time.perf_counter() - t, 3)
        out["completion"] = s.completion
        _, recs, _ = read_results(root / "r.jsonl")
        many = [r.model_copy(update={"label": f"m{i}", "model": f"m{i}"}) for i in range(args.models) for r in recs]
        t = time.perf_counter()
        rep = build_report(many)
        write_report(rep, root / "rep")
        out["report_s"] = round(time.perf_counter() - t, 3)
        out["report_models"] = args.models
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--models", type=int, default=40)
    p.add_argument("--corpus", default=None)
    print(json.dumps(asyncio.run(main(p.parse_args())), indent=2))
