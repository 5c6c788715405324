"""A file-system error while writing an output names the output's option.

``--out /proc/nope/ann.jsonl`` passes the early checks when run as root (``/proc`` looks
writable) and fails only when the folder is created; that error line must still say
``--out`` (or ``--plots``), as every checked output error does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mafialab.cli import _app
from mafialab.record import GAME_FILE

ENV = {"COLUMNS": "240", "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}
pytestmark = pytest.mark.skipif(
    not Path("/proc/self").exists(), reason="needs Linux's /proc (a folder that refuses mkdir)"
)


def _mafialab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**ENV, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "mafialab", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("w")
    res = _mafialab("play", "-r", "mafiascope7", "-a", "scripted", "-s", "2", "-o", "runs", cwd=root)
    assert res.returncode == 0, res.stderr
    return root / "runs"


COMMANDS = {
    "beliefshift annotate": (["beliefshift", "annotate", "GAME"], "--out", "ann.jsonl"),
    "export tgn": (["export", "tgn", "RUNS"], "--out", "edges.csv"),
    "export parquet": (["export", "parquet", "RUNS"], "--out", "tables"),
    "play": (["play", "-a", "scripted"], "--out", "runs"),
    "view": (["view", "RUNS"], "--out", "site"),
    "report --plots": (["report", "RUNS"], "--plots", "plots"),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_output_that_cannot_be_created_is_named_by_its_option(runs: Path, name: str) -> None:
    args, option, leaf = COMMANDS[name]
    game = next(runs.glob(f"*/{GAME_FILE}")).parent
    argv = [str(game) if a == "GAME" else str(runs) if a == "RUNS" else a for a in args]
    res = _mafialab(*argv, option, f"/proc/nope/{leaf}", cwd=runs.parent)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert lines[-1].startswith(f"error: {option}: "), res.stderr
    assert "Errno" not in res.stderr


def test_output_option_for_matches_the_path_its_missing_folders_and_its_contents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "a" / "b" / "out.jsonl"
    monkeypatch.setattr(_app, "_checked_outputs", [("--out", out), ("--plots", tmp_path / "p")])
    assert _app.output_option_for(out) == "--out"
    assert _app.output_option_for(tmp_path / "a") == "--out"  # a folder above that could not be made
    assert _app.output_option_for(tmp_path) is None  # an existing folder above: an input's error, maybe
    assert _app.output_option_for(str(tmp_path / "p" / "fig.png")) == "--plots"  # a file inside an output folder
    assert _app.output_option_for(tmp_path / "ab") is None
    assert _app.output_option_for("/elsewhere/in.jsonl") is None
    assert _app.output_option_for(None) is None
