"""Fixtures shared by the beliefshift tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app


@pytest.fixture(scope="package")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen benchmark of two native scripted werewolf7 games (rules annotator)."""
    root = tmp_path_factory.mktemp("bs")
    r = CliRunner()
    res = r.invoke(
        app, ["play", "-r", "werewolf7", "-a", "scripted", "-s", "7", "--games", "2", "-o", str(root / "logs")]
    )
    assert res.exit_code == 0, res.output
    res = r.invoke(app, ["beliefshift", "annotate", str(root / "logs"), "--out", str(root / "ann.jsonl")])
    assert res.exit_code == 0, res.output
    res = r.invoke(
        app, ["beliefshift", "freeze", str(root / "logs"), str(root / "ann.jsonl"), "--out", str(root / "b.jsonl")]
    )
    assert res.exit_code == 0, res.output
    return root / "b.jsonl"
