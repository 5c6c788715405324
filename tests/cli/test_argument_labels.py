"""Every error about a positional argument starts with its label (``DIR:``, ``GAME:``, ``ANN_B:``), as options do.

Each argument of each command is given the wrong kind of thing: a text file, a file of JSON
objects of no known kind, an empty folder, a folder of other files, a folder named like a
file. The error line (the one line after any logged warning) names the argument first, so
a user with two arguments (``ANN_A``/``ANN_B``, ``DIR_A``/``DIR_B``) knows which was wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})

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
    res = runner.invoke(app, ["play", "--agents", "scripted", "--out", str(root / "runs")])
    assert res.exit_code == 0, res.output
    (game,) = (root / "runs").iterdir()
    res = runner.invoke(app, ["fork", "run", str(game), "--at", "1", "--out", str(root / "branches")])
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
    res = runner.invoke(app, [a.format(**fill) for a in template])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    line = _error_line(res.output)
    assert line.startswith(f"error: {label}: "), line
    assert BAD[bad] in line
