"""Engine changes forks need: a recorded deal, reseeding at a step, no vote (mafiascope7-v2)."""

from __future__ import annotations

import asyncio

import pytest

from mafialab.agents import LLMAgent
from mafialab.engine import Action, GameState, Invalid, Vote, VoteTally
from mafialab.models import MockModel
from mafialab.rules import MAFIASCOPE7, MAFIASCOPE7_V2, load_rules
from mafialab.testing import check_events, check_rules


def _to_first_vote(state: GameState) -> None:
    while not any(d.kind == "vote" for d in state.pending()):
        for d in state.pending():
            t = d.options[0] if d.wants_target else None
            assert (
                state.apply(Action(decision=d.id, seat=d.seat, target=t, text="hi" if d.needs_text else None)) is None
            )


def test_recorded_deal_replaces_the_seeded_deal() -> None:
    roles = ["Villager", "Mafia", "Villager", "Doctor", "Mafia", "Villager", "Villager"]
    names = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus"]
    s = GameState(MAFIASCOPE7, 0, roles=roles, names=names)
    assert s.roles == roles and s.names == names
    assigned = {e.seat: e.role for e in s.events if e.kind == "role_assigned"}  # type: ignore[union-attr]
    assert [assigned[i] for i in range(7)] == roles
    assert next(e for e in s.events if e.kind == "team_revealed").members == [1, 4]  # type: ignore[union-attr]
    with pytest.raises(ValueError, match=r"^roles: "):
        GameState(MAFIASCOPE7, 0, roles=["Mafia"] * 7)
    with pytest.raises(ValueError, match=r"^names: "):
        GameState(MAFIASCOPE7, 0, names=["A"] * 7)


def test_reseed_changes_only_later_draws() -> None:
    rules = load_rules("werewolf7")
    a, b = GameState(rules, 3), GameState(rules, 3)
    b.reseed(99)
    assert a.events == b.events and b.continuation_seed == 99
    assert a._rng["speaking_order"].random() != b._rng["speaking_order"].random()


def test_no_vote_is_a_vote_that_counts_for_nobody() -> None:
    state = GameState(MAFIASCOPE7_V2, 1)
    _to_first_vote(state)
    d = state.pending()[0]
    assert d.no_vote and d.seat not in d.options  # the voter cannot name itself in v2
    assert state.apply(Action(decision=d.id, seat=d.seat, target=None, text="I pass.")) is None
    vote = state.events[-1]
    assert isinstance(vote, Vote) and vote.target is None and vote.statement == "I pass."
    while not state.is_terminal and not any(isinstance(e, VoteTally) for e in state.events):
        for x in state.pending():
            state.apply(Action(decision=x.id, seat=x.seat, target=x.options[0], text="v"))
    tally = next(e for e in state.events if isinstance(e, VoteTally))
    assert d.seat not in tally.votes and sum(tally.tally.values()) == len(tally.votes)
    while not state.is_terminal:
        for x in state.pending():
            t = x.options[0] if x.wants_target else None
            state.apply(Action(decision=x.id, seat=x.seat, target=t, text="v" if x.needs_text else None))
    assert check_events(MAFIASCOPE7_V2, state.events, state.roles) == []


def test_v1_refuses_a_missing_vote_target() -> None:
    state = GameState(MAFIASCOPE7, 1)
    _to_first_vote(state)
    d = state.pending()[0]
    res = state.apply(Action(decision=d.id, seat=d.seat, target=None, text="x"))
    assert isinstance(res, Invalid) and res.reason == "missing target"


def test_v2_conforms_and_keeps_v1_unchanged() -> None:
    assert check_rules(MAFIASCOPE7_V2, range(20), agents=("scripted", "random")).ok
    assert load_rules("mafiascope7") is MAFIASCOPE7 and load_rules("mafiascope7-v2") is MAFIASCOPE7_V2
    # rule sets from before the new fields serialise as they did (log headers unchanged)
    assert "no_vote" not in MAFIASCOPE7.model_dump()["day"]
    assert MAFIASCOPE7_V2.model_dump()["day"]["no_vote"] is True


def test_llm_vote_naming_the_voter_is_no_vote_without_retry() -> None:
    state = GameState(MAFIASCOPE7_V2, 2)
    _to_first_vote(state)
    d = state.pending()[0]
    me = state.names[d.seat]
    model = MockModel([{"target": me, "statement": "Voting for myself."}])
    agent = LLMAgent(d.seat, MAFIASCOPE7_V2, 2, model)
    a = asyncio.run(agent.decide(d, state.view(d.seat)))
    assert a.target is None and a.text == "Voting for myself." and not a.fallback
    assert len(model.requests) == 1
