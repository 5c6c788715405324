"""The bifurcation experiment at a mission game's team vote: variants approve and reject, each forked.

A ``resistance5`` game of random agents (seed 4) is bifurcated at three Resistance team votes
(8 resamples by random agents, at most 4 variants, continuations by random agents); every
figure of the report is recomputed here from the fork games themselves.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.agents import make_agent
from mafialab.analysis import report_bifurcation
from mafialab.analysis._bifurcation import POINT_FIELDS, TEAM_VOTE_FIELDS, TEAM_VOTE_POINT_FIELDS
from mafialab.cli import app
from mafialab.counterfactual import plan_points, run_bifurcation
from mafialab.harness import play_game, replay
from mafialab.record import GAME_FILE, NO_VOTE, read_bifurcation, read_game, read_records, strip_clock
from mafialab.rules import load_rules

runner = CliRunner(env={"COLUMNS": "250", "NO_COLOR": "1"})
NA = "not applicable to this rule set (a mission game has no elimination vote)"


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A resistance5 game of random agents (seed 4), won by the Spies."""
    rules = load_rules("resistance5")
    agents = [make_agent("random", s, rules, 4) for s in range(rules.n_seats)]
    res = asyncio.run(play_game(rules, agents, 4, out=tmp_path_factory.mktemp("parent"), game_id="parent"))
    assert res.path is not None
    return res.path


@pytest.fixture(scope="module")
def run(parent: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bif") / "b"
    ids = ",".join(str(p.step.id) for p in plan_points(read_game(parent), "innocent-votes")[:3])
    asyncio.run(
        run_bifurcation(parent, ids, out, resamples=8, keep=4, sampler="random", agents="random", check_remote=False)
    )
    return out


def _tally_after(events: list[Any], decision: int) -> Any:
    seq = next(e.seq for e in events if e.kind == "team_vote" and e.decision == decision)
    return next(e for e in events if e.kind == "team_vote_tally" and e.seq > seq)


def test_points_are_the_resistance_team_votes(parent: Path) -> None:
    log = read_game(parent)
    spies = {s.name for s in log.header.roster if s.team == "mafia"}
    points = plan_points(log, "innocent-votes")
    votes = [e for e in log.events if e.kind == "team_vote" and log.header.roster[e.seat].name not in spies]
    assert [p.step.id for p in points] == [e.decision for e in votes]
    assert all(p.step.kind == "team_vote" and p.quadrant is None and p.factual_target is None for p in points)
    assert [p.factual_choice for p in points] == [e.choice for e in votes]
    with pytest.raises(ValueError, match="not a day vote or a team vote"):
        plan_points(log, str(next(e.decision for e in log.events if e.kind == "team_pick")))


def test_variants_are_approve_and_reject_and_branches_replay_the_parent(parent: Path, run: Path) -> None:
    plog = read_game(parent)
    exp = read_bifurcation(run)
    assert [p.decision for p in exp.points] == [7, 8, 11]
    # the random sampler draws each resample from its own seed: the same counts on every run
    assert [p.choice_counts for p in exp.points] == [
        {"approve": 5, "reject": 3},
        {"approve": 2, "reject": 6},
        {"approve": 2, "reject": 6},
    ]
    assert [p.factual_choice for p in exp.points] == ["reject", "reject", "approve"]
    parent_records = strip_clock(read_records(parent / GAME_FILE))
    for point in exp.points:
        assert point.kind == "team_vote" and point.target_counts is None and point.diversity is None
        factual = next(e for e in plog.events if e.kind == "team_vote" and e.decision == point.decision)
        assert point.factual_choice == factual.choice
        assert point.factual_passed == _tally_after(plog.events, point.decision).approved  # type: ignore[arg-type]
        samples = [json.loads(line) for line in (run / "samples" / f"{point.point_id}.jsonl").read_text().splitlines()]
        assert len(samples) == 8 and sum(point.choice_counts.values()) == 8  # type: ignore[union-attr]
        assert {s["choice"] for s in samples} == set(point.choice_counts) == {"approve", "reject"}  # type: ignore[arg-type]
        forks = sorted((f for f in exp.forks if f.point_id == point.point_id), key=lambda f: f.variant_idx)
        # the samples hold two distinct answers: the factual one and the other choice, each forked once
        other = "reject" if factual.choice == "approve" else "approve"
        assert [(f.source, f.stage, f.choice) for f in forks] == [
            ("factual", "factual", factual.choice),
            ("sampled", "target_coverage", other),
        ]
        assert [f.count for f in forks] == [point.choice_counts[factual.choice], point.choice_counts[other]]  # type: ignore[index]
        prefix = len(replay(plog, upto=point.decision).events)
        for f in forks:
            assert f.vote_target is None and f.error is None
            branch = read_game(run / "forks" / str(f.fork_id))
            assert branch.header.parent is not None and branch.header.parent.step == point.decision
            # the branch is the parent event for event up to the fork step
            assert (
                strip_clock(read_records(run / "forks" / str(f.fork_id) / GAME_FILE))[1 : 1 + prefix]
                == (parent_records[1 : 1 + prefix])
            )
            mine = next(e for e in branch.events if e.kind == "team_vote" and e.decision == point.decision)
            assert mine.choice == f.choice and not mine.fallback
            tally = _tally_after(branch.events, point.decision)  # type: ignore[arg-type]
            assert tally.choices[mine.seat] == f.choice and f.proposal_passed == tally.approved
            assert f.winner == branch.winner in ("town", "mafia")


def test_report_figures_equal_those_computed_from_the_branches(run: Path) -> None:
    exp = read_bifurcation(run)
    rep = report_bifurcation(run)
    by_point = {p.point_id: p for p in exp.points}
    games = {f.fork_id: read_game(run / "forks" / str(f.fork_id)) for f in exp.forks}
    parent_winner = exp.points[0].parent_winner
    flips = sum(games[f.fork_id].winner != parent_winner for f in exp.forks)
    passed = {
        f.fork_id: _tally_after(games[f.fork_id].events, by_point[f.point_id].decision).approved for f in exp.forks
    }  # type: ignore[arg-type]
    proposal_flips = sum(passed[f.fork_id] != by_point[f.point_id].factual_passed for f in exp.forks)
    approve = [games[f.fork_id].winner == "town" for f in exp.forks if f.choice == "approve"]
    reject = [games[f.fork_id].winner == "town" for f in exp.forks if f.choice == "reject"]
    pooled = rep["pooled"]
    # the values of this seed (random agents), and the same values recounted from the fork games
    assert (len(exp.forks), flips, proposal_flips) == (6, 2, 2)
    assert [r["flips"] for r in rep["points"]] == [0, 0, 2]  # both forks of decision 11 go to the Resistance
    assert [r["modal_concentration"] for r in rep["points"]] == [5 / 8, 6 / 8, 6 / 8]
    assert [r["factual_is_modal"] for r in rep["points"]] == [False, True, False]
    assert (pooled["forks"], pooled["flips"], pooled["flip_share"]) == (6, 2, pytest.approx(2 / 6))
    tv = pooled["team_vote"]
    assert list(tv) == list(TEAM_VOTE_FIELDS)
    assert all(list(r) == [*POINT_FIELDS, *TEAM_VOTE_POINT_FIELDS] for r in rep["points"])
    assert (tv["proposal_forks"], tv["proposal_flips"], tv["proposal_flip_share"]) == (6, 2, pytest.approx(2 / 6))
    assert tv["town_win_when_approve"] == {"hits": sum(approve), "n": len(approve), "rate": sum(approve) / len(approve)}
    assert tv["town_win_when_reject"] == {"hits": sum(reject), "n": len(reject), "rate": sum(reject) / len(reject)}
    assert (len(approve), len(reject)) == (3, 3)
    # per point
    for row in rep["points"]:
        point = by_point[row["point_id"]]
        mine = [f for f in exp.forks if f.point_id == point.point_id]
        assert row["flips"] == sum(games[f.fork_id].winner != parent_winner for f in mine)
        assert row["proposal_flips"] == sum(passed[f.fork_id] != point.factual_passed for f in mine)
        counts = point.choice_counts or {}
        assert row["modal_concentration"] == max(counts.values()) / 8
        assert row["factual_is_modal"] == (counts.get(point.factual_choice or NO_VOTE, 0) == max(counts.values()))
    # the vote-for-a-mafioso figures need an elimination vote
    assert rep["not_applicable"] == dict.fromkeys(
        ("town_win_when_vote_mafia", "town_win_otherwise", "fisher_p", "flips_on_mafia_vote", "by_quadrant"), NA
    )
    assert pooled["town_win_when_vote_mafia"]["n"] == pooled["town_win_otherwise"]["n"] == 0
    assert rep["by_quadrant"] == {}


def test_bifurcate_run_and_report_on_the_command_line(parent: Path, tmp_path: Path) -> None:
    log = read_game(parent)
    vote = plan_points(log, "innocent-votes")[0].step.id
    out = tmp_path / "b"
    res = runner.invoke(
        app, ["bifurcate", "run", str(parent), "--points", str(vote), "--resamples", "8", "--keep", "3",
              "--sampler", "random", "--agents", "random", "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    exp = read_bifurcation(out)
    assert [p.decision for p in exp.points] == [vote] and {f.choice for f in exp.forks} == {"approve", "reject"}
    res = runner.invoke(app, ["bifurcate", "report", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    flips = sum(f.winner != exp.points[0].parent_winner for f in exp.forks)
    assert rep["pooled"]["flips"] == flips and rep["pooled"]["forks"] == len(exp.forks) == 2
    res = runner.invoke(app, ["bifurcate", "report", str(out)])
    assert res.exit_code == 0, res.output
    assert "proposal flip share" in res.output and "P(town win | approve)" in res.output
    assert f"flips on a mafioso vote, quadrants: {NA}" in res.output
    assert "P(town win | vote mafioso)  " not in res.output  # its row is left out of the table
    assert "factual choice = modal" in res.output and "factual target = modal" not in res.output
    res = runner.invoke(app, ["bifurcate", "report", str(out), "--format", "csv"])
    assert res.exit_code == 0 and "team_vote_proposal_flips" in res.output.splitlines()[0]
    # quadrants need an elimination vote
    res = runner.invoke(
        app, ["bifurcate", "run", str(parent), "--points", "innocent-votes", "--per-quadrant", "2",
              "--out", str(tmp_path / "q"), "--dry-run"],
    )  # fmt: skip
    assert "quadrants are not applicable to this rule set" in res.output


def test_points_of_an_unfinished_parent_count_no_factual_flip(run: Path, tmp_path: Path) -> None:
    """A parent without a winner (cut short) has no flips: its factual forks are not counted either."""
    out = tmp_path / "bif"
    shutil.copytree(run, out)
    lines = [json.loads(line) for line in (out / "points.jsonl").read_text().splitlines()]
    for p in lines:
        p["parent_winner"] = None
    (out / "points.jsonl").write_text("".join(json.dumps(p) + "\n" for p in lines))
    rep = report_bifurcation(out, resamples=50)
    assert rep["factual_forks"] == {"flips": 0, "n": 0}
    assert rep["pooled"]["forks"] == rep["pooled"]["flips"] == 0
