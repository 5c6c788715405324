"""The one function that decides what a player sees."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from mafialab.engine._events import Event, RoleAssigned, SeatingEvent, TeamRevealed
from mafialab.rules import Team


def team_of(events: Sequence[Event], seat: int) -> Team | None:
    """The team of ``seat`` as stated by its own ``role_assigned`` event, or ``None``."""
    for ev in events:
        if isinstance(ev, RoleAssigned) and ev.seat == seat:
            return ev.team
    return None


def can_see(event: Event, seat: int, seat_team: Team | None) -> bool:
    """Whether ``seat`` (of team ``seat_team``) may see ``event``."""
    vis = event.visibility
    return vis.public or seat in vis.seats or (seat_team is not None and seat_team in vis.teams)


def visible_events(events: Sequence[Event], seat: int) -> list[Event]:
    """The events ``seat`` may see, in order.

    This is the only visibility rule in mafialab: agents' prompts, probes, the belief-shift
    benchmark and the viewer all go through it.
    """
    t = team_of(events, seat)
    return [ev for ev in events if can_see(ev, seat, t)]


@dataclass(frozen=True)
class PlayerView:
    """What one player knows: its identity and the events it may see.

    Attributes:
        seat: The player's seat.
        name: Its seat name.
        role: Its own role name (from its ``role_assigned`` event).
        team: Its team id.
        names: Seat names of every seat (public seating).
        teammates: Seats of its own hidden team, if it was told them (else empty).
        alive: Seats alive as far as it knows (public deaths applied).
        events: The visible events, in order.
    """

    seat: int
    name: str
    role: str
    team: Team
    names: tuple[str, ...]
    teammates: tuple[int, ...]
    alive: tuple[int, ...]
    events: tuple[Event, ...] = field(repr=False)


def player_view(events: Sequence[Event], seat: int) -> PlayerView:
    """Build ``seat``'s view of ``events`` (see :func:`visible_events`).

    Raises:
        ValueError: If the events hold no seating or no role for ``seat``.
    """
    vis = visible_events(events, seat)
    names: tuple[str, ...] = ()
    role: RoleAssigned | None = None
    mates: tuple[int, ...] = ()
    dead: set[int] = set()
    for ev in vis:
        if isinstance(ev, SeatingEvent):
            names = tuple(ev.names)
        elif isinstance(ev, RoleAssigned) and ev.seat == seat:
            role = ev
        elif isinstance(ev, TeamRevealed) and (role is None or ev.team == role.team):
            # a mission game's Merlin is told the hidden team too: those are not its teammates
            mates = tuple(m for m in ev.members if m != seat)
        elif ev.kind == "elimination":
            dead.add(ev.seat)
    if not names or role is None:
        raise ValueError(f"no seating or role for seat {seat} in the events")
    alive = tuple(s for s in range(len(names)) if s not in dead)
    return PlayerView(
        seat=seat,
        name=names[seat],
        role=role.role,
        team=role.team,
        names=names,
        teammates=mates,
        alive=alive,
        events=tuple(vis),
    )
