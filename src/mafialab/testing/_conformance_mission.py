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
    walk = _MissionWalk(rules, roles)
    for ev in events:
        step = walk.steps.get(ev.kind)
        if step is not None:
            step(ev)
    out = walk.out
    end = events[-1] if events else None
    if not isinstance(end, GameEnd) or sum(isinstance(e, GameEnd) for e in events) != 1:
        out.append("game did not end with exactly one game_end event")
    elif (end.winner, end.reason) != walk.expected:
        out.append(f"game_end {end.winner}/{end.reason} does not follow from the missions ({walk.expected})")
    return out


class _MissionWalk:
    """What :func:`check_mission_events` follows through one game, one step per event kind."""

    def __init__(self, rules: RuleSet, roles: Sequence[str]) -> None:
        assert rules.mission is not None
        self.m = rules.mission
        self.roles = roles
        self.teams = [rules.role(r).team for r in roles]
        self.n = len(roles)
        self.out: list[str] = []
        self.picks: list[int] = []
        self.votes: dict[int, str] = {}
        self.cards: list[Any] = []
        self.team: list[int] = []
        self.leader: int | None = None
        self.score = {"town": 0, "mafia": 0}
        self.rejected = 0
        self.expected: tuple[str, str] | None = None
        self.steps: dict[str, Any] = {
            "elimination": lambda ev: self.out.append(f"event {ev.seq}: an elimination in a mission game"),
            "team_pick": self.pick,
            "team_proposal": self.proposal,
            "team_vote": self.vote,
            "team_vote_tally": self.tally,
            "mission_card": self.card,
            "mission_result": self.result,
            "assassination": self.assassination,
        }

    def pick(self, ev: Any) -> None:
        if ev.target in self.picks:
            self.out.append(f"event {ev.seq}: seat {ev.target} picked twice")
        self.picks.append(ev.target)

    def proposal(self, ev: Any) -> None:
        if self.leader is not None and ev.leader != (self.leader + 1) % self.n:
            self.out.append(f"event {ev.seq}: leader {ev.leader} after {self.leader} (the lead passes in seat order)")
        self.leader = ev.leader
        size = self.m.team_sizes[ev.round - 1]
        if sorted(self.picks) != ev.members or len(ev.members) != size:
            self.out.append(f"event {ev.seq}: team {ev.members} (picks {self.picks}) is not a team of {size}")
        self.team, self.picks, self.votes = list(ev.members), [], {}

    def vote(self, ev: Any) -> None:
        if ev.seat in self.votes:
            self.out.append(f"event {ev.seq}: seat {ev.seat} voted twice on one team")
        self.votes[ev.seat] = ev.choice or "reject"
        if ev.choice is None and not self.m.blank_rejects:
            self.out.append(f"event {ev.seq}: a blank team vote under rules without blank_rejects")

    def tally(self, ev: Any) -> None:
        approvals = sum(1 for c in self.votes.values() if c == "approve")
        if set(self.votes) != set(range(self.n)) or ev.choices != self.votes or ev.approvals != approvals:
            self.out.append(f"event {ev.seq}: tally {ev.choices} does not count the votes {self.votes}")
        if ev.approved != (2 * approvals > self.n):
            self.out.append(f"event {ev.seq}: approved={ev.approved} with {approvals} of {self.n} approvals")
        self.rejected = 0 if ev.approved else self.rejected + 1
        if self.rejected >= self.m.rejections_to_lose:
            self.expected = ("mafia", "rejections")

    def card(self, ev: Any) -> None:
        if ev.seat not in self.team:
            self.out.append(f"event {ev.seq}: seat {ev.seat} played a card off the team")
        if ev.choice == "fail" and self.teams[ev.seat] == "town":
            self.out.append(f"event {ev.seq}: a town player failed a mission")
        self.cards.append(ev)

    def result(self, ev: Any) -> None:
        fails = sum(1 for c in self.cards if c.choice == "fail")
        if sorted(c.seat for c in self.cards) != self.team or ev.fails != fails:
            self.out.append(f"event {ev.seq}: result {ev.fails} fails of cards {[c.choice for c in self.cards]}")
        score = self.score
        score["mafia" if fails >= self.m.fails_to_fail else "town"] += 1
        if (ev.successes, ev.failures) != (score["town"], score["mafia"]):
            self.out.append(f"event {ev.seq}: score {ev.successes}-{ev.failures} != {score['town']}-{score['mafia']}")
        self.cards, self.rejected = [], 0
        if score["mafia"] >= self.m.missions_to_win:
            self.expected = ("mafia", "missions")
        elif score["town"] >= self.m.missions_to_win:
            self.expected = ("town", "missions")

    def assassination(self, ev: Any) -> None:
        hit = self.roles[ev.target] == self.m.assassin_target
        if ev.hit != hit or self.roles[ev.seat] != self.m.assassin or self.teams[ev.target] != "town":
            self.out.append(f"event {ev.seq}: assassination of seat {ev.target} by seat {ev.seat} is wrong")
        if hit:
            self.expected = ("mafia", "assassination")
