"""Ctrl-C (SIGINT) at any point of ``mafialab play`` stops it with one line and exit code 130, logs kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT to a child process")


def _start(out: Path) -> subprocess.Popen[str]:
    # many probed scripted games: the run lasts well beyond the last interrupt below, and needs no model
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"}
    env.pop("COLUMNS", None)  # stderr is a pipe: rich wraps at 80 columns unless told not to
    args = [sys.executable, "-m", "mafialab", "play", "--agents", "scripted", "--probes", "default"]
    args += ["--games", "400", "--out", str(out)]
    # a suite started in the background (nohup, `&`) ignores SIGINT, and a child inherits that:
    # the child starts with Ctrl-C's default handling, as in a terminal
    return subprocess.Popen(
        args,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for_games(out: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while len(list(out.glob("*/game.jsonl"))) < n:
        assert proc.poll() is None, "play ended before the interrupt"
        assert time.monotonic() < deadline, f"no {n} game folder(s) after 120 s"
        time.sleep(0.05)


def _interrupt(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    return proc.returncode, stdout, stderr


@pytest.mark.parametrize(
    "when",
    [
        0.3,  # while the interpreter loads the command modules
        1.0,
        2.0,  # loading, building agents, preflight (how far it got depends on the machine)
        "first game",  # once the first game's folder exists
        "fifth game",  # several games written, one being played
    ],
)
def test_ctrl_c_stops_with_one_line_and_code_130_keeping_the_logs(tmp_path: Path, when) -> None:
    out = tmp_path / "runs"
    proc = _start(out)
    try:
        if isinstance(when, float):
            time.sleep(when)
        else:
            _wait_for_games(out, 1 if when == "first game" else 5, proc)
        rc, stdout, stderr = _interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in stderr + stdout
    assert rc == 130, (rc, stderr)
    # stderr is a pipe, so a run past 5 s also prints plain progress lines (one every 5 s);
    # the interrupt itself adds exactly one line
    lines = [x for x in stderr.splitlines() if x.strip() and not x.startswith("progress ")]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: interrupted"), lines[0]  # the format of every other error
    games = sorted(out.glob("*/game.jsonl"))
    if isinstance(when, str):
        assert games and f"kept under {out}/" in lines[0]
    if games:  # what was written is kept, every line whole
        assert f"kept under {out}/" in lines[0]
        for g in games:
            records = [json.loads(x) for x in g.read_text(encoding="utf-8").splitlines()]
            assert records[0]["kind"] == "game_start"
    else:
        assert "nothing was written" in lines[0]
