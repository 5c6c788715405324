"""Statistics of a bifurcation experiment (``mafialab bifurcate report``).

Definitions: MafiaScope §6 (the bifurcation experiment) as summarised in
``docs/counterfactual.md``: flip share, P(town win | the variant voted for a real mafioso)
against P(town win | otherwise) with a two-sided Fisher exact test, lock-in (modal target
concentration of the resamples, whether the factual target is modal). Intervals are
percentile intervals over a cluster bootstrap whose clusters are parent games.

Points at a mission game's team vote (``kind == "team_vote"``) get the analogous figures:
the flip share of the game's winner, the flip share of the proposal's result (passed or
not), town wins after an injected approve against a reject, and lock-in over the
resamples' choices; the vote-for-a-mafioso figures need an elimination vote and are named in
``not_applicable`` when every point is a team vote.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mafialab.analysis._data import NOT_APPLICABLE_MISSION
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

TEAM_VOTE_POINT_FIELDS = (
    "kind",
    "factual_choice",
    "choice_counts",
    "factual_passed",
    "proposal_flips",
    "proposal_forks",
)
"""Fields a team-vote point's entry has after :data:`POINT_FIELDS` (its ``modal_concentration`` is over choices)."""

TEAM_VOTE_FIELDS = (
    "points",
    "proposal_forks",
    "proposal_flips",
    "proposal_flip_share",
    "town_win_when_approve",
    "town_win_when_reject",
    "fisher_p",
)
"""Fields of a block's ``team_vote`` (present when the block holds team-vote points), in order."""

NOT_APPLICABLE_TO_TEAM_VOTES = (
    "town_win_when_vote_mafia",
    "town_win_otherwise",
    "fisher_p",
    "flips_on_mafia_vote",
    "by_quadrant",
)
"""Report figures that need an elimination vote: named in ``not_applicable`` when every point is a team vote."""

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
        self.team_vote = point.kind == "team_vote"
        # a team vote names no one: the vote-for-a-mafioso split does not apply to it
        self.vm = [] if self.team_vote else [f for f in done if valid_target(point, f.vote_target) in mafia]
        self.ot = [] if self.team_vote else [f for f in done if valid_target(point, f.vote_target) not in mafia]
        self.factual = [f for f in done if f.source == "factual"]
        counts, factual = (
            (point.choice_counts, point.factual_choice)
            if self.team_vote
            else (point.target_counts, point.factual_target)
        )
        self.modal = modal_concentration(counts)
        self.factual_is_modal: bool | None = None
        if counts:
            key = factual if factual is not None else NO_VOTE
            self.factual_is_modal = counts.get(key, 0) == max(counts.values())
        # team votes: forks whose proposal result is known, those whose result differs from the parent's
        known = [f for f in done if f.proposal_passed is not None] if point.factual_passed is not None else []
        self.proposal_forks = len(known) if self.team_vote else 0
        self.proposal_flips = sum(f.proposal_passed != point.factual_passed for f in known) if self.team_vote else 0
        with_parent = done if point.parent_winner is not None and self.team_vote else []
        self.approve = [f for f in with_parent if f.choice == "approve"]
        self.reject = [f for f in with_parent if f.choice != "approve"]  # a blank vote counts as a rejection

    def row(self) -> dict[str, Any]:
        p = self.point
        row = {
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
        if self.team_vote:
            row |= {
                "kind": p.kind,
                "factual_choice": p.factual_choice,
                "choice_counts": dict(p.choice_counts) if p.choice_counts is not None else None,
                "factual_passed": p.factual_passed,
                "proposal_flips": self.proposal_flips,
                "proposal_forks": self.proposal_forks,
            }
        return row

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
        **({"team_vote": _team_vote_block(tv)} if (tv := [s for s in stats if s.team_vote]) else {}),
    }


def _team_vote_block(stats: Sequence[_PointStats]) -> dict[str, Any]:
    """The team-vote figures of a block (:data:`TEAM_VOTE_FIELDS`) over its team-vote points."""
    forks = sum(s.proposal_forks for s in stats)
    flips = sum(s.proposal_flips for s in stats)
    ap_hits = sum(f.winner == "town" for s in stats for f in s.approve)
    ap_n = sum(len(s.approve) for s in stats)
    re_hits = sum(f.winner == "town" for s in stats for f in s.reject)
    re_n = sum(len(s.reject) for s in stats)
    return {
        "points": len(stats),
        "proposal_forks": forks,
        "proposal_flips": flips,
        "proposal_flip_share": flips / forks if forks else None,
        "town_win_when_approve": _rate(ap_hits, ap_n),
        "town_win_when_reject": _rate(re_hits, re_n),
        "fisher_p": fisher_exact(ap_hits, ap_n, re_hits, re_n).p,
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
      the factual target's count equals that largest count;
    - team-vote points (mission games): the same flip share (of the game's winner) and
      lock-in over the resamples' choices (approve/reject, a blank one counted as its own);
      per block, ``team_vote`` (:data:`TEAM_VOTE_FIELDS`): ``proposal_flips`` /
      ``proposal_forks`` = forks whose proposal passed where the parent's failed or the
      other way round, among forks where both are known; ``town_win_when_approve`` /
      ``town_win_when_reject``: town wins among forks whose injected choice approved, and
      among the rest (reject or blank), with their two-sided Fisher exact ``fisher_p``. A
      team vote is in neither row of the vote-for-a-mafioso table; when every point is a
      team vote, ``not_applicable`` names those figures (and ``by_quadrant``) with
      :data:`mafialab.analysis._data.NOT_APPLICABLE_MISSION`.

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
        ``problems``, ``resamples``, ``seed``; ``not_applicable`` (figure -> why) only when
        every point is a team vote.
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
    # variant 0 of the points whose parent has a winner (a flip needs one), as the points' own counts
    factual = [(f, s.point.parent_winner) for s in stats for f in s.factual if s.point.parent_winner is not None]
    return {
        "experiment": exp.header.experiment,
        "source": exp.header.source,
        "parameters": exp.header.parameters,
        "points": [s.row() for s in stats],
        "by_quadrant": by_quadrant,
        "pooled": _block(stats, weights, games),
        "factual_forks": {
            "flips": sum(f.winner != winner for f, winner in factual),
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
        **({"not_applicable": dict.fromkeys(NOT_APPLICABLE_TO_TEAM_VOTES, NOT_APPLICABLE_MISSION)}
           if stats and all(s.team_vote for s in stats) else {}),
    }  # fmt: skip


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
    """One flat row per quadrant block and one for ``pooled`` (for ``--format csv``).

    A block with team-vote points adds its ``team_vote`` figures as ``team_vote_<field>``
    columns (rates as ``_hits``, ``_n``, ``_rate``).
    """
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
        for k, v in b.get("team_vote", {}).items():  # mission games' team votes
            for sub, x in v.items() if isinstance(v, dict) else [("", v)]:
                row[f"team_vote_{k}{'_' + sub if sub else ''}"] = x
        rows.append(row)
    return rows
