"""The viewer and `mafialab report` show the same number for every metric they both show.

On the imported MafiaScope-format corpora: our fixtures always, the real recordings when
they are there. Both sides come from one definition in ``mafialab.analysis``; this test
reads the site's data files and the report's JSON as a user would get them."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import mafialab.viewer
from mafialab.cli import app
from mafialab.record import import_mafiascope
from mafialab.viewer import build_site
from mafialab.viewer._build import site_rows

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
    """The chart's data is the report's calibration block key for key, plus what the page adds."""
    assert {k: chart[k] for k in cal} == cal
    assert set(chart) - set(cal) <= {"small_bin", "kind", "key", "inclusion"}
    for b in chart["bins"]:  # the project's interval rule: none over fewer than two games, and why
        assert (b["ci95"] is None) == (b["games"] < 2)
        assert (b["no_interval"] is None) == (b["games"] >= 2)


def _same_usable(rows: list[dict[str, Any]], rep: dict[str, Any]) -> None:
    """The dashboard's usable answers per game are the report's, in its instrument table and usable line."""
    ins = {g["game_id"]: g["probe_answers"] for g in rep["instrument"]["games"]}
    counted = [r for r in rows if r["id"] in ins]
    assert len(counted) == rep["games"]
    for r in counted:
        a = ins[r["id"]]
        assert r["usable"] == a["raw"] + a["repaired"], r["id"]
        assert r["usable_rate"] == (r["usable"] / r["probes"] if r["probes"] else None)
    pooled = rep["instrument"]["pooled"]["probe_answers"]
    usable = sum(r["usable"] for r in counted)
    assert usable == pooled["raw"] + pooled["repaired"] == sum(rep["coverage"]["answers"].values())


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
        rows = [r for r in site_rows(site) if r["corpus"] == corpus]
        assert sum(r["probes"] for r in rows) == rep["probe_records"]
        _same_usable(rows, rep)
    # every model's answers are counted once: the model groups add up to all games
    whole = _report(logs)
    if whole["calibration"]["n"]:
        _same_calibration(groups[("all", "all games")], whole["calibration"])
        models = [g for (kind, _), g in groups.items() if kind == "model"]
        assert sum(g["n"] for g in models) == whole["calibration"]["n"]
        # each model's group (pooled from the game summaries) is analysis.calibration of that agent
        from mafialab.analysis import calibration, load_games

        games = load_games(logs)
        for g in models:
            _same_calibration(g, calibration(games, agent=g["key"]).model_dump(mode="json", exclude={"agent"}))


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
    assert calibration(games).n == cal.n and "outside the hidden team" in cal.population


BRANCHES = Path(__file__).parents[1] / "data" / "viewer_branches"


def _copy_as(src: Path, dst: Path, game_id: str, edit: Any = None) -> Path:
    """``src`` copied to ``dst`` under a new game id; ``edit(record)`` may change its probe records."""
    dst.mkdir(parents=True)
    lines = []
    for line in (src / "game.jsonl").read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["kind"] == "game_start":
            obj["game_id"] = game_id
        lines.append(json.dumps(obj))
    (dst / "game.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    probes = []
    for i, line in enumerate((src / "probes.jsonl").read_text(encoding="utf-8").splitlines()):
        rec = {**json.loads(line), "game_id": game_id}
        probes.append(json.dumps(edit(i, rec) if edit else rec))
    (dst / "probes.jsonl").write_text("\n".join(probes) + "\n", encoding="utf-8")
    return dst


def _empty_rankings(i: int, rec: dict[str, Any]) -> dict[str, Any]:
    # every other suspicion ranking answered with an empty list: it parses, and says nothing
    if rec["probe_id"] == "suspicion_ranking" and i % 4 == 1:
        return {**rec, "answer_raw": "[]", "answer_parsed": [], "parse_ok": True}
    return rec


@pytest.fixture(scope="module")
def mixed_logs(mafiascope_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``probed/`` (a probed game, a copy with empty rankings, a degraded copy), ``forks/``
    (fork branches of the probed game, from ``mafialab fork run``) and ``en_demo/`` (imported)."""
    from mafialab.record import GameStatus, JsonlWriter, read_game

    logs = tmp_path_factory.mktemp("mixed")
    parent = BRANCHES / "parent"
    _copy_as(parent, logs / "probed" / "parent", "parent")
    _copy_as(parent, logs / "probed" / "empty-rankings", "empty-rankings", _empty_rankings)
    deg = _copy_as(parent, logs / "probed" / "degraded-game", "degraded-game")
    n = len(read_game(deg).events)
    with JsonlWriter(deg / "game.jsonl") as w:
        w.write(GameStatus(seq=n + 1, degraded=True, answered_share=0.5, decisions=40, fallbacks=20))
    for d in sorted((BRANCHES / "forks").iterdir()):
        shutil.copytree(d, logs / "forks" / d.name)
    import_mafiascope(mafiascope_dir / "en_demo", logs / "en_demo")
    return logs


MIXED = ("probed", "forks", "en_demo")


def _report_args(directory: Path, branches: bool) -> dict[str, Any]:
    args = ["report", str(directory), "--format", "json"] + (["--include-branches"] if branches else [])
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("branches", [False, True], ids=["default", "include-branches"])
def test_viewer_and_report_count_the_same_games_and_usable_answers(
    mixed_logs: Path, tmp_path: Path, branches: bool
) -> None:
    site = tmp_path / "site"
    build_site(mixed_logs, site, jobs=1, include_branches=branches)
    index = _index(site)
    cm = index["corpus_metrics"]
    groups = {(g["kind"], g["key"]): g for g in index["calibration"]}
    for corpus in MIXED:
        rep = _report_args(mixed_logs / corpus, branches)
        block = cm["corpora"][corpus]
        assert block["inclusion"] == rep["inclusion"]  # the same games, and the rule stated alike
        assert block["games"] == rep["games"] == rep["inclusion"]["games"]
        for row in block["metrics"]:  # F1-F4, value, interval and n
            value, ci, n = _report_value(rep, row["name"])
            assert (row["value"], row["ci"], row["n"]) == (value, ci, n), (corpus, row["name"])
        if rep["calibration"]["n"]:
            _same_calibration(block["calibration"], rep["calibration"])
            _same_calibration(groups[("corpus", corpus)], rep["calibration"])
            assert groups[("corpus", corpus)]["inclusion"] == rep["inclusion"]["rule"]
        else:
            assert block["calibration"] is None and ("corpus", corpus) not in groups
        _same_usable([r for r in site_rows(site) if r["corpus"] == corpus], rep)
    whole = _report_args(mixed_logs, branches)
    _same_calibration(groups[("all", "all games")], whole["calibration"])  # the Calibration tab's default
    assert groups[("all", "all games")]["inclusion"] == whole["inclusion"]["rule"] == cm["inclusion"]["rule"]
    assert whole["inclusion"]["degraded"] == 1 and whole["degraded"] == ["degraded-game"]
    if branches:
        assert whole["inclusion"]["branches"] == 19 and whole["inclusion"]["branches_left_out"] == 0
        assert "19 of them fork branches" in whole["inclusion"]["rule"]
    else:
        assert whole["inclusion"]["branches"] == 0 and whole["inclusion"]["branches_left_out"] == 19
        assert whole["inclusion"]["rule"] == (
            f"corpus figures: {whole['games']} games; 19 fork branches and 1 degraded game left out "
            "(--include-branches adds branches)"
        )
        assert cm["corpora"]["forks"]["games"] == 0  # branches only: no corpus figure counts them


def test_the_calibration_tab_leaves_branches_out_as_the_report_does(mixed_logs: Path, tmp_path: Path) -> None:
    build_site(mixed_logs, tmp_path / "site", jobs=1)
    tab = next(g for g in _index(tmp_path / "site")["calibration"] if g["kind"] == "all")
    rep = _report_args(mixed_logs, False)
    with_branches = _report_args(mixed_logs, True)
    assert with_branches["calibration"]["n"] > rep["calibration"]["n"]  # the branches hold answers
    assert (tab["n"], tab["ece"], tab["brier"]) == (
        rep["calibration"]["n"],
        rep["calibration"]["ece"],
        rep["calibration"]["brier"],
    )


def test_an_empty_ranking_is_not_a_usable_answer_anywhere(mixed_logs: Path, tmp_path: Path) -> None:
    rep = _report_args(mixed_logs / "probed", False)
    records = (mixed_logs / "probed" / "empty-rankings" / "probes.jsonl").read_text(encoding="utf-8").splitlines()
    empty = sum(1 for line in records if json.loads(line)["answer_parsed"] == [])
    assert empty > 0
    rankings = sum(1 for line in records if json.loads(line)["probe_id"] == "suspicion_ranking")
    # the report's usable line and its instrument table agree: the empty lists are unusable
    assert rep["coverage"]["answers"]["suspicion_ranking"] == 2 * rankings - empty
    row = next(g for g in rep["instrument"]["games"] if g["game_id"] == "empty-rankings")
    assert row["probe_answers"]["unusable"] == row["lost"]["wrong_shape"] == empty
    # the viewer: the game's usable share and its per-step answers count the same
    site = tmp_path / "site"
    build_site(mixed_logs / "probed", site, jobs=1)
    game = next(r for r in site_rows(site) if r["id"] == "empty-rankings")
    assert game["usable"] == len(records) - empty and game["usable_rate"] < 1
    seats = [json.loads(_payload(f)) for f in sorted((site / "data" / "s" / game["file"]).glob("*.js"))]
    ok = [p for s in seats for p in s["probes"] if p["ok"]]
    assert len(ok) == game["usable"]
    assert not any(p["p"] == "suspicion_ranking" and not p.get("items") for p in ok)


def _payload(path: Path) -> str:
    m = re.fullmatch(r'MAFIALAB_DATA\("[^"]*",(?:"[^"]*"|[^,]*),(.*)\);\n', path.read_text(encoding="utf-8"), re.S)
    assert m, path
    return m.group(1)


# The viewer computes no belief metric of its own: its per-step series come from mafialab.analysis.


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
