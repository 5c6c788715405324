"""What a probe battery supports: metrics computed from it, and the probe each missing one needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import compute_report, coverage, load_games
from mafialab.cli import app


@pytest.fixture(scope="module")
def suspicion_games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sus")
    res = CliRunner().invoke(app, ["play", "-a", "scripted", "-p", "suspicion", "-k", "3", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_the_suspicion_battery_gives_vote_coupling_and_dynamics_and_names_what_is_missing(
    suspicion_games: Path,
) -> None:
    rep = compute_report(load_games(suspicion_games), resamples=50).model_dump(mode="json")
    cov = rep["coverage"]
    assert set(cov["answers"]) == {"suspicion_ranking"} and cov["answers"]["suspicion_ranking"] > 100
    assert [b.split(":")[0] for b in cov["batteries"]] == ["suspicion"]
    # computed from the suspicion rankings
    assert rep["vote_coupling"]["innocents"]["top1"]["n"] > 0 and cov["metrics"]["vote_coupling.top1"]["computed"]
    assert rep["dynamics"]["volatility_pairs"] > 0 and cov["metrics"]["dynamics"]["computed"]
    # not computable, and why: the probe each needs
    for key, probe in (("first_order", "role_assessment"), ("calibration", "role_assessment"),
                       ("second_order", "social_map"), ("vote_coupling.committed_set", "role_assessment")):  # fmt: skip
        m = cov["metrics"][key]
        assert not m["computed"] and probe in m["missing"] and probe in m["why"] and "suspicion:" in m["why"]
    assert rep["first_order"] == {} and rep["calibration"]["n"] == 0


def test_the_default_battery_supports_every_metric(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["play", "-a", "scripted", "-p", "default", "-k", "2", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    cov = coverage(load_games(tmp_path))
    assert all(m["computed"] for m in cov["metrics"].values()), cov


def test_report_says_which_probe_a_missing_metric_needs(suspicion_games: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(suspicion_games), "--resamples", "50"])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "not computed: F1 first-order accuracy and recall needs role_assessment answers" in flat
    assert "F1 first-order (non-mafia observers)" not in flat  # no empty table
    assert "F4 vote coupling" in flat and "Belief dynamics" in flat
    js = json.loads(CliRunner().invoke(app, ["report", str(suspicion_games), "-f", "json", "--resamples", "50"]).stdout)
    assert js["coverage"]["metrics"]["second_order"]["needs"] == ["role_assessment", "social_map"]
