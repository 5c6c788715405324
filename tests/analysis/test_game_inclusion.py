"""Which games a report counts: branches left out unless asked for, clusters are root games, one game id in two folders kept apart."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from mafialab.agents import make_agent
from mafialab.analysis import compute_report, load_games
from mafialab.beliefshift import load_logs as bs_load_games
from mafialab.cli import app
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


# Two directories holding one game id: the report keeps both, as separate games, and warns.


def _two_copies(tmp_path: Path) -> tuple[Path, str]:
    res = CliRunner().invoke(app, ["play", "-a", "scripted", "-s", "4", "-o", str(tmp_path / "src")])
    assert res.exit_code == 0, res.output
    (game,) = [p for p in (tmp_path / "src").iterdir() if p.is_dir()]
    for part in ("x", "y"):
        shutil.copytree(game, tmp_path / "logs" / part / game.name)
    return tmp_path / "logs", game.name


def test_both_copies_are_read_and_bootstrapped_apart(tmp_path: Path) -> None:
    logs, gid = _two_copies(tmp_path)
    warnings: list[str] = []
    games = load_games(logs, warnings=warnings)
    assert [g.game_id for g in games] == [gid, gid]
    assert len({g.root for g in games}) == 2
    (w,) = warnings
    assert str(logs / "x" / gid) in w and str(logs / "y" / gid) in w
    assert compute_report(games, resamples=10).model_dump(mode="json")["games"] == 2


def test_report_prints_the_warning(tmp_path: Path) -> None:
    logs, gid = _two_copies(tmp_path)
    res = CliRunner().invoke(app, ["report", str(logs), "--resamples", "10"])
    assert res.exit_code == 0, res.output
    assert f"game id '{gid}' is in both" in res.output


def test_report_and_view_print_the_warning_once(tmp_path: Path) -> None:
    # in a real process nothing captures logging: a warning both logged and printed showed twice
    logs, gid = _two_copies(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "300", "NO_COLOR": "1"}
    for args in (["report", str(logs), "--resamples", "10"], ["view", str(logs), "-o", str(tmp_path / "s"), "-j", "1"]):
        res = subprocess.run([sys.executable, "-m", "mafialab", *args], capture_output=True, text=True, env=env)
        assert res.returncode == 0, res.stderr
        said = " ".join((res.stdout + res.stderr).split())
        assert said.count(f"game id '{gid}' is in") == 1, said


def test_the_rule_is_one_definition() -> None:
    """RepeatedIds: the first folder keeps its root, a later copy is ``<id>@<path>``, a branch keeps its root."""
    from mafialab.analysis import RepeatedIds

    ids = RepeatedIds()
    assert ids.see("g1", "a/g1", "g1", False) == ("g1", None)
    assert ids.see("g1", "a/g1", "g1", False) == ("g1", None)  # the same folder again is no copy
    root, msg = ids.see("g1", "b/g1", "g1", False)
    assert root == "g1@b/g1"
    assert msg == "game id 'g1' is in both a/g1 and b/g1; both kept as separate games"
    assert ids.see("g1", "c/g1", "p0", True) == (
        "p0",
        "game id 'g1' is in both a/g1 and c/g1; both kept as separate games",
    )
    assert ids.see("g2", "b/g2", "g2", False) == ("g2", None)
