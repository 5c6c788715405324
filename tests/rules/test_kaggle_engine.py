"""Kaggle Werewolf against kaggle-environments 1.33.2: the same deals and actions, the same outcomes.

The fixture ``tests/data/kaggle/deals.json`` was written by ``scripts/check_kaggle.sh`` (Kaggle's
engine and its random agents in their own environment): per game, the rule set it plays, Kaggle's
deal, every targeted action and what Kaggle made of them. Here the same deal and actions go through
mafialab's engine under the matching rule set (``kaggle-werewolf7``, ``kaggle-werewolf8`` or a file of
``examples/rules/kaggle/``); eliminations, night results, votes, the Seer's checks and the winner
must agree. ``MAFIALAB_KAGGLE_DEALS`` points the test at a freshly written file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mafialab.engine import Action, GameState
from mafialab.rules import BUILTIN, RuleSet, load_rules

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "kaggle" / "deals.json"
DEALS = Path(os.environ.get("MAFIALAB_KAGGLE_DEALS") or FIXTURE)


def kaggle_rules(name: str) -> RuleSet:
    """The rule set a game of the fixture plays: a built-in, or a rule-experiment override file."""
    return BUILTIN[name] if name in BUILTIN else load_rules(ROOT / "examples" / "rules" / "kaggle" / f"{name}.yaml")


def _games() -> list[dict[str, Any]]:
    return json.loads(DEALS.read_text(encoding="utf-8"))["games"]


def play_ours(game: dict[str, Any]) -> dict[str, Any]:
    """Play Kaggle's deal and actions through mafialab's engine; the outcomes in the fixture's shape."""
    rules = kaggle_rules(game["rules"])
    acts = {(k, n, s): t for k, n, s, t in game["actions"]}
    state = GameState(rules, game["seed"], roles=game["roles"], names=game["ids"])
    while not state.is_terminal:
        for d in state.pending():
            if d.kind == "speak":
                a = Action(decision=d.id, seat=d.seat, text="Hello everyone!")
            else:
                a = Action(decision=d.id, seat=d.seat, target=acts[(d.kind, d.round, d.seat)])
            bad = state.apply(a)
            assert bad is None, (
                f"{game['rules']} seed {game['seed']}: {d.kind} round {d.round} seat {d.seat}: {bad.reason}"
            )
    ev = state.events
    days = sorted({e.round for e in ev if e.kind == "vote"})
    return {
        "eliminations": [[e.round, e.seat, e.cause] for e in ev if e.kind == "elimination"],
        "nights": [e.killed for e in ev if e.kind == "night_result"],
        "votes": [{str(e.seat): e.target for e in ev if e.kind == "vote" and e.round == r} for r in days],
        "checks": [[e.round, e.seat, e.target, e.result] for e in ev if e.kind == "investigation_result"],
        "winner": state.winner,
    }


@pytest.mark.parametrize("game", _games(), ids=lambda g: f"{g['rules']}-seed{g['seed']}")
def test_same_deal_same_actions_same_outcomes(game: dict[str, Any]) -> None:
    ours = play_ours(game)
    for key in ["eliminations", "nights", "votes", "checks", "winner"]:
        assert ours[key] == game[key], f"{game['rules']} seed {game['seed']}: {key} differs from Kaggle's"


def test_the_fixture_covers_both_rule_sets_both_winners_and_saves() -> None:
    games = _games()
    assert {"kaggle-werewolf7", "kaggle-werewolf8"} <= {g["rules"] for g in games}
    assert {g["winner"] for g in games} == {"town", "mafia"}
    assert any(None in g["nights"] for g in games), "a save (nobody killed) is among the deals"
