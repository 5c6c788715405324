"""Fixtures shared by the viewer tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import GAME_FILE


@pytest.fixture(scope="package")
def game_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One native scripted werewolf7 game (no probes)."""
    out = tmp_path_factory.mktemp("g")
    res = CliRunner().invoke(app, ["play", "-r", "werewolf7", "-a", "scripted", "-s", "3", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return next(out.glob(f"*/{GAME_FILE}")).parent
