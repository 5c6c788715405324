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
from mafialab.viewer._beliefs import SMALL_BIN, wilson

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
    """The report's calibration bins in the viewer's chart shape, with Wilson intervals."""
    cal = rep.get("calibration")
    if not cal or not cal.get("bins"):
        return None
    bins = []
    for b in cal["bins"]:
        hits = round(b["accuracy"] * b["n"])
        lo, hi = wilson(hits, b["n"])
        bins.append(
            {"lo": b["lo"], "hi": b["hi"], "n": b["n"], "acc": b["accuracy"], "conf": b["mean_confidence"],
             "ci": [lo, hi], "small": b["n"] < SMALL_BIN}
        )  # fmt: skip
    return {"n": cal["n"], "ece": cal["ece"], "bins": bins}


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
    for name, dirs in corpora.items():
        try:
            games = []
            for d in dirs:
                try:
                    glog = read_game(d)
                except LogFormatError:
                    continue  # listed as skipped by the site build
                if glog.status is None or not glog.status.degraded:
                    games.append(flatten(glog))
            rep = compute(games, "default", resamples=RESAMPLES, seed=0)
        except Exception as err:  # the dashboard must still build; say what failed
            log.warning("corpus %s: analysis failed: %s", name, err)
            out[name] = {"error": f"{type(err).__name__}: {err}"}
            continue
        out[name] = {"games": rep.get("games"), "metrics": report_rows(rep), "calibration": report_calibration(rep)}
    return {
        "available": True,
        "source": f"mafialab.analysis (default method, 95% CI from {RESAMPLES} game-level cluster-bootstrap resamples)",
        "corpora": out,
    }
