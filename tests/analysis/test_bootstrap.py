"""Game-level cluster bootstrap: weights, pooling, percentile intervals."""

from __future__ import annotations

import numpy as np
import pytest

from mafialab.analysis import bootstrap_weights, cluster_bootstrap_ci
from mafialab.analysis._stats import percentile_ci


def ratio(x: np.ndarray) -> np.ndarray:
    return np.where(x[..., 1] > 0, x[..., 0] / np.where(x[..., 1] > 0, x[..., 1], 1), np.nan)


def test_weights_are_resamples_with_replacement() -> None:
    w = bootstrap_weights(7, 1000, seed=3)
    assert w.shape == (1000, 7) and w.dtype.kind == "i"
    assert (w.sum(axis=1) == 7).all() and (w >= 0).all()
    # every game is drawn 1 time per resample on average
    assert w.mean() == pytest.approx(1.0)
    assert abs(w[:, 0].mean() - 1.0) < 0.15
    assert (bootstrap_weights(7, 50, seed=3) == bootstrap_weights(7, 50, seed=3)).all()
    assert not (bootstrap_weights(7, 50, seed=3) == bootstrap_weights(7, 50, seed=4)).all()
    with pytest.raises(ValueError):
        bootstrap_weights(0, 10)


def test_pooled_ratio_matches_a_plain_loop() -> None:
    rng = np.random.default_rng(0)
    den = rng.integers(1, 40, size=12).astype(float)
    num = np.floor(den * rng.random(12))
    per_game = np.stack([num, den], axis=1)
    w = bootstrap_weights(12, 1000, seed=11)
    vals = []
    for row in w:  # resample by explicit repetition, pool numerators and denominators
        games = [g for g in range(12) for _ in range(row[g])]
        vals.append(sum(num[g] for g in games) / sum(den[g] for g in games))
    want = np.quantile(vals, [0.025, 0.975])
    got = cluster_bootstrap_ci(per_game, ratio, weights=w)
    assert got == pytest.approx(tuple(want))
    point = num.sum() / den.sum()
    assert got[0] <= point <= got[1]
    # the pooled interval is not the per-game-mean interval
    assert got != pytest.approx(tuple(np.quantile([np.mean(num / den)] * 2, [0.025, 0.975])))


def test_degenerate_resamples_are_skipped_and_constant_data_collapses() -> None:
    per_game = np.array([[1.0, 2.0], [0.0, 0.0], [3.0, 6.0]])
    lo, hi = cluster_bootstrap_ci(per_game, ratio, resamples=500, seed=1)
    assert lo == pytest.approx(0.5) and hi == pytest.approx(0.5)
    assert cluster_bootstrap_ci(np.array([[0.0, 0.0]]), ratio, resamples=20) is None
    assert cluster_bootstrap_ci(np.zeros((0, 2)), ratio) is None
    assert percentile_ci(np.array([np.nan, np.nan])) is None


def test_interval_narrows_with_more_games() -> None:
    rng = np.random.default_rng(5)

    def width(n: int) -> float:
        den = np.full(n, 20.0)
        num = rng.binomial(20, 0.4, size=n).astype(float)
        lo, hi = cluster_bootstrap_ci(np.stack([num, den], axis=1), ratio, resamples=1000, seed=0)
        return hi - lo

    assert width(200) < width(8)
