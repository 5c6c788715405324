"""The viewer and `mafialab report` show the same number for every metric they both show.

On the imported MafiaScope-format corpora: our fixtures always, the real recordings when
they are there. Both sides come from one definition in ``mafialab.analysis``; this test
reads the site's data files and the report's JSON as a user would get them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import import_mafiascope
from mafialab.viewer import build_site

FIXTURE_CORPORA = ("en_demo", "ru_clean", "corpus_v2")
REAL_CORPORA = ("en_demo", "ru_clean")


def _index(site: Path) -> dict[str, Any]:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    m = re.fullmatch(r'MAFIALAB_DATA\("index","index",(.*)\);\n', text, re.S)
    assert m
    return json.loads(m.group(1))


def _report(directory: Path) -> dict[str, Any]:
    res = CliRunner().invoke(app, ["report", str(directory), "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _report_value(rep: dict[str, Any], name: str) -> tuple[Any, Any, Any]:
    """(value, interval, n) of the report field a dashboard row names (a spec of the names)."""
    if m := re.fullmatch(r"F1 r(\d+) (committed accuracy|Unknown rate|recall of hidden team)", name):
        f = rep["first_order"][m.group(1)]
        key, n = {
            "committed accuracy": ("committed_accuracy", "committed_n"),
            "Unknown rate": ("unknown_rate", "unknown_n"),
            "recall of hidden team": ("recall", "recall_n"),
        }[m.group(2)]
        return f[key], f["ci95"][key], f[n]
    if m := re.fullmatch(r"F2 (ECE|Brier)", name):
        c = rep["calibration"]
        key = m.group(1).lower()
        return c[key], c["ci95"][key], c["n"]
    if m := re.fullmatch(r"F3 (\w+) (over-prediction ratio|accuracy|majority baseline)", name):
        f = rep["second_order"][m.group(1)]
        key = {"over-prediction ratio": "overprediction_ratio", "accuracy": "accuracy"}.get(
            m.group(2), "majority_baseline"
        )
        return f[key], f["ci95"][key], f["pairs"]
    if m := re.fullmatch(r"F4 (\w+) transcript (\w+)", name):
        f = rep["vote_coupling"][m.group(1)]["baselines"][m.group(2)]
        return f["rate"], f["ci95"], f["n"]
    if m := re.fullmatch(r"F4 (\w+) (\w+)", name):
        f = rep["vote_coupling"][m.group(1)][m.group(2)]
        return f["rate"], f["ci95"], f["n"]
    raise AssertionError(f"dashboard row {name!r} has no counterpart in the report")


def _same_calibration(chart: dict[str, Any], cal: dict[str, Any]) -> None:
    assert chart["n"] == cal["n"] and chart["ece"] == cal["ece"] and chart["brier"] == cal["brier"]
    assert chart["ece_ci"] == cal["ci95"]["ece"] and chart["games"] == cal["games"]
    assert chart["population"] == cal["population"]
    assert [(b["lo"], b["n"], b["acc"], b["ci"], b["why"]) for b in chart["bins"]] == [
        (b["lo"], b["n"], b["accuracy"], b["ci95"], b["no_interval"]) for b in cal["bins"]
    ]
    for b in chart["bins"]:  # the project's interval rule: none over fewer than two games, and why
        assert (b["ci"] is None) == (b["games"] < 2)
        assert (b["why"] is None) == (b["games"] >= 2)


def _check(logs: Path, site: Path, corpora: tuple[str, ...]) -> None:
    index = _index(site)
    cm = index["corpus_metrics"]
    assert cm["available"], cm.get("reason")
    groups = {(g["kind"], g["key"]): g for g in index["calibration"]}
    for corpus in corpora:
        rep = _report(logs / corpus)
        block = cm["corpora"][corpus]
        assert block["games"] == rep["games"]
        assert block["metrics"], corpus
        for row in block["metrics"]:
            value, ci, n = _report_value(rep, row["name"])
            assert (row["value"], row["ci"], row["n"]) == (value, ci, n), (corpus, row["name"])
        if rep["calibration"]["n"]:
            _same_calibration(block["calibration"], rep["calibration"])  # the dashboard's chart
            _same_calibration(groups[("corpus", corpus)], rep["calibration"])  # the Calibration tab
        else:
            assert block["calibration"] is None and ("corpus", corpus) not in groups
        rows = [r for r in index["games"] if r["corpus"] == corpus]
        assert sum(r["probes"] for r in rows) == rep["probe_records"]
        parsed = sum(round(r["parse_rate"] * r["probes"]) for r in rows if r["probes"])
        assert parsed == rep["parsed"]
    # every model's answers are counted once: the model groups add up to all games
    whole = _report(logs)
    if whole["calibration"]["n"]:
        _same_calibration(groups[("all", "all games")], whole["calibration"])
        models = [g for (kind, _), g in groups.items() if kind == "model"]
        assert sum(g["n"] for g in models) == whole["calibration"]["n"]


def _imported(src: Path, corpora: tuple[str, ...], out: Path) -> Path:
    for corpus in corpora:
        import_mafiascope(src / corpus, out / corpus)
    return out


@pytest.fixture(scope="module")
def fixture_site(mafiascope_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    logs = _imported(mafiascope_dir, FIXTURE_CORPORA, tmp_path_factory.mktemp("logs"))
    site = tmp_path_factory.mktemp("site")
    build_site(logs, site, jobs=1)
    return logs, site


def test_viewer_and_report_agree_on_our_fixture_corpora(fixture_site: tuple[Path, Path]) -> None:
    _check(*fixture_site, FIXTURE_CORPORA)


def test_viewer_and_report_agree_on_the_real_recordings(mafiascope_real: Path, tmp_path: Path) -> None:
    logs = _imported(mafiascope_real, REAL_CORPORA, tmp_path / "logs")
    build_site(logs, tmp_path / "site", jobs=1)
    _check(logs, tmp_path / "site", REAL_CORPORA)
    index = _index(tmp_path / "site")
    en = next(g for g in index["calibration"] if g["key"] == "en_demo")
    assert en["n"] == 1684 and round(en["ece"], 3) == 0.165  # the Calibration tab gave 0.115 over 2,696


def test_the_calibration_tab_counts_no_hidden_team_guess(fixture_site: tuple[Path, Path]) -> None:
    from mafialab.analysis import calibration, load_games

    logs, _ = fixture_site
    games = load_games(logs / "en_demo")
    cal = calibration(games)
    # a hidden-team observer's answers add nothing (they know their teammates' roles)
    mafia_only = sum(1 for g in games for p in g.probes if p.player in g.mafia and p.probe_id == "role_assessment")
    assert mafia_only > 0
    for g in games:
        g.probes = [p for p in g.probes if p.player not in g.mafia]
    assert calibration(games)["n"] == cal["n"] and "outside the hidden team" in cal["population"]
