"""Deleted event lines (a run of ``seq`` numbers no line holds) are found and named.

A log with lines cut out used to read as a whole game: ``report`` counted fewer votes without
a word, and ``fork steps`` listed a few steps or said the game had no decisions. The reader
now lists each run of missing numbers in ``GameLog.problems`` (and logs it), unless the lines
skipped between the two neighbours could have held them (a torn or invalid line is already
named on its own).
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.agents import make_agent
from mafialab.cli import app
from mafialab.harness import play_game
from mafialab.record import GAME_FILE, read_game
from mafialab.rules import WEREWOLF7

runner = CliRunner()


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("missing_seq")
    agents = [make_agent("scripted", s, WEREWOLF7, 5) for s in range(WEREWOLF7.n_seats)]
    return asyncio.run(play_game(WEREWOLF7, agents, 5, out=out)).path


def _lines(played: Path) -> list[str]:
    return (played / GAME_FILE).read_text().splitlines()


def _write(dst: Path, lines: list[str]) -> Path:
    dst.mkdir()
    (dst / GAME_FILE).write_text("\n".join(lines) + "\n")
    return dst


def _first(lines: list[str], kind: str) -> int:
    return next(i for i, line in enumerate(lines) if json.loads(line).get("kind") == kind)


def test_an_intact_log_has_no_problem(played: Path) -> None:
    assert read_game(played, warn=False).problems == []


def test_one_deleted_line_is_named_by_its_seq_and_the_line_after_it(
    played: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = _lines(played)
    i = _first(lines, "vote")
    seq = json.loads(lines[i])["seq"]
    g = _write(tmp_path / "one", lines[:i] + lines[i + 1 :])
    with caplog.at_level(logging.WARNING):
        log = read_game(g)
    want = f"{g / GAME_FILE}:{i + 1}: seq {seq} missing before this line (1 event deleted or never written)"
    assert log.problems == [want]
    assert [r.getMessage() for r in caplog.records if "missing before" in r.getMessage()] == [want]
    assert len(log.events) == len(read_game(played, warn=False).events) - 1


def test_a_run_of_deleted_lines_is_one_problem_with_its_range(played: Path, tmp_path: Path) -> None:
    lines = _lines(played)
    a = 9
    seqs = [json.loads(x)["seq"] for x in lines[a : a + 6]]
    g = _write(tmp_path / "run", lines[:a] + lines[a + 6 :])
    log = read_game(g, warn=False)
    assert log.problems == [
        f"{g / GAME_FILE}:{a + 1}: seq {seqs[0]}-{seqs[-1]} missing before this line (6 events deleted or never written)"
    ]


def test_a_torn_line_is_named_once_not_also_as_a_missing_seq(played: Path, tmp_path: Path) -> None:
    lines = _lines(played)
    i = _first(lines, "speech")
    g = _write(tmp_path / "torn", [*lines[:i], '{"kind": "speech", "seq": ', *lines[i + 1 :]])
    log = read_game(g, warn=False)
    assert len(log.problems) == 1 and "not valid JSON" in log.problems[0], log.problems


def test_a_torn_line_and_a_deleted_one_in_the_same_place_are_both_named(played: Path, tmp_path: Path) -> None:
    # one unreadable line can hold one number, not two
    lines = _lines(played)
    i = _first(lines, "speech")
    seqs = [json.loads(x)["seq"] for x in lines[i : i + 2]]
    g = _write(tmp_path / "both", [*lines[:i], '{"kind": "speech", "seq": ', *lines[i + 2 :]])
    log = read_game(g, warn=False)
    assert len(log.problems) == 2 and "not valid JSON" in log.problems[0], log.problems
    assert log.problems[1] == (
        f"{g / GAME_FILE}:{i + 2}: seq {seqs[0]}-{seqs[1]} missing before this line (2 events deleted or never written)"
    )


def test_a_lost_last_line_is_no_gap(played: Path, tmp_path: Path) -> None:
    # a crash loses at most the record being written: nothing follows it, so nothing is named
    lines = _lines(played)
    g = _write(tmp_path / "end", lines[:-1])
    assert read_game(g, warn=False).problems == []


def test_fork_steps_says_events_are_missing_not_that_the_game_has_no_decisions(played: Path, tmp_path: Path) -> None:
    lines = _lines(played)
    g = _write(tmp_path / "early", lines[:9] + lines[15:])
    res = runner.invoke(app, ["fork", "steps", str(g)])
    assert res.exit_code == 0, res.output
    said = " ".join(res.stderr.split())
    assert "1 place where events are missing or out of order in the log (the first at " in said, said
    assert "damaged: " in said and "missing before this line" in said, said
    assert "has no decisions to fork at" not in said


def test_report_names_the_missing_events(played: Path, tmp_path: Path) -> None:
    # the command as a user runs it: the reader's warning reaches the terminal
    lines = _lines(played)
    i = _first(lines, "vote")
    g = _write(tmp_path / "rep", lines[:i] + lines[i + 1 :])
    res = subprocess.run(
        [sys.executable, "-m", "mafialab", "report", str(g)], capture_output=True, text=True, timeout=120, check=False
    )
    assert res.returncode == 0, res.stderr
    assert f"{g / GAME_FILE}:{i + 1}: seq " in " ".join((res.stdout + res.stderr).split())


def test_swapped_lines_are_named_out_of_order_not_missing(played: Path, tmp_path: Path) -> None:
    lines = _lines(played)
    a, b = 29, 39  # lines 30 and 40 (from 1)
    seq_a, seq_b = json.loads(lines[a])["seq"], json.loads(lines[b])["seq"]
    swapped = list(lines)
    swapped[a], swapped[b] = lines[b], lines[a]
    g = _write(tmp_path / "swap", swapped)
    log = read_game(g, warn=False)
    assert log.problems == [
        f"{g / GAME_FILE}:{a + 2}: seq {seq_a + 1} out of order (line {a + 1} before it has seq {seq_b})",
        f"{g / GAME_FILE}:{b + 1}: seq {seq_a} out of order (line {b} before it has seq {seq_b - 1})",
    ]
    assert not any("missing" in p for p in log.problems)


def test_an_invalid_record_keeps_its_number(played: Path, tmp_path: Path) -> None:
    # named as invalid once; its seq is not also reported missing
    lines = _lines(played)
    i = _first(lines, "vote")
    bad = json.loads(lines[i])
    bad["target"] = "nobody"
    g = _write(tmp_path / "inv", [*lines[:i], json.dumps(bad), *lines[i + 1 :]])
    log = read_game(g, warn=False)
    assert len(log.problems) == 1 and f":{i + 1}: invalid vote record" in log.problems[0], log.problems
