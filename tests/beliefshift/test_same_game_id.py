"""The benchmark refuses two directories holding one game id, naming both (never drops one)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.beliefshift import load_logs
from mafialab.cli import app
from mafialab.record import LogFormatError


def test_a_copied_game_is_refused_by_name(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["play", "-r", "werewolf7-v2", "-a", "scripted", "-o", str(tmp_path / "src")])
    assert res.exit_code == 0, res.output
    (game,) = [p for p in (tmp_path / "src").iterdir() if p.is_dir()]
    for part in ("a", "b"):
        shutil.copytree(game, tmp_path / "logs" / part / game.name)
    with pytest.raises(LogFormatError, match="is in both") as err:
        load_logs([tmp_path / "logs"])
    assert str(tmp_path / "logs" / "a" / game.name) in str(err.value)
    assert str(tmp_path / "logs" / "b" / game.name) in str(err.value)
    res = CliRunner().invoke(
        app, ["beliefshift", "annotate", str(tmp_path / "logs"), "--out", str(tmp_path / "a.jsonl")]
    )
    assert res.exit_code == 2 and "is in both" in " ".join(res.output.split())
    assert len(load_logs([tmp_path / "logs" / "a"])) == 1
