""""""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mafialab.agents import LLMAgent
from mafialab.engine import Action, GameState, Invalid, Vote, VoteTally, deal_roles, player_view, visible_events
from mafialab.models import MockModel
from mafialab.rules import ARENA12, BUILTIN, MAFIASCOPE7, MAFIASCOPE7_V2, WEREWOLF7, load_rules
from mafialab.testing import check_events, check_rules
from tests.helpers import drive

RULES = list(BUILTIN.values())


ELIMINATION = [r for r in RULES if r.mission is None]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
@pytest.mark.parametrize("agents", [("random",), ("scripted",), ("scripted", "random")])
def test_conformance_many_seeds(rules, agents):
    report = check_rules(rules, range(150), agents)
    assert report.games == 150
    assert report.violations == []


def test_checker_detects_broken_invariants():
    state = drive(MAFIASCOPE7, 3)
    events = list(state.events)
    assert check_events(MAFIASCOPE7, events, state.roles) == []
    # a vote by a dead player
    dead = next(e.seat for e in events if e.kind == "elimination")
    first_death = next(i for i, e in enumerate(events) if e.kind == "elimination")
    later_vote = next((i for i, e in enumerate(events) if i > first_death and e.kind == "vote"), None)
    if later_vote is not None:
        tampered = [
            *events[:later_vote],
            events[later_vote].model_copy(update={"seat": dead}),
            *events[later_vote + 1 :],
        ]
        assert any("dead seat" in v for v in check_events(MAFIASCOPE7, tampered, state.roles))
    # a wrong winner
    end = events[-1].model_copy(update={"winner": "town" if events[-1].winner == "mafia" else "mafia"})
    assert any("winner" in v for v in check_events(MAFIASCOPE7, [*events[:-1], end], state.roles))
    # a missing end
    assert any("did not end" in v for v in check_events(MAFIASCOPE7, events[:-1], state.roles))


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
def test_same_seed_same_events(rules):
    a = drive(rules, 42, rng_seed=7)
    b = drive(rules, 42, rng_seed=7)
    assert [e.model_dump() for e in a.events] == [e.model_dump() for e in b.events]
    c = drive(rules, 43, rng_seed=7)
    assert [e.model_dump() for e in a.events] != [e.model_dump() for e in c.events]


def test_deal_is_seeded_and_complete():
    for seed in range(50):
        roles = deal_roles(WEREWOLF7, seed)
        assert sorted(roles) == sorted(WEREWOLF7.deck())
    assert len({tuple(deal_roles(WEREWOLF7, s)) for s in range(50)}) > 20


def test_illegal_action_is_a_value_and_state_untouched():
    s = GameState(WEREWOLF7, 1)
    d = s.pending()[0]
    before = (list(s.events), s.pending())
    illegal = next(o for o in range(7) if o not in d.options)
    for bad in (
        Action(decision=d.id, seat=d.seat, target=illegal),
        Action(decision=d.id, seat=(d.seat + 1) % 7, target=d.options[0]),
        Action(decision=d.id + 99, seat=d.seat, target=d.options[0]),
        Action(decision=d.id, seat=d.seat, target=None),
        Action(decision=d.id, seat=d.seat, target=d.options[0], text="x" * 5000),
    ):
        res = s.apply(bad)
        assert res is not None and res.reason
        assert (list(s.events), s.pending()) == before
    assert s.apply(Action(decision=d.id, seat=d.seat, target=d.options[0])) is None
    assert s.apply(Action(decision=d.id, seat=d.seat, target=d.options[0])) is not None  # answered twice


def test_speech_needs_text():
    s = GameState(MAFIASCOPE7, 0)
    d = s.pending()[0]
    assert d.kind == "speak" and d.phase == "intro"
    assert s.apply(Action(decision=d.id, seat=d.seat, text="   ")) is not None
    assert s.apply(Action(decision=d.id, seat=d.seat, text="hello")) is None


# ---------------------------------------------------------------- leak tests
@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
@pytest.mark.parametrize("seed", range(5))
def test_views_never_leak(rules, seed):
    state = drive(rules, seed)
    # check every prefix of the game (the view an agent had at each step), not just the end
    end_seq = next(e.seq for e in state.events if e.kind == "game_end")
    for cut in range(1, end_seq):
        events = state.events[:cut]
        for seat in range(rules.n_seats):
            view = visible_events(events, seat)
            my_team = state.teams[seat]
            for ev in view:
                if ev.kind == "role_assigned":
                    assert ev.seat == seat, "saw another seat's role"
                told = rules.mission.knows_spies if rules.mission else ()  # Avalon's Merlin
                if ev.kind == "team_revealed" and state.roles[seat] in told:
                    assert ev.visibility.seats and seat in ev.visibility.seats
                elif ev.kind in ("mafia_chat", "kill_chosen", "team_revealed"):
                    assert my_team == "mafia", f"town seat saw {ev.kind}"
                if ev.kind == "mission_card" or (ev.kind == "team_vote" and not ev.visibility.public):
                    assert ev.seat == seat, f"saw another seat's {ev.kind}"
                if ev.kind == "night_action":
                    assert ev.seat == seat or (ev.ability == "kill" and my_team == "mafia")
                if ev.kind == "investigation_result":
                    assert ev.seat == seat
                if ev.kind == "elimination" and not rules.reveal_role_on_death:
                    assert ev.role is None
                if ev.kind == "vote" and not ev.visibility.public:
                    assert ev.seat == seat


def test_view_contents_for_town_and_mafia():
    state = drive(WEREWOLF7, 11)
    wolves = [s for s in range(7) if state.teams[s] == "mafia"]
    town = next(s for s in range(7) if state.teams[s] == "town")
    v = player_view(state.events, wolves[0])
    assert v.role == "Werewolf" and v.teammates == (wolves[1],)
    vt = player_view(state.events, town)
    assert vt.teammates == () and vt.role == state.roles[town]
    assert len(vt.events) < len(v.events) or any(e.kind == "investigation_result" for e in vt.events)


# ---------------------------------------------------------------- properties
@settings(max_examples=60, deadline=None)
@given(rules_i=st.integers(0, len(RULES) - 1), seed=st.integers(0, 2**31), choices=st.randoms(use_true_random=False))
def test_any_legal_action_sequence_terminates_conformant(rules_i, seed, choices):
    rules = RULES[rules_i]
    state = GameState(rules, seed)
    while not state.is_terminal:
        for d in state.pending():
            assert d.options or not d.wants_target
            for o in d.options:
                assert state.alive[o]
            target = choices.choice(d.options) if d.wants_target else None
            pick = choices.choice(d.choices) if d.choices else None
            text = "t" if d.needs_text else None
            assert state.apply(Action(decision=d.id, seat=d.seat, target=target, text=text, choice=pick)) is None
    assert check_events(rules, state.events, state.roles) == []
    assert state.round <= rules.round_cap


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), garbage=st.lists(st.tuples(st.integers(-2, 20), st.integers(-2, 20)), max_size=30))
def test_garbage_actions_never_change_state(seed, garbage):
    state = GameState(ARENA12, seed)
    d = state.pending()[0]
    snapshot = [e.model_dump() for e in state.events]
    for dec, tgt in garbage:
        a = Action(decision=dec, seat=d.seat, target=tgt)
        if dec == d.id and tgt in d.options:
            continue
        assert state.apply(a) is not None
    assert [e.model_dump() for e in state.events] == snapshot


# ---------------------------------------------------------------- regressions from other projects' bug reports
def test_game_ends_at_once_when_last_mafia_eliminated():
    for rules in ELIMINATION:
        for seed in range(40):
            state = drive(rules, seed)
            if state.winner != "town":
                continue
            last_elim = max(i for i, e in enumerate(state.events) if e.kind == "elimination")
            assert state.events[last_elim].seat in [s for s in range(rules.n_seats) if state.teams[s] == "mafia"]
            assert state.events[last_elim + 1].kind == "game_end"
            assert len(state.events) == last_elim + 2


def test_dead_player_cannot_be_voted_targeted_or_eliminated_again():
    state = GameState(MAFIASCOPE7, 5)
    rng = random.Random(0)
    dead: set[int] = set()
    while not state.is_terminal:
        for d in state.pending():
            assert not dead & set(d.options)
            assert d.seat not in dead
            if dead and d.wants_target:
                res = state.apply(Action(decision=d.id, seat=d.seat, target=min(dead)))
                assert res is not None and "not a legal option" in res.reason
            a = Action(decision=d.id, seat=d.seat, target=rng.choice(d.options) if d.wants_target else None,
                       text="x" if d.needs_text else None)  # fmt: skip
            assert state.apply(a) is None
        dead = {e.seat for e in state.events if e.kind == "elimination"}
    elims = [e.seat for e in state.events if e.kind == "elimination"]
    assert len(elims) == len(set(elims))


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
def test_every_vote_is_recorded_not_only_the_last(rules):
    state = drive(rules, 9)
    for tally in (e for e in state.events if isinstance(e, VoteTally)):
        votes = [e for e in state.events if e.kind == "vote" and e.round == tally.round and e.stage == tally.stage]
        assert {v.seat: v.target for v in votes} == tally.votes
        assert sum(tally.tally.values()) == len(votes)


def _split_kill(state, d):
    """Wolves/mafia name different targets so the kill vote ties."""
    if d.kind == "kill":
        # each killer names a different target: the k-th living killer names the k-th option
        killers = [s for s in state.alive_seats() if state.teams[s] == "mafia"]
        return Action(decision=d.id, seat=d.seat, target=d.options[killers.index(d.seat) % len(d.options)])
    return None


@pytest.mark.parametrize("rules", [MAFIASCOPE7, WEREWOLF7, ARENA12], ids=lambda r: r.name)
def test_mafia_tie_at_night_resolves_by_the_seeded_rule(rules):
    outcomes = set()
    for seed in range(12):
        state = drive(rules, seed, policy=_split_kill)
        chosen = [e for e in state.events if e.kind == "kill_chosen"]
        assert chosen
        first = chosen[0]
        named = [
            e.target
            for e in state.events
            if e.kind == "night_action" and e.ability == "kill" and e.round == first.round
        ]
        assert len(set(named)) == len(named) > 1  # a real tie
        if rules.night.kill_tie == "first_named":
            assert first.target == named[0]
        else:
            assert first.target in named
            outcomes.add(named.index(first.target))
        again = drive(rules, seed, policy=_split_kill)
        assert [e.model_dump() for e in again.events] == [e.model_dump() for e in state.events]
    if rules.night.kill_tie == "seeded":
        assert len(outcomes) > 1  # the seed, not the order, decides


def _protect_the_victim(state, d):
    if d.kind == "protect":
        town = [o for o in d.options if state.teams[o] == "town"]
        return Action(decision=d.id, seat=d.seat, target=min(town))
    if d.kind == "kill":
        town = [o for o in d.options if state.teams[o] == "town"]
        return Action(decision=d.id, seat=d.seat, target=min(town))
    return None


@pytest.mark.parametrize("rules", [MAFIASCOPE7, WEREWOLF7], ids=lambda r: r.name)
def test_saved_player_stays_alive_in_everyones_view(rules):
    state = GameState(rules, 3)
    doctor = next(s for s in range(7) if rules.role(state.roles[s]).ability == "protect")
    victim = min(s for s in range(7) if state.teams[s] == "town")
    rng = random.Random(1)
    while not any(e.kind == "night_result" for e in state.events):
        for d in state.pending():
            a = _protect_the_victim(state, d) or Action(
                decision=d.id, seat=d.seat, target=rng.choice(d.options) if d.wants_target else None,
                text="hi" if d.needs_text else None,
            )  # fmt: skip
            assert state.apply(a) is None
    result = next(e for e in state.events if e.kind == "night_result")
    assert result.killed is None
    assert result.saved == (victim if rules.night.announce_save else None)
    assert (state.alive[victim] and state.alive[doctor]) or victim == doctor
    for seat in range(7):
        assert victim in player_view(state.events, seat).alive


# Engine changes forks need: a recorded deal, reseeding at a step, no vote (mafiascope7-v2).


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
