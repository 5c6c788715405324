"""The one statistics module: every rate, interval, test and p-value mafialab prints comes from here.

What it holds:

- result types: :class:`Rate` (``hits`` of ``n`` with an interval), :class:`TestResult`
  (a test statistic and its p-value) and :class:`Stat` (a mean with a Student-t half-width);
- intervals: :func:`wilson` (one proportion), :func:`newcombe` (a difference of two),
  :func:`cluster_bootstrap_ci` (pooled ratios over games), :func:`bootstrap_mean_ci` (a mean
  over independent values), :func:`mean_ci`/:func:`diff_ci`/:func:`combine` (Student t, Welch);
- exact tests: :func:`fisher_exact` (2x2 table) and :func:`mcnemar_exact` (paired);
- formatting: :func:`fmt_rate` for a rate and :func:`fmt_p` for a p-value.

The empty-sample rule (one for every function): with no trials (``n == 0``) there is no
estimate and no interval, so a rate is ``None``, an interval is ``None`` (not the
uninformative ``[0, 1]``), and a test has ``p`` ``None``; formatters print ``missing``.

scipy and statsmodels are imported inside the functions that use them (start-up time).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

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


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for ``k`` successes in ``n`` trials.

    Source: E. B. Wilson (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22:209-212; computed by ``statsmodels``
    (``proportion_confint(method="wilson")``). 7 of 10 at 95 %: ``(0.3968, 0.8922)``.

    Args:
        k: Successes, ``0 <= k <= n``.
        n: Trials.
        confidence: Coverage in (0, 1) (default 95 %).

    Returns:
        ``(low, high)`` in [0, 1]; ``None`` when ``n == 0`` (the module's empty-sample rule).
    """
    if n <= 0:
        return None
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    return (max(0.0, float(low)), min(1.0, float(high)))


def newcombe(k1: int, n1: int, k2: int, n2: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Interval of the difference ``k1/n1 - k2/n2`` by Newcombe's hybrid score method.

    Source: R. G. Newcombe (1998), "Interval estimation for the difference between
    independent proportions", Statistics in Medicine 17:873-890, method 10 (built from the
    two Wilson intervals); computed by ``statsmodels``
    (``confint_proportions_2indep(method="newcomb")``). 56/70 - 48/80 at 95 %:
    ``(0.0524, 0.3339)`` (Newcombe's table II, example (a)).

    Args:
        k1: Successes of the first sample (``0 <= k1 <= n1``).
        n1: Trials of the first sample.
        k2: Successes of the second sample.
        n2: Trials of the second sample.
        confidence: Coverage in (0, 1).

    Returns:
        ``(low, high)`` in [-1, 1], or ``None`` when either ``n`` is 0.
    """
    if n1 <= 0 or n2 <= 0:
        return None
    from statsmodels.stats.proportion import confint_proportions_2indep

    # alpha rounded: 0.95 gives exactly 0.05, as fork compare has always computed it (the last
    # bits of the interval depend on it); wilson keeps ``1 - confidence``, as it always has
    alpha = round(1 - confidence, 12)
    lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=alpha)
    return float(lo), float(hi)


@dataclass(frozen=True)
class Rate:
    """``hits`` out of ``n`` with its interval: the one rate type of mafialab.

    Serialised outputs keep their own field names (a season's ``index.json``, the JSON of
    ``fork compare``/``fork sweep``, the bifurcation report); :meth:`from_dict` reads any of
    them back.

    Attributes:
        hits: Successes (0..n).
        n: Trials; 0 is an empty sample (``rate`` and ``ci`` are then ``None``).
        rate: ``hits / n``, or ``None`` when ``n == 0``.
        ci: ``(low, high)``, or ``None`` (empty sample, too few clusters, or not computed).
        method: How ``ci`` was computed (``"wilson"``), ``None`` without an interval.
        no_interval: Why there is no interval although ``n > 0`` (:func:`no_interval_reason`).
    """

    hits: int
    n: int
    rate: float | None
    ci: tuple[float, float] | None = None
    method: str | None = None
    no_interval: str | None = None

    @property
    def lo(self) -> float | None:
        """Lower bound of ``ci`` (``None`` without one)."""
        return None if self.ci is None else self.ci[0]

    @property
    def hi(self) -> float | None:
        """Upper bound of ``ci`` (``None`` without one)."""
        return None if self.ci is None else self.ci[1]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Rate:
        """A rate from any serialised shape mafialab writes.

        ``{"hits", "n", "rate"}`` (bifurcation report), ``{"k", "n", "p", "lo", "hi"}``
        (``fork compare``/``sweep``, the viewer's branches) or ``{"wins", "n", "rate", "low",
        "high", "no_interval"}`` (a season's index).

        Raises:
            KeyError: If ``d`` has no ``n`` or none of ``hits``/``k``/``wins``.
        """
        hits = d["hits"] if "hits" in d else d["k"] if "k" in d else d["wins"]
        lo, hi = d.get("lo", d.get("low")), d.get("hi", d.get("high"))
        ci = None if lo is None or hi is None else (float(lo), float(hi))
        value = d["rate"] if "rate" in d else d.get("p")
        return cls(int(hits), int(d["n"]), value, ci, "wilson" if ci else None, d.get("no_interval"))


def rate(hits: int, n: int, *, interval: bool = True, clusters: int | None = None, confidence: float = 0.95) -> Rate:
    """``hits / n`` with its Wilson score interval (:func:`wilson`).

    Args:
        hits: Successes, ``0 <= hits <= n``.
        n: Trials (>= 0); 0 gives ``Rate(0, 0, None)`` whatever ``hits`` says.
        interval: Compute the Wilson interval (``False``: the point estimate only).
        clusters: Independent units (games) the trials come from, when trials within a unit
            are not independent; fewer than :data:`MIN_CLUSTERS` gives no interval and
            ``no_interval`` says why. ``None``: every trial is its own unit.
        confidence: Coverage of the interval in (0, 1).

    Raises:
        ValueError: If ``n < 0`` or ``hits`` is outside ``0..n``.
    """
    if n < 0 or (n > 0 and not 0 <= hits <= n):
        raise ValueError(f"rate needs 0 <= hits <= n (got {hits} of {n})")
    if n == 0:
        return Rate(0, 0, None)
    value = hits / n
    if not interval:
        return Rate(hits, n, value)
    why = no_interval_reason(n if clusters is None else clusters)
    if why is not None:
        return Rate(hits, n, value, no_interval=why)
    return Rate(hits, n, value, wilson(hits, n, confidence), "wilson")


RateStyle = Literal["decimal", "percent", "compact", "count"]
"""How :func:`fmt_rate` prints a rate (7 of 10 with its Wilson interval):

- ``decimal``: ``0.700 [0.397, 0.892] (7/10)`` (``fork compare``, ``fork sweep``);
- ``percent``: ``70% [40%, 89%] (7/10)`` (leaderboards);
- ``compact``: ``70% 7/10 [40,89]`` (narrow leaderboard columns; ``†`` marks no interval);
- ``count``: ``7/10 = 70.0 %`` (no interval; the bifurcation report).
"""


def fmt_rate(r: Rate, style: RateStyle = "decimal", missing: str = "-") -> str:
    """A rate as every output prints it (the styles of :data:`RateStyle`).

    Without an interval the bracket is left out (``percent`` names the reason instead:
    ``70% (7/10; no interval: 1 game)``; ``compact`` ends in ``†``).

    Args:
        r: The rate.
        style: One of :data:`RateStyle`.
        missing: What an empty sample (``rate`` ``None``) prints as.

    Raises:
        ValueError: If ``style`` is not one of :data:`RateStyle`.
    """
    if r.rate is None:
        return missing
    v, counts = r.rate, f"{r.hits}/{r.n}"
    if style == "count":
        return f"{counts} = {100 * v:.1f} %"
    if style == "decimal":
        return f"{v:.3f} ({counts})" if r.ci is None else f"{v:.3f} [{r.ci[0]:.3f}, {r.ci[1]:.3f}] ({counts})"
    if style == "percent":
        if r.ci is None:
            return f"{v:.0%} ({counts}; {r.no_interval or 'no interval'})"
        return f"{v:.0%} [{r.ci[0]:.0%}, {r.ci[1]:.0%}] ({counts})"
    if style == "compact":
        return f"{v:.0%} {counts}†" if r.ci is None else f"{v:.0%} {counts} [{r.ci[0] * 100:.0f},{r.ci[1] * 100:.0f}]"
    raise ValueError(f"unknown rate style {style!r}")


@dataclass(frozen=True)
class TestResult:
    """A test's statistic and p-value: the one test result type of mafialab.

    Attributes:
        stat: The test statistic (Fisher: the sample odds ratio; McNemar: ``b``), ``None``
            when no test is possible.
        p: The p-value in [0, 1], ``None`` when no test is possible (an empty side, no
            discordant pair).
        method: What was tested (``"fisher exact, two-sided"``).
    """

    __test__ = False  # not a pytest test class

    stat: float | None
    p: float | None
    method: str


def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> TestResult:
    """Two-sided Fisher exact test of ``k1/n1`` against ``k2/n2`` (2x2 table ``[[k1, n1-k1], [k2, n2-k2]]``).

    Source: R. A. Fisher (1922), JRSS 85:87-94; computed by ``scipy.stats.fisher_exact``
    (two-sided p: the tables no more likely than the observed one). ``[[3, 1], [1, 3]]``
    (tea tasting): ``p = 0.486``.

    Returns:
        ``stat`` the sample odds ratio, ``p`` the p-value; both ``None`` when either ``n`` is 0.
    """
    method = "fisher exact, two-sided"
    if n1 <= 0 or n2 <= 0:
        return TestResult(None, None, method)
    from scipy.stats import fisher_exact as _fisher

    res = _fisher([[k1, n1 - k1], [k2, n2 - k2]], alternative="two-sided")
    return TestResult(float(res.statistic), float(res.pvalue), method)


def mcnemar_exact(b: int, c: int) -> TestResult:
    """Exact two-sided McNemar test: binomial test of ``b`` successes in ``b + c`` at 1/2.

    Source: Q. McNemar (1947), Psychometrika 12:153-157, exact (binomial) form; computed by
    ``scipy.stats.binomtest``. ``b = 1, c = 9``: ``p = 22/1024 = 0.0215``.

    Args:
        b: Discordant pairs where the first predictor is right (>= 0).
        c: Discordant pairs where the second predictor is right (>= 0).

    Returns:
        ``stat`` ``b``, ``p`` in (0, 1]; both ``None`` when ``b + c == 0`` (no discordant pair).
    """
    method = "mcnemar exact, two-sided"
    if b + c == 0:
        return TestResult(None, None, method)
    from scipy.stats import binomtest

    return TestResult(float(b), float(binomtest(int(b), int(b + c), 0.5, alternative="two-sided").pvalue), method)


def bootstrap_mean_ci(
    values: Sequence[float] | np.ndarray, rng: np.random.Generator, resamples: int, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile interval of a mean over independent values resampled with replacement.

    Args:
        values: The values (each its own unit).
        rng: The generator the resamples draw from (advanced by ``resamples * len(values)``).
        resamples: Number of resamples (>= 1).
        level: Coverage of the interval.

    Returns:
        ``(lo, hi)``, or ``None`` when there is no value.
    """
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None
    means = arr[rng.integers(0, len(arr), size=(resamples, len(arr)))].mean(axis=1)
    a = (1 - level) / 2
    return float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


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


@dataclass(frozen=True)
class Stat:
    """A mean with the half-width of its 95 % confidence interval (Student t; the benchmark's tables).

    Attributes:
        mean: The mean (``nan`` when there is no value).
        half: Half-width of the 95 % CI (``nan`` when it cannot be computed, e.g. ``n < 2``).
        n: Values (responses) behind a per-model stat, or models behind a group stat.
    """

    mean: float
    half: float
    n: int

    @property
    def lo(self) -> float:
        """Lower CI bound."""
        return self.mean - self.half

    @property
    def hi(self) -> float:
        """Upper CI bound."""
        return self.mean + self.half


EMPTY_STAT = Stat(math.nan, math.nan, 0)
"""The mean of no value (``n`` 0; ``mean`` and ``half`` NaN)."""


def _t975(df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def mean_ci(values: Sequence[float]) -> Stat:
    """Mean and Student-t 95 % CI: ``half = t(0.975, n-1) * s / sqrt(n)`` (``s``: sample sd).

    Values are treated as independent. With ``n = 1`` the half-width is ``nan``; with no
    values the result is :data:`EMPTY_STAT`.
    """
    n = len(values)
    if n == 0:
        return EMPTY_STAT
    m = math.fsum(values) / n
    if n < 2:
        return Stat(m, math.nan, n)
    s2 = math.fsum((v - m) ** 2 for v in values) / (n - 1)
    return Stat(m, _t975(n - 1) * math.sqrt(s2 / n), n)


def diff_ci(a: Sequence[float], b: Sequence[float]) -> Stat:
    """Difference of means ``mean(a) - mean(b)`` with a Welch 95 % CI.

    ``se = sqrt(s_a^2/n_a + s_b^2/n_b)``, degrees of freedom by Welch-Satterthwaite,
    ``half = t(0.975, df) * se``; ``n`` is ``n_a + n_b``. Half-width ``nan`` if either side
    has fewer than two values (or both have zero variance).
    """
    na, nb = len(a), len(b)
    if na == 0 or nb == 0:
        return EMPTY_STAT
    ma, mb = math.fsum(a) / na, math.fsum(b) / nb
    if na < 2 or nb < 2:
        return Stat(ma - mb, math.nan, na + nb)
    va = math.fsum((x - ma) ** 2 for x in a) / (na - 1) / na
    vb = math.fsum((x - mb) ** 2 for x in b) / (nb - 1) / nb
    se2 = va + vb
    if se2 == 0:
        return Stat(ma - mb, 0.0, na + nb)
    df = se2**2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    return Stat(ma - mb, _t975(df) * math.sqrt(se2), na + nb)


def combine(stats: Sequence[Stat]) -> Stat:
    """Group statistic: the unweighted average of per-model means.

    Each model counts once, whatever its number of responses. The CI treats the models as
    fixed and propagates their own CIs through the average: ``half = sqrt(sum h_m^2) / k``
    (so it reflects sampling error within models, not spread between models). Models
    without a value are left out; ``n`` is the number of models averaged. The half-width is
    ``nan`` if any averaged model has none.
    """
    xs = [s for s in stats if s.n > 0 and not math.isnan(s.mean)]
    k = len(xs)
    if k == 0:
        return EMPTY_STAT
    m = math.fsum(s.mean for s in xs) / k
    if any(math.isnan(s.half) for s in xs):
        return Stat(m, math.nan, k)
    return Stat(m, math.sqrt(math.fsum(s.half**2 for s in xs)) / k, k)
