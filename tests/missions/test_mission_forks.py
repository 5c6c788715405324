"""A resistance5 game forks at a team vote (and at a mission card): ``fork run --at STEP --inject``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import read_game

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def _parent(tmp_path: Path, rules: str = "resistance5") -> Path:
    res = runner.invoke(
        app, ["play", "--rules", rules, "--agents", "scripted", "--seed", "4", "--out", str(tmp_path / "r")]
    )
    assert res.exit_code == 0, res.output
    return next((tmp_path / "r").iterdir())


def test_a_resistance5_game_forks_at_a_team_vote(tmp_path: Path) -> None:
    g = _parent(tmp_path)
    res = runner.invoke(app, ["fork", "steps", str(g), "--format", "json"])
    assert res.exit_code == 0, res.output
    steps = json.loads(res.output)
    kinds = {s["kind"] for s in steps}
    assert {"speak", "propose", "team_vote", "mission"} <= kinds
    parent = read_game(g)
    first_tally = next(e for e in parent.events if e.kind == "team_vote_tally")
    vote = next(s for s in steps if s["kind"] == "team_vote")
    done = next(e for e in parent.events if e.kind == "team_vote" and e.decision == vote["id"])
    flipped = "reject" if done.choice == "approve" else "approve"
    assert vote["done"] == done.choice
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", str(vote["id"]), "--inject", json.dumps({"choice": flipped}),
              "-n", "2", "--out", str(tmp_path / "a")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    for branch in sorted((tmp_path / "a").iterdir()):
        log = read_game(branch)
        assert log.header.parent.step == vote["id"]  # type: ignore[union-attr]
        mine = next(e for e in log.events if e.kind == "team_vote" and e.decision == vote["id"])
        assert mine.choice == flipped and not mine.fallback
        tally = next(e for e in log.events if e.kind == "team_vote_tally")
        assert tally.choices[vote["seat"]] == flipped
        delta = 1 if flipped == "approve" else -1
        assert tally.approvals == first_tally.approvals + delta
        assert log.winner in ("town", "mafia")
    # a bad choice or a target names what the step takes
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", str(vote["id"]), "--inject", '{"choice": "abstain"}',
              "--out", str(tmp_path / "x")],
    )  # fmt: skip
    assert res.exit_code != 0 and "not one of approve, reject" in res.output
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", str(vote["id"]), "--inject", '{"target": "Alex"}',
              "--out", str(tmp_path / "y")],
    )  # fmt: skip
    assert res.exit_code != 0 and "takes one of approve, reject, not a target" in res.output
    # a choice where the step has none (the leader's proposal) is named as such
    propose = next(s["id"] for s in steps if s["kind"] == "propose")
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", str(propose), "--inject", '{"choice": "reject"}',
              "--out", str(tmp_path / "z")],
    )  # fmt: skip
    assert res.exit_code != 0 and f"decision {propose} (propose) has no choice" in res.output


def test_a_fork_at_a_spys_mission_card(tmp_path: Path) -> None:
    g = _parent(tmp_path)
    parent = read_game(g)
    card = next(e for e in parent.events if e.kind == "mission_card" and e.choice == "fail")
    res = runner.invoke(
        app, ["fork", "run", str(g), "--at", str(card.decision), "--inject", '{"choice": "success"}',
              "--out", str(tmp_path / "a")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    log = read_game(next((tmp_path / "a").iterdir()))
    res_parent = next(e for e in parent.events if e.kind == "mission_result" and e.round == card.round)
    res_branch = next(e for e in log.events if e.kind == "mission_result" and e.round == card.round)
    assert res_branch.fails == res_parent.fails - 1
