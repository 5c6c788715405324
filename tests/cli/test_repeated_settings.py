"""A setting given twice is refused, naming it: one line, rc 2, no traceback.

``?timeout=1&timeout=2`` in a model string or seat spec, and ``--seat 0=random --seat
0=scripted``, used to be accepted with the last value winning silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.agents import parse_seat_overrides
from mafialab.cli import app
from mafialab.models import ModelSpecError, parse_model_spec

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


def test_a_model_option_given_twice_is_refused() -> None:
    with pytest.raises(ModelSpecError, match=r"option 'timeout' is given twice in 'openai/m\?timeout=1&timeout=2'"):
        parse_model_spec("openai/m?timeout=1&timeout=2")
    assert parse_model_spec("openai/m?timeout=1&max_tokens=2") == ("openai/m", {"timeout": 1, "max_tokens": 2})


def test_a_seat_given_twice_is_refused() -> None:
    with pytest.raises(ValueError, match=r"seat 0 is given twice \(0=random and 0=scripted\)"):
        parse_seat_overrides(["0=random", "0=scripted"], 7)
    assert parse_seat_overrides(["0=random", "1=scripted"], 7) == {0: "random", 1: "scripted"}


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (["--agents", "openai/m?timeout=1&timeout=2"], "error: --agents: model: option 'timeout' is given twice"),
        (
            ["--agents", "scripted", "--seat", "0=random", "--seat", "0=scripted"],
            "error: --seat: seat 0 is given twice",
        ),
        (
            ["--agents", "scripted", "--seat", "2=mock/m?max_tokens=5&max_tokens=6"],
            "option 'max_tokens' is given twice",
        ),
        (["--agents", "scripted", "--seat", "0=remote?timeout=1&timeout=2"], "option 'timeout' is given twice"),
    ],
)
def test_play_refuses_a_repeated_setting(tmp_path: Path, args: list[str], want: str) -> None:
    res = runner.invoke(app, ["play", *args, "--out", str(tmp_path / "runs")])
    assert res.exit_code == 2, res.output
    assert want in res.output and res.output.startswith("error: "), res.output
    assert res.output.count("\n") == 1 and "Traceback" not in res.output
    assert not (tmp_path / "runs").exists()
