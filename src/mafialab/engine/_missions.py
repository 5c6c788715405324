"""Mission games (The Resistance, Avalon): the rounds of a rule set with ``mission`` rules.

A round is a mission: (discussion,) the leader picks a team one player at a time, everyone
votes approve or reject; an approved team's members secretly play success or fail. No night,
no elimination. The rules are the rule set's ``mission`` fields (:class:`mafialab.rules.MissionRules`).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from mafialab.engine._decisions import Action, Decision
from mafialab.engine._events import (
    PUBLIC,
    Assassination,
    MissionCard,
    MissionResult,
    PhaseStarted,
    TeamPick,
    TeamProposal,
    TeamVote,
    TeamVoteTally,
    only,
)

GameState = Any
"""The :class:`~mafialab.engine.GameState` playing the missions (its script helpers are used;
not imported, so that the state module alone imports this one)."""

_Script = Generator[list[Decision], dict[int, Action], None]

APPROVE, REJECT = "approve", "reject"
SUCCESS, FAIL = "success", "fail"


def play_missions(g: GameState) -> _Script:
    """The mission rounds of ``g`` until a team wins (ends the game through ``g._end``)."""
    m = g.rules.mission
    assert m is not None
    n = g.n_seats
    leader = 0 if m.first_leader == "seat" else g._rng["tie_break"].randrange(n)
    score = {"town": 0, "mafia": 0}
    for mission, size in enumerate(m.team_sizes, start=1):
        g.round, g._msg_index, g._phase = mission, 0, "day"
        g._emit(PhaseStarted, PUBLIC, alive=g.alive_seats())
        rejected = 0
        while True:
            for k in range(1, m.discussion_rounds + 1):
                for s in g._order():
                    yield from g._speak(s, discussion=k)
            team = yield from _propose(g, leader, size, rejected + 1)
            leader = (leader + 1) % n
            approved = yield from _team_vote(g, rejected + 1, rejected)
            if approved:
                break
            rejected += 1
            if rejected >= m.rejections_to_lose:
                g._end("mafia", "rejections")
        fails = yield from _mission_cards(g, team)
        failed = fails >= m.fails_to_fail
        score["mafia" if failed else "town"] += 1
        g._emit(
            MissionResult, PUBLIC, members=team, fails=fails, succeeded=not failed,
            successes=score["town"], failures=score["mafia"],
        )  # fmt: skip
        if score["mafia"] >= m.missions_to_win:
            g._end("mafia", "missions")
        if score["town"] >= m.missions_to_win:
            if m.assassin is not None:
                yield from _assassinate(g)
            g._end("town", "missions")
    g._end("town" if score["town"] > score["mafia"] else "mafia", "missions")  # pragma: no cover - rules forbid it


def _propose(
    g: GameState, leader: int, size: int, attempt: int
) -> Generator[list[Decision], dict[int, Action], list[int]]:
    """The leader's team, one pick per decision (each a public ``team_pick``)."""
    team: list[int] = []
    for _ in range(size):
        d = g._decision(leader, "propose", [s for s in range(g.n_seats) if s not in team])
        a = (yield [d])[d.id]
        assert a.target is not None
        team.append(a.target)
        g._emit(TeamPick, PUBLIC, seat=leader, target=a.target, attempt=attempt, decision=d.id, fallback=a.fallback)
    team.sort()
    g._emit(TeamProposal, PUBLIC, leader=leader, members=team, attempt=attempt)
    return team


def _team_vote(g: GameState, attempt: int, rejected: int) -> Generator[list[Decision], dict[int, Action], bool]:
    """Everyone approves or rejects the proposed team; ``True`` when it goes."""
    m = g.rules.mission
    assert m is not None
    public = m.team_vote == "public_sequential"

    def decision(s: int) -> Decision:
        return g._decision(
            s, "team_vote", choices=(APPROVE, REJECT), no_vote=m.blank_rejects,
            needs_text=public, max_chars=g.rules.day.statement_chars,
        )  # fmt: skip

    counted: dict[int, str] = {}
    groups = [[s] for s in range(g.n_seats)] if public else [list(range(g.n_seats))]
    for seats in groups:
        ds = [decision(s) for s in seats]
        ans = yield ds
        for d in ds:
            a = ans[d.id]
            counted[d.seat] = a.choice or REJECT
            g._emit(
                TeamVote, PUBLIC if public else only(d.seat), seat=d.seat, choice=a.choice, attempt=attempt,
                statement=a.text if public else None, index=g._next_index() if public else None,
                decision=d.id, fallback=a.fallback,
            )  # fmt: skip
    approvals = sum(1 for c in counted.values() if c == APPROVE)
    approved = 2 * approvals > g.n_seats
    g._emit(
        TeamVoteTally, PUBLIC, choices=counted, approvals=approvals, approved=approved, attempt=attempt,
        rejected_in_row=0 if approved else rejected + 1,
    )  # fmt: skip
    return approved


def _mission_cards(g: GameState, team: list[int]) -> Generator[list[Decision], dict[int, Action], int]:
    """The team's secret cards (town members may only succeed); the number of fails."""
    ds = [g._decision(s, "mission", choices=(SUCCESS, FAIL) if g.teams[s] == "mafia" else (SUCCESS,)) for s in team]
    ans = yield ds
    fails = 0
    for d in ds:
        a = ans[d.id]
        fails += a.choice == FAIL
        g._emit(MissionCard, only(d.seat), seat=d.seat, choice=a.choice, decision=d.id, fallback=a.fallback)
    return fails


def _assassinate(g: GameState) -> _Script:
    """The assassin names one town player; a hit on the target role wins for the hidden team."""
    m = g.rules.mission
    assert m is not None and m.assassin is not None
    assassin = next(s for s in range(g.n_seats) if g.roles[s] == m.assassin)
    d = g._decision(assassin, "assassinate", [s for s in range(g.n_seats) if g.teams[s] == "town"])
    a = (yield [d])[d.id]
    assert a.target is not None
    hit = g.roles[a.target] == m.assassin_target
    g._emit(Assassination, PUBLIC, seat=assassin, target=a.target, hit=hit, decision=d.id, fallback=a.fallback)
    if hit:
        g._end("mafia", "assassination")
