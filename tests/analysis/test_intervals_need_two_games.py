"""Statistics never overstate certainty: fewer than two games (clusters) give no interval, and say why."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mafialab.analysis import MIN_CLUSTERS, cluster_bootstrap_ci, compute_report, load_games, no_interval_reason
from mafialab.analysis._stats import clusters_with_data
from mafialab.arena import build_index, run_season, season_from_dict
from mafialab.arena._leaderboard import bootstrap_mean, leaderboard_rows, render_markdown, win_rate
from mafialab.beliefshift import build_report
from mafialab.cli import app
from mafialab.record import import_mafiascope
from tests.arena.test_season import make_judge, season
from tests.beliefshift_fixtures import result

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "mafiascope"


def test_the_rule():
    assert MIN_CLUSTERS == 2
    assert no_interval_reason(0) == "no interval: 0 games"
    assert no_interval_reason(1) == "no interval: 1 game"
    assert no_interval_reason(2) is None and no_interval_reason(40) is None
    x = np.array([[3.0, 4.0], [0.0, 0.0], [0.0, 0.0]])  # one game with data, two without
    assert clusters_with_data(x) == 1

    def ratio(p: np.ndarray) -> np.ndarray:
        return p[..., 0] / p[..., 1]

    assert cluster_bootstrap_ci(x, ratio, resamples=50) is None  # was [0.75, 0.75]
    x[1] = [1.0, 4.0]
    lo, hi = cluster_bootstrap_ci(x, ratio, resamples=200)  # type: ignore[misc]
    assert lo < hi


@pytest.fixture(scope="module")
def one_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one")
    import_mafiascope(FIXTURES / "en_demo" / "0a7f3c10-1111-4aaa-8aaa-000000000001", out)
    return out


def test_report_on_one_game_has_no_interval_and_says_why(one_game: Path):
    rep = compute_report(load_games(one_game), resamples=100).model_dump(mode="json")
    assert rep["games"] == 1 and rep["no_interval"] == "no interval: 1 game"
    cis: list = []

    def collect(node: object) -> None:  # every interval anywhere in the report
        if isinstance(node, dict):
            for k, v in node.items():
                if "ci95" in k:
                    cis.extend(v.values() if isinstance(v, dict) else [v])
                else:
                    collect(v)
        elif isinstance(node, list):
            for v in node:
                collect(v)

    collect(rep)
    assert len(cis) > 20 and all(c is None for c in cis)
    assert rep["first_order"]["1"]["committed_accuracy"] is not None  # the point estimate stays
    res = CliRunner().invoke(app, ["report", str(one_game), "--resamples", "50"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "no interval: 1 game" in text and "n/a (<2 games)" in text
    j = json.loads(CliRunner().invoke(app, ["report", str(one_game), "-f", "json", "--resamples", "50"]).stdout)
    assert j["no_interval"] == "no interval: 1 game" and j["calibration"]["ci95"] == {"ece": None, "brier": None}


def test_report_on_two_games_keeps_intervals(tmp_path: Path):
    import_mafiascope(FIXTURES / "en_demo", tmp_path)
    rep = compute_report(load_games(tmp_path), resamples=100).model_dump(mode="json")
    assert rep["games"] == 2 and rep["no_interval"] is None
    assert rep["first_order"]["1"]["ci95"]["committed_accuracy"] is not None


def test_beliefshift_cluster_interval_needs_two_games():
    recs = [result("M", i, "town", "mafia", "accuse", (0, i % 3), (0, i % 3)) for i in range(1, 6)]
    one = build_report(recs, ci="cluster").quantities["M"]["t1.village.accuse.target"]
    assert one.n == 5 and math.isnan(one.half)  # five responses, one game: was ± 0.00
    recs[0] = recs[0].model_copy(update={"game_id": "g2"})
    two = build_report(recs, ci="cluster")
    assert not math.isnan(two.quantities["M"]["t1.village.accuse.target"].half)
    assert "fewer than 2 games" in two.tables["table1_models"].notes[1]


def test_leaderboard_interval_needs_two_games():
    r = win_rate(1, 2, games=1)  # an entry with two seats in one game
    assert r.rate == 0.5 and r.low is None and r.high is None and r.no_interval == "no interval: 1 game"
    r2 = win_rate(1, 2, games=2)
    assert r2.low is not None and r2.low < 0.5 < r2.high
    m = bootstrap_mean([3.0, 7.0], np.random.default_rng(0), games=1)
    assert m.mean == 5.0 and m.low is None and m.no_interval == "no interval: 1 game"
    assert bootstrap_mean([3.0, 7.0], np.random.default_rng(0), games=2).low is not None


async def test_leaderboard_lists_unplayed_entries_last(tmp_path: Path):
    # 13 entries for 12 seats and one game: one entry never plays
    roster = [{"agent": "scripted", "name": f"e{i:02d}"} for i in range(13)]
    cfg = season_from_dict(season(games=1, roster=roster, parallelism={"games": 1}))
    await run_season(cfg, tmp_path / "s", judges={"mock/judge": make_judge()})
    index = build_index(tmp_path / "s")
    played = [e for e in index.leaderboard if e.games]
    unplayed = [e for e in index.leaderboard if not e.games]
    assert len(unplayed) == 1 and index.leaderboard[-1] is unplayed[0]
    # its untouched prior rating beats the rating of the losers: it used to rank above them
    assert unplayed[0].rating.ordinal > min(e.rating.ordinal for e in played)
    ordinals = [e.rating.ordinal for e in played]
    assert ordinals == sorted(ordinals, reverse=True)
    _, rows = leaderboard_rows(index)
    assert rows[-1][0] == "–" and rows[-1][1] == unplayed[0].name and rows[0][0] == "1"
    # every played entry sat in one game: its rates and scores have no interval, and say so
    assert all(e.overall.low is None and e.overall.no_interval == "no interval: 1 game" for e in played)
    assert "no interval: 1 game" in render_markdown(index)
