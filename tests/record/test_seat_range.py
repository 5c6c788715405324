"""An event naming a seat the roster does not have is skipped with a warning naming file, line and seat.

The reader treats it like any other invalid record (kept in the file, left out of the events,
listed in ``GameLog.problems`` and logged); it used to be kept and silently ignored.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.record import GAME_FILE, read_game
from mafialab.rules import WEREWOLF7


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("seat_range")
    agents = [make_agent("scripted", s, WEREWOLF7, 2) for s in range(WEREWOLF7.n_seats)]
    return asyncio.run(play_game(WEREWOLF7, agents, 2, out=out)).path


def _with_changed(src: Path, dst: Path, kind: str, change: dict) -> tuple[Path, int, list[str]]:
    """A copy of the game with the first ``kind`` event changed; returns (dir, 1-based line, original lines)."""
    lines = (src / GAME_FILE).read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if json.loads(line).get("kind") == kind)
    rec = json.loads(lines[i])
    rec.update(change)
    changed = [*lines[:i], json.dumps(rec), *lines[i + 1 :]]
    dst.mkdir()
    (dst / GAME_FILE).write_text("\n".join(changed) + "\n")
    return dst, i + 1, lines


def test_role_assigned_for_a_seat_out_of_range_is_skipped_with_a_warning(
    played: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    g, line, lines = _with_changed(played, tmp_path / "g", "role_assigned", {"seat": 99})
    with caplog.at_level(logging.WARNING):
        log = read_game(g)
    want = f"{g / GAME_FILE}:{line}: invalid role_assigned record (seat 99 in 'seat' is out of range"
    assert len(log.problems) == 1 and log.problems[0].startswith(want), log.problems
    assert "the roster has seats 0-6" in log.problems[0]
    assert [r.getMessage() for r in caplog.records if "seat 99" in r.getMessage()] == log.problems
    assert all(getattr(e, "seat", None) != 99 for e in log.events)
    assert len(log.events) == len(read_game(played).events) - 1
    # recorded data is never lost: the file is read, not rewritten
    assert (g / GAME_FILE).read_text().splitlines()[line - 1] != lines[line - 1]
    assert len((g / GAME_FILE).read_text().splitlines()) == len(lines)


@pytest.mark.parametrize(
    ("kind", "change", "field"),
    [
        ("vote", {"target": 7}, "target"),
        ("speech", {"seat": -1}, "seat"),
        ("phase_started", {"alive": [0, 1, 12]}, "alive"),
        ("vote_tally", {"votes": {"0": 42}}, "votes"),
        ("role_assigned", {"visibility": {"public": False, "teams": [], "seats": [8]}}, "visibility.seats"),
    ],
)
def test_any_event_naming_a_seat_out_of_range_is_reported(
    played: Path, tmp_path: Path, kind: str, change: dict, field: str
) -> None:
    g, line, _ = _with_changed(played, tmp_path / "g", kind, change)
    log = read_game(g)
    assert len(log.problems) == 1, log.problems
    assert log.problems[0].startswith(f"{g / GAME_FILE}:{line}: invalid {kind} record (seat ")
    assert f"in {field!r} is out of range: the roster has seats 0-6" in log.problems[0]


def test_a_game_with_every_seat_in_range_has_no_problem(played: Path) -> None:
    assert read_game(played).problems == []


def test_warn_false_lists_the_problems_without_logging_them(
    played: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    g, _, _ = _with_changed(played, tmp_path / "g", "role_assigned", {"seat": 99})
    with (g / GAME_FILE).open("a") as fh:
        fh.write('{"kind": "speech", "torn')
    with caplog.at_level(logging.WARNING):
        log = read_game(g, warn=False)
    assert len(log.problems) == 2 and caplog.records == []
