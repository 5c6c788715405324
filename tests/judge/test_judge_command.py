"""QA3 regression: ``mafialab judge`` refuses an unreachable remote judge instead of writing missing verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import VERDICTS_FILE, iter_game_dirs


def test_unreachable_judge_refused_before_any_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-SECRET-TEST")
    runner = CliRunner()
    played = runner.invoke(app, ["play", "--agents", "scripted", "--out", str(tmp_path / "g")])
    assert played.exit_code == 0, played.output
    (game,) = iter_game_dirs(tmp_path / "g")
    res = runner.invoke(app, ["judge", str(game), "--judge", "openai/j?base_url=http://127.0.0.1:9/v1&timeout=5"])
    assert res.exit_code == 2, res.output
    assert "unreachable" in res.output and "openai/j" in res.output
    assert "SECRET" not in res.output
    assert not (Path(game) / VERDICTS_FILE).exists()
