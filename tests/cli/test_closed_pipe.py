"""``mafialab report DIR | head``: a closed stdout pipe ends the command silently with code 141.

141 is 128 + SIGPIPE, what a shell reports for ``yes | head``; it used to exit 1 (Click's
handling) with nothing said.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "80"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pipe") / "runs"
    args = [sys.executable, "-m", "mafialab", "play", "--agents", "scripted", "--games", "3", "--out", str(out)]
    subprocess.run(args, env=ENV, check=True, capture_output=True, timeout=300)
    return out


def _closed_pipe(argv: list[str]) -> tuple[int, str]:
    """Run mafialab with its stdout pipe already closed by the reader (``| head`` that has had enough)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mafialab", *argv], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # every write of the command now meets a closed pipe
    err = proc.stderr.read()
    return proc.wait(timeout=300), err


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "{runs}"],
        ["report", "{runs}", "--by", "role"],
        ["rules", "list"],
        ["fork", "steps", "{game}"],
        ["models"],
    ],
)
def test_a_closed_pipe_ends_the_table_commands_silently_with_141(runs: Path, argv: list[str]) -> None:
    game = next(runs.iterdir())
    args = [a.format(runs=runs, game=game) for a in argv]
    code, err = _closed_pipe(args)
    assert (code, err) == (141, ""), (code, err)


def test_the_output_before_the_pipe_closes_is_written(runs: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mafialab", "report", str(runs)], env=ENV, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and proc.stdout.startswith("3 games"), proc.stdout[:200]


def test_a_broken_pipe_raised_by_a_command_is_no_file_system_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # BrokenPipeError is an OSError: main() must take it as a closed pipe (141, silent), not as
    # "error: Broken pipe" with code 2
    import mafialab.cli as cli

    def command() -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def closed() -> None:
        raise SystemExit("closed pipe")

    monkeypatch.setattr(cli, "_command_tree", lambda: command)
    monkeypatch.setattr(cli, "_closed_stdout", closed)
    with pytest.raises(SystemExit) as stop:
        cli.main()
    assert stop.value.code == "closed pipe"
