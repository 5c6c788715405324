"""mafialab.testing: the checks a user runs on their own agent or rule set, and the stub server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mafialab import models
from mafialab.agents import make_agent
from mafialab.engine import Action, Decision, PlayerView
from mafialab.rules import WEREWOLF7, RuleSet, rules_from_dict
from mafialab.testing import (
    check_agent,
    check_rules,
    golden_diff,
    golden_records,
    read_golden,
    write_golden,
)


class _OutOfRange:
    """Answers every targeted decision with a seat that does not exist."""

    label = "out-of-range"

    def __init__(self, seat: int) -> None:
        self.seat = seat

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        if decision.wants_target:
            return Action(decision=decision.id, seat=decision.seat, target=99)
        return Action(decision=decision.id, seat=decision.seat, text="hello")


def test_a_legal_agent_passes_in_every_seat() -> None:
    report = check_agent(lambda seat, rules, seed: make_agent("random", seat, rules, seed), WEREWOLF7, range(3))
    assert report.ok, report.violations
    assert report.games == 3


def test_an_illegal_agent_is_named_by_seed_seat_and_decision() -> None:
    report = check_agent(lambda seat, rules, seed: _OutOfRange(seat), WEREWOLF7, [4], others="scripted")
    assert not report.ok
    # the agent plays seat 4 % 7 = 4 only; every complaint is about that seat
    assert all(v.startswith("seed 4: seat 4 decision ") for v in report.violations), report.violations
    assert report.games == 1


def test_check_rules_accepts_a_user_rule_set() -> None:
    mine: RuleSet = rules_from_dict({"extends": "werewolf7", "name": "ww-two-rounds", "day": {"discussion_rounds": 2}})
    report = check_rules(mine, range(5), ("scripted", "random"))
    assert report.ok, report.violations
    assert (report.rules_id, report.games) == ("ww-two-rounds-v1", 5)


def test_golden_playthrough_round_trip_and_diff(tmp_path: Path) -> None:
    (path,) = asyncio.run(write_golden(tmp_path, [WEREWOLF7]))
    assert path.name == "werewolf7.jsonl"
    golden = read_golden(path)
    assert golden[0]["kind"] == "game_start" and len(golden) > 20
    assert golden_diff(golden, asyncio.run(golden_records(WEREWOLF7))) is None
    changed = [dict(r) for r in golden]
    changed[5] = {**changed[5], "seat": -1}
    assert golden_diff(golden, changed) == f"record 5 ({golden[5].get('kind', '?')}) differs in seat"
    assert golden_diff(golden, golden[:-1]) == f"{len(golden)} golden records, {len(golden) - 1} fresh"


def test_the_stub_server_is_not_part_of_the_runtime_models_package() -> None:
    assert not hasattr(models, "OpenAIStub")
    assert "OpenAIStub" not in models.__all__
