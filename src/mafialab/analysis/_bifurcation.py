"""Statistics of a bifurcation experiment (``mafialab bifurcate report``).

Definitions: MafiaScope §6 (the bifurcation experiment) as summarised in
``docs/counterfactual.md``: flip share, P(town win | the variant voted for a real mafioso)
against P(town win | otherwise) with a two-sided Fisher exact test, lock-in (modal target
concentration of the resamples, whether the factual target is modal). Intervals are
percentile intervals over a cluster bootstrap whose clusters are parent games.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mafialab.analysis._stats import bootstrap_weights, cluster_bootstrap_ci, fisher_exact, rate, ratio_statistic
from mafialab.record import NO_VOTE, QUADRANTS, Bifurcation, BifurcationPoint, ForkOutcome, read_bifurcation

POINT_FIELDS = (
    "point_id",
    "quadrant",
    "voter",
    "factual_target",
    "target_counts",
    "modal_concentration",
    "factual_is_modal",
    "forks",
    "flips",
    "flip_share",
)
"""Fields of each entry of the report's ``points`` list, in order."""

BLOCK_FIELDS = (
    "points",
    "forks",
    "flips",
    "flip_share",
    "mean_point_flip_share",
    "town_win_when_vote_mafia",
    "town_win_otherwise",
    "fisher_p",
    "flips_on_mafia_vote",
    "modal_concentration_mean",
    "factual_is_modal_points",
)
"""Fields of ``by_quadrant.<quadrant>`` and ``pooled`` (plus ``ci95``), in order."""

# per-game sufficient statistics for the bootstrap
_FLIPS, _FORKS, _SHARE_SUM, _SHARE_N, _VM_HITS, _VM_N, _OT_HITS, _OT_N = range(8)


def valid_target(point: BifurcationPoint, target: str | None) -> str | None:
    """The vote a statement casts at ``point``: ``target`` if it is a living other player.

    MafiaScope's engine casts no vote for a missing name, a dead player or the voter
    itself; so does mafialab's ``no_vote`` rule field.

    Returns:
        The target name, or ``None`` (no valid vote).
    """
    if target is None or target == NO_VOTE or target == point.voter:
        return None
    if point.alive is not None and target not in point.alive:
        return None
    return target


def modal_concentration(counts: dict[str, int] | None) -> float | None:
    """Largest target count / all samples (no valid vote is a target of its own); 0..1.

    Returns:
        ``None`` when ``counts`` is missing or sums to 0.
    """
    if not counts:
        return None
    total = sum(counts.values())
    return max(counts.values()) / total if total > 0 else None


def _rate(hits: int, n: int) -> dict[str, Any]:
    """The report's shape of a rate: ``{hits, n, rate}`` (read back by :meth:`Rate.from_dict`)."""
    r = rate(hits, n, interval=False)
    return {"hits": r.hits, "n": r.n, "rate": r.rate}


def _ci(per_game: np.ndarray, num: int, den: int, weights: np.ndarray | None) -> list[float] | None:
    """Cluster-bootstrap interval of pooled ``num/den`` (:func:`cluster_bootstrap_ci`, its rule for too few games)."""
    if weights is None:
        return None
    ci = cluster_bootstrap_ci(per_game, ratio_statistic(num, den), weights=weights)
    return None if ci is None else [ci[0], ci[1]]


class _PointStats:
    def __init__(self, point: BifurcationPoint, forks: Sequence[ForkOutcome]):
        self.point = point
        done = [f for f in forks if f.winner is not None and f.error is None]
        self.unfinished = len(forks) - len(done)
        self.forks = len(done) if point.parent_winner is not None else 0
        self.flips = sum(f.winner != point.parent_winner for f in done) if point.parent_winner is not None else 0
        mafia = set(point.mafia)
        self.vm = [f for f in done if valid_target(point, f.vote_target) in mafia]
        self.ot = [f for f in done if valid_target(point, f.vote_target) not in mafia]
        self.factual = [f for f in done if f.source == "factual"]
        self.modal = modal_concentration(point.target_counts)
        self.factual_is_modal: bool | None = None
        if point.target_counts:
            key = point.factual_target if point.factual_target is not None else NO_VOTE
            self.factual_is_modal = point.target_counts.get(key, 0) == max(point.target_counts.values())

    def row(self) -> dict[str, Any]:
        p = self.point
        return {
            "point_id": p.point_id,
            "quadrant": p.quadrant,
            "voter": p.voter,
            "factual_target": p.factual_target,
            "target_counts": dict(p.target_counts) if p.target_counts is not None else None,
            "modal_concentration": self.modal,
            "factual_is_modal": self.factual_is_modal,
            "forks": self.forks,
            "flips": self.flips,
            "flip_share": self.flips / self.forks if self.forks else None,
        }

    def sums(self) -> np.ndarray:
        v = np.zeros(8)
        v[_FLIPS], v[_FORKS] = self.flips, self.forks
        if self.forks:
            v[_SHARE_SUM], v[_SHARE_N] = self.flips / self.forks, 1
        pw = self.point.parent_winner
        if pw is not None:
            v[_VM_HITS], v[_VM_N] = sum(f.winner == "town" for f in self.vm), len(self.vm)
            v[_OT_HITS], v[_OT_N] = sum(f.winner == "town" for f in self.ot), len(self.ot)
        return v


def _block(stats: Sequence[_PointStats], weights: dict[str, np.ndarray], games: list[str]) -> dict[str, Any]:
    forks = sum(s.forks for s in stats)
    flips = sum(s.flips for s in stats)
    shares = [s.flips / s.forks for s in stats if s.forks]
    with_parent = [s for s in stats if s.point.parent_winner is not None]
    vm_hits = sum(f.winner == "town" for s in with_parent for f in s.vm)
    vm_n = sum(len(s.vm) for s in with_parent)
    ot_hits = sum(f.winner == "town" for s in with_parent for f in s.ot)
    ot_n = sum(len(s.ot) for s in with_parent)
    modal = [s.modal for s in stats if s.modal is not None]
    known = [s.factual_is_modal for s in stats if s.factual_is_modal is not None]
    flips_vm = sum(f.winner != s.point.parent_winner for s in with_parent for f in s.vm)
    # per-parent-game sums for the cluster bootstrap
    by_game: dict[str, np.ndarray] = {}
    for s in stats:
        by_game[s.point.game_id] = by_game.get(s.point.game_id, np.zeros(8)) + s.sums()
    ids = [g for g in games if g in by_game]
    x = np.array([by_game[g] for g in ids]) if ids else np.zeros((0, 8))
    w = weights.get(str(len(ids)))
    return {
        "points": len(stats),
        "forks": forks,
        "flips": flips,
        "flip_share": flips / forks if forks else None,
        "mean_point_flip_share": float(np.mean(shares)) if shares else None,
        "town_win_when_vote_mafia": _rate(vm_hits, vm_n),
        "town_win_otherwise": _rate(ot_hits, ot_n),
        "fisher_p": fisher_exact(vm_hits, vm_n, ot_hits, ot_n).p,
        "flips_on_mafia_vote": flips_vm,
        "modal_concentration_mean": float(np.mean(modal)) if modal else None,
        "factual_is_modal_points": sum(known) if known else None,
        "ci95": {
            "flip_share": _ci(x, _FLIPS, _FORKS, w),
            "mean_point_flip_share": _ci(x, _SHARE_SUM, _SHARE_N, w),
            "town_win_when_vote_mafia": _ci(x, _VM_HITS, _VM_N, w),
            "town_win_otherwise": _ci(x, _OT_HITS, _OT_N, w),
        },
    }


def _quadrant_order(names: Iterable[str]) -> list[str]:
    return sorted(set(names), key=lambda q: (QUADRANTS.index(q) if q in QUADRANTS else len(QUADRANTS), q))


def bifurcation_report(exp: Bifurcation, *, resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Per-point, per-quadrant and pooled statistics of a bifurcation experiment.

    Definitions (MafiaScope §6; ``docs/counterfactual.md``, "Statistics"):

    - a fork *flips* when its winner differs from the parent's; ``flip_share`` =
      flips / finished forks (per point, per quadrant, pooled) and
      ``mean_point_flip_share`` = the unweighted mean of the points' shares;
    - ``town_win_when_vote_mafia`` / ``town_win_otherwise``: town wins among forks whose
      injected variant cast a valid vote for a real hidden-team member, and among the rest
      (another target or no valid vote); ``fisher_p`` is the two-sided Fisher exact test
      of that 2x2 table (``None`` if a row is empty); ``flips_on_mafia_vote`` counts flips
      among the former;
    - lock-in: ``modal_concentration`` = largest count among the resamples' vote targets /
      all resamples (no valid vote counted as its own target), ``factual_is_modal`` =
      the factual target's count equals that largest count.

    Forks without a winner (unfinished, failed) are left out and counted in
    ``unfinished_forks``. ``ci95`` intervals (per block) come from a cluster bootstrap over
    parent games (``resamples`` draws, seeded) and are ``None`` with fewer than 2 parents.

    Args:
        exp: The experiment (:func:`mafialab.record.read_bifurcation`).
        resamples: Bootstrap resamples (>= 1).
        seed: Bootstrap seed.

    Returns:
        JSON-ready dict: ``experiment``, ``source``, ``parameters``, ``points`` (entries
        with :data:`POINT_FIELDS`), ``by_quadrant`` (quadrant -> block with
        :data:`BLOCK_FIELDS` and ``ci95``), ``pooled`` (the same over every point),
        ``factual_forks`` (``{flips, n}`` of variant 0), ``unfinished_forks``,
        ``diversity`` (per quadrant and pooled: ``points`` with diversity figures, the mean
        over them of the kept variants' mean pairwise cosine, ``mean_cos_selected``, and of
        random draws of as many samples, ``mean_cos_random``; lower = more diverse),
        ``problems``, ``resamples``, ``seed``.
    """
    by_point: dict[str, list[ForkOutcome]] = {}
    for f in exp.forks:
        by_point.setdefault(f.point_id, []).append(f)
    stats = [_PointStats(p, by_point.get(p.point_id, [])) for p in exp.points]
    games = sorted({p.game_id for p in exp.points})
    weights: dict[str, np.ndarray] = {}
    for k in {len({s.point.game_id for s in stats if s.point.quadrant == q}) for q in _quadrants(stats)} | {len(games)}:
        if k >= 2:
            weights[str(k)] = bootstrap_weights(k, resamples, seed)
    by_quadrant = {
        q: _block([s for s in stats if s.point.quadrant == q], weights, games)
        for q in _quadrant_order(q for q in _quadrants(stats))
    }
    factual = [f for s in stats for f in s.factual if s.point.parent_winner is not None]
    return {
        "experiment": exp.header.experiment,
        "source": exp.header.source,
        "parameters": exp.header.parameters,
        "points": [s.row() for s in stats],
        "by_quadrant": by_quadrant,
        "pooled": _block(stats, weights, games),
        "factual_forks": {
            "flips": sum(f.winner != s.point.parent_winner for s in stats for f in s.factual),
            "n": len(factual),
        },
        "unfinished_forks": sum(s.unfinished for s in stats),
        "diversity": {
            **{q: _diversity([s.point for s in stats if s.point.quadrant == q]) for q in by_quadrant},
            "pooled": _diversity([s.point for s in stats]),
        },
        "problems": list(exp.problems),
        "resamples": resamples,
        "seed": seed,
    }


def _diversity(points: Sequence[BifurcationPoint]) -> dict[str, Any]:
    """Mean pairwise cosine of the kept variants against random draws, averaged over points."""
    sel, rnd = [], []
    for p in points:
        d = p.diversity or {}
        a = d.get("mean_pairwise_cos_selected")
        b = d.get("mean_pairwise_cos_random", d.get("mean_pairwise_cos_random20"))
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            sel.append(float(a))
            rnd.append(float(b))
    return {
        "points": len(sel),
        "mean_cos_selected": float(np.mean(sel)) if sel else None,
        "mean_cos_random": float(np.mean(rnd)) if rnd else None,
    }


def _quadrants(stats: Sequence[_PointStats]) -> list[str]:
    return [s.point.quadrant for s in stats if s.point.quadrant is not None]


def report_bifurcation(path: Path, *, resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Read a bifurcation directory and compute :func:`bifurcation_report`.

    Raises:
        FileNotFoundError: If ``path`` is not a bifurcation directory.
        ValueError: If its header or ``points.json`` is unreadable.
    """
    return bifurcation_report(read_bifurcation(path), resamples=resamples, seed=seed)


def blocks_csv_rows(rep: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per quadrant block and one for ``pooled`` (for ``--format csv``)."""
    rows = []
    for name, b in [*rep["by_quadrant"].items(), ("pooled", rep["pooled"])]:
        row: dict[str, Any] = {"block": name}
        for k in BLOCK_FIELDS:
            v = b[k]
            if isinstance(v, dict):
                for sub in ("hits", "n", "rate"):
                    row[f"{k}_{sub}"] = v[sub]
            else:
                row[k] = v
        for k, ci in b["ci95"].items():
            row[f"{k}_ci_lo"], row[f"{k}_ci_hi"] = ci if ci is not None else (None, None)
        rows.append(row)
    return rows
