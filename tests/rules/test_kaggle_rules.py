"""Kaggle Werewolf's rules as fields: reveal levels, tie rules, first speaker/voter, bid to speak."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafialab.engine import Action, GameState
from mafialab.rules import BUILTIN, load_rules, rule_fields, rules_from_dict

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "rules" / "kaggle").glob("*.yaml"))


def _run(state: GameState, pick) -> None:
    while not state.is_terminal:
        for d in state.pending():
            target, text = pick(state, d)
            assert state.apply(Action(decision=d.id, seat=d.seat, target=target, text=text)) is None


def _first_option(state: GameState, d):
    if d.kind == "speak":
        return None, f"seat {d.seat} speaks"
    if d.kind == "bid":
        return (4 if d.seat == 5 else 1), None
    return d.options[0], None


def test_kaggle_rule_sets_are_built_in_with_their_settings():
    k7, k8 = BUILTIN["kaggle-werewolf7"], BUILTIN["kaggle-werewolf8"]
    assert (k7.n_seats, k8.n_seats) == (7, 8)
    assert not k7.night.protect_self and k8.night.protect_self
    assert k7.day.speaking_order == "rotate" and k8.day.speaking_order == "seeded_first"
    assert k8.day.discussion_rounds == 2 and k7.day.vote_order == "seeded_first" and k7.day.self_vote
    assert k7.night.investigate_result == "role" and k7.reveal_role_on_death


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_rule_experiment_file_extends_kaggle_werewolf8_and_plays(path):
    rules = load_rules(path)
    assert rules.n_seats == 8 and rules.name.startswith("kaggle-werewolf8-")
    st = GameState(rules, 3)
    _run(st, _first_option)
    assert st.winner in ("town", "mafia")


def test_seeded_first_speaker_is_drawn_once_a_day_and_kept_for_every_round():
    st = GameState(BUILTIN["kaggle-werewolf8"], 5)
    _run(st, _first_option)
    speeches = [e for e in st.events if e.kind == "speech" and e.round == 1]
    order1 = [e.seat for e in speeches if e.discussion == 1]
    order2 = [e.seat for e in speeches if e.discussion == 2]
    k = order1.index(min(order1))
    assert order1 == order2 and order1[k:] + order1[:k] == sorted(order1)  # seat order from a drawn first
    firsts = {GameState(BUILTIN["kaggle-werewolf8"], s).rules and _first_speaker(s) for s in range(8)}
    assert len(firsts) > 1


def _first_speaker(seed: int) -> int:
    st = GameState(BUILTIN["kaggle-werewolf8"], seed)
    while not any(e.kind == "speech" for e in st.events):
        for d in st.pending():
            t, x = _first_option(st, d)
            st.apply(Action(decision=d.id, seat=d.seat, target=t, text=x))
    return next(e.seat for e in st.events if e.kind == "speech")


def test_rotate_moves_the_first_speaker_on_each_day():
    rules = rules_from_dict({"extends": "kaggle-werewolf8", "name": "rot", "day": {"speaking_order": "rotate"}})
    st = GameState(rules, 2)
    _run(st, _first_option)
    firsts = {}
    for e in st.events:
        if e.kind == "speech" and e.round not in firsts:
            firsts[e.round] = e.seat
    assert firsts[1] == next(s for s in range(8) if _alive_at_day(st, 1, s))
    assert all(firsts[r + 1] != firsts[r] for r in firsts if r + 1 in firsts)


def _alive_at_day(st: GameState, rnd: int, seat: int) -> bool:
    return not any(e.kind == "elimination" and e.seat == seat and e.round < rnd for e in st.events) and not any(
        e.kind == "elimination" and e.seat == seat and e.round == rnd and e.cause == "night" for e in st.events
    )


def test_a_tied_kill_vote_kills_nobody_under_kill_tie_none():
    rules = rules_from_dict({"extends": "kaggle-werewolf8", "name": "nt", "night": {"kill_tie": "none"}})
    st = GameState(rules, 1)
    wolves = [s for s in range(8) if st.teams[s] == "mafia"]
    for d in st.pending():
        t = d.options[wolves.index(d.seat)] if d.kind == "kill" else d.options[-1]
        st.apply(Action(decision=d.id, seat=d.seat, target=t))
    while not any(e.kind == "night_result" for e in st.events):
        for d in st.pending():
            t = d.options[wolves.index(d.seat)] if d.kind == "kill" else d.options[-1]
            st.apply(Action(decision=d.id, seat=d.seat, target=t))
    chosen = next(e for e in st.events if e.kind == "kill_chosen")
    result = next(e for e in st.events if e.kind == "night_result")
    assert chosen.target is None and result.killed is None and all(st.alive)


def test_team_is_revealed_on_death_when_the_role_is_not():
    rules = load_rules(next(p for p in EXAMPLES if "RevealTeam_DayExileRevealTeam" in p.stem))
    st = GameState(rules, 4)
    _run(st, _first_option)
    deaths = [e for e in st.events if e.kind == "elimination"]
    assert deaths and all(e.role is None and e.team == st.teams[e.seat] for e in deaths)
    # logs of other rule sets do not carry the field at all
    st7 = GameState(BUILTIN["kaggle-werewolf7"], 4)
    _run(st7, _first_option)
    assert all("team" not in e.model_dump() for e in st7.events if e.kind == "elimination")


def test_bid_to_speak_highest_bid_speaks_private_bids_public_result_and_a_cap_on_turns():
    rules = rules_from_dict(
        {"extends": "kaggle-werewolf8", "name": "bid", "day": {"speaking_order": "bid", "bid_turns": 3}}
    )
    st = GameState(rules, 7)
    _run(st, _first_option)
    day1 = [e for e in st.events if e.round == 1 and e.phase == "day"]
    bids = [e for e in day1 if e.kind == "bid"]
    results = [e for e in day1 if e.kind == "bid_result"]
    speeches = [e for e in day1 if e.kind == "speech"]
    assert len(results) == 3 and len(speeches) == 3  # the cap
    assert all(e.visibility.seats == (e.seat,) and not e.visibility.public for e in bids)
    assert all(r.visibility.public for r in results)
    alive_bid = {e.seat: e.amount for e in bids if e.turn == 1}
    if 5 in alive_bid:
        assert results[0].speaker == 5 and speeches[0].seat == 5 and not results[0].tie
    assert any(path == "day.bid_turns" for path, _, _ in rule_fields(rules))
    assert not any(path == "day.bid_turns" for path, _, _ in rule_fields(BUILTIN["kaggle-werewolf8"]))


def test_all_bids_zero_end_the_discussion():
    rules = rules_from_dict({"extends": "kaggle-werewolf8", "name": "bid0", "day": {"speaking_order": "bid"}})
    st = GameState(rules, 7)
    _run(st, lambda s, d: (0, None) if d.kind == "bid" else _first_option(s, d))
    assert not any(e.kind == "speech" for e in st.events)
    ends = [e for e in st.events if e.kind == "bid_result"]
    assert ends and all(e.speaker is None for e in ends)


def test_a_bid_tie_is_drawn_from_the_seed():
    rules = rules_from_dict({"extends": "kaggle-werewolf8", "name": "bidt", "day": {"speaking_order": "bid"}})
    speakers = set()
    for seed in range(6):
        st = GameState(rules, seed)
        _run(st, lambda s, d: (2, None) if d.kind == "bid" else _first_option(s, d))
        r = next(e for e in st.events if e.kind == "bid_result")
        assert r.tie
        speakers.add(r.speaker)
    assert len(speakers) > 1
