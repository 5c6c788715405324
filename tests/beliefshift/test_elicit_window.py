"""Elicitation refuses a context window too small for the generation budget."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app


@pytest.mark.parametrize(("window", "max_tokens"), [(100, 1024), (1088, 1024)])
def test_run_refuses_a_window_smaller_than_the_generation_budget(
    bench: Path, tmp_path: Path, window: int, max_tokens: int
) -> None:
    # a 100-token window with --max-tokens 1024 used to run every observation with all its
    # history dropped and prompts that still could not fit; 1088 = 1024 + 64 reserved is too small too
    out = tmp_path / "res.jsonl"
    args = ["beliefshift", "run", str(bench), "--model", f"mock/x?context_window={window}", "--out", str(out)]
    res = CliRunner().invoke(app, [*args, "--max-tokens", str(max_tokens)])
    assert res.exit_code == 2, res.output
    msg = " ".join(res.output.split())
    assert f"--context-window: {window} tokens cannot hold --max-tokens {max_tokens} plus the 64 reserved" in msg
    assert not out.exists()


def test_run_accepts_a_window_just_above_the_budget(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "res.jsonl"
    args = [
        "beliefshift",
        "run",
        str(bench),
        "--model",
        "mock/x?context_window=1089",
        "--out",
        str(out),
        "--limit",
        "1",
    ]
    res = CliRunner().invoke(app, [*args, "--max-tokens", "1024"])
    assert res.exit_code == 0, res.output
    assert out.exists()
