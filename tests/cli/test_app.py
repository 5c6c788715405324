"""The command line as a whole: version, short help, unwritable outputs, export refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import GAME_FILE


@pytest.fixture(scope="module")
def native(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding one native scripted werewolf7 game."""
    out = tmp_path_factory.mktemp("native")
    res = CliRunner().invoke(app, ["play", "-r", "werewolf7", "-a", "scripted", "-s", "5", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_tgn_export_refuses_a_log_path(native: Path) -> None:
    game = next(native.iterdir()) / GAME_FILE
    before = game.read_bytes()
    res = CliRunner().invoke(app, ["export", "tgn", str(native), "-o", str(game)])
    assert res.exit_code == 2
    assert "--out" in res.output
    assert game.read_bytes() == before


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mafialab", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_unwritable_outputs_fail_cleanly(native: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("keep me\n")
    for args in (
        ["play", "-a", "random", "-o", str(a_file)],
        ["report", str(native), "--resamples", "5", "--plots", str(a_file)],
        ["export", "parquet", str(native), "-o", str(a_file)],
    ):
        res = _cli(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert "Traceback" not in res.stderr
        assert "error:" in res.stderr and str(a_file) in res.stderr.replace("\n", "")
    assert a_file.read_text() == "keep me\n"


def test_version_and_short_help() -> None:
    from mafialab import __version__

    runner = CliRunner()
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"mafialab {__version__}"
    for args in (["-h"], ["play", "-h"], ["report", "-h"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0 and "Usage: mafialab" in res.stdout, args


def test_the_width_a_test_asks_for_reaches_the_cli_console() -> None:
    # pytest-xdist's workers used to start with COLUMNS=80 (pytest imports readline, which sets it),
    # and the CLI's console, made at import, then kept 80 columns whatever width a test asked for
    wide = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["rules", "list"]).output
    assert max(len(line) for line in wide.splitlines()) > 80
