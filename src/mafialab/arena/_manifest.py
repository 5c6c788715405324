"""The season manifest (``season.json``): the plan of a season and its progress, the resume point.

Read by the runner (:mod:`mafialab.arena._season`) and the leaderboard
(:mod:`mafialab.arena._leaderboard`), which the runner calls when a season ends.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mafialab.arena._config import SeasonConfig
from mafialab.arena._deals import plan_games
from mafialab.record import write_atomic
from mafialab.rules import Team

MANIFEST_FILE = "season.json"
"""The season manifest inside a season directory (rewritten atomically)."""
GAMES_DIR = "games"
DISCARDED_DIR = "discarded"
INCOMPLETE_DIR = "incomplete"


class SeasonError(RuntimeError):
    """A season cannot start or finish (integrity gate, existing directory, failed games)."""


class Attempt(BaseModel):
    """A game of a slot that does not count.

    Either discarded by the integrity gate, or left incomplete by a crash and rerun.

    Attributes:
        game_id: The game's id.
        seed: Its seed.
        outcome: ``discarded`` or ``incomplete``.
        answered_share: Share of decisions answered by the agents (discarded games).
        path: Where its files were moved, relative to the season directory.
        reason: Why.
    """

    model_config = ConfigDict(extra="forbid")

    game_id: str
    seed: int
    outcome: Literal["discarded", "incomplete"]
    answered_share: float | None = None
    path: str
    reason: str


class Slot(BaseModel):
    """One counted game of the season and its history.

    Attributes:
        slot: Game number ``j`` (0-based).
        seed: Seed of the current game (``S + j``, or ``S + K + r`` for the r-th replacement).
        seating: Roster entry index per seat.
        game_id: Current game id (directory under ``games/``).
        status: ``pending`` (not finished), ``played`` (finished, not judged yet), ``judged``.
        winner: Winning team once played.
        rounds: Rounds played.
        answered_share: Share of player decisions the agents answered (no fallback).
        degraded: The game fell below the integrity threshold but was kept because the
            replacement budget was spent (excluded from the leaderboard).
        quality: The quality signals that fired in the counted game, one line each
            (:func:`mafialab.analysis.quality_lines`; a warning unless the season file sets
            a quality threshold, :class:`~mafialab.arena.Limits`).
        history: Earlier attempts (discarded or incomplete), oldest first.
        roles: Role per seat when it is not the seed's deal (``deals.mode: role_rotation``),
            else ``None``.
        names: Table name per seat when ``deals.shuffle_names`` is on, else ``None`` (the rule
            set's ``seat_names``).
        block: Deal block of the slot (``deals``; the slot number for seeded deals).
        speaking_order: Seats in the order they spoke in the first day's opening discussion
            round of the counted game (also in its log), once played.
    """

    model_config = ConfigDict(extra="forbid")

    slot: int
    seed: int
    seating: list[int]
    game_id: str
    roles: list[str] | None = None
    names: list[str] | None = None
    block: int | None = None
    speaking_order: list[int] | None = None
    status: Literal["pending", "played", "judged"] = "pending"
    winner: Team | None = None
    rounds: int | None = None
    answered_share: float | None = None
    degraded: bool = False
    quality: list[str] = Field(default_factory=list)
    history: list[Attempt] = Field(default_factory=list)


class SeasonManifest(BaseModel):
    """``season.json``: the season's config, plan and progress (the resume point).

    Attributes:
        kind: Always ``season_manifest``.
        version: Manifest format version.
        config: The validated season config.
        rules_id: Versioned rule-set id.
        slots: One per counted game.
        replacements: Replacement games allocated so far.
        preflight: Model string → ``ok`` for each backend checked before the start.
        started: Unix time of the start.
        updated: Unix time of the last write.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["season_manifest"] = "season_manifest"
    version: int = 1
    config: SeasonConfig
    rules_id: str
    slots: list[Slot]
    replacements: int = 0
    preflight: dict[str, str] = Field(default_factory=dict)
    started: float = 0.0
    updated: float = 0.0


def game_id_for(season: str, slot: int, seed: int) -> str:
    """``<season>-g<slot:03d>-s<seed>``."""
    return f"{season}-g{slot:03d}-s{seed}"


def save_manifest(out: Path, manifest: SeasonManifest) -> None:
    """Write ``season.json`` atomically (temporary file, fsync, rename)."""
    manifest.updated = round(time.time(), 3)
    write_atomic(Path(out) / MANIFEST_FILE, manifest.model_dump_json(indent=1))


def load_manifest(out: Path) -> SeasonManifest:
    """Read ``season.json`` of a season directory.

    Raises:
        SeasonError: Missing or invalid manifest.
    """
    path = Path(out) / MANIFEST_FILE
    if not path.is_file():
        raise SeasonError(f"{out}: no {MANIFEST_FILE}; not a season directory (start one with `season run`)")
    try:
        return SeasonManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise SeasonError(f"{path}: invalid season manifest: {err}") from None


def plan_season(config: SeasonConfig) -> SeasonManifest:
    """The manifest of a new season: seeds, the balanced seating plan and its ``deals`` (``_deals.plan_games``)."""
    rules = config.load_rules()
    slots = [
        Slot(
            slot=j,
            seed=g.seed,
            seating=g.seating,
            game_id=game_id_for(config.name, j, g.seed),
            roles=g.roles,
            names=g.names,
            block=g.block,
        )
        for j, g in enumerate(plan_games(config))
    ]
    return SeasonManifest(config=config, rules_id=rules.id, slots=slots, started=round(time.time(), 3))
