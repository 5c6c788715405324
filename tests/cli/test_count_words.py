"""Count lines say ``1 game`` and ``2 games``: never ``1 games`` nor ``game(s)``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.cli._app import count

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.mark.parametrize(
    ("n", "noun", "plural", "want"),
    [(0, "game", None, "0 games"), (1, "game", None, "1 game"), (2, "game", None, "2 games"),
     (1, "branch", "branches", "1 branch"), (3, "branch", "branches", "3 branches"), (-1, "game", None, "-1 games")],
)  # fmt: skip
def test_count_is_singular_for_one_only(n: int, noun: str, plural: str | None, want: str) -> None:
    assert count(n, noun, plural) == want


def test_play_and_report_and_view_of_one_game_say_1_game(tmp_path: Path) -> None:
    games = tmp_path / "g"
    res = runner.invoke(app, ["play", "--agents", "scripted", "--games", "1", "--out", str(games)])
    assert res.exit_code == 0, res.output
    assert re.search(r"^1 game of \S+: ", res.output, re.M), res.output
    res = runner.invoke(app, ["report", str(games), "--resamples", "20"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == "1 game (method default, 20 resamples, seed 0)", res.stdout[:300]
    res = runner.invoke(app, ["view", str(games), "--out", str(tmp_path / "site")])
    assert res.exit_code == 0, res.output
    assert "Built 1 game into" in res.output, res.output
    assert "game(s)" not in res.output and "1 games" not in res.output
