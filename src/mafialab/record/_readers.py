"""The one streaming reader per file kind beside ``game.jsonl``: probes, calls, verdicts.

Each reader is a generator over one game's file: records come one at a time (a corpus is
never held in memory here), migrated to the current schema, with damage reported the same
way everywhere (``file:line: why`` to ``problems`` and as a logged warning): unreadable lines
(a torn last line), lines repeated word for word, and records of another game. A record
whose ``game_id`` names another game than the header's is *foreign* (a ``probes.jsonl``
copied from another game's folder, say): it is skipped and named, never yielded, so it is
never scored. A file whose every record is foreign gives nothing, and a last line says the
file is left out. An empty ``game_id`` (calls written before mafialab filled it in) is not
foreign.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mafialab._words import count
from mafialab.config import validation_message
from mafialab.record._io import GAME_FILE, iter_jsonl
from mafialab.record._migrate import check_version, record_version, upgrade
from mafialab.record._schema import CALLS_FILE, PROBES_FILE, SCHEMA_VERSION, VERDICTS_FILE, Verdict

log = logging.getLogger(__name__)

FOREIGN_SHOWN = 3
"""Foreign records of one file named line by line; the rest are counted in one closing line."""


def _header_beside(game_dir: Path) -> tuple[int, str | None]:
    """``(schema version, game id)`` of the ``game.jsonl`` header in ``game_dir``.

    :data:`~mafialab.record.SCHEMA_VERSION` and ``None`` when there is no readable header on
    the first line (a probes or calls file on its own is taken to be current, of no known game).

    Raises:
        LogVersionError: The header's ``schema_version`` is not a positive integer.
    """
    file = game_dir / GAME_FILE
    if not file.is_file():
        return SCHEMA_VERSION, None
    for n, obj in iter_jsonl(file, [], warn=False):
        if obj.get("kind") == "game_start":
            gid = obj.get("game_id")
            return record_version(obj, f"{file}:{n}"), gid if isinstance(gid, str) else None
        break
    return SCHEMA_VERSION, None


class _Foreign:
    """Counts and names the foreign records of one file (see the module docstring)."""

    def __init__(self, path: Path, game_id: str | None, problems: list[str] | None, warn: bool) -> None:
        self.path = path
        self.game_id = game_id
        self.problems = problems
        self.warn = warn
        self.kept = 0
        self.foreign = 0
        self.others: dict[str, int] = {}  # other game id -> records

    def say(self, msg: str) -> None:
        if self.warn:
            log.warning(msg)
        if self.problems is not None:
            self.problems.append(msg)

    def check(self, n: int, rec: dict[str, Any]) -> bool:
        """Whether ``rec`` (line ``n``) belongs to this game; a foreign one is named (the first few)."""
        other = rec.get("game_id")
        if not isinstance(other, str) or not other or self.game_id is None or other == self.game_id:
            self.kept += 1
            return True
        self.foreign += 1
        self.others[other] = self.others.get(other, 0) + 1
        if self.foreign <= FOREIGN_SHOWN:
            self.say(f"{self.path}:{n}: record of game {other!r}, not of this game {self.game_id!r}; skipped")
        return False

    def close(self) -> None:
        """Say how many foreign records there were beyond those named, and whether the file is left out."""
        if not self.foreign:
            return
        ids = ", ".join(repr(g) for g in self.others)
        games = "game" if len(self.others) == 1 else "games"
        if not self.kept:
            self.say(
                f"{self.path}: every record ({self.foreign:,}) is of {games} {ids}, not of this game "
                f"{self.game_id!r}: the file is left out"
            )
        elif self.foreign > FOREIGN_SHOWN:
            self.say(
                f"{self.path}: {count(self.foreign, 'record')} of {games} {ids}, not of this game "
                f"{self.game_id!r}, skipped"
            )


def _iter_beside(
    game_dir: Path, name: str, game_id: str | None, problems: list[str] | None, warn: bool
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, record)`` of ``game_dir/name``, migrated, repeated and foreign lines skipped and named."""
    game_dir = Path(game_dir)
    path = game_dir / name
    if not path.is_file():
        return
    version, header_id = _header_beside(game_dir)
    check_version(version, str(path))
    foreign = _Foreign(path, game_id if game_id is not None else header_id, problems, warn)
    for n, obj in iter_jsonl(path, problems, warn=warn, unique=True):
        if foreign.check(n, obj):
            yield n, upgrade(obj, version, f"{path}:{n}")
    foreign.close()


def iter_probe_records(
    game_dir: Path, *, game_id: str | None = None, problems: list[str] | None = None, warn: bool = True
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for each record of a game's ``probes.jsonl``, in file order.

    The one reader of probe records (``report``, ``view``, ``export``, ``fork``, ``retest``).
    Records are migrated from the schema version of the ``game.jsonl`` header beside the file
    (as :class:`~mafialab.record.ProbeRecord` mappings; the file is in the order answers
    arrived: sort by :func:`~mafialab.record.probe_sort_key`). An absent file yields nothing.

    Damage is skipped and reported to ``problems`` (and logged unless ``warn`` is false) as
    ``file:line: why``: a line that is not a JSON object, a line equal to an earlier one
    (``repeated line``), and a record of another game (``record of game 'X', not of this game
    'Y'; skipped``; the first :data:`FOREIGN_SHOWN` by line, the rest counted in one closing
    line, which says ``the file is left out`` when no record was this game's).

    Args:
        game_dir: The game's folder.
        game_id: This game's id (the header's); ``None`` reads it from the header beside the
            file (no check when there is none).
        problems: Receives one line per damaged or foreign record.
        warn: Log each such line as a warning too.

    Raises:
        LogVersionError: The game was written at a newer schema version than this mafialab reads.
        LogFormatError: The file cannot be opened.
    """
    return _iter_beside(Path(game_dir), PROBES_FILE, game_id, problems, warn)


def iter_call_records(
    game_dir: Path, *, game_id: str | None = None, problems: list[str] | None = None, warn: bool = True
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, record)`` for each record of a game's ``calls.jsonl``, in file order.

    The one reader of call records (``report``'s instrument figures, ``export``, season
    leaderboards, fork estimates, Ray results). Yields both kinds the file holds:
    :class:`~mafialab.record.CallRecord` mappings (``kind`` ``"call"``) and the closing
    :class:`~mafialab.record.CallSummary` (``"call_summary"``). Migration, damage and foreign
    records as :func:`iter_probe_records`; an empty ``game_id`` (logs written before the
    harness filled it in) is this game's.

    Raises:
        LogVersionError: The game was written at a newer schema version than this mafialab reads.
        LogFormatError: The file cannot be opened.
    """
    return _iter_beside(Path(game_dir), CALLS_FILE, game_id, problems, warn)


def iter_verdict_records(
    game_dir: Path, *, game_id: str | None = None, problems: list[str] | None = None, warn: bool = True
) -> Iterator[tuple[int, Verdict]]:
    """Yield ``(line, verdict)`` for each verdict of a game's ``verdicts.jsonl``, in file order.

    Each verdict carries its own schema version (a judge may run later, with another
    mafialab) and is migrated from it. Lines of another ``kind`` are passed over; damage and
    foreign verdicts as :func:`iter_probe_records`, and an invalid verdict is skipped and
    named as ``file:line: invalid verdict record (why)``. An absent file yields nothing.

    Args:
        game_dir: The game's folder, or its ``verdicts.jsonl``.
        game_id: As :func:`iter_probe_records`.
        problems: As :func:`iter_probe_records`.
        warn: As :func:`iter_probe_records`.

    Raises:
        LogVersionError: A verdict was written at a newer schema version.
        LogFormatError: The file cannot be opened.
    """
    game_dir = Path(game_dir)
    if game_dir.name == VERDICTS_FILE or (game_dir.suffix and not game_dir.is_dir()):
        path, game_dir = game_dir, game_dir.parent
    else:
        path = game_dir / VERDICTS_FILE
    if not path.is_file():
        return
    if game_id is None:
        game_id = _header_beside(game_dir)[1]
    foreign = _Foreign(path, game_id, problems, warn)
    for n, obj in iter_jsonl(path, problems, warn=warn):
        if obj.get("kind") != "verdict" or not foreign.check(n, obj):
            continue
        obj = upgrade(obj, record_version(obj, f"{path}:{n}"), f"{path}:{n}")
        try:
            yield n, Verdict.model_validate(obj)
        except ValidationError as err:
            foreign.say(f"{path}:{n}: invalid verdict record ({validation_message(err, limit=1)})")
    foreign.close()


def read_verdicts(path: Path, problems: list[str] | None = None) -> list[Verdict]:
    """All verdict records of a game, in file order.

    Read with :func:`iter_verdict_records`: a verdict of another game is skipped and named.

    Args:
        path: The game directory (or its ``verdicts.jsonl``).
        problems: Receives ``file:line: why`` for each unreadable, invalid or foreign line (skipped).

    Returns:
        The verdicts (empty when the file does not exist). A judge may appear more than
        once (re-judged games); :func:`~mafialab.record.latest_verdicts` keeps the last one per judge.

    Raises:
        LogVersionError: A verdict was written at a newer schema version.
    """
    return [v for _, v in iter_verdict_records(Path(path), problems=problems)]
