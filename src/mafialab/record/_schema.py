"""The ``game.jsonl`` schema: a header record, then engine events."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from mafialab.engine import Event
from mafialab.rules import RuleSet, Team

SCHEMA_VERSION = 1
"""Version of the game-log schema written by this mafialab. Bumped on incompatible change."""


class SeatInfo(BaseModel):
    """One seat of the roster (moderator's knowledge; never shown to players).

    Attributes:
        seat: Seat number (from 0).
        name: Seat name.
        role: True role name.
        team: True team id.
        agent: Agent spec or model string that played the seat.
        persona: Optional persona fields (e.g. Big-Five ``{"O": 0-100, ...}``).
    """

    model_config = ConfigDict(extra="forbid")

    seat: int = Field(ge=0)
    name: str
    role: str
    team: Team
    agent: str
    persona: dict[str, Any] | None = None


class GameHeader(BaseModel):
    """First record of ``game.jsonl``.

    Attributes:
        kind: Always ``"game_start"``.
        seq: Always 0.
        schema_version: :data:`SCHEMA_VERSION` of the writer.
        game_id: Directory name of the game.
        rules_id: Versioned rule-set id (``werewolf7-v1``).
        rules: The complete rule set, so a log replays without the code that wrote it.
        seed: Game seed.
        roster: Every seat with role, team and agent.
        software: ``mafialab <version>``.
        source: Where the game came from: ``"mafialab"`` or an importer (``"mafiascope"``).
        meta: Free-form extras (importer provenance, fork origin, run options).
        ts: Wall-clock creation time (a clock field).
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["game_start"] = "game_start"
    seq: Literal[0] = 0
    schema_version: int = SCHEMA_VERSION
    game_id: str
    rules_id: str
    rules: RuleSet
    seed: int
    roster: list[SeatInfo]
    software: str
    source: str = "mafialab"
    meta: dict[str, Any] = Field(default_factory=dict)
    ts: float | None = None


class GameStatus(BaseModel):
    """A note appended after the events (e.g. the integrity gate marking a game degraded).

    Attributes:
        kind: Always ``"game_status"``.
        seq: Sequence number after the last event.
        degraded: Whether the game failed the integrity gate.
        answered_share: Share of player decisions the agents answered themselves (0-1).
        decisions: Number of player decisions.
        fallbacks: Number of decisions settled by a fallback.
        detail: Free-form extras.
        ts: Clock field.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["game_status"] = "game_status"
    seq: int = Field(ge=1)
    degraded: bool = False
    answered_share: float = Field(default=1.0, ge=0.0, le=1.0)
    decisions: int = 0
    fallbacks: int = 0
    detail: dict[str, Any] = Field(default_factory=dict)
    ts: float | None = None


EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
"""Validates one event record (a dict or JSON) into its typed event class."""

CLOCK_FIELDS = frozenset({"ts"})
"""Fields that hold wall-clock values and are ignored when comparing logs."""
