"""Answers of the scripted agent to the standard probes, derived from its belief state.

Every function here reads a *shadow* copy of a :class:`~mafialab.agents.ScriptedAgent` that
has observed the probe's view; none touches the agent that plays, nor any random stream. The
agent's module imports this one (never the other way round): the functions read the snapshot
through :class:`BeliefSnapshot`, and the suspicion scale's ends are defined here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Protocol

from mafialab._words import count
from mafialab.engine import PlayerView, Speech, Vote
from mafialab.rules import RuleSet

CLEARED = -100.0
"""Suspicion score of a seat known to be on the town side."""
KNOWN_HIDDEN = 100.0
"""Suspicion score of a seat known to be on the hidden team."""


class BeliefSnapshot(Protocol):
    """What the probe answers read of a scripted agent's belief snapshot (a ``ScriptedAgent``)."""

    seat: int
    rules: RuleSet
    suspicion: dict[int, float]
    _investigators: set[int]
    _mafia_word: str
    _patterns: tuple[re.Pattern[str], ...]

    def _town_pick(self, options: tuple[int, ...]) -> int: ...

    def _bandwagon(self, view: PlayerView, options: tuple[int, ...]) -> int: ...


def _main_role(rules: RuleSet, team: str) -> str:
    roles = [r for r in rules.roles if r.team == team]
    return max(roles, key=lambda r: r.count).name


def _town_share(rules: RuleSet) -> float:
    """Share of town seats holding the most common town role (its prior among town seats)."""
    town = [r for r in rules.roles if r.team == "town"]
    return max(r.count for r in town) / sum(r.count for r in town)


def mafia_probability(agent: BeliefSnapshot, view: PlayerView, seat: int) -> float | None:
    """The agent's probability (0-1) that ``seat`` is on the hidden team, or ``None`` if unknown.

    Town agents share the hidden players not yet known among the alive seats not yet known
    in proportion to ``exp(suspicion)`` (so the probabilities add up to the number of hidden
    players left; each is capped at 0.99); ``None`` while the seat's score is exactly 0 (no
    evidence about it yet). Known seats give 0 or 1. The hidden team knows every team: 1 for
    partners (and itself), 0 for the others.
    """
    s = agent.suspicion.get(seat, 0.0)
    if seat == agent.seat:
        return 1.0 if view.team == "mafia" else 0.0
    if view.team == "mafia":
        return 1.0 if seat in view.teammates else 0.0
    if s >= KNOWN_HIDDEN:
        return 1.0
    if s <= CLEARED:
        return 0.0
    if s == 0.0:
        return None
    n_hidden = sum(r.count for r in agent.rules.roles if r.team == "mafia")
    known_hidden = sum(1 for v in agent.suspicion.values() if v >= KNOWN_HIDDEN)
    left = max(0, n_hidden - known_hidden)
    weights = {
        t: math.exp(agent.suspicion.get(t, 0.0))
        for t in view.alive
        if t != agent.seat and CLEARED < agent.suspicion.get(t, 0.0) < KNOWN_HIDDEN
    }
    return min(0.99, left * weights[seat] / sum(weights.values()))


def role_assessment(agent: BeliefSnapshot, view: PlayerView) -> list[dict[str, Any]]:
    """``[{player, guessed_role, confidence, reason}]`` for every alive player, self included.

    Guess: the hidden team's (most common) role when the probability of
    :func:`mafia_probability` is at least 0.5, else the most common town role (the
    investigator role for an unsuspected seat that claimed investigations); confidence is
    the probability of the guessed side in percent (for a plain town guess, times the
    role's share of town seats); ``Unknown`` with confidence 0 while there is no evidence.
    """
    rules = agent.rules
    mafia_role, town_role = _main_role(rules, "mafia"), _main_role(rules, "town")
    inv = rules.role_with("investigate")
    share = _town_share(rules)
    out = []
    for t in view.alive:
        name = view.names[t]
        if t == agent.seat:
            out.append({"player": name, "guessed_role": view.role, "confidence": 100, "reason": "This is my own role."})
            continue
        p = mafia_probability(agent, view, t)
        s = agent.suspicion.get(t, 0.0)
        if p is None:
            out.append({"player": name, "guessed_role": "Unknown", "confidence": 0, "reason": "No evidence yet."})
            continue
        if p > 0.5:
            role = mafia_role
            conf = p
            if view.team == "mafia":
                reason = "My teammate."
            elif s >= KNOWN_HIDDEN:
                reason = "Shown to be on the hidden team."
            else:
                reason = f"Suspicion score {s:+.1f} from accusations, claims and votes."
        elif inv is not None and t in agent._investigators and s <= 0:
            role, conf, reason = inv.name, (1 - p) * 0.8, "Claimed investigation results and seems credible."
        else:
            role = town_role
            conf = (1 - p) * share
            if view.team == "mafia":
                reason = "Not on my team."
            elif s <= CLEARED:
                reason = "Cleared by an investigation or by the night's kill."
            else:
                reason = f"Suspicion score {s:+.1f}; probably innocent."
        out.append({"player": name, "guessed_role": role, "confidence": round(100 * conf), "reason": reason})
    return out


def suspicion_ranking(agent: BeliefSnapshot, view: PlayerView) -> list[dict[str, Any]]:
    """``[{player, score}]`` of alive players, most suspected first (score 0-100).

    Town: ordered by suspicion (ties: lower seat first, the same rule its vote uses), score
    = :func:`mafia_probability` in percent (the prior when there is no evidence). Hidden
    team: ordered by its day-vote preference (the town player the table pushes most first),
    partners and itself last with score 0 -- its stance, since it knows every team.
    """
    alive = list(view.alive)
    if view.team == "mafia":
        ours = set(view.teammates) | {agent.seat}
        others = [t for t in alive if t not in ours]
        order: list[int] = []
        pool = tuple(others)
        while pool:
            pick = agent._bandwagon(view, pool)
            order.append(pick)
            pool = tuple(t for t in pool if t != pick)
        order += sorted(t for t in alive if t in ours)
        n = len(others)
        return [
            {"player": view.names[t], "score": 0 if t in ours else round(100 * (n - i) / (n + 1))}
            for i, t in enumerate(order)
        ]
    order = sorted(alive, key=lambda t: (-agent.suspicion.get(t, 0.0), t))
    out = []
    for t in order:
        p = mafia_probability(agent, view, t)
        if p is None:
            rules = agent.rules
            n_hidden = sum(r.count for r in rules.roles if r.team == "mafia")
            p = n_hidden / max(1, len(alive) - 1)
        out.append({"player": view.names[t], "score": round(100 * min(1.0, p))})
    return out


def _pressure(agent: BeliefSnapshot, view: PlayerView) -> Counter[int]:
    """Public pressure of each seat against the agent (accusations, doubts, claims, votes)."""
    pressure: Counter[int] = Counter()
    me = view.name
    claim, accuse, doubt = agent._patterns
    for ev in view.events:
        if isinstance(ev, Speech) and ev.seat != agent.seat:
            for m in claim.finditer(ev.text):
                if m.group(1) == me:
                    pressure[ev.seat] += 3 if m.group(2) == agent._mafia_word else -2
            pressure[ev.seat] += 2 * sum(m.group(1) == me for m in accuse.finditer(ev.text))
            pressure[ev.seat] += sum(m.group(1) == me for m in doubt.finditer(ev.text))
        elif isinstance(ev, Vote) and ev.seat != agent.seat and ev.target == agent.seat:
            pressure[ev.seat] += 1
    return pressure


def social_map(agent: BeliefSnapshot, view: PlayerView) -> dict[str, Any]:
    """``{toward_me: [{player, attitude, confidence, reason}]}`` for every other alive player.

    Attitude from public pressure against the agent (a direct accusation counts 2, a doubt
    1, a public vote 1, a claimed check 3, a claimed clearing -2): ``suspects`` at 2 or more,
    ``trusts`` below 0 or for a known partner, else ``neutral``.
    """
    pressure = _pressure(agent, view)
    items = []
    for t in view.alive:
        if t == agent.seat:
            continue
        p = pressure.get(t, 0)
        if t in view.teammates:
            att, conf, reason = "trusts", 100, "My teammate."
        elif p >= 2:
            att, conf, reason = "suspects", min(95, 50 + 10 * p), f"Pushed against me publicly (weight {p})."
        elif p < 0:
            att, conf, reason = "trusts", min(95, 50 + 10 * -p), "Spoke for my innocence."
        else:
            att, conf = "neutral", 50 if p == 0 else 55
            reason = "No sign either way." if p == 0 else "Some doubt about me, nothing firm."
        items.append({"player": view.names[t], "attitude": att, "confidence": conf, "reason": reason})
    return {"toward_me": items}


def personality_profile(agent: BeliefSnapshot, view: PlayerView) -> list[dict[str, Any]]:
    """``[{player, O, C, E, A, N, summary}]`` for every other alive player, from behaviour.

    E rises with words per message (20 + 4 per word, capped at 100); A falls with the share
    of messages that accuse or doubt someone (70 - 40 x share); O, C and N stay at 50 (no
    behavioural evidence in templated speech).
    """
    _, accuse, doubt = agent._patterns
    words: Counter[int] = Counter()
    msgs: Counter[int] = Counter()
    pushes: Counter[int] = Counter()
    for ev in view.events:
        if isinstance(ev, Speech):
            msgs[ev.seat] += 1
            words[ev.seat] += len(ev.text.split())
            if accuse.search(ev.text) or doubt.search(ev.text):
                pushes[ev.seat] += 1
    out = []
    for t in view.alive:
        if t == agent.seat:
            continue
        n = msgs.get(t, 0)
        wpm = words[t] / n if n else 0.0
        share = pushes[t] / n if n else 0.0
        e = min(100, round(20 + 4 * wpm)) if n else 50
        a = round(70 - 40 * share) if n else 50
        summary = (
            f"{count(n, 'message')}, about {wpm:.0f} words each, pushing on someone in {100 * share:.0f}% of them."
            if n
            else "Has not spoken yet."
        )
        out.append({"player": view.names[t], "O": 50, "C": 50, "E": e, "A": a, "N": 50, "summary": summary})
    return out


def planned_action(agent: BeliefSnapshot, view: PlayerView) -> dict[str, Any]:
    """``{action, target, reasoning}``: the day vote the agent would cast on this information.

    In a mission game: ``approve`` or ``reject`` (its planned team vote) and its top suspect.
    """
    others = tuple(t for t in view.alive if t != agent.seat)
    if not others:
        return {"action": "wait", "target": "", "reasoning": "Nobody else is alive."}
    if agent.rules.mission is not None:  # a mission game: the planned team vote
        t = max(others, key=lambda s: (agent.suspicion.get(s, 0.0), -s))
        act = "approve" if view.team == "mafia" or agent.suspicion.get(t, 0.0) <= 0 else "reject"
        return {"action": act, "target": view.names[t], "reasoning": "A team with my top suspect on it gets a reject."}
    if view.team == "mafia":
        t = agent._bandwagon(view, others)
        why = "Push the table towards the town player it already suspects most."
    else:
        t = agent._town_pick(others)
        s = agent.suspicion.get(t, 0.0)
        why = f"{view.names[t]} is my top suspect (suspicion {s:+.1f})." if s > 0 else "No firm suspect; lowest seat."
    return {"action": "vote", "target": view.names[t], "reasoning": why}


def role_beliefs(agent: BeliefSnapshot, view: PlayerView) -> dict[str, Any]:
    """MafiaScope's legacy shape ``{name: {role, confidence}}`` for every alive player."""
    return {
        a["player"]: {"role": a["guessed_role"], "confidence": a["confidence"]} for a in role_assessment(agent, view)
    }


ANSWERS = {
    "role_assessment": role_assessment,
    "suspicion_ranking": suspicion_ranking,
    "social_map": social_map,
    "personality_profile": personality_profile,
    "planned_action": planned_action,
    "role_beliefs": role_beliefs,
}
"""Probe ids a scripted agent answers, and the function that builds each answer."""
