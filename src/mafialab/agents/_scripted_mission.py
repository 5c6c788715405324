"""The scripted agent's mission-game decisions (team picks, team votes, mission cards, the assassination).

Town: a failed mission makes its members suspect (more the smaller the team), a success
clears them a little; it proposes itself and the players it trusts most, approves a team
with no suspect on it (any team once one more rejection would lose the game), and always
succeeds. The hidden team puts itself on teams, approves teams that hold one of its own,
fails every mission it is on and, as the assassin, names the town player who pushed
hardest against it.
"""

from __future__ import annotations

from typing import Any

from mafialab.agents._scripted_probe import KNOWN_HIDDEN
from mafialab.engine import Action, Decision, Event, PlayerView

ScriptedAgent = Any
"""The :class:`~mafialab.agents.ScriptedAgent` deciding (not imported: it imports this module)."""

MISSION_KINDS = ("propose", "team_vote", "mission", "assassinate")
"""Decision kinds of mission games."""


def observe_mission(agent: ScriptedAgent, ev: Event, view: PlayerView) -> None:
    """Update ``agent``'s suspicion from a mission-game event it sees."""
    if view.team == "mafia":
        return
    if ev.kind == "team_revealed":  # told the hidden team without being on it (Merlin)
        for m in ev.members:  # type: ignore[union-attr]
            agent._set(m, KNOWN_HIDDEN)
    elif ev.kind == "mission_result":
        fails: int = ev.fails  # type: ignore[union-attr]
        others = [s for s in ev.members if s != agent.seat]  # type: ignore[union-attr]
        for s in others:
            agent._bump(s, 2.0 * fails / max(1, len(others)) if fails else -0.5)


def _proposal(view: PlayerView) -> Any:
    return next((e for e in reversed(view.events) if e.kind == "team_proposal"), None)


def _rejected_in_row(view: PlayerView) -> int:
    last = next((e for e in reversed(view.events) if e.kind == "team_vote_tally"), None)
    if last is None or last.round != view.events[-1].round:
        return 0
    return int(last.rejected_in_row)  # type: ignore[union-attr]


def mission_decide(agent: ScriptedAgent, decision: Decision, view: PlayerView) -> Action:
    """The scripted answer to a mission-game decision (see the module docstring)."""
    k, opts, sus = decision.kind, decision.options, agent.suspicion
    ours = set(view.teammates) | {agent.seat} if view.team == "mafia" else {agent.seat}
    target: int | None = None
    choice: str | None = None
    text: str | None = None
    if k == "propose":
        if view.team == "mafia":
            target = min(opts, key=lambda s: (s != agent.seat, s in ours, s))
        else:
            target = min(opts, key=lambda s: (s != agent.seat, sus.get(s, 0.0), s))
    elif k == "team_vote":
        prop = _proposal(view)
        team = set(prop.members) if prop is not None else set()
        m = agent.rules.mission
        last_chance = m is not None and _rejected_in_row(view) >= m.rejections_to_lose - 1
        if view.team == "mafia":
            ok = bool(team & ours)
        else:
            ok = last_chance or all(sus.get(s, 0.0) < 1.0 for s in team if s != agent.seat)
        choice = "approve" if ok else "reject"
        if decision.needs_text:
            text = f"I {choice} this team."
    elif k == "mission":
        choice = "fail" if "fail" in decision.choices else "success"
    elif k == "assassinate":
        target = max(opts, key=lambda s: (agent._accused_us.get(s, 0), -s))
    return Action(decision=decision.id, seat=decision.seat, target=target, text=text, choice=choice)
