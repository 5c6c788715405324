"""Rendering of an observer's visible history to text (one line per event)."""

from __future__ import annotations

from collections.abc import Sequence

from mafialab.engine import Event, RoleAssigned, SeatingEvent, TeamRevealed, visible_events
from mafialab.render import EventRenderer, load_event_templates
from mafialab.rules import RuleSet

RENDER_VERSION = 1
"""Version of the event-to-text rendering; recorded in the benchmark header."""


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
    this function renders what that returns and nothing else, with the ``history`` style of
    the built-in event templates (:func:`mafialab.render.load_event_templates`).

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
    names = next((list(ev.names) for ev in visible if isinstance(ev, SeatingEvent)), [])
    renderer = EventRenderer(load_event_templates().history, rules.lexicon, names, seat)
    lines: list[str] = []
    preamble = 0
    in_preamble = True
    for ev in visible:
        line = renderer.render(ev)
        if not isinstance(ev, SeatingEvent | RoleAssigned | TeamRevealed):
            in_preamble = False
        if line is not None and line.text:
            lines.append(line.text)
            if in_preamble:
                preamble += 1
    return lines, preamble
