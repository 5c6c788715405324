"""Corpus-level metrics (F1-F4 with intervals) for the dashboard, from ``mafialab.analysis``.

This is the one place the viewer asks the analysis layer for numbers. When the layer is
not installed, or cannot score the logs, the dashboard says "metrics unavailable" and why;
the viewer never computes or invents corpus-level numbers itself.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mafialab.record import LogFormatError, read_game
from mafialab.viewer._beliefs import SMALL_BIN

log = logging.getLogger(__name__)

RESAMPLES = 1000
"""Cluster-bootstrap resamples asked of the analysis layer (MafiaScope README: 1,000)."""


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


def corpus_metrics(
    corpora: Mapping[str, Sequence[Path]], include_branches: bool = False, ray: str | None = None
) -> dict[str, Any]:
    """Corpus metrics for the dashboard, computed by ``mafialab.analysis``.

    The inclusion rule is ``mafialab report``'s, applied by the same functions: fork
    branches are left out unless ``include_branches``
    (:func:`mafialab.analysis._data.split_branches`), degraded games always
    (:func:`mafialab.analysis.compute_report`); unreadable games are left out too. A
    branch's own page shows its own figures.

    Args:
        corpora: Corpus name -> game directories.
        include_branches: Count fork branches (``mafialab view --include-branches``).
        ray: A Ray cluster's address (``mafialab view --ray``): the figures come from game
            summaries computed as Ray tasks (:func:`ray_corpus_metrics`); the same numbers.

    Returns:
        ``{"available": False, "reason": str}`` when no numbers can be given, else
        ``{"available": True, "source": str, "inclusion": {...}, "corpora": {name:
        {"games": int, "inclusion": {...}, "metrics": [rows of report_rows], "calibration":
        chart bins or None, "missing": [str]} | {"error": str}}, "calibration_groups":
        [...]}``; each ``inclusion`` is the report's (:func:`mafialab.analysis._inclusion.inclusion`:
        counts and the rule in one line, ``rule``), the top-level one over all corpora.

    Raises:
        ImportError, mafialab.harness.RayConnectError: ``ray`` given and Ray is missing or
            unreachable.
    """
    try:
        analysis = importlib.import_module("mafialab.analysis")
    except ImportError:
        return {
            "available": False,
            "reason": "metrics unavailable: the analysis layer (mafialab.analysis) is not part of this installation",
        }
    compute = getattr(analysis, "compute_report", None)
    flatten = getattr(analysis, "game_data", None)
    split = getattr(analysis, "split_branches", None)
    included = getattr(analysis, "inclusion", None)
    if compute is None or flatten is None or split is None or included is None:
        return {
            "available": False,
            "reason": "metrics unavailable: this mafialab.analysis lacks "
            "compute_report()/game_data()/split_branches()/inclusion()",
        }
    if ray is not None:
        return ray_corpus_metrics(analysis, corpora, include_branches, ray)
    out: dict[str, Any] = {}
    everything: list[Any] = []
    all_left: list[str] = []
    groups: list[dict[str, Any]] = []
    for name, dirs in corpora.items():
        try:
            games = []
            for d in dirs:
                try:
                    glog = read_game(d, warn=False)  # the site build reads it too, and says what is wrong
                except LogFormatError:
                    continue  # listed as skipped by the site build
                games.append(flatten(glog))  # degraded games: left out by the analysis layer itself
            games, left = split(games, include_branches)  # the one inclusion rule, as `mafialab report`
            rep = compute(games, "default", resamples=RESAMPLES, seed=0, branches_left_out=left)
        except Exception as err:  # the dashboard must still build; say what failed
            log.warning("corpus %s: analysis failed: %s", name, err)
            out[name] = {"error": f"{type(err).__name__}: {err}"}
            continue
        everything.extend(games)
        all_left.extend(left)
        out[name] = _corpus_entry(name, rep, groups)
    whole = included(everything, all_left)
    groups = _calibration_groups(analysis, everything, groups, whole["rule"])
    return _metrics_block(whole, out, groups)


def _corpus_entry(name: str, rep: Mapping[str, Any], groups: list[dict[str, Any]]) -> dict[str, Any]:
    """One corpus's dashboard block from its report; its calibration group is appended to ``groups``."""
    cal = report_calibration(rep)
    if cal is not None:
        groups.append({"kind": "corpus", "key": name, "inclusion": rep["inclusion"]["rule"], **cal})
    cov = rep.get("coverage", {}).get("metrics", {})
    return {
        "games": rep.get("games"),
        "inclusion": rep["inclusion"],
        "metrics": report_rows(rep),
        "calibration": cal,
        # what the probe battery does not support, and the probe each missing metric needs
        "missing": [v["why"] for v in cov.values() if not v["computed"]],
    }


def _metrics_block(whole: dict[str, Any], out: dict[str, Any], groups: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "available": True,
        "source": f"mafialab.analysis (default method, 95% CI from {RESAMPLES} game-level cluster-bootstrap resamples)",
        "inclusion": whole,
        "corpora": out,
        "calibration_groups": groups,
    }


def ray_corpus_metrics(
    analysis: Any, corpora: Mapping[str, Sequence[Path]], include_branches: bool, address: str
) -> dict[str, Any]:
    """:func:`corpus_metrics` from game summaries computed as Ray tasks (``mafialab view --ray``).

    Workers read the games from the paths as given (shared storage) and return their
    summaries (:func:`mafialab.analysis.map_summaries`, with the ``agent`` seat key for the
    per-model calibration); this process pools them per corpus as :func:`corpus_metrics`
    pools the games, so the numbers are the same. The games' own pages are built here.

    Args:
        analysis: The ``mafialab.analysis`` module.
        corpora: Corpus name -> game directories.
        include_branches: Count fork branches.
        address: The ``--ray`` address (:func:`mafialab.harness.connect_ray`).

    Raises:
        ImportError, mafialab.harness.RayConnectError: Ray is missing or unreachable.
    """
    from mafialab.harness import connect_ray

    connect_ray(address)  # a missing or unreachable cluster is the command's error, not a corpus's
    out: dict[str, Any] = {}
    everything: list[Any] = []
    all_left: list[str] = []
    groups: list[dict[str, Any]] = []
    for name, dirs in corpora.items():
        try:
            got = analysis.map_summaries(dirs, "default", ("agent",), ray=address)
            games = [s for s in got if not isinstance(s, LogFormatError)]  # listed as skipped by the site build
            games, left = analysis.split_branches(games, include_branches)
            rep = analysis.compute_report(games, "default", resamples=RESAMPLES, seed=0, branches_left_out=left)
        except Exception as err:  # the dashboard must still build; say what failed
            log.warning("corpus %s: analysis failed: %s", name, err)
            out[name] = {"error": f"{type(err).__name__}: {err}"}
            continue
        everything.extend(games)
        all_left.extend(left)
        out[name] = _corpus_entry(name, rep, groups)
    whole = analysis.inclusion(everything, all_left)
    first: dict[str, str] = {}
    for i, s in enumerate(everything):  # one id in two folders: two games, as same_id() makes them
        if first.setdefault(s.game_id, s.path) != s.path and not s.branch:
            everything[i] = s.model_copy(update={"root": f"{s.game_id}@{s.path}"})
    cal_groups = []
    if everything:
        calibrate = analysis.summary_calibration
        all_games = report_calibration(calibrate(everything, "default", resamples=RESAMPLES, seed=0))
        if all_games is not None:
            cal_groups.append({"kind": "all", "key": "all games", "inclusion": whole["rule"], **all_games})
    cal_groups.extend(groups)
    for model in sorted({seat.agent for s in everything for seat in s.seats}) if everything else []:
        cal = report_calibration(calibrate(everything, "default", agent=model, resamples=RESAMPLES, seed=0))
        if cal is not None:
            cal_groups.append({"kind": "model", "key": model, "inclusion": whole["rule"], **cal})
    return _metrics_block(whole, out, cal_groups)


def _calibration_groups(
    analysis: Any, games: Sequence[Any], corpus_groups: list[dict[str, Any]], rule: str
) -> list[dict[str, Any]]:
    """The Calibration tab's groups: all games, each corpus, each model (observer's agent).

    Every group is :func:`mafialab.analysis.calibration` (the report's definition and
    population) over ``games``, the games the inclusion rule keeps; the corpus groups are
    the corpus reports' own calibration blocks. Each group carries its ``inclusion`` line
    (``rule`` for all games and the models).
    """
    calibrate = getattr(analysis, "calibration", None)
    if calibrate is None or not games:
        return corpus_groups
    separate = getattr(analysis, "same_id", None)
    if separate is not None:  # one id in two corpora: two games, as `mafialab report` counts them
        separate(games)
    groups = []
    whole = report_calibration(calibrate(games, "default", resamples=RESAMPLES, seed=0))
    if whole is not None:
        groups.append({"kind": "all", "key": "all games", "inclusion": rule, **whole})
    groups.extend(corpus_groups)
    for model in sorted({a for g in games for a in g.agents.values()}):
        cal = report_calibration(calibrate(games, "default", agent=model, resamples=RESAMPLES, seed=0))
        if cal is not None:
            groups.append({"kind": "model", "key": model, "inclusion": rule, **cal})
    return groups
