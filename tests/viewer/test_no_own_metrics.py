"""The viewer computes no belief metric of its own: its per-step series come from mafialab.analysis."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import mafialab.viewer

VIEWER = Path(mafialab.viewer.__file__).parent

SCORING = frozenset(
    {
        "is_mafia",  # hidden-team matching of a role guess (F1 recall, F3 suspects)
        "UNKNOWN",  # the committed rule (not Unknown)
        "score_assessment",
        "assessment_beliefs",
        "social_predictions",
        "first_order",
        "second_order",
        "_ece",
        "ece_statistic",
    }
)
"""Names a module uses only to score answers itself; the viewer takes scored series instead."""

METRIC_DEF = re.compile(r"(^|_)(accuracy|recall|agreement|ece|brier|agreement_counts|ego_pairs)(_|$)")


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(VIEWER.glob("*.py"))]


def test_viewer_modules_use_no_scoring_primitive() -> None:
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if name in SCORING:
                found.append(f"{path.name}:{node.lineno}: {name}")
            if isinstance(node, ast.ImportFrom):
                found += [f"{path.name}:{node.lineno}: imports {a.name}" for a in node.names if a.name in SCORING]
    assert found == [], "score answers in mafialab.analysis (step_metrics), not in the viewer"


def test_viewer_defines_no_metric_function() -> None:
    found = [
        f"{path.name}:{node.lineno}: {node.name}"
        for path, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and METRIC_DEF.search(node.name.lower())
    ]
    assert found == []


def test_the_step_series_come_from_the_analysis_layer() -> None:
    tree = ast.parse((VIEWER / "_build.py").read_text(encoding="utf-8"))
    imported = {
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "mafialab.analysis"
        for a in n.names
    }
    assert "step_metrics" in imported
