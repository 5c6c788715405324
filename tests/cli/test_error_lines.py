"""An error is one ``error:`` line that starts the output, led by its option or argument label, with plain count words."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.cli._app import count
from tests.cli.test_option_values import _commands

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


# A mistake in the command line's shape is one ``error:`` line with exit code 2, no usage box.


runner = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"})


LEAVES = sorted(" ".join(path) for path, _cmd in _commands())


def _err(args: list[str]) -> tuple[int, list[str]]:
    res = runner.invoke(app, args)
    return res.exit_code, res.output.strip().splitlines()


@pytest.mark.parametrize("command", LEAVES)
def test_an_unknown_option_is_one_line_on_every_command(command: str) -> None:
    code, lines = _err([*command.split(), "--bogus"])
    assert code == 2
    assert lines == [f"error: no such option: --bogus (see `mafialab {command} -h`)"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["play", "--bogus"], "error: no such option: --bogus (see `mafialab play -h`)"),
        (["play", "--ou", "x"], "error: no such option: --ou (did you mean --out?) (see `mafialab play -h`)"),
        (["play", "--seeds", "2"], "error: no such option: --seeds (did you mean --seed?) (see `mafialab play -h`)"),
        (["--bogus"], "error: no such option: --bogus (see `mafialab -h`)"),
        (["plya"], "error: no such command: plya (did you mean play?) (see `mafialab -h`)"),
        (["zzz"], "error: no such command: zzz (see `mafialab -h`)"),
        (
            ["beliefshift", "annotat"],
            "error: no such command: annotat (did you mean annotate?) (see `mafialab beliefshift -h`)",
        ),
        (["view", "a", "b"], "error: unexpected extra argument: b (see `mafialab view -h`)"),
        (["play", "--out"], "error: --out: requires an argument (see `mafialab play -h`)"),
        (["fork", "run", "--at"], "error: --at: requires an argument (see `mafialab fork run -h`)"),
    ],
)
def test_usage_mistakes_are_one_line(args: list[str], line: str) -> None:
    code, lines = _err(args)
    assert code == 2
    assert lines == [line]


def test_a_group_without_its_command_still_prints_its_help() -> None:
    res = runner.invoke(app, ["beliefshift"])
    assert "annotate" in res.output and "error:" not in res.output


def _short_forms() -> list[tuple[str, str, str]]:
    """``(command, -x, --long)`` for every option taking a value that has a short and a long form."""
    out = []
    for path, cmd in _commands():
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option" or p.is_flag or p.count:
                continue
            long = next((o for o in p.opts if o.startswith("--")), None)
            out += [(" ".join(path), o, long) for o in p.opts if long and not o.startswith("--")]
    return out


SHORT_FORMS = _short_forms()


def test_the_tree_has_short_forms_to_check() -> None:
    assert ("play", "-s", "--seed") in SHORT_FORMS and len({c for c, _, _ in SHORT_FORMS}) >= 5


@pytest.mark.parametrize(("command", "short", "long"), SHORT_FORMS)
def test_a_short_option_without_its_value_is_named_by_its_long_form(command: str, short: str, long: str) -> None:
    code, lines = _err([*command.split(), short])
    assert code == 2
    assert lines == [f"error: {long}: requires an argument (see `mafialab {command} -h`)"]


def test_extra_arguments_are_counted_in_words() -> None:
    assert _err(["view", "a", "b", "c"]) == (2, ["error: unexpected extra arguments: b c (see `mafialab view -h`)"])


# Every error about a positional argument starts with its label (``DIR:``, ``GAME:``, ``ANN_B:``), as options do.


runner_argument_labels = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


BAD = {
    "a text file": "notes.txt",
    "JSON lines of no known kind": "other.jsonl",
    "an empty folder": "empty",
    "a folder of other files": "papers",
    "a folder named like a file": "folder.jsonl",
}


# command -> (arguments, with {x} for the bad input, {game}/{branches}/{labels} for good ones; label)
ARGS = {
    "report": (["report", "{x}"], "DIR"),
    "report (second)": (["report", "{runs}", "{x}"], "DIR"),
    "view": (["view", "{x}", "--out", "site"], "DIR"),
    "judge": (["judge", "{x}", "--judge", "mock/j"], "GAME_DIR"),
    "retest": (["retest", "{x}", "--out", "rt"], "GAME"),
    "export parquet": (["export", "parquet", "{x}", "--out", "tables"], "DIRECTORY"),
    "export tgn": (["export", "tgn", "{x}"], "DIRECTORY"),
    "import mafiascope": (["import", "mafiascope", "{x}", "--out", "imported"], "SRC"),
    "season run": (["season", "run", "{x}", "--out", "season"], "FILE"),
    "season plan": (["season", "plan", "{x}"], "FILE"),
    "season resume": (["season", "resume", "{x}"], "OUT"),
    "season leaderboard": (["season", "leaderboard", "{x}"], "OUT"),
    "beliefshift annotate": (["beliefshift", "annotate", "{x}", "--out", "a.jsonl"], "LOGS"),
    "beliefshift agreement ANN_A": (["beliefshift", "agreement", "{x}", "{labels}"], "ANN_A"),
    "beliefshift agreement ANN_B": (["beliefshift", "agreement", "{labels}", "{x}"], "ANN_B"),
    "beliefshift freeze LOGS": (["beliefshift", "freeze", "{x}", "{labels}", "--out", "b.jsonl"], "LOGS"),
    "beliefshift freeze ANNOTATIONS": (["beliefshift", "freeze", "{game}", "{x}", "--out", "b.jsonl"], "ANNOTATIONS"),
    "beliefshift run": (["beliefshift", "run", "{x}", "--model", "mock/x", "--out", "r.jsonl"], "BENCH"),
    "beliefshift report": (["beliefshift", "report", "{x}", "--out", "bsr"], "RESULTS"),
    "fork steps": (["fork", "steps", "{x}"], "GAME"),
    "fork run": (["fork", "run", "{x}", "--at", "1", "--out", "fr"], "GAME"),
    "fork sweep": (["fork", "sweep", "{x}", "-n", "1", "--out", "fs"], "GAME"),
    "fork compare DIR_A": (["fork", "compare", "{x}", "{branches}"], "DIR_A"),
    "fork compare DIR_B": (["fork", "compare", "{branches}", "{x}"], "DIR_B"),
    "bifurcate report": (["bifurcate", "report", "{x}"], "PATH"),
    "bifurcate run": (["bifurcate", "run", "{x}", "--points", "1", "--out", "br"], "GAME"),
    "rules show": (["rules", "show", "{x}"], "NAME"),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("labels")
    res = runner_argument_labels.invoke(app, ["play", "--agents", "scripted", "--out", str(root / "runs")])
    assert res.exit_code == 0, res.output
    (game,) = (root / "runs").iterdir()
    res = runner_argument_labels.invoke(app, ["fork", "run", str(game), "--at", "1", "--out", str(root / "branches")])
    assert res.exit_code == 0, res.output
    line = {"game_id": "g1", "round": 1, "speaker": "Alex", "labels": [{"target": "Blake", "category": "suspect"}]}
    (root / "labels.jsonl").write_text(json.dumps(line) + "\n")
    (root / "notes.txt").write_text("my notes, not a log\n")
    (root / "other.jsonl").write_text('{"colour": "blue"}\n')
    (root / "empty").mkdir()
    (root / "papers").mkdir()
    (root / "papers" / "draft.md").write_text("# draft\n")
    (root / "folder.jsonl").mkdir()
    return root


def _error_line(out: str) -> str:
    lines = [x for x in out.splitlines() if x.startswith("error:")]
    assert len(lines) == 1, out
    return lines[0]


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("name", sorted(ARGS))
def test_an_argument_error_starts_with_the_arguments_label(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, bad: str
) -> None:
    template, label = ARGS[name]
    (game,) = (world / "runs").iterdir()
    fill = {
        "x": str(world / BAD[bad]),
        "game": str(game),
        "runs": str(world / "runs"),
        "branches": str(world / "branches"),
        "labels": str(world / "labels.jsonl"),
    }
    monkeypatch.chdir(tmp_path)  # outputs (relative) land here, never beside the inputs
    res = runner_argument_labels.invoke(app, [a.format(**fill) for a in template])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    line = _error_line(res.output)
    assert line.startswith(f"error: {label}: "), line
    assert BAD[bad] in line


# Count lines say ``1 game`` and ``2 games``: never ``1 games`` nor ``game(s)``.


runner_count_words = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.mark.parametrize(
    ("n", "noun", "plural", "want"),
    [(0, "game", None, "0 games"), (1, "game", None, "1 game"), (2, "game", None, "2 games"),
     (1, "branch", "branches", "1 branch"), (3, "branch", "branches", "3 branches"), (-1, "game", None, "-1 games")],
)  # fmt: skip
def test_count_is_singular_for_one_only(n: int, noun: str, plural: str | None, want: str) -> None:
    assert count(n, noun, plural) == want


def test_play_and_report_and_view_of_one_game_say_1_game(tmp_path: Path) -> None:
    games = tmp_path / "g"
    res = runner_count_words.invoke(app, ["play", "--agents", "scripted", "--games", "1", "--out", str(games)])
    assert res.exit_code == 0, res.output
    assert re.search(r"^1 game of \S+: ", res.output, re.M), res.output
    res = runner_count_words.invoke(app, ["report", str(games), "--resamples", "20"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == "1 game (method default, 20 resamples, seed 0)", res.stdout[:300]
    res = runner_count_words.invoke(app, ["view", str(games), "--out", str(tmp_path / "site")])
    assert res.exit_code == 0, res.output
    assert "Built 1 game into" in res.output, res.output
    assert "game(s)" not in res.output and "1 games" not in res.output
