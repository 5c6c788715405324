"""A repeated event line (two records with one ``seq``) is skipped with a warning, the first kept.

Such a line used to be read twice (a report counted one call too many). The reader treats it
like any invalid record: left out of the events, listed in ``GameLog.problems`` as
``file:line: repeated seq N`` and logged; the file is never changed.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.record import GAME_FILE, iter_jsonl, read_game
from mafialab.rules import WEREWOLF7


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("repeated_seq")
    agents = [make_agent("scripted", s, WEREWOLF7, 3) for s in range(WEREWOLF7.n_seats)]
    return asyncio.run(play_game(WEREWOLF7, agents, 3, out=out)).path


def _copy(src: Path, dst: Path, lines: list[str]) -> Path:
    dst.mkdir()
    (dst / GAME_FILE).write_text("\n".join(lines) + "\n")
    return dst


def test_a_duplicated_event_line_is_kept_once_with_a_warning(
    played: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = (played / GAME_FILE).read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if json.loads(line).get("kind") == "speech")
    seq = json.loads(lines[i])["seq"]
    g = _copy(played, tmp_path / "dup", [*lines[: i + 1], lines[i], *lines[i + 1 :]])
    with caplog.at_level(logging.WARNING):
        log = read_game(g)
    want = f"{g / GAME_FILE}:{i + 2}: repeated seq {seq} (line {i + 1} has it"
    assert len(log.problems) == 1 and log.problems[0].startswith(want), log.problems
    assert [r.getMessage() for r in caplog.records if "repeated seq" in r.getMessage()] == log.problems
    original = read_game(played)
    assert [e.seq for e in log.events] == [e.seq for e in original.events]
    assert [e.model_dump(exclude={"ts"}) for e in log.events] == [e.model_dump(exclude={"ts"}) for e in original.events]
    assert len((g / GAME_FILE).read_text().splitlines()) == len(lines) + 1  # the file is not rewritten


def test_a_changed_record_with_a_repeated_seq_keeps_the_first(played: Path, tmp_path: Path) -> None:
    lines = (played / GAME_FILE).read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if json.loads(line).get("kind") == "speech")
    other = json.loads(lines[i])
    other["text"] = "a different text under the same seq"
    g = _copy(played, tmp_path / "dup2", [*lines[: i + 1], json.dumps(other), *lines[i + 1 :]])
    log = read_game(g, warn=False)
    kept = [e for e in log.events if e.seq == other["seq"]]
    assert len(kept) == 1 and getattr(kept[0], "text", None) == json.loads(lines[i])["text"]
    assert len(log.problems) == 1 and f"repeated seq {other['seq']}" in log.problems[0]


def test_a_second_header_is_skipped_with_a_warning(played: Path, tmp_path: Path) -> None:
    lines = (played / GAME_FILE).read_text().splitlines()
    second = json.loads(lines[0])
    second["seed"] = 99
    g = _copy(played, tmp_path / "hdr", [lines[0], json.dumps(second), *lines[1:]])
    log = read_game(g, warn=False)
    assert log.header.seed == 3
    assert log.problems == [f"{g / GAME_FILE}:2: repeated seq 0 (line 1 has it; kept that one)"]
    assert len(log.events) == len(read_game(played, warn=False).events)


def test_a_torn_line_is_named_with_its_column(tmp_path: Path) -> None:
    # json's own msg ends in "at" ("Invalid control character at"); the column completes it
    f = tmp_path / "x.jsonl"
    f.write_text('{"kind": "speech", "text": "a\tb"}\n{"kind": "speech", "seq": \n', encoding="utf-8")
    problems: list[str] = []
    assert list(iter_jsonl(f, problems, warn=False)) == []
    assert problems == [
        f"{f}:1: not valid JSON (Invalid control character at column 30)",
        f"{f}:2: not valid JSON (Expecting value at column 26)",
    ]
