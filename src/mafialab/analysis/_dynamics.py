"""Belief dynamics: suspicion volatility, top-suspect flips and returns (MafiaScope §7).

Definitions (MafiaScope §7 and appendix; ``docs/counterfactual.md``, "Belief dynamics"):

- *suspicion vector*: from one ``suspicion_ranking`` answer, the scores of the players alive
  at the probe other than the agent, negatives set to 0, divided by their sum (an answer
  whose scores are all zero or missing is skipped); *top suspect*: the largest entry, ties
  broken by the agent's own list order. An agent's vectors form one series over the game,
  ordered by (round, public message index, probe position).
- *volatility*: over consecutive pairs, the L1 distance after re-normalising both vectors
  on the players present in both (range 0-2); pooled as sum of distances / pairs.
- *top-suspect flip rate*: flips / consecutive pairs, leaving out pairs where the previous
  top suspect died in between; *return rate*: the share of flips that go back to a top
  suspect the agent had held (and so abandoned) before.

Every statistic is a sum over pairs, so games pool by adding and the cluster bootstrap
re-weights games. Values on the shared MafiaScope corpora are checked in the tests
(en_demo: volatility 0.3256 over 635 pairs, flip rate 0.5475 over 590, return rate 0.6254
over 323 flips).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from mafialab.analysis._data import GameData, Probe
from mafialab.analysis._metrics import Method, _alive_at, answer
from mafialab.analysis._parse import to_float

if TYPE_CHECKING:
    import numpy as np  # loaded by the sums below (not by the suspicion series play's summary reads)

DYNAMICS_FIELDS = ("volatility_sum", "volatility_pairs", "flips", "flip_pairs", "returns")
"""Layout of the per-game sufficient statistics of :func:`belief_dynamics`."""

_VS, _VP, _FL, _FP, _RT = range(5)


@dataclass(frozen=True)
class SuspicionVector:
    """One normalised suspicion answer of one agent.

    Attributes:
        key: Sort key ``(round, public message index, probe position)``.
        round: Round of the probe.
        weights: Player -> share of suspicion (sums to 1 over living others listed).
        top: Top suspect (largest share; ties by the agent's list order).
        alive: Players alive at the probe (the agent included).
    """

    key: tuple[int, int, int]
    round: int
    weights: dict[str, float]
    top: str
    alive: frozenset[str]


def suspicion_vector(game: GameData, p: Probe, method: Method) -> SuspicionVector | None:
    """The suspicion vector of one ``suspicion_ranking`` answer (definition above).

    Returns:
        The vector, or ``None`` when the answer is not a list of ``{player, score}`` items or
        its usable scores sum to 0. Non-numeric scores and players not alive are left out;
        a player listed twice counts once (first entry).
    """
    alive = _alive_at(game, p, method)
    return vector_from_answer(answer(p, method, game.names), p.player, alive, (p.round, p.msg, p.position))


def vector_from_answer(
    ans: Any, player: str, alive: Iterable[str], key: tuple[int, int, int]
) -> SuspicionVector | None:
    """The suspicion vector of a parsed ``suspicion_ranking`` answer (see :func:`suspicion_vector`).

    Args:
        ans: The parsed answer (a list of ``{player, score}`` items to be usable).
        player: The probed agent (left out of its own vector).
        alive: Players alive at the probe.
        key: Sort key ``(round, public message index, probe position)``.
    """
    if not isinstance(ans, list):
        return None
    alive = frozenset(alive)
    others = alive - {player}
    scores: dict[str, float] = {}
    for item in ans:
        if not isinstance(item, dict):
            continue
        name, score = item.get("player"), to_float(item.get("score"))
        if name not in others or score is None or score != score or name in scores:
            continue
        scores[name] = max(score, 0.0)
    total = sum(scores.values())
    if total <= 0:
        return None
    weights = {n: s / total for n, s in scores.items()}
    order = list(scores)
    top = max(order, key=lambda n: (weights[n], -order.index(n)))
    return SuspicionVector(key, key[0], weights, top, alive)


def l1_common_support(a: dict[str, float], b: dict[str, float]) -> float | None:
    """L1 distance of two suspicion vectors re-normalised on the players in both (0..2).

    Returns:
        ``None`` when no player is in both or either side sums to 0 there.
    """
    common = sorted(a.keys() & b.keys())  # summed in one order: a set's order changes with the process
    sa, sb = sum(a[n] for n in common), sum(b[n] for n in common)
    if not common or sa <= 0 or sb <= 0:
        return None
    return float(sum(abs(a[n] / sa - b[n] / sb) for n in common))


def suspicion_series(game: GameData, method: Method) -> dict[str, list[SuspicionVector]]:
    """Every agent's suspicion vectors, ordered by (round, public message, probe position)."""
    out: dict[str, list[SuspicionVector]] = {}
    for p in game.probes:
        if p.probe_id != "suspicion_ranking":
            continue
        v = suspicion_vector(game, p, method)
        if v is not None:
            out.setdefault(p.player, []).append(v)
    for series in out.values():
        series.sort(key=lambda v: v.key)
    return out


def belief_dynamics(game: GameData, method: Method) -> dict[tuple[str, str], np.ndarray]:
    """Per-game sums for volatility, flip rate and return rate, by group.

    Groups: ``("all", "")``, ``("model", <agent label of the probed seat>)`` and
    ``("round", <round of the later vector of the pair>)``.

    Returns:
        ``{group: array}`` with the layout :data:`DYNAMICS_FIELDS`.
    """
    import numpy as np

    out: dict[tuple[str, str], np.ndarray] = {}

    def add(groups: list[tuple[str, str]], idx: int, value: float) -> None:
        for g in groups:
            out.setdefault(g, np.zeros(len(DYNAMICS_FIELDS)))[idx] += value

    for player, series in suspicion_series(game, method).items():
        model = game.agents.get(player, "unknown")
        held: set[str] = set()
        if series:
            held.add(series[0].top)
        for a, b in pairwise(series):
            groups = [("all", ""), ("model", model), ("round", str(b.round))]
            for g in groups:
                out.setdefault(g, np.zeros(len(DYNAMICS_FIELDS)))
            d = l1_common_support(a.weights, b.weights)
            if d is not None:
                add(groups, _VS, d)
                add(groups, _VP, 1)
            if a.top in b.alive:  # pairs where the previous top suspect died are left out
                add(groups, _FP, 1)
                if a.top != b.top:
                    add(groups, _FL, 1)
                    if b.top in held:
                        add(groups, _RT, 1)
            held.add(b.top)
    return out


def dynamics_block(per_game: np.ndarray, ci: Any) -> dict[str, Any]:
    """Pooled dynamics of one group from per-game sums ``(n_games, 5)``.

    Args:
        per_game: Rows of :data:`DYNAMICS_FIELDS` sums.
        ci: ``ci(per_game, num, den) -> [lo, hi] | None`` (the report's bootstrap).

    Returns:
        ``volatility``, ``volatility_pairs``, ``flip_rate``, ``flip_pairs``, ``flips``,
        ``return_rate``, ``returns`` and ``ci95`` for the three rates; a rate with a zero
        denominator is ``None``.
    """
    import numpy as np

    tot = per_game.sum(axis=0) if per_game.shape[0] else np.zeros(len(DYNAMICS_FIELDS))

    def rate(num: int, den: int) -> float | None:
        return float(tot[num] / tot[den]) if tot[den] > 0 else None

    return {
        "volatility": rate(_VS, _VP),
        "volatility_pairs": int(tot[_VP]),
        "flip_rate": rate(_FL, _FP),
        "flip_pairs": int(tot[_FP]),
        "flips": int(tot[_FL]),
        "return_rate": rate(_RT, _FL),
        "returns": int(tot[_RT]),
        "ci95": {
            "volatility": ci(per_game, _VS, _VP),
            "flip_rate": ci(per_game, _FL, _FP),
            "return_rate": ci(per_game, _RT, _FL),
        },
    }


def retest_floor(
    records: Sequence[Any], observed_pairs_by_round: dict[str, int] | None = None
) -> dict[str, Any] | None:
    """The test-retest floor: top-suspect flips and volatility between repeats (MafiaScope §7).

    Repeats of ``suspicion_ranking`` on one frozen context (one ``(game, point, player)``)
    are ordered by repeat number; each consecutive pair is compared as in
    :func:`belief_dynamics` (the top suspect cannot die between repeats).

    Args:
        records: :class:`mafialab.record.RetestRecord` objects (other probes are ignored).
        observed_pairs_by_round: Flip pairs per round of the observed series; when given,
            ``flip_rate_reweighted`` weights the per-round retest rates by this composition
            (rounds without retest pairs are left out of the weights).

    Returns:
        ``contexts`` (frozen (point, player) pairs), ``pairs``, ``flips``, ``flip_rate``, ``volatility``,
        ``flip_rate_reweighted`` and ``by_round`` (round -> ``{pairs, flips, flip_rate}``);
        ``None`` when there is no retest pair.
    """
    groups: dict[tuple[str, int, str], list[Any]] = {}
    for r in records:
        if r.probe_id == "suspicion_ranking":
            groups.setdefault((r.game_id, r.point, r.player), []).append(r)
    pairs = flips = 0
    vol_sum, vol_n = 0.0, 0
    by_round: dict[str, list[int]] = {}
    for (_, _, player), recs in groups.items():
        recs.sort(key=lambda r: r.repeat)
        vecs = [vector_from_answer(r.answer_parsed, player, r.alive, (r.round, r.msg_index, 0)) for r in recs]
        usable = [v for v in vecs if v is not None]
        for a, b in pairwise(usable):
            d = l1_common_support(a.weights, b.weights)
            if d is not None:
                vol_sum, vol_n = vol_sum + d, vol_n + 1
            pairs += 1
            flips += a.top != b.top
            cell = by_round.setdefault(str(b.round), [0, 0])
            cell[0] += 1
            cell[1] += a.top != b.top
    if pairs == 0:
        return None
    rounds = {r: {"pairs": p, "flips": f, "flip_rate": f / p} for r, (p, f) in sorted(by_round.items())}
    reweighted = None
    if observed_pairs_by_round:
        w = {r: observed_pairs_by_round.get(r, 0) for r in rounds}
        total = sum(w.values())
        if total > 0:
            reweighted = sum(w[r] * rounds[r]["flip_rate"] for r in rounds) / total
    return {
        "contexts": len(groups),
        "pairs": pairs,
        "flips": flips,
        "flip_rate": flips / pairs,
        "volatility": vol_sum / vol_n if vol_n else None,
        "flip_rate_reweighted": reweighted,
        "by_round": rounds,
    }
