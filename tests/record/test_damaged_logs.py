"""Reading a damaged log: bad seats, missing, repeated or invalid lines and unencodable text are named, never passed on."""

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
from mafialab.analysis import compute_report, load_games
from mafialab.cli import app
from mafialab.engine import Speech, Visibility
from mafialab.harness import play_game
from mafialab.record import (
    CALLS_FILE,
    GAME_FILE,
    PROBES_FILE,
    JsonlWriter,
    LogFormatError,
    iter_call_records,
    iter_jsonl,
    iter_probe_records,
    read_game,
)
from mafialab.rules import WEREWOLF7
from tests.helpers import write_game_dir


def test_event_naming_a_seat_outside_the_roster_is_skipped_and_reported(game_lines: list[dict], tmp_path: Path):
    records = json.loads(json.dumps(game_lines))
    elim = next(r for r in records if r["kind"] == "elimination")
    elim["seat"] = 42
    write_game_dir(tmp_path, records)
    (g,) = load_games(tmp_path)
    line = records.index(elim) + 1  # the reader names the file and line (one record per line)
    assert any(
        f"game.jsonl:{line}: invalid elimination record (seat 42 in 'seat' is out of range" in p for p in g.problems
    )
    # every other elimination is still there
    n_elims = sum(r["kind"] == "elimination" for r in game_lines)
    assert len(g.deaths) == n_elims - 1
    rep = compute_report([g], resamples=10).model_dump(mode="json")
    assert rep["games"] == 1


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda h: h.update(roster=h["roster"][:3]), "expected each of 0..6 once"),
        (lambda h: h["roster"][0].update(role="Wizard"), "'Wizard'"),
        (lambda h: h["roster"][0].update(team="mafia" if h["roster"][0]["team"] == "town" else "town"), "seat 0"),
        (lambda h: h.update(rules_id="arena12-v1"), "rules_id"),
    ],
)
def test_header_whose_roster_does_not_fit_its_rules_is_a_clear_error(
    game_lines: list[dict], tmp_path: Path, change, needle: str
):
    records = json.loads(json.dumps(game_lines))
    change(records[0])
    d = write_game_dir(tmp_path, records)
    with pytest.raises(LogFormatError, match="no valid game_start header"):
        read_game(d)
    res = CliRunner().invoke(app, ["report", str(tmp_path), "--resamples", "5"])
    assert res.exit_code == 2
    assert needle in res.output.replace("\n", "")


def test_untouched_header_still_reads(game_lines: list[dict], tmp_path: Path):
    d = write_game_dir(tmp_path, game_lines)
    log = read_game(d)
    assert len(log.header.roster) == log.header.rules.n_seats == 7
    assert log.problems == []


# Deleted event lines (a run of ``seq`` numbers no line holds) are found and named.


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


# A line repeated word for word in ``probes.jsonl`` or ``calls.jsonl`` is read once and named.


runner_repeated_records = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("repeated_records")
    res = runner_repeated_records.invoke(
        app, ["play", "--agents", "scripted", "--probes", "suspicion", "--out", str(out / "r")]
    )
    assert res.exit_code == 0, res.output
    return next((out / "r").iterdir())


def _copy(game: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in game.iterdir():
        if f.is_file():
            (dst / f.name).write_bytes(f.read_bytes())
    return dst


def _probe_count(game: Path) -> str:
    res = runner_repeated_records.invoke(app, ["report", str(game), "--format", "json", "--resamples", "10"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["probe_records"]


def test_a_duplicated_probe_line_is_counted_once_and_named(probed: Path, tmp_path: Path) -> None:
    g = _copy(probed, tmp_path / "dup")
    lines = (g / PROBES_FILE).read_text().splitlines(keepends=True)
    (g / PROBES_FILE).write_text("".join([*lines[:10], lines[9], *lines[10:]]))
    problems: list[str] = []
    records = list(iter_probe_records(g, problems=problems))
    assert len(records) == len(lines)
    assert problems == [f"{g / PROBES_FILE}:11: repeated line (line 10 is the same; kept that one)"]
    assert _probe_count(g) == _probe_count(probed)


def test_records_that_differ_in_a_clock_field_are_both_kept(probed: Path, tmp_path: Path) -> None:
    g = _copy(probed, tmp_path / "calls")
    call = {"kind": "call", "seat": 0, "purpose": "game", "ts": 1.0, "latency_s": 0.5}
    later = {**call, "ts": 2.0}
    text = "".join(json.dumps(x) + "\n" for x in (call, call, later))
    (g / CALLS_FILE).write_text(text)
    problems: list[str] = []
    records = [obj for _, obj in iter_call_records(g, problems=problems)]
    assert [r["ts"] for r in records] == [1.0, 2.0]
    assert problems == [f"{g / CALLS_FILE}:2: repeated line (line 1 is the same; kept that one)"]


# A repeated event line (two records with one ``seq``) is skipped with a warning, the first kept.


@pytest.fixture(scope="module")
def played_repeated_seq(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("repeated_seq")
    agents = [make_agent("scripted", s, WEREWOLF7, 3) for s in range(WEREWOLF7.n_seats)]
    return asyncio.run(play_game(WEREWOLF7, agents, 3, out=out)).path


def _copy_repeated_seq(src: Path, dst: Path, lines: list[str]) -> Path:
    dst.mkdir()
    (dst / GAME_FILE).write_text("\n".join(lines) + "\n")
    return dst


def test_a_duplicated_event_line_is_kept_once_with_a_warning(
    played_repeated_seq: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = (played_repeated_seq / GAME_FILE).read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if json.loads(line).get("kind") == "speech")
    seq = json.loads(lines[i])["seq"]
    g = _copy_repeated_seq(played_repeated_seq, tmp_path / "dup", [*lines[: i + 1], lines[i], *lines[i + 1 :]])
    with caplog.at_level(logging.WARNING):
        log = read_game(g)
    want = f"{g / GAME_FILE}:{i + 2}: repeated seq {seq} (line {i + 1} has it"
    assert len(log.problems) == 1 and log.problems[0].startswith(want), log.problems
    assert [r.getMessage() for r in caplog.records if "repeated seq" in r.getMessage()] == log.problems
    original = read_game(played_repeated_seq)
    assert [e.seq for e in log.events] == [e.seq for e in original.events]
    assert [e.model_dump(exclude={"ts"}) for e in log.events] == [e.model_dump(exclude={"ts"}) for e in original.events]
    assert len((g / GAME_FILE).read_text().splitlines()) == len(lines) + 1  # the file is not rewritten


def test_a_changed_record_with_a_repeated_seq_keeps_the_first(played_repeated_seq: Path, tmp_path: Path) -> None:
    lines = (played_repeated_seq / GAME_FILE).read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if json.loads(line).get("kind") == "speech")
    other = json.loads(lines[i])
    other["text"] = "a different text under the same seq"
    g = _copy_repeated_seq(
        played_repeated_seq, tmp_path / "dup2", [*lines[: i + 1], json.dumps(other), *lines[i + 1 :]]
    )
    log = read_game(g, warn=False)
    kept = [e for e in log.events if e.seq == other["seq"]]
    assert len(kept) == 1 and getattr(kept[0], "text", None) == json.loads(lines[i])["text"]
    assert len(log.problems) == 1 and f"repeated seq {other['seq']}" in log.problems[0]


def test_a_second_header_is_skipped_with_a_warning(played_repeated_seq: Path, tmp_path: Path) -> None:
    lines = (played_repeated_seq / GAME_FILE).read_text().splitlines()
    second = json.loads(lines[0])
    second["seed"] = 99
    g = _copy_repeated_seq(played_repeated_seq, tmp_path / "hdr", [lines[0], json.dumps(second), *lines[1:]])
    log = read_game(g, warn=False)
    assert log.header.seed == 3
    assert log.problems == [f"{g / GAME_FILE}:2: repeated seq 0 (line 1 has it; kept that one)"]
    assert len(log.events) == len(read_game(played_repeated_seq, warn=False).events)


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


# An event naming a seat the roster does not have is skipped with a warning naming file, line and seat.


@pytest.fixture(scope="module")
def played_seat_range(tmp_path_factory: pytest.TempPathFactory) -> Path:
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
    played_seat_range: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    g, line, lines = _with_changed(played_seat_range, tmp_path / "g", "role_assigned", {"seat": 99})
    with caplog.at_level(logging.WARNING):
        log = read_game(g)
    want = f"{g / GAME_FILE}:{line}: invalid role_assigned record (seat 99 in 'seat' is out of range"
    assert len(log.problems) == 1 and log.problems[0].startswith(want), log.problems
    assert "the roster has seats 0-6" in log.problems[0]
    assert [r.getMessage() for r in caplog.records if "seat 99" in r.getMessage()] == log.problems
    assert all(getattr(e, "seat", None) != 99 for e in log.events)
    assert len(log.events) == len(read_game(played_seat_range).events) - 1
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
    played_seat_range: Path, tmp_path: Path, kind: str, change: dict, field: str
) -> None:
    g, line, _ = _with_changed(played_seat_range, tmp_path / "g", kind, change)
    log = read_game(g)
    assert len(log.problems) == 1, log.problems
    assert log.problems[0].startswith(f"{g / GAME_FILE}:{line}: invalid {kind} record (seat ")
    assert f"in {field!r} is out of range: the roster has seats 0-6" in log.problems[0]


def test_a_game_with_every_seat_in_range_has_no_problem(played_seat_range: Path) -> None:
    assert read_game(played_seat_range).problems == []


def test_warn_false_lists_the_problems_without_logging_them(
    played_seat_range: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    g, _, _ = _with_changed(played_seat_range, tmp_path / "g", "role_assigned", {"seat": 99})
    with (g / GAME_FILE).open("a") as fh:
        fh.write('{"kind": "speech", "torn')
    with caplog.at_level(logging.WARNING):
        log = read_game(g, warn=False)
    assert len(log.problems) == 2 and caplog.records == []


# Log readers and the writer never pass on or choke on a lone surrogate ("\ud800", valid JSON).


def test_a_lone_surrogate_escape_is_read_as_fffd_and_a_valid_pair_is_kept(tmp_path: Path):
    f = tmp_path / "x.jsonl"
    f.write_text('{"a": "x\\ud800y", "b": ["\\udfff"], "\\ud800k": 1}\n{"e": "\\ud83d\\ude00"}\n', encoding="ascii")
    (_, first), (_, second) = list(iter_jsonl(f))
    assert first == {"a": "x\ufffdy", "b": ["\ufffd"], "\ufffdk": 1}
    assert second == {"e": "\U0001f600"}
    json.dumps(first, ensure_ascii=False).encode("utf-8")  # can be written again


def test_the_writer_writes_what_utf8_cannot_encode_as_fffd_and_says_so(tmp_path: Path, caplog):
    path = tmp_path / "g" / "game.jsonl"
    ev = Speech(
        seq=1, round=1, phase="day", visibility=Visibility(public=True), seat=0, text="hi \ud800", index=0, decision=3
    )
    with caplog.at_level(logging.WARNING, logger="mafialab.record"), JsonlWriter(path, clock=None) as w:
        w.write(ev)
        w.write({"note": "\udc00\udc01"})
    lines = [json.loads(x) for x in path.read_bytes().decode("utf-8").splitlines()]
    assert lines[0]["text"] == "hi \ufffd" and lines[0]["kind"] == "speech"
    assert lines[1] == {"note": "\ufffd\ufffd"}
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        f"{path}: 1 character UTF-8 cannot encode written as U+FFFD",
        f"{path}: 2 characters UTF-8 cannot encode written as U+FFFD",
    ]
