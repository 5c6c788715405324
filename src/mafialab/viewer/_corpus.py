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
    Calibration,
    GameSummary,
    RepeatedIds,
    Report,
    ReportBuilder,
    ReportRow,
    SummaryCache,
    cached_summary,
    inclusion_block,
    map_summaries,
    pooled_calibration,
    report_rows,
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


_F1_NAMES = {
    "committed_accuracy": "committed accuracy",
    "unknown_rate": "Unknown rate",
    "recall": "recall of hidden team",
}
"""F1 rows the dashboard shows: JSON key -> its name there."""

_F3_NAMES = {
    "overprediction_ratio": "over-prediction ratio",
    "accuracy": "accuracy",
    "majority_baseline": "majority baseline",
}
"""F3 rows the dashboard shows: JSON key -> its name there."""


def _label(row: ReportRow) -> str | None:
    """The dashboard's name of a report row it shows (the F1-F4 rates), else ``None``."""
    sec, grp, name = row.section, row.group, row.name
    if sec == "first_order" and name in _F1_NAMES:
        return f"F1 r{grp.removeprefix('round ')} {_F1_NAMES[name]}"
    if sec == "calibration" and not grp and name in ("ece", "brier"):
        return f"F2 {name.upper() if name == 'ece' else name.capitalize()}"
    if sec == "second_order" and name in _F3_NAMES:
        return f"F3 {grp} {_F3_NAMES[name]}"
    if sec == "vote_coupling" and name == "rate":
        side, _, measure = grp.partition(" ")
        if measure.startswith("baseline "):
            return f"F4 {side} transcript {measure.removeprefix('baseline ')}"
        if " " not in measure:  # an F4 measure (the increments' rows are the CLI's tables)
            return f"F4 {side} {measure}"
    return None


def dashboard_rows(rep: Report) -> list[dict[str, Any]]:
    """The dashboard's table of one corpus: the F1-F4 rates among the report's rows.

    The rows are :func:`mafialab.analysis.report_rows`'s (the ``report --format csv`` rows),
    so value, interval and ``n`` are the report's; the viewer only picks and names them.

    Returns:
        ``[{"name": label, "section", "group", "key": the row's JSON key, "value", "ci":
        [low, high] | None, "n"}]``: F1 per round (committed accuracy, Unknown rate, recall
        of the hidden team), F2 (ECE, Brier), F3 per side (over-prediction ratio, accuracy,
        majority baseline), F4 per voter side and measure, then its transcript baselines.
    """
    out = []
    for row in report_rows(rep):
        label = _label(row)
        if label is not None:
            out.append({"name": label, "section": row.section, "group": row.group, "key": row.name,
                        "value": row.value, "ci": row.ci, "n": row.n})  # fmt: skip
    return out


def calibration_chart(cal: Calibration) -> dict[str, Any] | None:
    """A calibration block of the analysis layer as the viewer's charts read it.

    Returns:
        ``cal.model_dump(mode="json")`` (the report's ``calibration``, key for key) plus
        ``small_bin`` (:data:`~mafialab.viewer._beliefs.SMALL_BIN`: bins with fewer answers
        are dimmed), or ``None`` when no answer was counted.
    """
    if not cal.bins:
        return None
    return {**cal.model_dump(mode="json"), "small_bin": SMALL_BIN}


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
        self._ids: dict[str, RepeatedIds] = {c: RepeatedIds() for c in corpora}
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
            self._left[corpus], self._ids[corpus], self._cal[corpus] = [], RepeatedIds(), []
        cluster, _ = self._ids[corpus].see(s.game_id, s.path, s.root, s.branch)
        if cluster != s.root:  # a copy of an id: a game of its own, as `report` counts it
            s = s.model_copy(update={"root": cluster})
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
            inc = rep.inclusion
            counted, branches = counted + inc.games, branches + inc.branches
            degraded, skipped = degraded + inc.degraded, skipped + inc.skipped
            cal = calibration_chart(rep.calibration)
            if cal is not None:
                groups.append({"kind": "corpus", "key": name, "inclusion": inc.rule, **cal})
            out[name] = {
                "games": rep.games,
                "inclusion": inc.model_dump(mode="json"),
                "metrics": dashboard_rows(rep),
                "calibration": cal,
                # stated vs logprob readouts (mafialab.analysis._readouts), None without logprob answers
                "readouts": None if rep.readouts is None else rep.readouts.model_dump(mode="json"),
                # none: the dashboard says so once (dashboard_notes) instead of a line per missing metric
                "probe_records": rep.probe_records,
                # what the probe battery does not support, and the probe each missing metric needs
                "missing": [v.why for v in rep.coverage.metrics.values() if not v.computed],
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
        ids = RepeatedIds()
        roots: list[str] = []
        sums: list[np.ndarray] = []
        agents: list[dict[str, np.ndarray]] = []
        for root, gid, path, branch, game_sums, per_agent in given:  # one id in two corpora: two games
            cluster, _ = ids.see(gid, path, root, branch)
            if game_sums is not None:  # degraded and skipped-family games are not counted
                roots.append(cluster)
                sums.append(game_sums)
                agents.append(per_agent)
        out = []
        whole = calibration_chart(pooled_calibration(sums, roots, METHOD, resamples=RESAMPLES))
        if whole is not None:
            out.append({"kind": "all", "key": "all games", "inclusion": rule, **whole})
        out.extend(corpus_groups)
        zeros = np.zeros_like(sums[0]) if sums else np.zeros(0)
        for model in sorted(self._agents):
            cal = calibration_chart(
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
        {"games": int, "inclusion": {...}, "metrics": [rows of dashboard_rows], "calibration":
        calibration_chart or None, "probe_records": int, "missing": [str]} | {"error": str}}, "calibration_groups":
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
