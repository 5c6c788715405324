"""Ctrl-C and a closed output pipe end a command with at most one line and the conventional exit code, logs kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer

import mafialab.cli as cli


def _run_main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tree) -> tuple[int, str]:
    monkeypatch.setattr(cli, "_command_tree", tree)
    monkeypatch.setattr(sys, "argv", ["mafialab", "go"])

    def _exit(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(cli.os, "_exit", _exit)
    with pytest.raises(SystemExit) as stop:
        cli.main()
    return int(stop.value.code or 0), capsys.readouterr().err


def _app(body) -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.command("go")(body)
    app.command("other")(lambda: None)
    return app


def test_ctrl_c_while_the_commands_load_is_an_error_line(monkeypatch, capsys) -> None:
    def tree():
        raise KeyboardInterrupt

    code, err = _run_main(monkeypatch, capsys, tree)
    assert (code, err) == (130, f"error: {cli.INTERRUPTED_AT_START}\n")


def test_ctrl_c_in_a_command_without_its_own_message_is_an_error_line(monkeypatch, capsys) -> None:
    def go() -> None:
        raise KeyboardInterrupt

    code, err = _run_main(monkeypatch, capsys, lambda: _app(go))
    assert (code, err) == (130, "error: interrupted\n")


def test_play_s_own_interrupt_message_has_the_same_prefix(capsys, tmp_path) -> None:
    from mafialab.cli._play import interrupted

    for out in (None, tmp_path):
        with pytest.raises(typer.Exit) as stop:
            interrupted(out)
        assert stop.value.exit_code == 130
        err = capsys.readouterr().err
        assert err.startswith("error: interrupted") and err.count("\n") == 1, err


def test_ctrl_c_turned_into_a_schema_error_while_a_module_loads_is_an_interrupt(monkeypatch, capsys) -> None:
    # pydantic-core re-raises a SIGINT during schema building as SchemaError, unchained
    from pydantic_core import SchemaError

    def body() -> None:
        raise SchemaError("Error building 'literal' serializer: KeyboardInterrupt: ")

    code, err = _run_main(monkeypatch, capsys, lambda: _app(body))
    assert (code, err) == (130, f"error: {cli.INTERRUPTED_AT_START}\n")


def test_an_error_raised_from_a_ctrl_c_is_an_interrupt(monkeypatch, capsys) -> None:
    def tree():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as stop:
            raise RuntimeError("could not finish loading") from stop

    code, err = _run_main(monkeypatch, capsys, tree)
    assert (code, err) == (130, f"error: {cli.INTERRUPTED_AT_START}\n")


def test_other_errors_while_loading_are_not_taken_for_a_ctrl_c(monkeypatch, capsys) -> None:
    from pydantic_core import SchemaError

    def body() -> None:
        raise SchemaError("Error building 'literal' serializer: bad value")

    monkeypatch.setattr(cli, "_command_tree", lambda: _app(body))
    monkeypatch.setattr(sys, "argv", ["mafialab", "go"])
    with pytest.raises(SchemaError, match="bad value"):
        cli.main()


# Ctrl-C (SIGINT) at any point of ``mafialab play`` stops it with one line and exit code 130, logs kept.


ROOT = Path(__file__).resolve().parents[2]


unix_only = pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT to a child process")


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


@unix_only
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


# ``mafialab report DIR | head``: a closed stdout pipe ends the command silently with code 141.


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
