"""Reading a log checks seats and header against the rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import compute_report, load_games
from mafialab.cli import app
from mafialab.record import LogFormatError, read_game
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
