"""F2 calibration: one definition, its population stated, computed here for report and viewer.

Every number the report, the dashboard and the viewer's Calibration tab show about
calibration comes from :func:`calibration_summary` (over the per-game sums of
:func:`mafialab.analysis.first_order`), so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mafialab.analysis._data import GameData
from mafialab.analysis._metrics import Method, calibration_size, first_order, get_method
from mafialab.analysis._report_model import AgentCalibration, Calibration, CalibrationBin, CalibrationCI
from mafialab.analysis._stats import (
    MIN_CLUSTERS,
    bootstrap_weights,
    cluster_bootstrap_ci,
    clusters_with_data,
    finite_or_none,
    no_interval_reason,
    ratio_statistic,
)


def calibration_population(method: Method) -> str:
    """The answers F2 counts, in words (shown beside every calibration number).

    Source: MafiaScope's F2 definition (the recordings' README, "F2 calibration"), read as
    ``docs/metrics.md`` describes: observers outside the hidden team only, so a hidden-team
    player's guesses about its own (known) teammates never count.
    """
    targets = "alive at the probe's time" if method.f1_targets == "alive" else "named in the answer, dead or alive"
    return (
        "committed role guesses (not Unknown) with a confidence in [0, 100] in role_assessment answers "
        f"of probed players outside the hidden team, about other players {targets}; "
        "degraded games left out"
    )


def ece_statistic(nb: int) -> Callable[[np.ndarray], np.ndarray]:
    """The ECE as a function of summed F2 vectors, for point estimates and :func:`cluster_bootstrap_ci`.

    ECE = sum over bins of (n_bin / n) * |accuracy_bin - mean confidence_bin / 100| (MafiaScope
    F2, the recordings' README).

    Args:
        nb: Number of bins (``100 // method.calib_width``).

    Returns:
        A function of an array ``(..., 3 * nb + 2)`` laid out as
        :func:`~mafialab.analysis._metrics.calibration_size` describes, giving ``(...)`` ECE values
        in [0, 1] (NaN where no guess is counted).
    """

    def fn(x: np.ndarray) -> np.ndarray:
        n = x[..., 3 * nb + 1]
        total = np.zeros(n.shape)
        for b in range(nb):
            hits, cnt, conf = x[..., 3 * b], x[..., 3 * b + 1], x[..., 3 * b + 2]
            safe = np.where(cnt > 0, cnt, 1)
            term = cnt / np.where(n > 0, n, 1) * np.abs(hits / safe - conf / safe / 100.0)
            total = total + np.where(cnt > 0, term, 0.0)
        return np.where(n > 0, total, np.nan)

    return fn


def _ci(per_cluster: np.ndarray, stat: Any, weights: np.ndarray | None) -> list[float] | None:
    if weights is None or per_cluster.shape[0] == 0:
        return None
    ci = cluster_bootstrap_ci(per_cluster, stat, weights=weights)
    return None if ci is None else [ci[0], ci[1]]


def calibration_summary(per_cluster: np.ndarray, method: Method, weights: np.ndarray | None) -> Calibration:
    """Reliability bins, ECE and Brier score with game-level cluster-bootstrap intervals.

    ECE = sum over bins of (n_bin / n) * |accuracy_bin - mean confidence_bin / 100| (bins of
    ``method.calib_width``, 100 folded into the top bin); Brier = mean (confidence/100 -
    correct)^2 (MafiaScope F2). Every interval is the 2.5-97.5 percentile over the
    resamples in ``weights`` and is ``null`` when fewer than
    :data:`~mafialab.analysis.MIN_CLUSTERS` games contribute to it, with the reason given
    (``no_interval``; a bin's own reason in its ``no_interval``).

    Args:
        per_cluster: ``(clusters, 3 * n_bins + 2)`` calibration sums per game (or per root
            game), laid out as the second value of :func:`mafialab.analysis.first_order`.
        method: The reading (bin width).
        weights: :func:`~mafialab.analysis.bootstrap_weights` over the clusters, or ``None``
            for no intervals.

    Returns:
        A :class:`~mafialab.analysis._report_model.Calibration` (the report's ``calibration``):
        ``population``, ``games``, ``n``, ``ece``, ``brier``, ``bins`` (``lo``, ``hi``, ``n``,
        ``games``, ``accuracy``, ``mean_confidence``, ``ci95``, ``no_interval``), ``ci95``
        (``ece``, ``brier``) and ``no_interval``; ``games`` counts the games with at least one
        counted answer; rates over no answer are ``None``.
    """
    nb = 100 // method.calib_width
    x = np.asarray(per_cluster, dtype=float).reshape(-1, calibration_size(method))
    tot = x.sum(axis=0)
    n_games = clusters_with_data(x[:, 3 * nb + 1 :])
    bins = []
    for b in range(nb):
        cnt = int(tot[3 * b + 1])
        if cnt == 0:
            continue
        cols = x[:, [3 * b, 3 * b + 1]]
        k = clusters_with_data(cols[:, 1:])
        bins.append(
            CalibrationBin(
                lo=b * method.calib_width,
                hi=(b + 1) * method.calib_width,
                n=cnt,
                games=k,
                accuracy=float(tot[3 * b] / cnt),
                mean_confidence=float(tot[3 * b + 2] / cnt),
                ci95=_ci(cols, ratio_statistic(0, 1), weights) if k >= MIN_CLUSTERS else None,
                no_interval=no_interval_reason(k),
            )
        )
    ece, brier = ece_statistic(nb), ratio_statistic(3 * nb, 3 * nb + 1)
    return Calibration(
        population=calibration_population(method),
        games=n_games,
        n=int(tot[3 * nb + 1]),
        ece=finite_or_none(ece(tot)),
        brier=finite_or_none(brier(tot)),
        bins=bins,
        ci95=CalibrationCI(ece=_ci(x, ece, weights), brier=_ci(x, brier, weights)),
        no_interval=no_interval_reason(n_games),
    )


def calibration(
    games: Sequence[GameData],
    method: Method | str = "default",
    *,
    agent: str | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> AgentCalibration:
    """F2 calibration over ``games``, optionally only the answers of one agent (model).

    The same numbers as the ``calibration`` section of
    :func:`mafialab.analysis.compute_report` (for ``agent=None``): skipped-family and
    degraded games are left out, branches of one root game form one bootstrap cluster.

    Args:
        games: Flattened games (:func:`mafialab.analysis.load_games`).
        method: ``"default"``, ``"mafiascope"`` or a :class:`Method`.
        agent: Count only observers whose roster ``agent`` (model label) is this one.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        :func:`calibration_summary`'s :class:`~mafialab.analysis._report_model.Calibration`
        with ``agent`` (an :class:`~mafialab.analysis._report_model.AgentCalibration`).

    Raises:
        ValueError: On an unknown method name.
    """
    m = get_method(method) if isinstance(method, str) else method
    used = [g for g in games if not g.skipped and not g.degraded]
    per_game = []
    for g in used:
        observers = None if agent is None else {name for name, a in g.agents.items() if a == agent}
        per_game.append(first_order(g, m, observers)[1])
    cal = pooled_calibration(per_game, [g.root or g.game_id for g in used], m, resamples=resamples, seed=seed)
    return AgentCalibration(**dict(cal), agent=agent)


def pooled_calibration(
    per_game: Sequence[Sequence[float] | np.ndarray],
    roots: Sequence[str],
    method: Method | str = "default",
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> Calibration:
    """F2 calibration pooled from per-game sums, as :func:`calibration` and the report pool them.

    Games sharing a root (branches of one game) form one bootstrap cluster; otherwise the
    games are resampled in the order given.

    Args:
        per_game: Each counted game's F2 sums (``[hits, n, confidence sum] * bins + [brier
            sum, n]``: :func:`mafialab.analysis.first_order`'s second value, or a game
            summary's ``stats.calibration``), a game without answers as zeros.
        roots: Each game's bootstrap cluster (its root game's id), in the same order.
        method: ``"default"``, ``"mafiascope"`` or a :class:`Method`.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.

    Returns:
        :func:`calibration_summary`'s :class:`~mafialab.analysis._report_model.Calibration`.

    Raises:
        ValueError: On an unknown method name, or ``per_game`` and ``roots`` of different lengths.
    """
    m = get_method(method) if isinstance(method, str) else method
    if len(per_game) != len(roots):
        raise ValueError(f"{len(per_game)} games of sums but {len(roots)} roots")
    order = sorted(set(roots))
    k = calibration_size(m)
    x = np.array(per_game, dtype=float).reshape(len(per_game), k)
    if len(order) != len(roots):  # branches share a root: one cluster each, as compute_report resamples them
        where = {r: i for i, r in enumerate(order)}
        y = np.zeros((len(order), k))
        np.add.at(y, np.array([where[r] for r in roots], dtype=int), x)
        x = y
    weights = bootstrap_weights(len(order), resamples, seed) if order else None
    return calibration_summary(x, m, weights)
