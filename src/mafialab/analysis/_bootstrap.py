"""Intervals: the game-level cluster bootstrap (vectorised with numpy) and the Wilson score interval."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

MIN_CLUSTERS = 2
"""Fewest clusters (games) an interval is given for. A resampling interval over one cluster has
zero width whatever the data (every resample is that cluster), which would claim certainty;
with fewer clusters every interval in mafialab is null and its table says why
(:func:`no_interval_reason`)."""


def clusters_with_data(per_game: np.ndarray) -> int:
    """Number of clusters (rows of ``per_game``) that hold any non-zero sufficient statistic.

    A game that never reached a round, or has no record for a statistic, contributes a row
    of zeros and does not count.
    """
    x = np.asarray(per_game, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    return int(np.count_nonzero(np.any(x != 0, axis=1))) if x.size else 0


def no_interval_reason(n_clusters: int, unit: str = "game") -> str | None:
    """Why no interval is given for a statistic drawn from ``n_clusters`` clusters.

    The one rule for every interval mafialab prints (report, beliefshift, leaderboard,
    bifurcation): with fewer than :data:`MIN_CLUSTERS` clusters the interval is null.

    Args:
        n_clusters: Clusters (games) that contribute to the statistic (>= 0).
        unit: Name of a cluster, singular (``"game"``).

    Returns:
        ``None`` when an interval can be given, else a short reason such as
        ``"no interval: 1 game"``.
    """
    if n_clusters >= MIN_CLUSTERS:
        return None
    return f"no interval: {n_clusters} {unit}{'' if n_clusters == 1 else 's'}"


def bootstrap_weights(n_games: int, resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """How often each game is drawn in each resample.

    Each resample draws ``n_games`` games with replacement (uniformly), so every row sums to
    ``n_games``.

    Args:
        n_games: Number of games (clusters), >= 1.
        resamples: Number of resamples, >= 1.
        seed: Seed of the ``numpy.random.default_rng`` stream.

    Returns:
        Integer array of shape ``(resamples, n_games)``.

    Raises:
        ValueError: If ``n_games`` or ``resamples`` is below 1.
    """
    if n_games < 1 or resamples < 1:
        raise ValueError(f"bootstrap needs >= 1 game and >= 1 resample (got {n_games}, {resamples})")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_games, size=(resamples, n_games))
    flat = idx + (np.arange(resamples) * n_games)[:, None]
    return np.bincount(flat.ravel(), minlength=resamples * n_games).reshape(resamples, n_games)


def percentile_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile interval of bootstrap values, ignoring NaN (degenerate resamples).

    Returns:
        ``(lo, hi)``, or ``None`` if every value is NaN.
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return None
    alpha = (1 - level) / 2
    lo, hi = np.quantile(v, [alpha, 1 - alpha])
    return float(lo), float(hi)


def cluster_bootstrap_ci(
    per_game: np.ndarray,
    stat: Callable[[np.ndarray], np.ndarray],
    *,
    weights: np.ndarray | None = None,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile CI of a pooled statistic over game-level cluster-bootstrap resamples.

    Games are resampled with replacement and their sufficient statistics (numerators and
    denominators) are pooled by summing before the statistic is computed, as in MafiaScope's
    ``metrics_lib.bootstrap_ci`` (README "Confidence intervals"). Resamples where the
    statistic is undefined (NaN, e.g. a zero denominator) are skipped.

    Args:
        per_game: Array ``(n_games, k)`` of per-game sums.
        stat: Maps pooled sums ``(..., k)`` to the statistic ``(...)`` (NaN where undefined).
        weights: Precomputed :func:`bootstrap_weights` (shared across statistics so they use
            the same resamples); drawn from ``resamples``/``seed`` if omitted.
        resamples: Number of resamples if ``weights`` is omitted.
        seed: Seed if ``weights`` is omitted.
        level: Coverage of the interval (0.95).

    Returns:
        ``(lo, hi)``, or ``None`` if fewer than :data:`MIN_CLUSTERS` games contribute to the
        statistic (:func:`clusters_with_data`) or it is never defined.
    """
    x = np.asarray(per_game, dtype=float)
    if x.shape[0] == 0 or clusters_with_data(x) < MIN_CLUSTERS:
        return None
    w = bootstrap_weights(x.shape[0], resamples, seed) if weights is None else weights
    pooled = w @ x
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = stat(pooled)
    return percentile_ci(vals, level)


def ratio_statistic(num: int, den: int):  # type: ignore[no-untyped-def]
    """A bootstrap statistic: column ``num`` ÷ column ``den`` of per-game sums, NaN where ``den`` is 0.

    Args:
        num: Index of the numerator column in the last axis of the summed array.
        den: Index of the denominator column.

    Returns:
        A function of an array ``(..., k)`` giving an array ``(...)`` of ratios (NaN where the
        denominator is 0), for :func:`cluster_bootstrap_ci`.
    """

    def fn(x: np.ndarray) -> np.ndarray:
        return np.where(x[..., den] > 0, x[..., num] / np.where(x[..., den] > 0, x[..., den], 1), np.nan)

    return fn


def finite_or_none(x: Any) -> float | None:
    """``float(x)``, or ``None`` where it is NaN (a statistic with no data, shown as null)."""
    v = float(x)
    return None if math.isnan(v) else v


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes in ``n`` trials.

    Source: E. B. Wilson (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22:209-212; computed by ``statsmodels``
    (``proportion_confint(method="wilson")``).

    Args:
        k: Successes, ``0 <= k <= n``.
        n: Trials.
        confidence: Coverage in (0, 1) (default 95 %).

    Returns:
        ``(low, high)`` in [0, 1]; ``(0.0, 1.0)`` when ``n == 0`` (nothing is known).
    """
    if n <= 0:
        return (0.0, 1.0)
    from statsmodels.stats.proportion import proportion_confint  # loads pandas: only when a rate is reported

    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    return (max(0.0, float(low)), min(1.0, float(high)))


P_SCIENTIFIC_BELOW = 0.001
"""p-values below this print in scientific notation (``1.083e-05``), not as ``0.000``."""


def fmt_p(p: float | None, missing: str = "-") -> str:
    """A p-value as every output prints it: ``0.043``, ``1.000``, or ``1.083e-05`` below 0.001.

    Three decimals from :data:`P_SCIENTIFIC_BELOW` up, four significant digits in scientific
    notation below it (a small p never reads as ``0.000``). The viewer's JavaScript applies the
    same rule (``pval`` in ``viewer/static/app.js``; a browser test holds the two equal).

    Args:
        p: A p-value in [0, 1], or None (no test: an empty side).
        missing: What None prints as.
    """
    if p is None or math.isnan(p):
        return missing
    return f"{p:.3e}" if p < P_SCIENTIFIC_BELOW else f"{p:.3f}"
