"""Ratings (Elo, OpenSkill, GTE) against Kaggle Game Arena's evaluator and the OpenSkill library."""

from __future__ import annotations

import json
import random
from itertools import pairwise
from pathlib import Path

import pytest
from openskill.models import PlackettLuce

from mafialab.analysis import GameOutcome, gte_ratings, outcomes_from_json, rate_games

DATA = Path(__file__).resolve().parents[1] / "data" / "ratings"
RESULTS = json.loads((DATA / "kaggle_results.json").read_text())
FIGURES = json.loads((DATA / "kaggle_figures.json").read_text())
KAGGLE_GAMES = outcomes_from_json(RESULTS)
GTE_TOLERANCE = 1e-6
"""GTE agreement (measured: 1.8e-8): polarix solves in jax float32, and
Kaggle's evaluator adds unseeded noise of 1e-6 to a task column that is equal for every agent."""


def test_kaggle_games_frozen_as_played() -> None:
    assert len(KAGGLE_GAMES) == 24
    assert FIGURES["source"]["kaggle_environments"] == "1.33.2"
    # the fixture holds both plain games and self-play games (an agent on both teams)
    n_self = sum(g.self_play for g in KAGGLE_GAMES)
    assert 0 < n_self < len(KAGGLE_GAMES)


def test_point_values_equal_kaggle_evaluator() -> None:
    """Per-role wins, Elo and OpenSkill mu/sigma equal GameSetEvaluator's (kaggle-environments 1.33.2)
    on the same 24 random-agent episodes (scripts/kaggle_ratings_reference.py)."""
    r = rate_games(KAGGLE_GAMES, include_self_play=True, resamples=0)
    assert r.games_rated == 24
    overall = {row.agent: row for row in r.boards["overall"]}
    assert set(overall) == set(FIGURES["agents"])
    for agent, fig in FIGURES["agents"].items():
        assert overall[agent].elo == pytest.approx(fig["elo"], abs=1e-9), agent
        assert overall[agent].mu == pytest.approx(fig["openskill_mu"], abs=1e-9), agent
        assert overall[agent].sigma == pytest.approx(fig["openskill_sigma"], abs=1e-9), agent
    by_role = {(row.agent, row.group): (row.wins, row.seats) for row in r.boards["role"]}
    want = {(a, role): tuple(wn) for a, fig in FIGURES["agents"].items() for role, wn in fig["by_role"].items()}
    assert by_role == want


def test_openskill_equals_library_with_shared_seats() -> None:
    """The vectorised Plackett-Luce update equals openskill's ``rate`` as Kaggle calls it, also
    when one agent holds two seats of a team or sits on both teams."""
    rnd = random.Random(3)
    games = []
    for i in range(60):
        agents = [rnd.choice("abcdef") for _ in range(7)]
        town_won = rnd.random() < 0.4
        teams = ["mafia", "mafia", "town", "town", "town", "town", "town"]
        seats = [
            {"agent": a, "role": "X", "team": t, "won": (t == "town") == town_won}
            for a, t in zip(agents, teams, strict=True)
        ]
        games.append(GameOutcome(game_id=f"g{i:02d}", order=i, seats=seats))
    model = PlackettLuce()
    lib = {}
    for g in games:
        for s in g.seats:
            lib.setdefault(s.agent, model.rating(name=s.agent))
        win = [lib[s.agent] for s in g.seats if s.won]
        lose = [lib[s.agent] for s in g.seats if not s.won]
        for team in model.rate([win, lose]):
            for x in team:
                lib[x.name] = x
    r = rate_games(games, include_self_play=True, resamples=0, boards=("overall",))
    for row in r.boards["overall"]:
        assert row.mu == pytest.approx(lib[row.agent].mu, abs=1e-9)
        assert row.sigma == pytest.approx(lib[row.agent].sigma, abs=1e-9)


def test_self_play_left_out_by_default_and_counted() -> None:
    r = rate_games(KAGGLE_GAMES, resamples=0)
    n_self = sum(g.self_play for g in KAGGLE_GAMES)
    assert (r.games_rated, r.self_play_games, r.self_play_included) == (24 - n_self, n_self, False)
    assert sum(row.seats for row in r.boards["overall"]) == 8 * (24 - n_self)


def test_boards_and_intervals() -> None:
    r = rate_games(KAGGLE_GAMES, include_self_play=True, resamples=200, seed=1)
    assert r.resamples == 200
    side = r.boards["side"]
    assert {row.group for row in side} == {"town", "mafia"}
    for board in r.boards.values():
        for row in board:
            assert row.games >= 1 and row.seats >= row.games and 0 <= row.wins <= row.seats
            if row.games >= 2:
                assert row.elo_low is not None and row.elo_high is not None and row.elo_low <= row.elo_high
                assert row.mu_low is not None and row.mu_high is not None and row.mu_low <= row.mu_high
            else:
                assert row.no_interval == "no interval: 1 game" and row.elo_low is None
        # within each group: best mu first; the overlap mark compares with the next one down
        for group in {row.group for row in board}:
            rows = [row for row in board if row.group == group]
            assert [row.mu for row in rows] == sorted((row.mu for row in rows), reverse=True)
            assert rows[-1].mu_overlaps_next is None
            for a, b in pairwise(rows):
                if a.mu_low is not None and b.mu_high is not None:
                    assert a.mu_overlaps_next == (a.mu_low <= b.mu_high)
    # the same seed gives the same intervals
    again = rate_games(KAGGLE_GAMES, include_self_play=True, resamples=200, seed=1)
    assert again == r


def test_order_key_sets_the_rating_order() -> None:
    forward = rate_games(KAGGLE_GAMES, include_self_play=True, resamples=0, boards=("overall",))
    flipped = [g.model_copy(update={"order": -g.order}) for g in KAGGLE_GAMES]
    backward = rate_games(flipped, include_self_play=True, resamples=0, boards=("overall",))
    assert {r.agent: r.elo for r in forward.boards["overall"]} != {r.agent: r.elo for r in backward.boards["overall"]}


def test_bad_results_name_the_field() -> None:
    good = RESULTS["games"][0]
    with pytest.raises(ValueError, match=r"games\.0\.seats\.0\.team"):
        outcomes_from_json({"games": [{**good, "seats": [{**good["seats"][0], "team": "wolves"}, *good["seats"][1:]]}]})
    one_side = [{**s, "won": True} for s in good["seats"]]
    with pytest.raises(ValueError, match="exactly the seats of one team"):
        outcomes_from_json([{**good, "seats": one_side}])
    with pytest.raises(ValueError, match="appears twice"):
        outcomes_from_json([good, good])
    with pytest.raises(ValueError, match="unknown board 'roles'"):
        rate_games(KAGGLE_GAMES, boards=("roles",))  # type: ignore[arg-type]


def test_gte_equals_kaggle_evaluator() -> None:
    """GTE (the ``gte`` extra) equals GameSetEvaluator's on the same episodes, resamples and seed."""
    pytest.importorskip("polarix")
    src = FIGURES["source"]
    g = gte_ratings(KAGGLE_GAMES, include_self_play=True, resamples=src["gte_samples"], seed=src["gte_seed"])
    assert g.tasks == src["gte_tasks"]
    got = {row.agent: row.rating for row in g.rows}
    for agent, fig in FIGURES["agents"].items():
        assert got[agent] == pytest.approx(fig["gte"][0], abs=GTE_TOLERANCE), agent


def test_gte_without_the_extra_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import mafialab.analysis._ratings as ratings

    monkeypatch.setattr(ratings, "gte_available", lambda: False)
    with pytest.raises(ImportError, match=r"pip install 'mafialab\[gte\]'"):
        ratings.gte_ratings(KAGGLE_GAMES)
