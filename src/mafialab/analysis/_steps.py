"""Belief metrics at step granularity: F1, F2 and F3 of one game after every step.

The corpus metrics (:func:`~mafialab.analysis.first_order`,
:func:`~mafialab.analysis.second_order`, :func:`~mafialab.analysis.calibration`) count every
probe answer of a game once. This module asks the same questions of the game as it stood at
each step *s* (an event ``seq``): each seat's latest usable answer with ``after_seq <= s``
(:func:`mafialab.analysis._instrument.usable`: an empty list is not usable, so the seat's
earlier answer stays in force), scored by the same per-answer functions the corpus metrics
use (:func:`~mafialab.analysis._metrics.score_assessment`,
:func:`~mafialab.analysis._metrics.assessment_beliefs`,
:func:`~mafialab.analysis._metrics.social_predictions`,
:func:`~mafialab.analysis._metrics.attitude`), with the same role vocabulary
(:func:`~mafialab.analysis._metrics.vocabulary`) and name resolution
(:func:`~mafialab.analysis._metrics.answer`). The viewer's metrics strip and ego panels are
drawn from it.

Definitions (MafiaScope F1-F3, the recordings' README, "Metric definitions"):

* **F1 committed accuracy** of a seat at *s*: in its latest usable ``role_assessment``, among
  recognised, committed (not Unknown) guesses about other players (``method.f1_targets``:
  alive at the probe's time under ``default``), the share naming the target's true role.
* **F1 recall of the hidden team** at *s*: over the latest usable ``role_assessment`` of
  every observer outside the hidden team, among recognised guesses about hidden-team
  targets (Unknown included, as a miss), the share naming a hidden-team role.
* **F2 calibration** at *s*: the F2 sums (bins, Brier) of the same answers and observers as
  recall; ECE as :func:`mafialab.analysis.calibration` defines it.
* **F3 second-order agreement** at *s*: each counted item "B trusts/neutral/suspects me (A)"
  of A's latest usable ``social_map`` is compared with B's latest usable ``role_assessment``
  that has an item about A, mapped to an attitude (hidden-team role with confidence >= 50:
  suspects; another recognised role >= 50: trusts; otherwise neutral); hidden-team pairs and
  pairs without such an assessment are left out; the share of pairs that agree.

The one difference from the corpus metrics is alignment: answers are taken by ``after_seq``
(the last event the probed agent could have seen) at the step, so F1 and F2 pool each
observer's latest answer rather than every answer, and F3 compares A's latest social map
with B's latest assessment at *s* rather than B's latest at the time of A's probe
(``method.f3_order``). At a step where every seat's latest answers are its only answers the
values are the corpus metrics over the game.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mafialab.analysis._calibration import ece_statistic
from mafialab.analysis._data import GameData, Probe
from mafialab.analysis._instrument import usable
from mafialab.analysis._metrics import (
    DEFAULT,
    F1_FIELDS,
    Method,
    answer,
    assessment_beliefs,
    attitude,
    calibration_size,
    score_assessment,
    social_predictions,
    vocabulary,
)
from mafialab.analysis._parse import RoleVocabulary

_ACC_HITS, _ACC_N = F1_FIELDS.index("acc_hits"), F1_FIELDS.index("acc_n")
_REC_HITS, _REC_N = F1_FIELDS.index("recall_hits"), F1_FIELDS.index("recall_n")


@dataclass(frozen=True)
class Attitude:
    """B's attitude toward A from one of B's ``role_assessment`` answers (the actual side of F3).

    Attributes:
        after_seq: The answer's ``after_seq``.
        observer: B's seat.
        attitude: ``trusts``, ``neutral`` or ``suspects`` (:func:`mafialab.analysis._metrics.attitude`).
        confidence: B's confidence in its guess about A (0-100 as written; ``None`` when
            missing or not a finite number).
    """

    after_seq: int
    observer: int
    attitude: str
    confidence: float | None


@dataclass(frozen=True)
class StepMetrics:
    """F1, F2 and F3 of one game at each step (see the module's definitions).

    Seats are indices into :attr:`GameData.names` (seat order). Counts are kept, rates are
    computed from them: a rate over no observation is ``None``.

    Attributes:
        steps: The steps (event ``seq``), in the order given.
        observers: Per seat, whether F1 and F2 pool its answers (a probed player outside the
            hidden team).
        f1: ``(seats, steps, len(F1_FIELDS))``: the F1 counts of each seat's latest usable
            ``role_assessment`` at each step (zeros before its first), laid out as
            :data:`mafialab.analysis._metrics.F1_FIELDS`.
        calib: ``(seats, steps, calibration_size)``: the F2 sums of the same answers.
        f3: ``(seats, steps, 2)``: ``[agreeing pairs, compared pairs]`` of each seat as
            predictor A at each step.
        actual: Per seat A, every :class:`Attitude` of another player B toward A (hidden-team
            pairs left out), by ``(after_seq, observer)``: what F3 compares A's predictions with.
        method: The reading of the definitions.
    """

    steps: tuple[int, ...]
    observers: tuple[bool, ...]
    f1: np.ndarray
    calib: np.ndarray
    f3: np.ndarray
    actual: tuple[tuple[Attitude, ...], ...]
    method: Method

    def accuracy(self, seat: int) -> list[float | None]:
        """F1 committed accuracy (0-1) of ``seat``'s latest usable assessment at each step.

        Given for every seat (a hidden-team seat's guesses about its teammates are informed,
        which is why the pooled F1 leaves such observers out).
        """
        x = self.f1[seat]
        return [_rate(h, n) for h, n in zip(x[:, _ACC_HITS], x[:, _ACC_N], strict=True)]

    def committed_accuracy(self) -> list[float | None]:
        """F1 committed accuracy (0-1) pooled over the observers' latest usable assessments at each step."""
        x = self.f1[list(self.observers)].sum(axis=0)
        return [_rate(h, n) for h, n in zip(x[:, _ACC_HITS], x[:, _ACC_N], strict=True)]

    def recall(self) -> list[float | None]:
        """F1 recall of the hidden team (0-1) pooled over the observers' latest usable assessments at each step."""
        x = self.f1[list(self.observers)].sum(axis=0)
        return [_rate(h, n) for h, n in zip(x[:, _REC_HITS], x[:, _REC_N], strict=True)]

    def ece(self) -> list[float | None]:
        """F2 expected calibration error (0-1) of the observers' latest usable assessments at each step."""
        nb = 100 // self.method.calib_width
        x = self.calib[list(self.observers)].sum(axis=0)
        values = ece_statistic(nb)(x)
        return [None if math.isnan(v) else float(v) for v in values]

    def agreement(self, seat: int | None = None) -> list[float | None]:
        """F3 second-order agreement (0-1) of ``seat`` as predictor, or of every seat (``None``), at each step."""
        x = self.f3.sum(axis=0) if seat is None else self.f3[seat]
        return [_rate(h, n) for h, n in x]


def _rate(hits: float, n: float) -> float | None:
    return float(hits / n) if n else None


def _latest(seqs: list[int], q: int) -> int:
    """Index of the last entry of ``seqs`` (ascending) at or before ``q``; -1 if none."""
    return bisect.bisect_right(seqs, q) - 1


def step_metrics(game: GameData, steps: Sequence[int], method: Method = DEFAULT) -> StepMetrics:
    """F1, F2 and F3 of ``game`` at each of ``steps`` (definitions: :mod:`mafialab.analysis._steps`).

    Answers are taken in ``after_seq`` order (ties: the order of :attr:`GameData.probes`,
    trigger then battery position); an answer whose player is not in the roster is ignored.

    Args:
        game: The game (:func:`mafialab.analysis.game_data`).
        steps: Event ``seq`` values to evaluate at (any order; the viewer gives its timeline's).
        method: Reading of the definitions (``default``: :data:`mafialab.analysis.DEFAULT`).

    Returns:
        The counts per seat and step, with rate accessors.
    """
    vocab = vocabulary(game, method)
    seat_of = {name: i for i, name in enumerate(game.names)}
    n_seats, n_steps = len(game.names), len(steps)
    k = calibration_size(method)
    # usable answers per seat in after_seq order (a stable sort keeps key order within one seq)
    ra: list[list[tuple[int, np.ndarray, np.ndarray]]] = [[] for _ in range(n_seats)]
    sm: list[list[tuple[int, list[tuple[str, str]]]]] = [[] for _ in range(n_seats)]
    # (B, A) -> B's guesses about A, in order: (after_seq, (guess, confidence))
    about: dict[tuple[int, int], list[tuple[int, tuple[str, float | None]]]] = {}
    for p in sorted(game.probes, key=lambda p: p.after_seq):
        s = seat_of.get(p.player)
        if s is None or p.probe_id not in ("role_assessment", "social_map") or not usable(p, method):
            continue
        ans: Any = answer(p, method, game.names)
        if p.probe_id == "role_assessment":
            ra[s].append((p.after_seq, *_scored(game, p, ans, method, vocab, k)))
            for target, belief in assessment_beliefs(game, ans, vocab).items():
                about.setdefault((s, seat_of[target]), []).append((p.after_seq, belief))
        else:
            sm[s].append((p.after_seq, social_predictions(game, p, ans, method)))
    f1 = np.zeros((n_seats, n_steps, len(F1_FIELDS)))
    calib = np.zeros((n_seats, n_steps, k))
    f3 = np.zeros((n_seats, n_steps, 2))
    ra_seqs = [[q for q, *_ in lst] for lst in ra]
    sm_seqs = [[q for q, _ in lst] for lst in sm]
    about_seqs = {key: [q for q, _ in lst] for key, lst in about.items()}
    for i, q in enumerate(steps):
        for s in range(n_seats):
            j = _latest(ra_seqs[s], q)
            if j >= 0:
                f1[s, i], calib[s, i] = ra[s][j][1], ra[s][j][2]
            j = _latest(sm_seqs[s], q)
            if j < 0:
                continue
            for name, predicted in sm[s][j][1]:
                b = seat_of[name]
                m = _latest(about_seqs.get((b, s), []), q)
                if m < 0:
                    continue
                guess, conf = about[(b, s)][m][1]
                f3[s, i, 0] += predicted == attitude(guess, conf, vocab, method)
                f3[s, i, 1] += 1
    mafia = [name in game.mafia for name in game.names]
    actual: list[tuple[Attitude, ...]] = []
    for a in range(n_seats):
        rows = [
            Attitude(q, b, attitude(guess, conf, vocab, method), _finite(conf))
            for (b, t), lst in about.items()
            if t == a and b != a and not (mafia[a] and mafia[b])
            for q, (guess, conf) in lst
        ]
        actual.append(tuple(sorted(rows, key=lambda x: (x.after_seq, x.observer))))
    return StepMetrics(
        steps=tuple(steps),
        observers=tuple(not m for m in mafia),
        f1=f1,
        calib=calib,
        f3=f3,
        actual=tuple(actual),
        method=method,
    )


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _scored(
    game: GameData, p: Probe, ans: Any, method: Method, vocab: RoleVocabulary, k: int
) -> tuple[np.ndarray, np.ndarray]:
    v, c = np.zeros(len(F1_FIELDS)), np.zeros(k)
    score_assessment(game, p, ans, method, vocab, v, c)
    return v, c
