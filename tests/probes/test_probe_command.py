"""`mafialab play --probes`: scripted agents answer the batteries from their beliefs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.probes import load_battery
from mafialab.record import GAME_FILE, PROBES_FILE, ProbeRecord, read_game, read_records

runner = CliRunner()

STANDARD = ["role_assessment", "suspicion_ranking", "social_map", "personality_profile", "planned_action"]


def _play(tmp_path: Path, *args: str) -> list[Path]:
    if "--agents" not in args:  # the CLI's default is the embedded model
        args = ("--agents", "scripted", *args)
    res = runner.invoke(app, ["play", "--out", str(tmp_path), *args])
    assert res.exit_code == 0, res.output
    return sorted(p.parent for p in tmp_path.rglob(GAME_FILE))


@pytest.mark.parametrize("rules", ["mafiascope7", "werewolf7"])
def test_scripted_default_battery(tmp_path: Path, rules: str):
    (game,) = _play(tmp_path, "--rules", rules, "--agents", "scripted", "--probes", "default", "--seed", "4")
    log = read_game(game)
    recs = [ProbeRecord.model_validate(x) for x in read_records(game / PROBES_FILE)]
    ids = Counter(r.probe_id for r in recs)
    assert set(ids) == set(STANDARD)
    # four always-probes per probed seat and trigger; planned_action only on own turns
    assert ids["role_assessment"] == ids["suspicion_ranking"] == ids["social_map"] == ids["personality_profile"]
    assert {r.trigger for r in recs if r.probe_id == "planned_action"} <= {"own_turn", "night_action"}
    assert all(r.parse_ok and r.schema_ok and not r.issues and r.model == "scripted" for r in recs)
    names = log.header.roster
    for r in recs:
        assert r.role == names[r.seat].role and r.player == names[r.seat].name and r.game_id == log.game_id
        if r.probe_id == "role_assessment":
            own = next(a for a in r.answer_parsed if a["player"] == r.player)
            assert own["guessed_role"] == r.role and own["confidence"] == 100
            if names[r.seat].team == "mafia":  # the hidden team knows its partners
                for a in r.answer_parsed:
                    seat = next(s for s in names if s.name == a["player"])
                    assert (a["guessed_role"] == r.role) == (seat.team == "mafia")
    # scripted town players commit to guesses as evidence arrives: not all Unknown at the end
    late = [a for r in recs if r.probe_id == "role_assessment" and r.round >= 1 for a in r.answer_parsed]
    assert any(a["guessed_role"] != "Unknown" and a["confidence"] < 100 for a in late)


def test_scripted_vote_matches_top_of_ranking(tmp_path: Path):
    """A scripted town voter votes for the first other player of its last suspicion ranking."""
    (game,) = _play(tmp_path, "--rules", "mafiascope7", "--probes", "suspicion", "--seed", "2")
    log = read_game(game)
    recs = [ProbeRecord.model_validate(x) for x in read_records(game / PROBES_FILE)]
    checked = 0
    for ev in log.events:
        if ev.kind != "vote" or log.header.roster[ev.seat].team != "town":
            continue
        before = [r for r in recs if r.seat == ev.seat and r.after_seq < ev.seq]
        if not before:
            continue
        ranking = before[-1].answer_parsed
        me = log.header.roster[ev.seat].name
        top = next(a["player"] for a in ranking if a["player"] != me)
        assert top == log.header.roster[ev.target].name
        checked += 1
    assert checked >= 3


def test_mafiascope_config_battery_runs(tmp_path: Path, mafiascope_dir: Path):
    cfg = mafiascope_dir / "configs" / "config_en_demo.yaml"
    (game,) = _play(tmp_path, "--rules", "mafiascope7", "--probes", str(cfg))
    recs = read_records(game / PROBES_FILE)
    assert {r["probe_id"] for r in recs} == {p.id for p in load_battery(cfg).probes}
    first = next(r for r in recs if r["probe_id"] == "role_assessment")
    assert first["question"].startswith(f"You are {first['player']}. Your last role guesses were:")
    assert "N/A" in first["question"]


def test_no_probes_by_default(tmp_path: Path):
    (game,) = _play(tmp_path, "--rules", "werewolf7")
    assert not (game / PROBES_FILE).exists()


def test_bad_battery_is_a_clear_error(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("probes:\n  - id: a\n    question: hi\n    when: never\n", encoding="utf-8")
    res = runner.invoke(app, ["play", "--agents", "scripted", "--out", str(tmp_path / "o"), "--probes", str(bad)])
    assert res.exit_code == 2
    assert "probes[0].when" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()
    res = runner.invoke(app, ["play", "--agents", "scripted", "--out", str(tmp_path / "o"), "--probes", "nope"])
    assert res.exit_code == 2 and "neither a built-in battery" in res.output


def test_unprobeable_agents_warn(tmp_path: Path):
    res = runner.invoke(app, ["play", "--out", str(tmp_path), "--agents", "random", "--probes", "suspicion"])
    assert res.exit_code == 0
    assert "random agents cannot answer probes: no seat is probed" in " ".join(res.output.split())


def test_the_warning_names_the_seats_left_unprobed(tmp_path: Path):
    # seat 0 is scripted and probed; the warning used to read as if no seat were
    res = runner.invoke(
        app, ["play", "--out", str(tmp_path), "--agents", "random", "--seat", "0=scripted", "--probes", "suspicion"]
    )
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "random agents cannot answer probes: seats 1, 2, 3, 4, 5, 6 are not probed (the others are)" in said
