"""Means with 95 % confidence intervals, and their combination over models."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Stat:
    """A mean with the half-width of its 95 % confidence interval.

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


EMPTY = Stat(math.nan, math.nan, 0)


def mean_ci(values: Sequence[float]) -> Stat:
    """Mean and Student-t 95 % CI: ``half = t(0.975, n-1) * s / sqrt(n)`` (``s``: sample sd).

    Values are treated as independent. With ``n = 1`` the half-width is ``nan``; with no
    values the result is :data:`EMPTY`.
    """
    n = len(values)
    if n == 0:
        return EMPTY
    m = math.fsum(values) / n
    if n < 2:
        return Stat(m, math.nan, n)
    s2 = math.fsum((v - m) ** 2 for v in values) / (n - 1)
    return Stat(m, _t975(n - 1) * math.sqrt(s2 / n), n)


def _t975(df: float) -> float:
    """The 97.5 % quantile of Student's t with ``df`` degrees of freedom (scipy, loaded on first use)."""
    from scipy import stats

    return float(stats.t.ppf(0.975, df))


def diff_ci(a: Sequence[float], b: Sequence[float]) -> Stat:
    """Difference of means ``mean(a) - mean(b)`` with a Welch 95 % CI.

    ``se = sqrt(s_a^2/n_a + s_b^2/n_b)``, degrees of freedom by Welch-Satterthwaite,
    ``half = t(0.975, df) * se``; ``n`` is ``n_a + n_b``. Half-width ``nan`` if either side
    has fewer than two values (or both have zero variance).
    """
    na, nb = len(a), len(b)
    if na == 0 or nb == 0:
        return EMPTY
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
        return EMPTY
    m = math.fsum(s.mean for s in xs) / k
    if any(math.isnan(s.half) for s in xs):
        return Stat(m, math.nan, k)
    return Stat(m, math.sqrt(math.fsum(s.half**2 for s in xs)) / k, k)
