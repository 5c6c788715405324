"""F1, F2 and F3 at step granularity: hand-counted values, and the corpus metrics over the latest answers."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mafialab.analysis import (
    DEFAULT,
    GameData,
    first_order,
    game_data,
    second_order,
    step_metrics,
    usable,
)
from mafialab.analysis._data import Probe
from mafialab.analysis._metrics import F1_FIELDS
from mafialab.record import import_mafiascope, read_game
from mafialab.rules import load_rules
from tests.viewer_games import play_probed

STEPS = [9, 10, 12, 13, 20, 25]
ACC, ACC_N, REC, REC_N = (F1_FIELDS.index(k) for k in ("acc_hits", "acc_n", "recall_hits", "recall_n"))


def _probe(player: str, after: int, probe_id: str, parsed: Any, raw: str | None = None) -> Probe:
    return Probe(
        line=after, round=1, msg=after, position=0, player=player, probe_id=probe_id, parsed=parsed,
        parse_ok=parsed is not None, raw=json.dumps(parsed) if raw is None else raw, ts=None, after_seq=after,
    )  # fmt: skip


def _ra(player: str, after: int, guesses: list[tuple[str, str, int]]) -> Probe:
    ans = [{"player": p, "guessed_role": g, "confidence": c, "reason": "r"} for p, g, c in guesses]
    return _probe(player, after, "role_assessment", ans)


def _sm(player: str, after: int, att: list[tuple[str, str]]) -> Probe:
    return _probe(player, after, "social_map", {"toward_me": [{"player": p, "attitude": a} for p, a in att]})


def _hand_game() -> GameData:
    """A (Mafia), B (Villager), C (Doctor), D (Mafia); C is eliminated at seq 15."""
    probes = [
        # B: A Mafia (right, hit), C Mafia (wrong), D Unknown (recall miss), itself (left out)
        _ra("B", 10, [("A", "Mafia", 80), ("C", "Mafia", 60), ("D", "Unknown", 0), ("B", "Villager", 100)]),
        _probe("D", 11, "role_assessment", None, raw="no idea"),  # unusable
        # C: A Villager (wrong, recall miss), D "mafia!" (right, hit)
        _ra("C", 12, [("A", "Villager", 55), ("D", "mafia!", 90)]),
        _sm("A", 12, [("B", "suspects"), ("C", "Trusts "), ("D", "neutral")]),  # D: A's teammate, left out
        _sm("B", 12, [("A", "neutral"), ("C", "suspects"), ("D", "trusts")]),
        # C: "Commissar" is no role of the game (dropped); D Mafia 40 (right)
        _ra("C", 13, [("A", "Commissar", 90), ("D", "Mafia", 40)]),
        # B: D Mafia (right); C is dead by now (left out by the default method)
        _ra("B", 20, [("D", "Mafia", 70), ("C", "Villager", 90)]),
        _probe("B", 22, "role_assessment", []),  # empty: not usable, B's answer at 20 stays
    ]
    names = list("ABCD")
    roles = dict(zip(names, ["Mafia", "Villager", "Doctor", "Mafia"], strict=True))
    return GameData(
        game_id="hand", path=Path("hand"), rules=load_rules("mafiascope7"), source="mafialab", names=names,
        role=roles, mafia={"A", "D"}, deaths=[(None, 15, "C")], probes=probes,
    )  # fmt: skip


def test_step_values_counted_by_hand() -> None:
    sm = step_metrics(_hand_game(), STEPS)
    assert sm.observers == (False, True, True, False)
    # B: 1/2 at 10 and 12 (A right, C wrong); 1/1 from 20 (D right, the dead C left out)
    assert sm.accuracy(1) == [None, 0.5, 0.5, 0.5, 1.0, 1.0]
    # C: 1/2 at 12 (A wrong, D right); 1/1 from 13 ("Commissar" is not a guess)
    assert sm.accuracy(2) == [None, None, 0.5, 1.0, 1.0, 1.0]
    assert sm.accuracy(0) == sm.accuracy(3) == [None] * 6  # no usable assessment
    # recall: 10: B on A hit, D miss; 12: + C on A miss, D hit; 13: C on D hit; 20: B on D hit
    assert sm.recall() == [None, 0.5, 0.5, pytest.approx(2 / 3), 1.0, 1.0]
    assert sm.committed_accuracy() == [None, 0.5, 0.5, pytest.approx(2 / 3), 1.0, 1.0]
    # F3 from 12: A predicts B suspects (B on A: Mafia 80 -> suspects, agrees) and C trusts
    # (C on A: Villager 55 -> trusts, agrees); C's "Commissar" at 13 is no assessment of A, so
    # C's answer at 12 stays the actual one. B's predictions have no assessment of B to meet.
    assert sm.agreement() == [None, None, 1.0, 1.0, 1.0, 1.0]
    assert sm.agreement(0) == [None, None, 1.0, 1.0, 1.0, 1.0]
    assert sm.agreement(1) == [None] * 6
    assert sm.f3[0, 2].tolist() == [2, 2]
    # ECE at 12: bin 40-60 (C on A, 55, wrong), 60-80 (B on C, 60, wrong), 80-100 (B on A, 80,
    # right; C on D, 90, right): 1/4 * .55 + 1/4 * .60 + 2/4 * |1 - .85|
    assert sm.ece()[2] == pytest.approx(0.3625)
    assert sm.ece()[0] is None
    # the actual side of F3 toward D (A, D's teammate, left out): attitude and confidence
    assert [(a.after_seq, a.observer, a.attitude, a.confidence) for a in sm.actual[3]] == [
        (10, 1, "neutral", 0.0),
        (12, 2, "suspects", 90.0),
        (13, 2, "neutral", 40.0),
        (20, 1, "suspects", 70.0),
    ]
    assert [(a.after_seq, a.observer, a.attitude) for a in sm.actual[0]] == [(10, 1, "suspects"), (12, 2, "trusts")]


def _latest_answers(gd: GameData, step: int) -> list[Probe]:
    """Each player's latest usable answer per probe id with ``after_seq <= step``, chosen here."""
    latest: dict[tuple[str, str], Probe] = {}
    for p in sorted(gd.probes, key=lambda p: p.after_seq):
        if p.after_seq <= step and usable(p, DEFAULT):
            latest[(p.player, p.probe_id)] = p
    return list(latest.values())


def _check_against_corpus_counts(gd: GameData) -> int:
    """At each step, the step values equal the corpus metrics of the game cut to the latest answers."""
    steps = sorted({p.after_seq for p in gd.probes} | {max(p.after_seq for p in gd.probes) + 1})
    sm = step_metrics(gd, steps)
    acc, rec, agree, ece = sm.committed_accuracy(), sm.recall(), sm.agreement(), sm.ece()
    compared = 0
    for i, s in enumerate(steps):
        latest = _latest_answers(gd, s)
        # F1 / F2: the corpus first_order over only the latest assessments
        per_round, calib = first_order(dataclasses.replace(gd, probes=latest), DEFAULT)
        f1 = sum(per_round.values(), np.zeros(len(F1_FIELDS)))
        assert acc[i] == (pytest.approx(f1[ACC] / f1[ACC_N]) if f1[ACC_N] else None), s
        assert rec[i] == (pytest.approx(f1[REC] / f1[REC_N]) if f1[REC_N] else None), s
        assert sm.calib[list(sm.observers), i].sum(axis=0).tolist() == pytest.approx(calib.tolist()), s
        # F3: the corpus second_order with every assessment up to s, and each latest social
        # map moved to s (so "at or before A's probe" is "at or before s")
        ras = [p for p in gd.probes if p.probe_id == "role_assessment" and p.after_seq <= s]
        sms = [
            dataclasses.replace(p, after_seq=s, ts=float("inf"), line=10**9)
            for p in latest
            if p.probe_id == "social_map"
        ]
        f3 = second_order(dataclasses.replace(gd, probes=ras + sms), DEFAULT)["all"]
        assert agree[i] == (pytest.approx(f3[1] / f3[0]) if f3[0] else None), s
        assert sm.f3[:, i].sum(axis=0).tolist() == [f3[1], f3[0]], s
        compared += f1[ACC_N] > 0 and f3[0] > 0
    # at the end, with every answer in: the last step's values are those of the latest answers
    assert ece[-1] is not None or not sm.calib[:, -1].any()
    return compared


def test_step_series_are_the_corpus_metrics_of_the_latest_answers(tmp_path: Path, mafiascope_dir: Path) -> None:
    async def play() -> list[Path]:
        return [await play_probed(tmp_path / "native", 1), await play_probed(tmp_path / "native", 2, "werewolf7")]

    dirs = asyncio.run(play())
    import_mafiascope(mafiascope_dir / "en_demo", tmp_path / "imported")
    dirs += sorted(p for p in (tmp_path / "imported").iterdir() if (p / "probes.jsonl").is_file())
    assert len(dirs) >= 3
    for d in dirs:
        assert _check_against_corpus_counts(game_data(read_game(d))) > 0, d


def test_final_step_of_a_game_answered_once_is_the_corpus_figure() -> None:
    # every observer answered once: the last step holds every answer, so F1, F2 and F3 there are
    # the game's corpus numbers (where the definitions coincide)
    gd = _hand_game()
    once = dataclasses.replace(gd, probes=[p for p in gd.probes if p.after_seq in (10, 12)], deaths=[])
    sm = step_metrics(once, [30])
    per_round, calib = first_order(once, DEFAULT)
    f1 = per_round[1]
    assert (f1[ACC], f1[ACC_N], f1[REC], f1[REC_N]) == (2, 4, 2, 4)
    assert sm.committed_accuracy() == [0.5] and sm.recall() == [0.5]
    assert sm.calib[[1, 2], 0].sum(axis=0).tolist() == calib.tolist()
    f3 = second_order(once, DEFAULT)["all"]
    assert (f3[0], f3[1]) == (2, 2) and sm.agreement() == [1.0]
