"""Rendering of an observer's visible history to text (one line per event)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from mafialab.engine import (
    Elimination,
    Event,
    GameEnd,
    InvestigationResult,
    KillChosen,
    MafiaChat,
    NightAction,
    NightResult,
    PhaseStarted,
    RoleAssigned,
    SeatingEvent,
    Speech,
    TeamRevealed,
    Vote,
    VoteTally,
    visible_events,
)
from mafialab.rules import RuleSet

RENDER_VERSION = 1
"""Version of the event-to-text rendering; recorded in the benchmark header."""


def quote(text: str) -> str:
    """A player's text as one JSON string literal (newlines and quotes escaped).

    Model-generated text is untrusted: quoting keeps it on one line, so it cannot start a
    fake event line or a new prompt section.
    """
    return json.dumps(text, ensure_ascii=False)


def setting_text(rules: RuleSet) -> str:
    """A short description of the game's setting (players, roles, teams, win conditions)."""
    lex = rules.lexicon
    roles = ", ".join(f"{r.count} {r.name}" for r in rules.roles)
    hidden = ", ".join(r.name for r in rules.roles if r.team == "mafia")
    abil = {"protect": "protects a player from the night kill", "investigate": "learns the team of a player"}
    powers = "; ".join(
        f"the {r.name} {abil[r.ability]} each night" for r in rules.roles if r.ability in abil and r.team == "town"
    )
    reveal = "A dead player's role is announced." if rules.reveal_role_on_death else "Roles are not announced on death."
    return (
        f"{rules.n_seats} players: {roles}. The {lex.mafia_team} ({hidden}) know each other and {lex.kill} one player "
        f"each night; the others are the {lex.town_team}."
        + (f" Night powers: {powers}." if powers else "")
        + f" Each day everyone discusses, then votes to eliminate one player. {reveal} The {lex.town_team} win when "
        f"every {lex.mafia_team} player is eliminated; the {lex.mafia_team} win when they equal the rest in number."
    )


def render_history(events: Sequence[Event], seat: int, rules: RuleSet) -> tuple[list[str], int]:
    """Render what ``seat`` could see in ``events``.

    Visibility is decided only by :func:`mafialab.engine.visible_events` (the engine's rule);
    this function renders what that returns and nothing else.

    Args:
        events: Events of the game before the message (in order).
        seat: The observer.
        rules: The game's rule set (for display words).

    Returns:
        ``(lines, preamble)``: one line per visible event (empty lines for events that render to
        nothing are skipped) and how many leading lines are the observer's identity (seating,
        own role, team) rather than game history.
    """
    visible = visible_events(events, seat)
    lex = rules.lexicon
    names: list[str] = []

    def nm(s: int | None) -> str:
        return names[s] if s is not None and 0 <= s < len(names) else f"seat {s}"

    def team_word(t: str) -> str:
        if t in ("mafia", "town"):
            return lex.team_name(t)  # type: ignore[arg-type]
        return t

    lines: list[str] = []
    preamble = 0
    in_preamble = True
    for ev in visible:
        line = ""
        if isinstance(ev, SeatingEvent):
            names = list(ev.names)
            line = f"Players, in seat order: {', '.join(names)}."
        elif isinstance(ev, RoleAssigned):
            if ev.seat == seat:
                line = f"You are {nm(seat)}. Your role: {ev.role} ({team_word(ev.team)} team)."
            else:
                line = f"{nm(ev.seat)}'s role: {ev.role} ({team_word(ev.team)} team)."
        elif isinstance(ev, TeamRevealed):
            line = f"Your team ({team_word(ev.team)}): {', '.join(nm(m) for m in ev.members)}."
        elif isinstance(ev, PhaseStarted):
            title = {"intro": "Introductions", "night": f"Night {ev.round}", "day": f"Day {ev.round}"}.get(
                ev.phase, ev.phase
            )
            line = f"--- {title} --- (alive: {', '.join(nm(s) for s in ev.alive)})"
        elif isinstance(ev, Speech):
            where = "intro" if ev.phase == "intro" else f"day {ev.round}, message {ev.index}"
            line = f"[{where}] {nm(ev.seat)}: {quote(ev.text)}"
        elif isinstance(ev, MafiaChat):
            line = f"[night {ev.round}, {lex.mafia_team} chat] {nm(ev.seat)}: {quote(ev.text)}"
        elif isinstance(ev, NightAction):
            verb = {"kill": lex.kill, "protect": "protect", "investigate": "investigate"}[ev.ability]
            who = "You" if ev.seat == seat else nm(ev.seat)
            line = f"[night {ev.round}] {who} chose to {verb} {nm(ev.target)}."
        elif isinstance(ev, InvestigationResult):
            line = f"[night {ev.round}] Investigation result: {nm(ev.target)} is {team_word(ev.result)}."
        elif isinstance(ev, KillChosen):
            line = f"[night {ev.round}] The {lex.mafia_team} chose to {lex.kill} {nm(ev.target)}."
        elif isinstance(ev, NightResult):
            if ev.killed is not None:
                line = f"[night {ev.round}] {nm(ev.killed)} was killed during the night."
            elif ev.saved is not None:
                line = f"[night {ev.round}] {nm(ev.saved)} was attacked but saved."
            else:
                line = f"[night {ev.round}] Nobody died during the night."
        elif isinstance(ev, Vote):
            stage = {"vote": "votes for", "nomination": "nominates", "runoff": "votes in the runoff for"}[ev.stage]
            whom = nm(ev.target) if ev.target is not None else "nobody (no vote)"
            line = f"[day {ev.round}] {nm(ev.seat)} {stage} {whom}"
            line += f": {quote(ev.statement)}" if ev.statement else "."
        elif isinstance(ev, VoteTally):
            votes = ", ".join(f"{nm(v)}->{nm(t)}" for v, t in sorted(ev.votes.items()))
            counts = ", ".join(f"{nm(t)} {c}" for t, c in sorted(ev.tally.items(), key=lambda kv: (-kv[1], kv[0])))
            outcome = f"{nm(ev.outcome)} is out" if ev.outcome is not None else ("tie" if ev.tie else "no one is out")
            shown = f"{votes} ({counts})" if votes else f"votes received: {counts}"
            line = f"[day {ev.round}] {ev.stage.capitalize()} result: {shown}; {outcome}."
        elif isinstance(ev, Elimination):
            how = "eliminated by the vote" if ev.cause == "vote" else "dead"
            line = f"[{ev.phase} {ev.round}] {nm(ev.seat)} is {how}" + (f"; role: {ev.role}." if ev.role else ".")
        elif isinstance(ev, GameEnd):
            line = f"Game over: the {lex.team_name(ev.winner)} win."
        elif ev.kind == "imported":  # records an importer kept without an engine event of their own
            line = _imported_line(ev, nm)
        if not isinstance(ev, SeatingEvent | RoleAssigned | TeamRevealed):
            in_preamble = False
        if line:
            lines.append(line)
            if in_preamble:
                preamble += 1
    return lines, preamble


def _imported_line(ev: object, nm: Callable[[int | None], str]) -> str:
    """One line for an importer's ``imported`` event (a failed turn or a foreign record)."""
    note = str(getattr(ev, "note", ""))
    seat = getattr(ev, "seat", None)
    where = f"[{getattr(ev, 'phase', '')} {getattr(ev, 'round', '')}]"
    who = nm(seat) if seat is not None else "(game)"
    if note in ("transport_error", "empty_response"):
        return f"{where} {who}: (no message: the turn failed)"
    text = getattr(ev, "text", None)
    kind = str(getattr(ev, "source_kind", "record"))
    return f"{where} {who} ({kind}): {quote(text)}" if text else ""
