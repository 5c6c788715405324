"""An error is one line that starts the output: no blank or stray progress-bar line before it.

``fail`` used to print while a progress bar was still drawn (``view``'s build, the fork
commands): on a terminal the message was glued to the bar's line, and the bar was then
cleared below it. ``fail`` now stops every open bar first.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "200"}

_FAIL_IN_BAR = """
import typer
from mafialab.cli._app import fail, progress_bar

def main() -> None:
    with progress_bar() as bar:
        task = bar.add_task("building", total=3)
        bar.advance(task)
        fail("the build failed")

typer.run(main)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_an_error_inside_a_progress_bar_is_printed_after_the_bar_is_cleared() -> None:
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _FAIL_IN_BAR], stdout=slave, stderr=slave, env={**ENV, "TERM": "xterm"}, close_fds=True
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=60) == 2
    out = re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode())  # styles only; cursor moves stay
    assert "building" in out and "error: the build failed" in out
    before, _, after = out.rpartition("error: the build failed")
    # the bar's last clearing (cursor up, erase line) comes before the message, nothing is drawn after it
    assert before.endswith("\x1b[1A\x1b[2K"), repr(before[-80:])
    assert after.strip() == "", repr(after)


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("err_line") / "g"
    args = [sys.executable, "-m", "mafialab", "play", "--agents", "scripted", "--out", str(out)]
    subprocess.run(args, env=ENV, check=True, capture_output=True, timeout=300)
    return next(out.iterdir())


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["view", "{missing}"], "error: DIR: "),
        (["view", "{game}", "--out", "{game}/game.jsonl"], "error: --out: "),
        (["fork", "run", "{game}", "--out", "{tmp}/f", "--at", "5", "--inject", "xx"], "error: --inject: "),
        (["fork", "run", "{game}", "--out", "{tmp}/f", "--at", "5", "--night", "xx"], "error: --night: "),
        (["report", "{missing}"], "error: DIR: "),
    ],
)
def test_errors_start_the_output_on_their_first_line(game: Path, tmp_path: Path, args: list[str], start: str) -> None:
    subs = {"game": str(game), "missing": str(tmp_path / "nowhere"), "tmp": str(tmp_path)}
    argv = [a.format(**subs) for a in args]
    proc = subprocess.run(
        [sys.executable, "-m", "mafialab", *argv], env=ENV, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(start), repr(proc.stderr)
    assert proc.stderr.count("\n") == 1, repr(proc.stderr)
    assert "Traceback" not in proc.stderr
