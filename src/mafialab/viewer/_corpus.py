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


def corpus_metrics(corpora: Mapping[str, Sequence[Path]]) -> dict[str, Any]:
    """Corpus metrics for the dashboard, computed by ``mafialab.analysis``.

    Args:
        corpora: Corpus name -> game directories. Unreadable and degraded games are left
            out (the integrity gate), so the numbers cover the games the dashboard lists
            without the degraded flag.

    Returns:
        ``{"available": False, "reason": str}`` when no numbers can be given, else
        ``{"available": True, "source": str, "corpora": {name: {"games": int, "metrics":
        [rows of report_rows], "calibration": chart bins or None} | {"error": str}}}``.
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
    if compute is None or flatten is None:
        return {
            "available": False,
            "reason": "metrics unavailable: this mafialab.analysis lacks compute_report()/game_data()",
        }
    out: dict[str, Any] = {}
    everything: list[Any] = []
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
            rep = compute(games, "default", resamples=RESAMPLES, seed=0)
        except Exception as err:  # the dashboard must still build; say what failed
            log.warning("corpus %s: analysis failed: %s", name, err)
            out[name] = {"error": f"{type(err).__name__}: {err}"}
            continue
        everything.extend(games)
        cal = report_calibration(rep)
        if cal is not None:
            groups.append({"kind": "corpus", "key": name, **cal})
        cov = rep.get("coverage", {}).get("metrics", {})
        out[name] = {
            "games": rep.get("games"),
            "metrics": report_rows(rep),
            "calibration": cal,
            # what the probe battery does not support, and the probe each missing metric needs
            "missing": [v["why"] for v in cov.values() if not v["computed"]],
        }
    groups = _calibration_groups(analysis, everything, groups)
    return {
        "available": True,
        "source": f"mafialab.analysis (default method, 95% CI from {RESAMPLES} game-level cluster-bootstrap resamples)",
        "corpora": out,
        "calibration_groups": groups,
    }


def _calibration_groups(
    analysis: Any, games: Sequence[Any], corpus_groups: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The Calibration tab's groups: all games, each corpus, each model (observer's agent).

    Every group is :func:`mafialab.analysis.calibration` (the report's definition and
    population); the corpus groups are the corpus reports' own calibration blocks.
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
        groups.append({"kind": "all", "key": "all games", **whole})
    groups.extend(corpus_groups)
    for model in sorted({a for g in games for a in g.agents.values()}):
        cal = report_calibration(calibrate(games, "default", agent=model, resamples=RESAMPLES, seed=0))
        if cal is not None:
            groups.append({"kind": "model", "key": model, **cal})
    return groups
