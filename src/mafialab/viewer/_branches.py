"""Branch trees, batch outcomes, comparisons, sensitivity strips and bifurcation panels for the site.

Every number shown on these views is computed here, in Python, by the library functions
that the command line uses (:func:`mafialab.counterfactual.rate` and
:func:`mafialab.counterfactual.compare_batches` for ``fork compare``,
:func:`mafialab.analysis.report_bifurcation` for ``bifurcate report``); the page only
draws them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from mafialab.analysis import DEFAULT, GameData, belief_dynamics, report_bifurcation, retest_floor
from mafialab.counterfactual import BatchSummary, compare_batches, rate
from mafialab.engine import Event
from mafialab.record import GameLog, RetestRecord, read_bifurcation

log = logging.getLogger(__name__)

MAX_COMPARED = 40
"""Batches of one parent beyond which pairwise comparisons are not precomputed (k(k-1)/2 pairs)."""

TEAMS = ("town", "mafia")


def decision_seqs(events: Sequence[Event]) -> dict[int, int]:
    """Decision id -> ``seq`` of the first event that answers it (speech, chat, night action, vote)."""
    out: dict[int, int] = {}
    for ev in events:
        d = getattr(ev, "decision", None)
        if isinstance(d, int) and d not in out:
            out[d] = ev.seq
    return out


def fork_seq(glog: GameLog) -> int | None:
    """Seq of a branch's first event at or after its fork step (the first event not shared with its parent).

    ``None`` for a root game, for an imported fork whose log holds no prefix, and for a
    branch without an answered decision at or after the step.
    """
    p = glog.header.parent
    if p is None or p.step is None or p.prefix != "replayed":
        return None
    for ev in glog.events:
        d = getattr(ev, "decision", None)
        if isinstance(d, int) and d >= p.step:
            return ev.seq
    return None


def intervention_label(iv: dict[str, Any]) -> str:
    """Short words for an intervention record (``inject: vote Casey "..."``); plain text, never HTML."""
    kind = str(iv.get("type") or iv.get("kind") or "unknown")
    if kind == "resample":
        return "resample"
    if kind == "inject":
        parts = []
        if iv.get("no_vote"):
            parts.append("no vote")
        elif iv.get("target"):
            parts.append(f"target {iv['target']}")
        if iv.get("choice"):  # a team vote's answer (mission games)
            parts.append(f"choice {iv['choice']}")
        if iv.get("text"):
            t = " ".join(str(iv["text"]).split())
            parts.append(f'"{t[:60]}{"…" if len(t) > 60 else ""}"')
        return "inject: " + (" ".join(parts) or "(empty)")
    if kind == "belief":
        t = " ".join(str(iv.get("text", "")).split())
        return f'belief for seat {iv.get("seat")}: "{t[:60]}{"…" if len(t) > 60 else ""}"'
    if kind == "night":
        return f"night: seat {iv.get('seat')} targets seat {iv.get('target')}"
    return kind


def branch_row_info(glog: GameLog) -> dict[str, Any] | None:
    """The dashboard row's ``parent`` block for a branch (``None`` for a root game).

    Keys: ``game_id`` (parent), ``root``, ``step`` (decision id), ``at`` (``round:phase:index``
    when recorded), ``kind`` (decision kind), ``batch``, ``replica``, ``intervention``
    (record), ``label`` (words), ``fork_seq`` (:func:`fork_seq`).
    """
    p = glog.header.parent
    if p is None:
        return None
    meta_fork = glog.header.meta.get("fork")
    fork: dict[str, Any] = meta_fork if isinstance(meta_fork, dict) else {}
    return {
        "game_id": p.game_id,
        "root": p.root,
        "step": p.step,
        "at": fork.get("at"),
        "kind": fork.get("kind"),
        "batch": p.batch,
        "replica": p.replica,
        "intervention": p.intervention,
        "label": intervention_label(p.intervention),
        "fork_seq": fork_seq(glog),
    }


def dynamics_payload(gd: GameData, retests: Sequence[RetestRecord] = ()) -> dict[str, Any]:
    """Belief dynamics of one game per round (MafiaScope §7; :func:`mafialab.analysis.belief_dynamics`).

    Returns:
        ``rounds``: ``[{round, volatility, volatility_pairs, flip_rate, flip_pairs}]`` in
        round order (a rate is ``None`` with no pair); ``all``: the same over the game;
        ``retest``: :func:`mafialab.analysis.retest_floor` of this game's retest records
        (``None`` without any).
    """
    sums = belief_dynamics(gd, DEFAULT) if not gd.skipped else {}

    def block(v: Any) -> dict[str, Any]:
        vs, vp, fl, fp, _ = (float(x) for x in v)
        return {
            "volatility": vs / vp if vp else None,
            "volatility_pairs": int(vp),
            "flip_rate": fl / fp if fp else None,
            "flip_pairs": int(fp),
        }

    rounds = sorted(((int(k), v) for (g, k), v in sums.items() if g == "round"), key=lambda kv: kv[0])
    floor = retest_floor(list(retests)) if retests else None
    return {
        "rounds": [{"round": r, **block(v)} for r, v in rounds],
        "all": block(sums[("all", "")]) if ("all", "") in sums else None,
        "retest": floor,
    }


def _summary(batch: str, members: list[dict[str, Any]]) -> BatchSummary:
    p = members[0]["parent"]
    members = sorted(members, key=lambda r: r["parent"]["replica"])
    return BatchSummary(
        batch=batch,
        parent_id=p["game_id"],
        root_id=p["root"],
        step=p["step"],
        intervention=p["intervention"],
        games=[r["id"] for r in members],
        winners=[r["winner"] for r in members],
    )


def batch_payload(s: BatchSummary, info: dict[str, Any]) -> dict[str, Any]:
    """One batch for the site: ids, fork step, intervention, replicas and P(each team wins) (Wilson)."""
    return {
        "batch": s.batch,
        "parent": s.parent_id,
        "root": s.root_id,
        "step": s.step,
        "at": info.get("at"),
        "kind": info.get("kind"),
        "intervention": s.intervention,
        "label": info["label"],
        "games": s.games,
        "winners": s.winners,
        "replicas": len(s.games),
        "n": s.n,
        "unfinished": len(s.winners) - s.n,
        **{t: rate(s.wins(t), s.n) for t in TEAMS},
    }


def batches(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every batch of the built branches (dashboard rows with a ``parent`` block), by parent, step, batch."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("parent"):
            by.setdefault(r["parent"]["batch"], []).append(r)
    out = [batch_payload(_summary(b, m), m[0]["parent"]) for b, m in by.items()]
    return sorted(out, key=lambda b: (b["parent"], b["step"] if b["step"] is not None else -1, b["batch"]))


def comparisons(parent_batches: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``fork compare`` of every pair of one parent's batches, keyed ``"<a>|<b>"`` (a before b in site order).

    Each value is :func:`mafialab.counterfactual.compare_batches` (A - B per team with a
    Newcombe interval and a Fisher exact p-value). Empty beyond :data:`MAX_COMPARED` batches.
    """
    if len(parent_batches) > MAX_COMPARED:
        return {}
    sums = {
        b["batch"]: BatchSummary(
            batch=b["batch"],
            parent_id=b["parent"],
            root_id=b["root"],
            step=b["step"],
            intervention=b["intervention"],
            games=list(b["games"]),
            winners=list(b["winners"]),
        )
        for b in parent_batches
    }
    return {f"{a}|{b}": compare_batches(sums[a], sums[b]) for a, b in combinations(list(sums), 2)}


def sensitivity(parent_batches: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sensitivity strip of one parent: P(each team wins) at every step with resample batches.

    Replicas of every ``resample`` batch at a step are pooled (``fork sweep`` writes one
    batch per step). Returns ``[]`` unless at least two steps were resampled (a sweep).

    Returns:
        ``[{step, at, batches, n, town: rate, mafia: rate}]`` in step order.
    """
    by: dict[int, list[dict[str, Any]]] = {}
    for b in parent_batches:
        if b["intervention"].get("type") == "resample" and b["step"] is not None:
            by.setdefault(b["step"], []).append(b)
    if len(by) < 2:
        return []
    out = []
    for step, bs in sorted(by.items()):
        n = sum(b["n"] for b in bs)
        out.append(
            {
                "step": step,
                "at": bs[0]["at"],
                "batches": [b["batch"] for b in bs],
                "n": n,
                **{t: rate(sum(b[t]["k"] for b in bs), n) for t in TEAMS},
            }
        )
    return out


def bifurcation_payloads(
    dirs: Iterable[Path], root: Path, resamples: int = 1000, seed: int = 0
) -> list[dict[str, Any]]:
    """The bifurcation panels: one entry per bifurcation directory, its report and kept variants.

    ``report`` is :func:`mafialab.analysis.report_bifurcation` with the defaults of
    ``mafialab bifurcate report`` (so every number on the panel equals
    ``bifurcate report --format json``). ``points`` adds, per point, the parent game,
    the vote's decision id, and its kept variants (``variant_idx``, ``source``, ``stage``,
    ``text``, ``vote_target``, ``winner``, ``flipped``, ``fork_id``, ``error``, ``count``: the
    resamples identical to it, ``None`` when not recorded). An
    unreadable directory is logged and skipped.
    """
    out = []
    for d in sorted(set(dirs)):
        try:
            exp = read_bifurcation(d)
            rep = report_bifurcation(d, resamples=resamples, seed=seed)
        except (FileNotFoundError, ValueError) as err:
            log.warning("bifurcation %s skipped: %s", d, err)
            continue
        try:
            rel = d.relative_to(root).as_posix()
        except ValueError:
            rel = d.name
        by_point: dict[str, list[dict[str, Any]]] = {}
        for f in exp.forks:
            by_point.setdefault(f.point_id, []).append(f.model_dump(mode="json"))
        points = []
        for p in exp.points:
            variants = sorted(by_point.get(p.point_id, []), key=lambda v: v["variant_idx"])
            for v in variants:
                v["flipped"] = (
                    None if v["winner"] is None or p.parent_winner is None else v["winner"] != p.parent_winner
                )
            points.append(
                {
                    "point_id": p.point_id,
                    "game_id": p.game_id,
                    "decision": p.decision,
                    "round": p.round,
                    "parent_winner": p.parent_winner,
                    "variants": variants,
                }
            )
        out.append({"path": rel or ".", "experiment": exp.header.experiment, "report": rep, "points": points})
    return out


def parent_files(rows: Sequence[dict[str, Any]], bifs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The per-game branch file (``data/b/<file>.js``) of every game with branches or bifurcation points.

    Keys: game id. Values: ``batches`` (this game's, as in :func:`batches`), ``comparisons``
    (:func:`comparisons`), ``sensitivity`` (:func:`sensitivity`), ``bifurcations``
    (entries of :func:`bifurcation_payloads` cut to this game's points, with the report's
    point rows beside them).
    """
    all_batches = batches(rows)
    out: dict[str, dict[str, Any]] = {}
    by_parent: dict[str, list[dict[str, Any]]] = {}
    for b in all_batches:
        by_parent.setdefault(b["parent"], []).append(b)
    for pid, bs in by_parent.items():
        out[pid] = {"batches": bs, "comparisons": comparisons(bs), "sensitivity": sensitivity(bs), "bifurcations": []}
    for bif in bifs:
        rows_by_id = {r["point_id"]: r for r in bif["report"]["points"]}
        games = sorted({p["game_id"] for p in bif["points"]})
        for gid in games:
            pts = [{**p, "report": rows_by_id.get(p["point_id"])} for p in bif["points"] if p["game_id"] == gid]
            entry = out.setdefault(gid, {"batches": [], "comparisons": {}, "sensitivity": [], "bifurcations": []})
            entry["bifurcations"].append(
                {"path": bif["path"], "experiment": bif["experiment"], "pooled": bif["report"]["pooled"], "points": pts}
            )
    return out
