"""``seat_figures``: the game task's per-game figures are ``mafialab report``'s, restricted to the model's seats."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import compute_report, load_games
from mafialab.cli import app
from mafialab.inspect import seat_figures
from mafialab.inspect._game import parse_seats


@pytest.fixture(scope="module")
def game_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("figures")
    res = CliRunner().invoke(
        app, ["play", "-r", "werewolf7", "-a", "scripted", "-s", "3", "-p", "default", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    return out


def test_all_seats_give_the_report_figures(game_dir: Path) -> None:
    (game,) = load_games(game_dir)
    rep = compute_report([game], resamples=1).model_dump(mode="json")
    values, _ = seat_figures(game, range(7))
    fo = rep["first_order"].values()
    n = sum(r["committed_n"] for r in fo)
    assert n > 0
    assert values["first_order_accuracy"] == pytest.approx(
        sum(r["committed_accuracy"] * r["committed_n"] for r in fo if r["committed_n"]) / n
    )
    assert values["ece"] == pytest.approx(rep["calibration"]["ece"])
    vc = rep["vote_coupling"]
    assert values["vote_coupling_top1"] == pytest.approx(
        sum(vc[s]["top1"]["hits"] for s in vc) / sum(vc[s]["top1"]["n"] for s in vc)
    )
    assert values["win"] == pytest.approx(
        sum((g.names[s] in g.mafia) == (g.winner == "mafia") for g in [game] for s in range(7)) / 7
    )


def test_a_wolf_seat_has_no_first_order_figures_and_a_town_seat_counts_only_its_answers(game_dir: Path) -> None:
    (game,) = load_games(game_dir)
    wolf = next(s for s in range(7) if game.names[s] in game.mafia)
    town_seats = [s for s in range(7) if game.names[s] not in game.mafia]
    town = max(town_seats, key=lambda s: seat_figures(game, [s])[1].calibration.n)
    wolf_values, _ = seat_figures(game, [wolf])
    assert "first_order_accuracy" not in wolf_values and "ece" not in wolf_values  # F1/F2 are about the town side
    town_values, rep = seat_figures(game, [town])
    _, all_rep = seat_figures(game, range(7))
    assert 0 < rep.calibration.n < all_rep.calibration.n
    assert 0.0 <= town_values["first_order_accuracy"] <= 1.0 and 0.0 <= town_values["ece"] <= 1.0
    mine = [p for p in game.probes if p.player == game.names[town] and p.probe_id == "role_assessment"]
    assert mine and rep.calibration.n <= sum(len(p.parsed or []) for p in mine)


def test_parse_seats() -> None:
    assert parse_seats("3, 0,3", 7) == [0, 3]
    assert parse_seats(2, 7) == [2]
    assert parse_seats([1, 4], 7) == [1, 4]
    with pytest.raises(ValueError, match="out of range"):
        parse_seats("7", 7)
    with pytest.raises(ValueError, match="no seat"):
        parse_seats("", 7)


def test_game_metrics_pool_the_games_in_one_report(game_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspect_ai.scorer import SampleScore, Score

    from mafialab.inspect import _game

    (path,) = [p.parent for p in game_dir.rglob("game.jsonl")]
    game = load_games(game_dir)[0]
    alone, _ = seat_figures(game, [0, 1, 2])
    reports = []
    real = _game.compute_report
    monkeypatch.setattr(_game, "compute_report", lambda *a, **k: reports.append(1) or real(*a, **k))
    scores = [SampleScore(score=Score(value=0, metadata={_game.GAME_KEY: str(path), "seats": [0, 1, 2]}))] * 2
    pooled = _game.game_metrics()(scores)
    assert len(reports) == 1  # test fails before: one report per game for its win share, then the pooled one
    # two copies of one game pool to that game's own figures; a figure without data is None here
    assert pooled == {k: alone.get(k) for k in ("win", "first_order_accuracy", "ece", "vote_coupling_top1")}
