"""A command given the wrong kind of input path says what it was given and what it wants.

Commands reading many games (view, report, judge, export, beliefshift annotate) name a file
that is not a game log, or a folder without games; commands reading one game (fork, retest,
bifurcate run) given a runs folder list the games in it so the user can pick one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import LogFormatError, read_game

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})

MANY_GAMES = {
    "view": ["view", "{x}", "--out", "{tmp}/site"],
    "report": ["report", "{x}"],
    "judge": ["judge", "{x}", "--judge", "mock/x"],
    "export parquet": ["export", "parquet", "{x}", "--out", "{tmp}/tables"],
    "export tgn": ["export", "tgn", "{x}"],
    "beliefshift annotate": ["beliefshift", "annotate", "{x}", "--out", "{tmp}/ann.jsonl"],
}
ONE_GAME = {
    "fork steps": ["fork", "steps", "{x}"],
    "fork run": ["fork", "run", "{x}", "--at", "1", "--out", "{tmp}/b"],
    "fork sweep": ["fork", "sweep", "{x}", "-n", "1", "--out", "{tmp}/b"],
    "retest": ["retest", "{x}", "--out", "{tmp}/r"],
    "bifurcate run": ["bifurcate", "run", "{x}", "--points", "1", "--out", "{tmp}/b"],
}


def _invoke(template: list[str], x: Path, tmp: Path) -> tuple[int, str]:
    res = runner.invoke(app, [a.format(x=x, tmp=tmp) for a in template])
    return res.exit_code, " ".join(res.output.split())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "runs"
    res = runner.invoke(app, ["play", "--agents", "scripted", "--rules", "mafiascope7", "-k", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.mark.parametrize("name", sorted(MANY_GAMES))
def test_a_file_that_is_not_a_game_log_is_named_with_what_is_expected(tmp_path: Path, name: str) -> None:
    notes = tmp_path / "README.md"
    notes.write_text("# my notes\n")
    code, out = _invoke(MANY_GAMES[name], notes, tmp_path)
    assert code == 2, out
    assert f"{notes} is a file, not a game log: expected a game's folder (holding game.jsonl)" in out
    assert "no game.jsonl found" not in out and "Traceback" not in out


@pytest.mark.parametrize("name", sorted(MANY_GAMES))
def test_a_folder_without_games_says_so_and_what_is_expected(tmp_path: Path, name: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = _invoke(MANY_GAMES[name], empty, tmp_path)
    assert code == 2, out
    assert f"{empty} is a folder with no game.jsonl in it or below: expected a game's folder" in out
    assert "mafialab import mafiascope" in out


@pytest.mark.parametrize("name", sorted(ONE_GAME))
def test_a_runs_folder_given_for_one_game_lists_its_games(runs: Path, tmp_path: Path, name: str) -> None:
    games = sorted(p.name for p in runs.iterdir())
    assert len(games) == 2
    code, out = _invoke(ONE_GAME[name], runs, tmp_path)
    assert code == 2, out
    assert f"{runs} is a folder of games (2 found), not one game's folder: give one of" in out
    for g in games:
        assert str(runs / g) in out
    assert "cannot open" not in out


def test_a_folder_of_many_games_lists_a_few_and_counts_the_rest(tmp_path: Path) -> None:
    for i in range(7):
        (tmp_path / f"g{i}").mkdir()
        (tmp_path / f"g{i}" / "game.jsonl").write_text("{}\n")
    with pytest.raises(LogFormatError) as err:
        read_game(tmp_path)
    msg = str(err.value)
    assert "(7 found)" in msg and str(tmp_path / "g4") in msg and str(tmp_path / "g5") not in msg
    assert msg.endswith("… 2 more")


def test_a_file_that_is_not_a_game_log_is_named_for_one_game(tmp_path: Path) -> None:
    notes = tmp_path / "README.md"
    notes.write_text("# my notes\n")
    code, out = _invoke(ONE_GAME["fork steps"], notes, tmp_path)
    assert code == 2, out
    assert "README.md is not a game log: expected one game's folder, holding game.jsonl" in out


FILE_INPUTS = {
    "season plan": (["season", "plan", "{x}"], "YAML"),
    "rules show": (["rules", "show", "{x}"], "YAML"),
    "play --prices": (["play", "--agents", "scripted", "--prices", "{x}", "--out", "{tmp}/runs"], "YAML"),
    "beliefshift run": (["beliefshift", "run", "{x}", "--model", "mock/x", "--out", "{tmp}/r.jsonl"], "JSONL"),
    "beliefshift agreement": (["beliefshift", "agreement", "{x}", "{x}"], "JSONL"),
    "beliefshift report": (["beliefshift", "report", "{x}", "--out", "{tmp}/rep"], "JSONL"),
}


@pytest.mark.parametrize("name", sorted(FILE_INPUTS))
def test_a_folder_given_for_an_input_file_says_a_file_is_expected(tmp_path: Path, name: str) -> None:
    template, kind = FILE_INPUTS[name]
    folder = tmp_path / "conf"
    folder.mkdir()
    code, out = _invoke(template, folder, tmp_path)
    assert code == 2, out
    assert f"{folder} is a folder, not a file: expected a {kind} file" in out
    assert "Is a directory" not in out
