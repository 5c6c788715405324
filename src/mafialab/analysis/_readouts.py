"""Stated beliefs beside log-probability beliefs: one definition, computed here for report and viewer.

A battery that asks one question twice at a step, once for a stated answer
(``{"player": X, "confidence": 0-100}``) and once as a ``logprob`` probe (a distribution
over the same players, ``ProbeRecord.distribution``), gives two readouts of one belief: the
named suspect and how sure the model says it is, and the most probable candidate and its
probability under the model's own scores. This module pairs them per observer and step and
sums, per game, what the report compares (:func:`readout_sums`; :func:`readouts_block` turns
pooled sums into the report's ``readouts`` section; the viewer renders that section):

- first-order accuracy: the pick is on the hidden team;
- calibration of the pick's confidence (stated ``confidence / 100``, logprob ``p(top)``):
  reliability bins of width 0.1, ECE (MafiaScope's F2 form, ``sum n_b / n * |acc_b -
  conf_b|``) and Brier score (``mean (conf - hit)^2``);
- agreement: both readouts name the same player;
- vote coupling: the pick is the player the observer votes for at the next day-vote tally;
- logprob dynamics: per observer, between consecutive logprob answers, the total-variation
  distance of the two distributions (renormalised over the candidates both name) and whether
  the most probable candidate changed. A logprob answer is deterministic for a given
  context, so re-asking it on a frozen context gives the same distribution: its retest
  floor is zero by construction (:data:`LOGPROB_RETEST_FLOOR`; ``mafialab retest`` measures
  it: :func:`mafialab.probes.logprob_retest_floor`).

Observers are probed players outside the hidden team (as F2); picks of the observer itself
do not occur (``$others``). Degraded games are left out by the report, as everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mafialab.analysis._data import GameData, Probe
from mafialab.analysis._stats import finite_or_none, ratio_statistic

BINS = 10
"""Reliability bins of the readouts' confidence (width 0.1)."""

READOUTS = ("stated", "logprob")
"""The two readouts, in the order their sums are laid out."""

SIDE_FIELDS = ("n", "hits", "confidence", "brier", "vote_n", "vote_hits")
"""Per readout: answers, correct picks, summed confidence, summed Brier terms, answers
followed by a day vote of the observer, and of those the votes for the pick; then
``[hits, n, confidence] * BINS``."""

SIDE_SIZE = len(SIDE_FIELDS) + 3 * BINS
READOUT_SIZE = 2 * SIDE_SIZE + 2 + 3
"""Length of :func:`readout_sums`: both sides, ``[pairs, agree]``, ``[steps, tv sum, flips]``."""

LOGPROB_RETEST_FLOOR = 0.0
"""Top-suspect flip rate of a logprob answer re-asked on a frozen context: zero, as the
readout involves no sampling (the same context gives the same scores)."""


def _stated(p: Probe, names: set[str]) -> tuple[str, float] | None:
    v = p.parsed
    if not isinstance(v, dict):
        return None
    who, conf = v.get("player"), v.get("confidence")
    if not isinstance(who, str) or who not in names or isinstance(conf, bool) or not isinstance(conf, int | float):
        return None
    if not 0 <= conf <= 100:
        return None
    return who, float(conf) / 100.0


def _logprob(p: Probe) -> tuple[str, float] | None:
    d = p.distribution
    if not d:
        return None
    top = max(d, key=d.__getitem__)
    return top, float(d[top])


def _next_vote(game: GameData, voter: str, after_seq: int) -> str | None:
    for _, _, seq, votes in game.tallies:
        if seq > after_seq and voter in votes:
            return votes[voter]
    return None


def _add(x: np.ndarray, base: int, pick: tuple[str, float], game: GameData, voter: str, after_seq: int) -> None:
    who, conf = pick
    hit = float(who in game.mafia)
    x[base : base + 4] += [1, hit, conf, (conf - hit) ** 2]
    vote = _next_vote(game, voter, after_seq)
    if vote is not None:
        x[base + 4 : base + 6] += [1, float(vote == who)]
    b = min(int(conf * BINS), BINS - 1)
    j = base + len(SIDE_FIELDS) + 3 * b
    x[j : j + 3] += [hit, 1, conf]


def _tv(a: dict[str, float], b: dict[str, float]) -> float | None:
    common = [k for k in a if k in b]
    sa, sb = sum(a[k] for k in common), sum(b[k] for k in common)
    if len(common) < 2 or sa <= 0 or sb <= 0:
        return None
    return 0.5 * sum(abs(a[k] / sa - b[k] / sb) for k in common)


def readout_sums(game: GameData) -> np.ndarray:
    """The game's sums of both readouts (layout: :data:`READOUT_SIZE`, see the module docstring).

    Returns zeros for a game without ``logprob`` answers.
    """
    x = np.zeros(READOUT_SIZE)
    names = set(game.names)
    steps: dict[tuple[str, int], dict[str, Probe]] = {}
    for p in game.probes:
        if p.player in game.mafia:
            continue
        step = steps.setdefault((p.player, p.after_seq), {})
        if p.distribution:
            step.setdefault("logprob", p)
        elif _stated(p, names) is not None:
            step.setdefault("stated", p)
    last: dict[str, dict[str, float]] = {}
    for (player, seq), step in sorted(steps.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        stated = _stated(step["stated"], names) if "stated" in step else None
        scored = _logprob(step["logprob"]) if "logprob" in step else None
        if stated is not None:
            _add(x, 0, stated, game, player, seq)
        if scored is not None:
            _add(x, SIDE_SIZE, scored, game, player, seq)
        if stated is not None and scored is not None:
            x[2 * SIDE_SIZE : 2 * SIDE_SIZE + 2] += [1, float(stated[0] == scored[0])]
        if scored is not None:
            dist = dict(step["logprob"].distribution or {})
            prev = last.get(player)
            if prev is not None:
                tv = _tv(prev, dist)
                if tv is not None:
                    flip = float(max(prev, key=prev.__getitem__) != scored[0])
                    x[2 * SIDE_SIZE + 2 :] += [1, tv, flip]
            last[player] = dist
    return x


def _ece(base: int) -> Callable[[np.ndarray], np.ndarray]:
    def fn(x: np.ndarray) -> np.ndarray:
        n = x[..., base]
        total = np.zeros(n.shape)
        for b in range(BINS):
            j = base + len(SIDE_FIELDS) + 3 * b
            hits, cnt, conf = x[..., j], x[..., j + 1], x[..., j + 2]
            safe = np.where(cnt > 0, cnt, 1)
            term = cnt / np.where(n > 0, n, 1) * np.abs(hits / safe - conf / safe)
            total = total + np.where(cnt > 0, term, 0.0)
        return np.where(n > 0, total, np.nan)

    return fn


def _side(tot: np.ndarray, base: int, ci: Callable[[Callable[[np.ndarray], np.ndarray]], Any]) -> dict[str, Any]:
    acc, brier = ratio_statistic(base + 1, base), ratio_statistic(base + 3, base)
    vote = ratio_statistic(base + 5, base + 4)
    bins = []
    for b in range(BINS):
        j = base + len(SIDE_FIELDS) + 3 * b
        hits, cnt, conf = tot[j], tot[j + 1], tot[j + 2]
        bins.append(
            {
                "lo": b / BINS,
                "hi": (b + 1) / BINS,
                "n": int(cnt),
                "accuracy": finite_or_none(hits / cnt) if cnt else None,
                "confidence": finite_or_none(conf / cnt) if cnt else None,
            }
        )
    return {
        "n": int(tot[base]),
        "accuracy": finite_or_none(acc(tot)),
        "mean_confidence": finite_or_none(ratio_statistic(base + 2, base)(tot)),
        "ece": finite_or_none(_ece(base)(tot)),
        "brier": finite_or_none(brier(tot)),
        "vote_n": int(tot[base + 4]),
        "vote_coupling": finite_or_none(vote(tot)),
        "bins": bins,
        "ci95": {"accuracy": ci(acc), "ece": ci(_ece(base)), "brier": ci(brier), "vote_coupling": ci(vote)},
    }


def readouts_block(
    per_game: np.ndarray, ci: Callable[[np.ndarray, Callable[[np.ndarray], np.ndarray]], Any]
) -> dict[str, Any] | None:
    """The report's ``readouts`` section from per-game :func:`readout_sums` (rows = games).

    Args:
        per_game: ``(games, READOUT_SIZE)`` sums.
        ci: ``ci(per_game, statistic) -> [lo, hi] | None``, the report's cluster bootstrap.

    Returns:
        ``None`` when no game has a logprob answer; else ``{"stated": side, "logprob": side,
        "pairs", "agreement", "agreement_ci95", "dynamics": {...}}`` where a side holds
        ``n``, ``accuracy``, ``mean_confidence``, ``ece``, ``brier``, ``vote_n``,
        ``vote_coupling``, ``bins`` and ``ci95``.
    """
    if per_game.shape[0] == 0:
        return None
    tot = per_game.sum(axis=0)
    if tot[SIDE_SIZE] == 0:
        return None

    def stat_ci(stat: Callable[[np.ndarray], np.ndarray]) -> Any:
        return ci(per_game, stat)

    a = 2 * SIDE_SIZE
    agree = ratio_statistic(a + 1, a)
    d = a + 2
    return {
        "stated": _side(tot, 0, stat_ci),
        "logprob": _side(tot, SIDE_SIZE, stat_ci),
        "pairs": int(tot[a]),
        "agreement": finite_or_none(agree(tot)),
        "agreement_ci95": stat_ci(agree),
        "dynamics": {
            "steps": int(tot[d]),
            "volatility": finite_or_none(ratio_statistic(d + 1, d)(tot)),
            "flip_rate": finite_or_none(ratio_statistic(d + 2, d)(tot)),
            "retest_floor": LOGPROB_RETEST_FLOOR,
        },
    }
