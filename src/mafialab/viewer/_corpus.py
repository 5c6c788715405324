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

log = logging.getLogger(__name__)


def corpus_metrics(corpora: Mapping[str, Sequence[Path]]) -> dict[str, Any]:
    """Corpus metrics for the dashboard.

    Args:
        corpora: Corpus name -> game directories (degraded games already left out).

    Returns:
        ``{"available": False, "reason": str}`` when no numbers can be given, else
        ``{"available": True, "source": str, "corpora": {name: {"metrics": [{"name", "value",
        "ci": [low, high] | None, "n"}], ...}}}``.
    """
    try:
        analysis = importlib.import_module("mafialab.analysis")
    except ImportError:
        return {
            "available": False,
            "reason": "metrics unavailable: the analysis layer (mafialab.analysis) is not part of this installation",
        }
    summarize = getattr(analysis, "viewer_summary", None)
    if summarize is None:
        return {
            "available": False,
            "reason": "metrics unavailable: mafialab.analysis offers no viewer_summary() in this version",
        }
    out: dict[str, Any] = {}
    for name, dirs in corpora.items():
        try:
            out[name] = summarize(list(dirs))
        except Exception as err:  # the dashboard must still build; say what failed
            log.warning("corpus %s: analysis failed: %s", name, err)
            out[name] = {"error": f"{type(err).__name__}: {err}"}
    return {"available": True, "source": "mafialab.analysis", "corpora": out}
