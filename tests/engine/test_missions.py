"""Mission games (resistance5, avalon5, mafiascope-resistance): the engine's mission rules."""

from __future__ import annotations

import pytest

from mafialab.engine import Action, GameState, player_view
from mafialab.rules import BUILTIN, RuleSetError, rules_from_dict
from mafialab.testing import check_events
from tests.helpers import drive

R5, AVALON, MS = BUILTIN["resistance5"], BUILTIN["avalon5"], BUILTIN["mafiascope-resistance"]


def _answer(state: GameState, d, *, choice=None, target=None, text=None) -> None:
    assert state.apply(Action(decision=d.id, seat=d.seat, target=target, text=text, choice=choice)) is None


def _play_proposal(state: GameState, vote: str) -> list[int]:
    """Answer until the next team vote tally: the leader picks the lowest seats, everyone votes ``vote``."""
    team: list[int] = []
    while True:
        ds = state.pending()
        d = ds[0]
        if d.kind == "speak":
            _answer(state, d, text="hello")
        elif d.kind == "propose":
            team.append(d.options[0])
            _answer(state, d, target=d.options[0])
        elif d.kind == "team_vote":
            for x in ds:
                _answer(state, x, choice=vote, text="my vote" if x.needs_text else None)
            return team
        else:
            raise AssertionError(d.kind)


def _until_vote(state: GameState) -> None:
    while state.pending()[0].kind != "team_vote":
        d = state.pending()[0]
        _answer(state, d, target=d.options[0] if d.wants_target else None, text="x" if d.needs_text else None)


def test_resistance5_fields():
    m = R5.mission
    assert m is not None and R5.n_seats == 5
    assert m.team_sizes == (2, 3, 2, 3, 3) and m.missions_to_win == 3 and m.fails_to_fail == 1
    assert m.rejections_to_lose == 5 and m.approval == "strict_majority"
    assert {r.name: (r.count, r.team) for r in R5.roles} == {"Spy": (2, "mafia"), "Resistance": (3, "town")}
    assert AVALON.mission.knows_spies == ("Merlin",) and AVALON.mission.assassin == "Assassin"
    assert AVALON.mission.team_sizes == m.team_sizes  # extends: resistance5


def test_fifth_rejection_in_a_round_is_a_spy_win():
    state = GameState(R5, 3)
    leaders = []
    for _ in range(5):
        _play_proposal(state, "reject")
        leaders.append(next(e.leader for e in reversed(state.events) if e.kind == "team_proposal"))
    end = state.events[-1]
    assert end.kind == "game_end" and end.winner == "mafia" and end.reason == "rejections"
    assert [(x - leaders[0]) % 5 for x in leaders] == [0, 1, 2, 3, 4]  # the lead rotates in seat order
    tallies = [e for e in state.events if e.kind == "team_vote_tally"]
    assert [t.rejected_in_row for t in tallies] == [1, 2, 3, 4, 5] and all(t.approvals == 0 for t in tallies)
    assert check_events(R5, state.events, state.roles) == []


def test_approval_needs_a_strict_majority_and_one_fail_fails():
    state = GameState(R5, 4)
    _play_proposal_with = _play_proposal(state, "approve")
    assert len(_play_proposal_with) == 2
    tally = next(e for e in reversed(state.events) if e.kind == "team_vote_tally")
    assert tally.approved and tally.approvals == 5
    cards = state.pending()
    assert sorted(d.seat for d in cards) == _play_proposal_with
    for d in cards:  # town members may only succeed
        assert d.choices == (("success", "fail") if state.teams[d.seat] == "mafia" else ("success",))
        _answer(state, d, choice=d.choices[-1])
    res = next(e for e in reversed(state.events) if e.kind == "mission_result")
    spies = sum(state.teams[s] == "mafia" for s in _play_proposal_with)
    assert res.fails == spies and res.succeeded == (spies == 0)
    # 2 approvals of 5 is no majority
    state = GameState(R5, 4)
    _until_vote(state)
    for d in state.pending():
        _answer(state, d, choice="approve" if d.seat < 2 else "reject")
    tally = next(e for e in reversed(state.events) if e.kind == "team_vote_tally")
    assert tally.approvals == 2 and not tally.approved


def test_a_choice_is_checked():
    state = GameState(R5, 1)
    _until_vote(state)
    d = state.pending()[0]
    bad = state.apply(Action(decision=d.id, seat=d.seat, choice="maybe"))
    assert bad is not None and "not one of approve, reject" in bad.reason
    assert "missing choice" in state.apply(Action(decision=d.id, seat=d.seat)).reason
    assert "takes no target" in state.apply(Action(decision=d.id, seat=d.seat, target=0, choice="approve")).reason


def test_mafiascope_resistance_counts_a_blank_vote_as_a_reject():
    state = GameState(MS, 2)
    _until_vote(state)
    assert state.events[-1].kind == "team_proposal" and state.events[-1].leader == 0  # first_leader: seat
    for _ in range(5):  # public, one after another, each with a statement
        (d,) = state.pending()
        assert d.needs_text and d.no_vote
        _answer(state, d, choice=None if d.seat else "approve", text="blank" if d.seat else "yes")
    votes = [e for e in state.events if e.kind == "team_vote"]
    assert all(v.visibility.public and v.index == i + 1 for i, v in enumerate(votes))
    tally = state.events[-1]
    assert tally.choices == {0: "approve", 1: "reject", 2: "reject", 3: "reject", 4: "reject"} and not tally.approved


def test_merlin_knows_the_spies_and_the_assassin_can_win():
    for seed in range(60):
        state = drive(AVALON, seed)
        merlin = state.roles.index("Merlin")
        view = player_view(state.events, merlin)
        told = [e for e in view.events if e.kind == "team_revealed"]
        assert told and set(told[0].members) == {s for s in range(5) if state.teams[s] == "mafia"}
        assert view.teammates == ()  # the spies are not Merlin's teammates
        if state.events[-1].reason == "assassination":
            shot = next(e for e in state.events if e.kind == "assassination")
            assert shot.hit and shot.target == merlin and state.winner == "mafia"
            return
    raise AssertionError("no assassination hit in 60 random games")


def test_mission_fields_are_checked():
    base = {"extends": "resistance5", "name": "m"}
    with pytest.raises(RuleSetError, match=r"mission\.team_sizes"):
        rules_from_dict({**base, "mission": {"team_sizes": [2, 3]}})
    with pytest.raises(RuleSetError, match=r"mission\.team_sizes\.1"):
        rules_from_dict({**base, "mission": {"team_sizes": [2, 9, 2, 3, 3]}})
    with pytest.raises(RuleSetError, match=r"mission\.assassin"):
        rules_from_dict({**base, "mission": {"assassin": "Nobody", "assassin_target": "Spy"}})
    with pytest.raises(RuleSetError, match="roles"):
        rules_from_dict({**base, "roles": [{"name": "Spy", "count": 2, "team": "mafia", "ability": "kill"},
                                           {"name": "Resistance", "count": 3, "team": "town"}]})  # fmt: skip
