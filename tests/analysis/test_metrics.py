"""F1-F4 on a hand-built game whose values are worked out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mafialab.analysis import (
    DEFAULT,
    MAFIASCOPE,
    GameData,
    compute_report,
    first_order,
    load_games,
    parse_counts,
    second_order,
    vote_coupling,
)
from mafialab.analysis._data import Probe
from mafialab.rules import MAFIASCOPE7

NAMES = ["Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray"]
ROLES = ["Mafia", "Mafia", "Doctor", "Villager", "Villager", "Villager", "Villager"]


def probe(line: int, player: str, pid: str, *, rnd: int, msg: int, pos: int, ts: float, parsed: Any = None,
          raw: str = "", ok: bool | None = None) -> Probe:  # fmt: skip
    if parsed is not None and not raw:
        raw = json.dumps(parsed)
    return Probe(line=line, round=rnd, msg=msg, position=pos, player=player, probe_id=pid, parsed=parsed,
                 parse_ok=parsed is not None if ok is None else ok, raw=raw, ts=ts, after_seq=0)  # fmt: skip


# Dana (villager) at ts 10; Gray died at ts 5. Cut off at the end (stored parse: none).
DANA_RA = (
    '```json\n[{"player": "Alex", "guessed_role": "Mafia", "confidence": 80},'
    ' {"player": "Casey", "guessed_role": "Villager", "confidence": "60"},'
    ' {"player": "Gray", "guessed_role": "Villager", "confidence": 70},'
    ' {"player": "Zed", "guessed_role": "Mafia", "confidence": 90},'
    ' {"player": "Ellis", "guessed_role": "Commissar", "confidence": 50},'
    ' {"player": "Finley", "guessed_role": "Unknown", "confidence": 0},'
    ' {"player": "Bailey", "guessed_ro'
)
# Casey (doctor) at ts 11: the last object lacks its "}" (reference: unusable; default: keeps Ellis)
CASEY_RA = (
    '[{"player": "Ellis", "guessed_role": "Villager", "confidence": 60},'
    ' {"player": "Finley", "guessed_role": "Mafia", "confidence": 70]'
)


@pytest.fixture
def game() -> GameData:
    g = GameData(
        game_id="g",
        path=Path("."),
        rules=MAFIASCOPE7,
        source="mafiascope",
        names=NAMES,
        role=dict(zip(NAMES, ROLES, strict=True)),
        mafia={"Alex", "Bailey"},
        deaths=[(5.0, 3, "Gray")],
        votes={(1, "Dana"): (40.0, 25), (1, "Alex"): (41.0, 26)},
        tallies=[(1, 50.0, 30, {"Dana": "Alex", "Ellis": "Alex", "Alex": "Dana"})],
        winner="mafia",
    )
    ra, sr, sm = "role_assessment", "suspicion_ranking", "social_map"
    g.probes = [
        probe(1, "Dana", ra, rnd=1, msg=1, pos=0, ts=10, raw=DANA_RA, ok=False),
        probe(2, "Dana", ra, rnd=1, msg=1, pos=0, ts=10.5, raw="I think Alex is the Mafia.", ok=False),
        probe(3, "Casey", ra, rnd=1, msg=1, pos=0, ts=11, raw=CASEY_RA, ok=False),
        probe(
            4,
            "Casey",
            ra,
            rnd=1,
            msg=1,
            pos=0,
            ts=12,
            parsed=[{"player": "Dana", "guessed_role": "Villager", "confidence": 40}],
        ),
        probe(
            5,
            "Alex",
            ra,
            rnd=1,
            msg=1,
            pos=0,
            ts=12,
            parsed=[
                {"player": "Dana", "guessed_role": "Villager", "confidence": 60},
                {"player": "Bailey", "guessed_role": "Mafia", "confidence": 100},
            ],
        ),
        probe(
            6,
            "Ellis",
            ra,
            rnd=1,
            msg=2,
            pos=0,
            ts=15,
            parsed=[{"player": "Dana", "guessed_role": "Villager", "confidence": 80}],
        ),
        probe(
            7,
            "Dana",
            sm,
            rnd=1,
            msg=3,
            pos=2,
            ts=20,
            parsed={
                "toward_me": [
                    {"player": "Ellis", "attitude": "suspects"},
                    {"player": "Casey", "attitude": "Trusts"},
                    {"player": "Alex", "attitude": "neutral"},
                    {"player": "Nobody", "attitude": "suspects"},
                ]
            },
        ),
        probe(
            8,
            "Ellis",
            ra,
            rnd=1,
            msg=3,
            pos=0,
            ts=25,
            parsed=[{"player": "Dana", "guessed_role": "Mafia", "confidence": 90}],
        ),
        probe(
            9,
            "Alex",
            sm,
            rnd=1,
            msg=3,
            pos=2,
            ts=26,
            parsed={"toward_me": [{"player": "Bailey", "attitude": "trusts"}]},
        ),
        probe(
            10,
            "Bailey",
            ra,
            rnd=1,
            msg=3,
            pos=0,
            ts=26.5,
            parsed=[{"player": "Alex", "guessed_role": "Mafia", "confidence": 100}],
        ),
        probe(
            11, "Dana", sr, rnd=1, msg=4, pos=1, ts=30, parsed=[{"player": "Alex", "score": 9}, {"player": "Bailey"}]
        ),
        probe(12, "Dana", sr, rnd=1, msg=5, pos=1, ts=35, parsed={"rankings": [{"player": "Alex"}]}),
        probe(
            13,
            "Dana",
            sr,
            rnd=1,
            msg=6,
            pos=1,
            ts=45,
            parsed=[{"player": "Bailey", "score": 9}, {"player": "Alex", "score": 3}],
        ),
    ]
    return g


def test_first_order_reference(game: GameData) -> None:
    per_round, calib = first_order(game, MAFIASCOPE)
    v = per_round[1]
    # observers: Dana, Casey, Ellis (Alex and Bailey are mafia; Alex's answer is not used).
    # Dana's repaired answer: Alex Mafia (hit), Casey "Villager" (miss, true Doctor), Gray (dead,
    # still a target: reading 2) Villager (hit); Zed (unknown player), "Commissar" and the cut-off
    # Bailey item dropped; Finley Unknown. Casey's malformed answer is unusable (reading 1) and
    # the non-JSON answer gives nothing. Casey: Dana Villager (hit). Ellis: Dana Villager (hit),
    # then Dana Mafia (miss).
    assert (v[0], v[1]) == (4, 6)
    assert (v[4], v[5]) == (1, 7)
    assert (v[6], v[7]) == (1, 1)
    # chance: Dana's alive others are Alex, Bailey, Casey, Ellis, Finley: Mafia 2/5, Doctor 1/5,
    # Villager 2/5; Casey's: Villager 3/5; Ellis's: Villager 2/5 (twice) -> 2.4 / 6; recall 2/5
    assert v[2] / v[3] == pytest.approx(2.4 / 6)
    assert v[8] / v[9] == pytest.approx(2 / 5)
    # calibration: (80,1) (60 from the string "60",0) (70,1) (40,1) (80,1) (90,0)
    assert [calib[3 * b + 1] for b in range(5)] == [0, 0, 1, 2, 3] and calib[3 * 5 + 1] == 6
    rep = compute_report([game], MAFIASCOPE, resamples=20).model_dump(mode="json")
    ece = 1 / 6 * abs(1 - 0.4) + 2 / 6 * abs(0.5 - 0.65) + 3 / 6 * abs(2 / 3 - 250 / 300)
    assert rep["calibration"]["ece"] == pytest.approx(ece)
    assert rep["calibration"]["brier"] == pytest.approx((0.04 + 0.36 + 0.09 + 0.36 + 0.04 + 0.81) / 6)
    assert rep["first_order"]["1"]["committed_accuracy"] == pytest.approx(4 / 6)


def test_first_order_default(game: GameData) -> None:
    v = first_order(game, DEFAULT)[0][1]
    # Gray is dead at ts 10: no longer a target; Casey's malformed answer keeps its complete
    # Ellis item (Villager: hit) -> same totals by a different route
    assert (v[0], v[1]) == (4, 6)
    assert (v[4], v[5]) == (1, 7)
    mafiascope_targets = first_order(game, MAFIASCOPE.with_(f1_targets="alive"))[0][1]
    assert (mafiascope_targets[0], mafiascope_targets[1]) == (3, 5)  # only Gray's hit removed
    # everything but the non-JSON answer parses (Casey's: to a dict by reference, a list by default)
    assert parse_counts(game, MAFIASCOPE) == (13, 12)
    assert parse_counts(game, DEFAULT) == (13, 12)


def test_second_order_key_vs_time(game: GameData) -> None:
    ref = second_order(game, MAFIASCOPE)
    # Ellis's assessment at the same message (key (1,3,0) <= (1,3,2)) counts although it came
    # after Dana's probe: Mafia 90 -> suspects = predicted (hit). "Trusts" is off-vocabulary.
    # Alex's Villager 60 -> trusts vs predicted neutral (miss). Alex->Bailey is a mafia pair.
    n, correct, _, _, act_s, _, _, pred_s = ref["innocents"]
    assert (n, correct, act_s, pred_s) == (2, 1, 1, 1)
    assert ref["mafia"][0] == 0 and list(ref["all"]) == list(ref["innocents"])
    new = second_order(game, DEFAULT)
    # time order: Ellis's latest at ts 20 is Villager 80 -> trusts (miss); "Trusts" folded:
    # Casey's Villager 40 -> neutral (miss); Alex (miss)
    n, correct, _, _, act_s, _, _, pred_s = new["innocents"]
    assert (n, correct, act_s, pred_s) == (3, 0, 0, 1)
    rep = compute_report([game], DEFAULT, resamples=20).model_dump(mode="json")
    assert rep["second_order"]["innocents"]["overprediction_ratio"] is None  # no actual suspects


def test_vote_coupling_reference(game: GameData) -> None:
    out = vote_coupling(game, MAFIASCOPE)
    # Dana's last stored parse before her vote (ts 40) is the wrapper object: not counted
    assert list(out[("innocents", "top1")]) == [0, 0, 0]
    # her role assessment was never stored as parsed: no committed set
    assert list(out[("innocents", "committed_set")]) == [0, 0, 0]
    # post-vote: alive set = tally voters {Dana, Ellis, Alex}; ranking [Bailey, Alex] -> Alex: hit
    assert list(out[("innocents", "post_vote_top1")]) == [1, 1, 0.5]
    # Ellis has no vote event; Alex has no probes
    assert all(list(out[("mafia", m)]) == [0, 0, 0] for m in ("top1", "committed_set", "post_vote_top1"))


def test_vote_coupling_default(game: GameData) -> None:
    out = vote_coupling(game, DEFAULT)
    # alive at the tally: everyone but Gray -> 5 others; falls back past the wrapper to [Alex, ...]
    assert list(out[("innocents", "top1")]) == pytest.approx([1, 1, 1 / 5])
    # repaired assessment labels Alex (and unknown Zed) Mafia -> set {Alex}
    assert list(out[("innocents", "committed_set")]) == pytest.approx([1, 1, 1 / 5])
    assert list(out[("innocents", "post_vote_top1")]) == pytest.approx([0, 1, 1 / 5])


def test_report_shape_and_json(game: GameData) -> None:
    rep = compute_report([game], "default", resamples=30, seed=3).model_dump(mode="json")
    json.dumps(rep)  # JSON-ready
    assert set(rep) >= {"games", "winners", "probe_records", "parsed", "first_order", "calibration",
                        "second_order", "vote_coupling"}  # fmt: skip
    fo = rep["first_order"]["1"]
    assert set(fo) == {"committed_accuracy", "committed_n", "accuracy_chance", "unknown_rate", "unknown_n", "recall",
                       "recall_n", "recall_chance", "ci95"}  # fmt: skip
    assert set(fo["ci95"]) == {"committed_accuracy", "unknown_rate", "recall"}
    # one game: every resample would be that game (a zero-width interval), so there is none
    assert fo["ci95"]["committed_accuracy"] is None and fo["committed_accuracy"] is not None
    assert rep["no_interval"] == "no interval: 1 game"
    assert all(b["hi"] - b["lo"] == 20 for b in rep["calibration"]["bins"])
    vc = rep["vote_coupling"]["innocents"]["top1"]
    assert set(vc) == {"hits", "n", "rate", "chance", "ci95"}
    with pytest.raises(ValueError, match="unknown method"):
        compute_report([game], "nope")


async def test_native_werewolf_game(tmp_path: Path) -> None:
    """A native game under werewolf7: roles normalised via the rule set, recall of the Werewolves."""
    from mafialab.agents import make_agent
    from mafialab.harness import play_game
    from mafialab.record import read_game
    from mafialab.rules import WEREWOLF7

    agents = [make_agent("scripted", s, WEREWOLF7, 7) for s in range(WEREWOLF7.n_seats)]
    res = await play_game(WEREWOLF7, agents, 7, out=tmp_path)
    assert res.path is not None
    log = read_game(res.path)
    roster = log.header.roster
    first = log.events[0]
    lines = []
    for obs in roster:
        if obs.team == "mafia":
            continue
        # perfect knowledge, Werewolves called by their team name; one guess uses the old skin word
        items = [{"player": s.name, "guessed_role": "one of the Werewolves" if s.team == "mafia" else s.role,
                  "confidence": 90} for s in roster if s.seat != obs.seat]  # fmt: skip
        lines.append({"kind": "probe", "game_id": log.game_id, "round": first.round, "msg_index": 1, "seat": obs.seat,
                      "player": obs.name, "role": obs.role, "probe_id": "role_assessment", "position": 0,
                      "after_seq": first.seq, "question": "q", "answer_raw": json.dumps(items), "answer_parsed": items,
                      "parse_ok": True, "ts": first.ts})  # fmt: skip
    (res.path / "probes.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    for method in ("default", "mafiascope"):
        rep = compute_report(load_games(tmp_path), method, resamples=20).model_dump(mode="json")
        fo = rep["first_order"][str(first.round)]
        n_town = sum(1 for s in roster if s.team == "town")
        assert fo["committed_n"] == n_town * (WEREWOLF7.n_seats - 1)
        assert fo["committed_accuracy"] == 1.0 and fo["recall"] == 1.0 and fo["unknown_rate"] == 0.0
        assert fo["recall_n"] == n_town * 2 and fo["recall_chance"] == pytest.approx(2 / 6)
        assert rep["winners"] == {res.winner: 1}


def test_failed_vote_turns(game: GameData) -> None:
    # Ellis's day_vote turn failed in the source (kept as an imported record) but the tally
    # holds a vote for Ellis: the reference counts it as Ellis's vote event, the default does not
    ellis = [
        probe(20, "Ellis", "suspicion_ranking", rnd=1, msg=4, pos=1, ts=38, parsed=[{"player": "Alex", "score": 9}])
    ]
    game.probes += ellis
    game.failed_votes[(1, "Ellis")] = (39.0, 24)
    ref = vote_coupling(game, MAFIASCOPE)
    assert list(ref[("innocents", "top1")]) == pytest.approx([1, 1, 1 / 2])  # alive: tally voters
    new = vote_coupling(game, DEFAULT)
    assert list(new[("innocents", "top1")]) == pytest.approx([1, 1, 1 / 5])  # Dana's only


def test_round_without_recognised_guess_adds_no_row(game: GameData) -> None:
    game.probes.append(
        probe(30, "Dana", "role_assessment", rnd=2, msg=1, pos=0, ts=60,
              parsed=[{"player": "Dana", "guessed_role": "Villager"}, {"player": "Ellis", "guessed_role": "?"}])
    )  # fmt: skip
    assert set(first_order(game, MAFIASCOPE)[0]) == {1}
    assert set(compute_report([game], MAFIASCOPE, resamples=5).model_dump(mode="json")["first_order"]) == {"1"}


def test_default_reparses_library_repairs(game: GameData) -> None:
    # a native record whose stored parse came from json-repair, which completed the cut-off
    # second item (confidence 7 from 75); the default re-parses whole elements only
    raw = '[{"player": "Alex", "guessed_role": "Mafia", "confidence": 60}, {"player": "Ellis", "guessed_role": "Mafia", "confidence": 7'
    stored = [
        {"player": "Alex", "guessed_role": "Mafia", "confidence": 60},
        {"player": "Ellis", "guessed_role": "Mafia", "confidence": 7},
    ]
    p = probe(40, "Finley", "role_assessment", rnd=3, msg=1, pos=0, ts=70, parsed=stored, raw=raw)
    p.repaired = True
    game.probes = [p]
    assert first_order(game, MAFIASCOPE)[0][3][1] == 2  # stored parse used as is
    assert first_order(game, DEFAULT)[0][3][1] == 1  # only the complete Alex item
