"""``view`` on a folder it cannot build: the error alone on stderr, nothing (no blank line) on
stdout; the MafiaScope import hint only for a folder of MafiaScope logs; and a copy whose header
cannot be read is not counted as a second game with the same id."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.viewer import build_site

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


def _newer_schema(game_dir: Path, dst: Path) -> Path:
    shutil.copytree(game_dir, dst)
    file = dst / "game.jsonl"
    lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["schema_version"] = 99
    file.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    return dst


def test_an_unreadable_folder_prints_the_error_alone_and_no_mafiascope_hint(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    _newer_schema(game_dir, logs / "g1")
    res = runner.invoke(app, ["view", str(logs), "--out", str(tmp_path / "site")])
    assert res.exit_code == 2
    assert res.stdout == ""  # was a blank line before and after the error (the progress bar, off a terminal)
    (line,) = res.stderr.splitlines()
    assert line.startswith(f"error: DIR: none of the 1 game under {logs} can be read: ")
    assert "written with log schema v99" in line
    assert "MafiaScope" not in line and "import" not in line
    res = runner.invoke(app, ["report", str(logs)])
    assert res.exit_code == 2 and "MafiaScope" not in res.output and "can be read" in res.output


def test_a_folder_of_mafiascope_logs_is_told_to_import_them(mafiascope_dir: Path, tmp_path: Path) -> None:
    src = mafiascope_dir / "en_demo"
    for cmd in (["view", str(src), "--out", str(tmp_path / "site")], ["report", str(src)]):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 2, res.output
        (line,) = res.stderr.splitlines()
        assert (
            re.search(r"\d+ MafiaScope logs? \(first record", line)
            and f"mafialab import mafiascope {src} --out LOGS" in line
        ), line
        assert line.count("import") == 2, line  # said once, not once per game


def test_a_successful_build_prints_no_blank_line_and_an_uncut_url(game_dir: Path, tmp_path: Path) -> None:
    res = CliRunner(env={"NO_COLOR": "1"}).invoke(app, ["view", str(game_dir), "--out", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert "" not in lines, res.stdout
    assert lines[-1].endswith((tmp_path / "s" / "index.html").resolve().as_uri())  # not cut at 80 columns


def test_a_copy_with_an_invalid_header_is_not_counted_as_the_same_game(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(game_dir, logs / "good")
    bad = logs / "bad"
    shutil.copytree(game_dir, bad)
    file = bad / "game.jsonl"
    lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    del header["roster"]  # the same game id, but a header read_game refuses
    file.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    summary = build_site(logs, tmp_path / "site", jobs=1)
    assert summary.games == [game_dir.name]  # its plain id: no "<id>@<directory>" key
    assert [p for p, _ in summary.skipped] == [str(bad)]
    assert summary.warnings == []  # was "game id … is in 2 directories" for a copy it did not read
