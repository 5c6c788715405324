"""CLI: mafialab season run/resume/leaderboard/plan and mafialab judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import read_verdicts

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "arena_season.yaml"
runner = CliRunner(env={"COLUMNS": "250", "NO_COLOR": "1"})


def test_example_season_runs_offline_and_writes_index(tmp_path: Path):
    assert "season" in EXAMPLE.name
    out = tmp_path / "demo"
    res = runner.invoke(app, ["season", "run", str(EXAMPLE), "--out", str(out)])
    assert res.exit_code == 0, res.output
    index = json.loads((out / "index.json").read_text())
    cfg = yaml.safe_load(EXAMPLE.read_text())
    assert index["games_counted"] == cfg["games"] == len(index["games"])
    assert {e["name"] for e in index["leaderboard"]} == {e["name"] for e in cfg["roster"]}
    canned = {v["headline"] for v in cfg["judges"][0]["options"]["outputs"]["judge"]}
    assert {g["headline"] for g in index["games"]} == canned
    for g in index["games"]:
        (v,) = read_verdicts(out / g["path"])
        assert v.status == "ok" and v.mvp == g["mvp"]
        for p in v.players:  # deception given for town players in the canned verdicts is nulled
            assert p.team == "mafia" or p.deception is None
    assert "Season demo-season" in res.output and "leaderboard.md" in res.output

    before = (out / "season.json").read_text()
    res = runner.invoke(app, ["season", "resume", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "season.json").read_text())["slots"] == json.loads(before)["slots"]

    res = runner.invoke(app, ["season", "leaderboard", str(out), "--markdown"])
    assert res.exit_code == 0, res.output
    assert "| # | entry | games | win rate |" in res.output
    assert res.output.count("| demo-season-g") == cfg["games"]


def test_season_plan_marks_mafia_seats():
    res = runner.invoke(app, ["season", "plan", str(EXAMPLE)])
    assert res.exit_code == 0, res.output
    assert res.output.count("*") >= 3 * 3  # three mafia seats per game


def test_bad_season_file_names_the_field(tmp_path: Path):
    f = tmp_path / "bad_season.yaml"
    f.write_text("name: x\ngames: 2\nroster:\n  - agent: scripted\n  - agent: wizard\n")
    res = runner.invoke(app, ["season", "run", str(f), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "roster[1].agent" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()
    f.write_text("name: [unclosed\n")
    res = runner.invoke(app, ["season", "run", str(f), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "not valid YAML" in res.output


def test_resume_and_leaderboard_need_a_season_dir(tmp_path: Path):
    for cmd in ("resume", "leaderboard"):
        res = runner.invoke(app, ["season", cmd, str(tmp_path)])
        assert res.exit_code == 2 and "season.json" in res.output


def test_judge_command_records_verdicts(tmp_path: Path):
    res = runner.invoke(
        app, ["play", "--rules", "arena12", "--agents", "scripted", "--seed", "3", "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    (game,) = list(tmp_path.iterdir())
    # the default mock answers "{}": unusable twice, recorded as missing, never invented
    res = runner.invoke(app, ["judge", str(tmp_path), "--judge", "mock/a", "--judge", "mock/b"])
    assert res.exit_code == 0, res.output
    vs = read_verdicts(game)
    assert [(v.judge, v.status, v.attempts) for v in vs] == [("mock/a", "missing", 2), ("mock/b", "missing", 2)]
    assert "missing" in res.output
    res = runner.invoke(app, ["judge", str(tmp_path), "--judge", "nope"])
    assert res.exit_code == 2 and "provider/model" in res.output


def test_leaderboard_markdown_is_not_wrapped(tmp_path: Path) -> None:
    out = tmp_path / "season"
    runner = CliRunner()
    run = runner.invoke(app, ["season", "run", str(EXAMPLE), "--out", str(out)])
    assert run.exit_code == 0, run.output
    res = runner.invoke(app, ["season", "leaderboard", str(out), "--markdown"])
    assert res.exit_code == 0, res.output
    table_lines = [ln for ln in res.output.splitlines() if ln.startswith("|")]
    assert len(table_lines) >= 2 + 4 + 2 + 3  # leaderboard (head, rule, 4 entries), games (head, rule, 3)
    for ln in table_lines:
        assert ln.endswith("|"), ln  # a table row wrapped at the terminal width breaks the Markdown
    # every table row printed is exactly a row of the leaderboard.md written beside the index
    written = {ln for ln in (out / "leaderboard.md").read_text().splitlines() if ln.startswith("|")}
    assert set(table_lines) <= written


def test_resume_reruns_a_game_whose_log_is_gone(tmp_path: Path) -> None:
    out = tmp_path / "season"
    runner = CliRunner()
    assert runner.invoke(app, ["season", "run", str(EXAMPLE), "--out", str(out)]).exit_code == 0
    games = out / "games"
    before = {d.name: (d / "game.jsonl").read_text() for d in games.iterdir()}
    assert len(before) == 3
    lost = sorted(before)[1]
    shutil.rmtree(games / lost)
    res = runner.invoke(app, ["season", "resume", str(out)])
    assert res.exit_code == 0, res.output
    after = {d.name: (d / "game.jsonl").read_text() for d in games.iterdir()}
    assert sorted(after) == sorted(before)  # nothing lost, nothing duplicated
    for name, text in before.items():
        if name != lost:
            assert after[name] == text  # finished games untouched
    assert sum('"game_end"' in ln for ln in after[lost].splitlines()) == 1  # rerun from its own seed
    index = json.loads((out / "index.json").read_text())
    assert index["games_counted"] == 3


def test_a_folder_of_other_games_is_refused_as_a_season_folder(tmp_path: Path):
    # the season's games were written among them, and `report` then pooled both kinds
    runs = tmp_path / "runs"
    res = runner.invoke(app, ["play", "--agents", "scripted", "--games", "2", "--out", str(runs)])
    assert res.exit_code == 0, res.output
    before = sorted(p.name for p in runs.iterdir())
    res = runner.invoke(app, ["season", "run", str(EXAMPLE), "--out", str(runs)])
    assert res.exit_code == 2
    said = " ".join(res.output.split())
    assert said.startswith(f"error: --out: {runs} already holds 2 recorded games that are not this season's"), said
    assert sorted(p.name for p in runs.iterdir()) == before  # nothing written
