"""Corpus-level metrics (F1-F4 with intervals) for the dashboard, from ``mafialab.analysis``.

This is the one place the viewer asks the analysis layer for numbers, and it asks the way
``mafialab report`` does: each game is reduced to its summary
(:func:`mafialab.analysis.cached_summary`, cached by the bytes of its logs) and the corpus
figures are pooled from summaries (:class:`mafialab.analysis.ReportBuilder`), one game at a
time, so memory grows with the number of games, not with their records. The viewer never
computes or invents corpus-level numbers itself.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mafialab.analysis import (
    GameSummary,
    ReportBuilder,
    SummaryCache,
    cached_summary,
    inclusion_block,
    map_summaries,
    pooled_calibration,
)
from mafialab.record import GameLog, LogFormatError
from mafialab.viewer._beliefs import SMALL_BIN

log = logging.getLogger(__name__)

RESAMPLES = 1000
"""Cluster-bootstrap resamples asked of the analysis layer (MafiaScope README: 1,000)."""

METHOD = "default"
"""The method the dashboard's figures are computed under (``mafialab report``'s default)."""

SEAT_KEYS = ("agent",)
"""Seat keys the viewer's summaries are grouped by: the Calibration tab has one group per agent (model)."""


def _row(name: str, value: Any, ci: Any = None, n: Any = None) -> dict[str, Any]:
    return {"name": name, "value": value, "ci": ci, "n": n}


def report_rows(rep: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Flatten an analysis report (``mafialab.analysis.compute_report``) into dashboard rows.

    Returns:
        ``[{"name", "value", "ci": [low, high] | None, "n"}]``: F1 per round (committed
        accuracy, Unknown rate, recall of the hidden team), F2 (ECE, Brier), F3 per side
        (over-prediction ratio, accuracy, majority baseline), F4 per voter side and measure.
    """
    rows: list[dict[str, Any]] = []
    for rnd, f in sorted(rep.get("first_order", {}).items(), key=lambda kv: int(kv[0])):
        ci = f.get("ci95", {})
        rows.append(
            _row(
                f"F1 r{rnd} committed accuracy", f["committed_accuracy"], ci.get("committed_accuracy"), f["committed_n"]
            )
        )
        rows.append(_row(f"F1 r{rnd} Unknown rate", f["unknown_rate"], ci.get("unknown_rate"), f["unknown_n"]))
        rows.append(_row(f"F1 r{rnd} recall of hidden team", f["recall"], ci.get("recall"), f["recall_n"]))
    cal = rep.get("calibration")
    if cal:
        rows.append(_row("F2 ECE", cal["ece"], cal["ci95"].get("ece"), cal["n"]))
        rows.append(_row("F2 Brier", cal["brier"], cal["ci95"].get("brier"), cal["n"]))
    for side, f in rep.get("second_order", {}).items():
        ci = f.get("ci95", {})
        rows.append(
            _row(
                f"F3 {side} over-prediction ratio",
                f["overprediction_ratio"],
                ci.get("overprediction_ratio"),
                f["pairs"],
            )
        )
        rows.append(_row(f"F3 {side} accuracy", f["accuracy"], ci.get("accuracy"), f["pairs"]))
        rows.append(
            _row(f"F3 {side} majority baseline", f["majority_baseline"], ci.get("majority_baseline"), f["pairs"])
        )
    for side, measures in rep.get("vote_coupling", {}).items():
        for measure, f in measures.items():
            if measure in ("baselines", "increment"):
                continue
            rows.append(_row(f"F4 {side} {measure}", f["rate"], f.get("ci95"), f["n"]))
        for pred, f in measures.get("baselines", {}).items():
            rows.append(_row(f"F4 {side} transcript {pred}", f["rate"], f.get("ci95"), f["n"]))
    return rows


def report_calibration(rep: Mapping[str, Any]) -> dict[str, Any] | None:
    """A calibration block of the analysis layer in the viewer's chart shape.

    Args:
        rep: An analysis report (its ``calibration``) or a calibration block itself
            (:func:`mafialab.analysis._calibration.calibration_summary`).

    Returns:
        ``{"n", "ece", "brier", "games", "population", "no_interval", "bins": [{"lo", "hi",
        "n", "games", "acc", "conf", "ci": [low, high] | None, "why": reason | None,
        "small"}]}``, or ``None`` when no answer was counted. The intervals are the analysis
        layer's game-level cluster-bootstrap intervals: ``None`` over fewer than 2 games,
        with ``why`` saying so; the viewer computes none itself.
    """
    cal = rep.get("calibration", rep)
    if not cal or not cal.get("bins"):
        return None
    bins = [
        {"lo": b["lo"], "hi": b["hi"], "n": b["n"], "games": b["games"], "acc": b["accuracy"],
         "conf": b["mean_confidence"], "ci": b["ci95"], "why": b["no_interval"], "small": b["n"] < SMALL_BIN}
        for b in cal["bins"]
    ]  # fmt: skip
    return {
        "n": cal["n"],
        "ece": cal["ece"],
        "ece_ci": cal["ci95"]["ece"],
        "brier": cal["brier"],
        "games": cal["games"],
        "population": cal["population"],
        "no_interval": cal["no_interval"],
        "bins": bins,
    }


class CorpusFigures:
    """The dashboard's corpus figures, built one game summary at a time.

    The inclusion rule is ``mafialab report``'s, applied as :func:`mafialab.analysis.iter_summaries`
    applies it: fork branches are left out unless ``include_branches``, degraded games always
    (:class:`mafialab.analysis.ReportBuilder`), and a game id repeated within a corpus is a
    separate game (its bootstrap cluster ``<id>@<path>``). Each corpus is pooled as ``mafialab
    report`` pools that corpus's folder; the Calibration tab's groups (all games, each model)
    pool every corpus's counted games.

    Args:
        corpora: The corpus names, in dashboard order (a corpus none of whose games could be
            read still gets its block).
        include_branches: Count fork branches (``mafialab view --include-branches``).

    Memory: per counted game a few hundred numbers (the report builder's) and its calibration
    sums per agent; no game records.
    """

    def __init__(self, corpora: Sequence[str] = (), include_branches: bool = False) -> None:
        self.include_branches = include_branches
        self._builders: dict[str, ReportBuilder] = {c: ReportBuilder(METHOD) for c in corpora}
        self._left: dict[str, list[str]] = {c: [] for c in corpora}
        self._first: dict[str, dict[str, str]] = {c: {} for c in corpora}
        # per corpus and given game: (bootstrap root, game id, path, branch, calibration sums (None: not
        # counted), per-agent sums)
        self._cal: dict[str, list[tuple[str, str, str, bool, np.ndarray | None, dict[str, np.ndarray]]]] = {
            c: [] for c in corpora
        }
        self._agents: set[str] = set()

    def add(self, corpus: str, s: GameSummary) -> None:
        """Count one game's summary (computed with :data:`SEAT_KEYS`) in ``corpus``."""
        if corpus not in self._builders:
            self._builders[corpus] = ReportBuilder(METHOD)
            self._left[corpus], self._first[corpus], self._cal[corpus] = [], {}, []
        seen = self._first[corpus].setdefault(s.game_id, s.path)
        if seen != s.path and not s.branch:  # a copy of an id: a game of its own, as `report` counts it
            s = s.model_copy(update={"root": f"{s.game_id}@{s.path}"})
        if s.branch and not self.include_branches:
            self._left[corpus].append(s.game_id)
            return
        self._agents.update(seat.agent for seat in s.seats)
        self._builders[corpus].add(s)  # a degraded or skipped-family game is counted there as left out
        per_agent = {
            label.split("=", 1)[1]: np.asarray(st.calibration, dtype=float)
            for label, st in s.groups.items()
            if st is not None and label.startswith("agent=")
        }
        sums = None if s.stats is None else np.asarray(s.stats.calibration, dtype=float)
        self._cal[corpus].append((s.root, s.game_id, s.path, s.branch, sums, per_agent))

    def result(self) -> dict[str, Any]:
        """The dashboard's ``corpus_metrics`` block (the shape :func:`corpus_metrics` documents)."""
        out: dict[str, Any] = {}
        groups: list[dict[str, Any]] = []
        counted = branches = degraded = skipped = 0
        for name, b in self._builders.items():
            try:
                rep = b.report(resamples=RESAMPLES, seed=0, branches_left_out=self._left[name])
            except Exception as err:  # the dashboard must still build; say what failed
                log.warning("corpus %s: analysis failed: %s", name, err)
                out[name] = {"error": f"{type(err).__name__}: {err}"}
                continue
            inc = rep["inclusion"]
            counted, branches = counted + inc["games"], branches + inc["branches"]
            degraded, skipped = degraded + inc["degraded"], skipped + inc["skipped"]
            cal = report_calibration(rep)
            if cal is not None:
                groups.append({"kind": "corpus", "key": name, "inclusion": inc["rule"], **cal})
            cov = rep.get("coverage", {}).get("metrics", {})
            out[name] = {
                "games": rep.get("games"),
                "inclusion": inc,
                "metrics": report_rows(rep),
                "calibration": cal,
                # none: the dashboard says so once (dashboard_notes) instead of a line per missing metric
                "probe_records": rep.get("probe_records"),
                # what the probe battery does not support, and the probe each missing metric needs
                "missing": [v["why"] for v in cov.values() if not v["computed"]],
            }
        left = sum(len(v) for v in self._left.values())
        whole = inclusion_block(counted, branches, degraded, skipped, left)
        return {
            "available": True,
            "source": f"mafialab.analysis (default method, 95% CI from {RESAMPLES} game-level "
            "cluster-bootstrap resamples)",
            "inclusion": whole,
            "corpora": out,
            "calibration_groups": self._calibration_groups(groups, whole["rule"]),
        }

    def _calibration_groups(self, corpus_groups: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
        """The Calibration tab's groups: all games, each corpus, each model (observer's agent).

        Every group is :func:`mafialab.analysis.pooled_calibration` (the report's definition and
        population) over the games the inclusion rule keeps, as
        :func:`mafialab.analysis.calibration` computes it; a model's group counts every kept game
        (zeros where the model has no observer). The corpus groups are the corpus reports' own.
        """
        given = [g for entries in self._cal.values() for g in entries]
        if not given:
            return corpus_groups
        first: dict[str, str] = {}
        roots: list[str] = []
        sums: list[np.ndarray] = []
        agents: list[dict[str, np.ndarray]] = []
        for root, gid, path, branch, game_sums, per_agent in given:  # one id in two corpora: two games
            seen = first.setdefault(gid, path)
            if game_sums is not None:  # degraded and skipped-family games are not counted
                roots.append(f"{gid}@{path}" if seen != path and not branch else root)
                sums.append(game_sums)
                agents.append(per_agent)
        out = []
        whole = report_calibration(pooled_calibration(sums, roots, METHOD, resamples=RESAMPLES))
        if whole is not None:
            out.append({"kind": "all", "key": "all games", "inclusion": rule, **whole})
        out.extend(corpus_groups)
        zeros = np.zeros_like(sums[0]) if sums else np.zeros(0)
        for model in sorted(self._agents):
            cal = report_calibration(
                pooled_calibration([a.get(model, zeros) for a in agents], roots, METHOD, resamples=RESAMPLES)
            )
            if cal is not None:
                out.append({"kind": "model", "key": model, "inclusion": rule, **cal})
        return out


def game_summary(
    game_dir: Path, cache: SummaryCache | None = None, *, warn: bool = True, game_log: GameLog | None = None
) -> GameSummary:
    """The summary the dashboard's figures read from one game (:data:`SEAT_KEYS` groups, :data:`METHOD`).

    ``warn=False``: what is wrong in the logs is not logged again (the site build read the
    game too and said so). ``game_log``: the game's log as the site build read it
    (:func:`mafialab.analysis.cached_summary`), so it is not read again.

    Raises:
        mafialab.record.LogFormatError: The game's log cannot be read.
    """
    return cached_summary(Path(game_dir), METHOD, SEAT_KEYS, cache, warn=warn, game_log=game_log)


def corpus_metrics(
    corpora: Mapping[str, Sequence[Path]],
    include_branches: bool = False,
    cache: SummaryCache | None = None,
    *,
    ray: str | None = None,
) -> dict[str, Any]:
    """Corpus metrics for the dashboard, computed by ``mafialab.analysis`` from per-game summaries.

    The inclusion rule is ``mafialab report``'s (:class:`CorpusFigures`): fork branches are
    left out unless ``include_branches``, degraded games always; unreadable games are left
    out too. A branch's own page shows its own figures.

    Args:
        corpora: Corpus name -> game directories.
        include_branches: Count fork branches (``mafialab view --include-branches``).
        cache: Where game summaries are read and stored (``None``: computed, not stored).
        ray: A Ray cluster's address: the summaries the cache lacks are Ray tasks
            (:func:`mafialab.analysis.map_summaries`; workers read the games from the paths
            as given); pooled here the same way, so the figures are the same.

    Returns:
        ``{"available": True, "source": str, "inclusion": {...}, "corpora": {name:
        {"games": int, "inclusion": {...}, "metrics": [rows of report_rows], "calibration":
        chart bins or None, "probe_records": int, "missing": [str]} | {"error": str}}, "calibration_groups":
        [...]}``; each ``inclusion`` is the report's (:func:`mafialab.analysis._inclusion.inclusion`:
        counts and the rule in one line, ``rule``), the top-level one over all corpora.

    Raises:
        ImportError, mafialab.harness.RayConnectError: ``ray`` given and Ray is missing or
            unreachable.
    """
    figures = CorpusFigures(list(corpora), include_branches)
    for name, dirs in corpora.items():
        if ray is not None:
            for got in map_summaries(list(dirs), METHOD, SEAT_KEYS, cache, ray=ray):
                if not isinstance(got, LogFormatError):  # listed as skipped by the site build
                    figures.add(name, got)
            continue
        for d in dirs:
            try:
                s = game_summary(d, cache, warn=False)  # the site build reads it too, and says what is wrong
            except LogFormatError:
                continue  # listed as skipped by the site build
            figures.add(name, s)
    return figures.result()
