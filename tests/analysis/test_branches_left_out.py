"""Branches are left out of report and beliefshift freeze unless asked for; clusters are root games."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mafialab.agents import make_agent
from mafialab.analysis import compute_report, load_games
from mafialab.beliefshift import load_logs as bs_load_games
from mafialab.counterfactual import Resample, fork_steps, run_fork
from mafialab.harness import play_game
from mafialab.record import read_game
from mafialab.rules import WEREWOLF7


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for seed in (1, 2):
        agents = [make_agent("scripted", s, WEREWOLF7, seed) for s in range(WEREWOLF7.n_seats)]
        res = asyncio.run(play_game(WEREWOLF7, agents, seed, out=root))
        assert res.path is not None
        step = next(s for s in fork_steps(read_game(res.path)) if s.kind == "speak" and s.round == 1)
        asyncio.run(run_fork(res.path, step.id, Resample(), n=2, out=root / "forks"))
    return root


def test_report_leaves_out_branches_unless_included(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    left: list[str] = []
    games = load_games(root, left_out=left)
    assert len(games) == 2 and len(left) == 4 and all("~" in g for g in left)
    both = load_games(root, include_branches=True)
    assert len(both) == 6
    assert {g.root for g in both} == {g.game_id for g in games}
    assert sum(g.branch for g in both) == 4
    rep = compute_report(both, resamples=50).model_dump(mode="json")
    assert rep["games"] == 6


def test_beliefshift_freeze_input_leaves_out_branches(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    assert len(bs_load_games([root], include_branches=False)) == 2
    assert len(bs_load_games([root])) == 6


def test_every_report_output_states_the_inclusion_rule(tmp_path: Path) -> None:
    import csv
    import io
    import json

    from typer.testing import CliRunner

    from mafialab.cli import app

    root = _corpus(tmp_path)
    run = CliRunner().invoke
    res = run(app, ["report", str(root), "--resamples", "20"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "corpus figures: 2 games; 4 fork branches left out (--include-branches adds branches)" in res.stdout
    rep = json.loads(run(app, ["report", str(root), "-f", "json", "--resamples", "20"]).stdout)
    assert rep["inclusion"] == {
        "games": 2, "branches": 0, "branches_left_out": 4, "degraded": 0, "skipped": 0,
        "rule": "corpus figures: 2 games; 4 fork branches left out (--include-branches adds branches)",
    }  # fmt: skip
    both = json.loads(run(app, ["report", str(root), "-f", "json", "--resamples", "20", "--include-branches"]).stdout)
    assert both["inclusion"]["branches"] == 4 and both["inclusion"]["branches_left_out"] == 0
    assert both["inclusion"]["rule"].startswith("corpus figures: 6 games, 4 of them fork branches (--include-branches)")
    rows = list(csv.DictReader(io.StringIO(run(app, ["report", str(root), "-f", "csv", "--resamples", "20"]).stdout)))
    assert {r["name"]: r["value"] for r in rows if r["group"] == "inclusion"}["branches_left_out"] == "4"
    # a comparison: each group states its own rule, the branches of its games counted as left out
    cmp = json.loads(run(app, ["report", str(root), "--by", "rules", "-f", "json", "--resamples", "20"]).stdout)
    (group,) = cmp["groups"]
    assert group["report"]["inclusion"]["branches_left_out"] == 4
