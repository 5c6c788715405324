"""Conformance invariants of mission games (rule sets with ``mission`` rules)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mafialab.engine import Event, GameEnd
from mafialab.rules import RuleSet


def check_mission_events(rules: RuleSet, events: Sequence[Event], roles: Sequence[str]) -> list[str]:
    """The invariants of one finished mission game (see :func:`mafialab.testing.check_events`).

    Every proposal has the mission's team size, picked by one leader (rotating in seat order)
    without repeats; every player votes once per proposal and the tally counts those votes
    (blank votes as rejects) with a strict majority deciding; only team members play cards,
    town members only succeed and the result counts the fails; nobody is eliminated; the
    winner follows from the missions, the rejections in a row or the assassination.
    """
    m = rules.mission
    assert m is not None
    teams = [rules.role(r).team for r in roles]
    n = len(roles)
    out: list[str] = []
    picks: list[int] = []
    votes: dict[int, str] = {}
    cards: list[Any] = []
    team: list[int] = []
    leader: int | None = None
    score = {"town": 0, "mafia": 0}
    rejected = 0
    expected: tuple[str, str] | None = None
    ev: Any
    for ev in events:
        if ev.kind == "elimination":
            out.append(f"event {ev.seq}: an elimination in a mission game")
        elif ev.kind == "team_pick":
            if ev.target in picks:
                out.append(f"event {ev.seq}: seat {ev.target} picked twice")
            picks.append(ev.target)
        elif ev.kind == "team_proposal":
            if leader is not None and ev.leader != (leader + 1) % n:
                out.append(f"event {ev.seq}: leader {ev.leader} after {leader} (the lead passes in seat order)")
            leader = ev.leader
            size = m.team_sizes[ev.round - 1]
            if sorted(picks) != ev.members or len(ev.members) != size:
                out.append(f"event {ev.seq}: team {ev.members} (picks {picks}) is not a team of {size}")
            team, picks, votes = list(ev.members), [], {}
        elif ev.kind == "team_vote":
            if ev.seat in votes:
                out.append(f"event {ev.seq}: seat {ev.seat} voted twice on one team")
            votes[ev.seat] = ev.choice or "reject"
            if ev.choice is None and not m.blank_rejects:
                out.append(f"event {ev.seq}: a blank team vote under rules without blank_rejects")
        elif ev.kind == "team_vote_tally":
            approvals = sum(1 for c in votes.values() if c == "approve")
            if set(votes) != set(range(n)) or ev.choices != votes or ev.approvals != approvals:
                out.append(f"event {ev.seq}: tally {ev.choices} does not count the votes {votes}")
            if ev.approved != (2 * approvals > n):
                out.append(f"event {ev.seq}: approved={ev.approved} with {approvals} of {n} approvals")
            rejected = 0 if ev.approved else rejected + 1
            if rejected >= m.rejections_to_lose:
                expected = ("mafia", "rejections")
        elif ev.kind == "mission_card":
            if ev.seat not in team:
                out.append(f"event {ev.seq}: seat {ev.seat} played a card off the team")
            if ev.choice == "fail" and teams[ev.seat] == "town":
                out.append(f"event {ev.seq}: a town player failed a mission")
            cards.append(ev)
        elif ev.kind == "mission_result":
            fails = sum(1 for c in cards if c.choice == "fail")
            if sorted(c.seat for c in cards) != team or ev.fails != fails:
                out.append(f"event {ev.seq}: result {ev.fails} fails of cards {[c.choice for c in cards]}")
            score["mafia" if fails >= m.fails_to_fail else "town"] += 1
            if (ev.successes, ev.failures) != (score["town"], score["mafia"]):
                out.append(f"event {ev.seq}: score {ev.successes}-{ev.failures} != {score['town']}-{score['mafia']}")
            cards, rejected = [], 0
            if score["mafia"] >= m.missions_to_win:
                expected = ("mafia", "missions")
            elif score["town"] >= m.missions_to_win:
                expected = ("town", "missions")
        elif ev.kind == "assassination":
            hit = roles[ev.target] == m.assassin_target
            if ev.hit != hit or roles[ev.seat] != m.assassin or teams[ev.target] != "town":
                out.append(f"event {ev.seq}: assassination of seat {ev.target} by seat {ev.seat} is wrong")
            if hit:
                expected = ("mafia", "assassination")
    end = events[-1] if events else None
    if not isinstance(end, GameEnd) or sum(isinstance(e, GameEnd) for e in events) != 1:
        out.append("game did not end with exactly one game_end event")
    elif (end.winner, end.reason) != expected:
        out.append(f"game_end {end.winner}/{end.reason} does not follow from the missions ({expected})")
    return out
