"""F2 calibration, one definition: bins, ECE, Brier by hand; bin intervals follow the 2-game rule."""

from __future__ import annotations

import numpy as np
import pytest

from mafialab.analysis import DEFAULT, bootstrap_weights
from mafialab.analysis._calibration import calibration_population, calibration_summary

NB = 100 // DEFAULT.calib_width


def _game(obs: list[tuple[float, bool]]) -> np.ndarray:
    """One game's calibration sums: [hits, n, confidence sum] per bin, then [Brier sum, n]."""
    x = np.zeros(3 * NB + 2)
    for conf, ok in obs:
        b = min(int(conf // DEFAULT.calib_width), NB - 1)
        x[3 * b] += ok
        x[3 * b + 1] += 1
        x[3 * b + 2] += conf
        x[3 * NB] += (conf / 100 - ok) ** 2
        x[3 * NB + 1] += 1
    return x


def test_bins_ece_and_brier_by_hand() -> None:
    a = [(10, True), (30, False), (35, True), (100, True)]
    b = [(85, False), (90, True)]
    per = np.array([_game(a), _game(b)])
    cal = calibration_summary(per, DEFAULT, bootstrap_weights(2, 200, 0)).model_dump(mode="json")
    bins = {x["lo"]: x for x in cal["bins"]}
    assert sorted(bins) == [0, 20, 80]
    assert bins[80]["n"] == 3 and bins[80]["accuracy"] == pytest.approx(2 / 3) and bins[80]["games"] == 2
    assert bins[80]["mean_confidence"] == pytest.approx((100 + 85 + 90) / 3)
    ece = (1 / 6) * abs(1 - 0.10) + (2 / 6) * abs(0.5 - 0.325) + (3 / 6) * abs(2 / 3 - 275 / 300)
    assert cal["ece"] == pytest.approx(ece) and cal["n"] == 6 and cal["games"] == 2
    brier = ((0.1 - 1) ** 2 + 0.3**2 + (0.35 - 1) ** 2 + 0 + 0.85**2 + (0.9 - 1) ** 2) / 6
    assert cal["brier"] == pytest.approx(brier)
    # a bin whose answers come from one game has no interval, and says why
    assert bins[0]["games"] == 1 and bins[0]["ci95"] is None and bins[0]["no_interval"] == "no interval: 1 game"
    assert bins[80]["ci95"] is not None and bins[80]["no_interval"] is None
    assert cal["population"] == calibration_population(DEFAULT) and "outside the hidden team" in cal["population"]


def test_one_game_has_no_interval_anywhere() -> None:
    cal = calibration_summary(
        np.array([_game([(50, True), (70, False)])]), DEFAULT, bootstrap_weights(1, 50, 0)
    ).model_dump()
    assert cal["ci95"] == {"ece": None, "brier": None} and cal["no_interval"] == "no interval: 1 game"
    assert all(b["ci95"] is None for b in cal["bins"])
