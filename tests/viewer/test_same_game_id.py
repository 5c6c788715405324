"""Two directories holding one game id: the viewer builds both and says so, naming both paths."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.viewer import build_site
from mafialab.viewer._build import site_rows


def _index(site: Path) -> dict:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    m = re.fullmatch(r'MAFIALAB_DATA\("index","index",(.*)\);\n', text, re.S)
    assert m
    return json.loads(m.group(1))


def test_a_copy_with_the_same_id_is_kept_and_named(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(game_dir, logs / "a" / game_dir.name)
    shutil.copytree(game_dir, logs / "b" / game_dir.name)
    (logs / "b" / game_dir.name / "probes.jsonl").write_text("", encoding="utf-8")  # a marker of the copy
    summary = build_site(logs, tmp_path / "site", jobs=1)
    gid = game_dir.name
    assert sorted(summary.games) == [f"{gid}@a/{gid}", f"{gid}@b/{gid}"]
    assert not summary.skipped
    (warning,) = summary.warnings
    assert str(logs / "a" / gid) in warning and str(logs / "b" / gid) in warning
    index = _index(tmp_path / "site")
    rows = site_rows(tmp_path / "site")
    assert [r["game_id"] for r in rows] == [gid, gid]
    assert len({r["file"] for r in rows}) == 2
    assert index["warnings"] == [warning]
    for row in rows:  # each copy's data files carry its own key
        text = (tmp_path / "site" / "data" / "g" / f"{row['file']}.js").read_text(encoding="utf-8")
        assert text.startswith(f'MAFIALAB_DATA("game",{json.dumps(row["id"])},')


def test_view_prints_the_warning(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(game_dir, logs / "a" / game_dir.name)
    shutil.copytree(game_dir, logs / "b" / game_dir.name)
    res = CliRunner().invoke(app, ["view", str(logs), "--out", str(tmp_path / "site"), "-j", "1"])
    assert res.exit_code == 0, res.output
    assert "warning:" in res.output and "Built 2 games" in res.output


def test_a_newer_schema_copy_is_skipped_by_view_and_report_and_shares_no_id(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "mixed"
    shutil.copytree(game_dir, logs / "g1")
    shutil.copytree(game_dir, logs / "g2")
    file = logs / "g2" / "game.jsonl"
    lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["schema_version"] = 99  # written by a newer mafialab: this one cannot read it
    file.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    summary = build_site(logs, tmp_path / "site", jobs=1)
    gid = game_dir.name
    assert summary.games == [gid]  # the only game read keeps its plain id
    assert [p for p, _ in summary.skipped] == [str(logs / "g2")]
    assert summary.warnings == []  # no "in 2 directories": the copy was not read
    runner = CliRunner(env={"COLUMNS": "300", "NO_COLOR": "1"})
    res = runner.invoke(app, ["view", str(logs), "--out", str(tmp_path / "site2")])
    assert res.exit_code == 0, res.output
    assert "2 directories" not in res.output and "Built 1 game" in res.output
    res = runner.invoke(app, ["report", str(logs), "--format", "json"])
    assert res.exit_code == 0, res.output  # skipped as view skips it, not a refusal of the folder
    assert json.loads(res.stdout)["games"] == 1
    (skip,) = [ln for ln in res.stderr.splitlines() if ln.startswith("skipped:")]
    assert f"{file}:1: written with log schema v99" in skip
    assert "2 directories" not in res.stderr
    shutil.rmtree(logs / "g1")  # nothing readable left: both refuse the folder
    res = runner.invoke(app, ["report", str(logs)])
    assert res.exit_code == 2 and "can be read" in res.output
