"""Schema versions of the log files: refuse newer logs, upgrade older ones step by step.

Every log directory is at one schema version, the ``schema_version`` of its ``game.jsonl``
header (``probes.jsonl`` and ``calls.jsonl`` are written by the same run and carry no version
of their own); a ``verdict`` record carries its own, because a judge may run later with
another mafialab. A reader calls :func:`upgrade` on each raw record (a ``dict`` straight from
JSON) before validating it: a record from a newer version is refused with
:class:`LogVersionError`; a record from an older version goes through each registered
migration ``v -> v+1`` in turn.

Adding a version is a one-function job: bump :data:`~mafialab.record.SCHEMA_VERSION` and
register the step from the previous one::

    @migration(1)
    def _v1_to_v2(record: dict[str, Any]) -> dict[str, Any]:
        if record.get("kind") == "game_start":
            record.setdefault("parent", None)
        return record

The function receives every record of every log file (``kind`` tells them apart:
``game_start``, an event kind, ``game_status``, ``probe``, ``call``, ``verdict``), may change
it in place, and returns it. ``tests/record`` holds a committed v1 log that must keep loading.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mafialab.record._schema import SCHEMA_VERSION

Migration = Callable[[dict[str, Any]], dict[str, Any]]
"""One step: takes a raw record of version ``v`` and returns it at version ``v + 1``."""

MIGRATIONS: dict[int, Migration] = {}
"""Registered steps, keyed by the version they upgrade from (``1`` upgrades v1 to v2)."""

FIRST_VERSION = 1
"""The first schema version; a header without ``schema_version`` is read as this one."""


class LogFormatError(ValueError):
    """A log could not be read; the message names the file (and line)."""


class LogVersionError(LogFormatError):
    """A log was written at a schema version this mafialab cannot read (newer, or no migration).

    A :class:`LogFormatError`, so every reader's handling of unreadable logs covers it; the
    message names the file and both versions.
    """


def migration(from_version: int) -> Callable[[Migration], Migration]:
    """Register ``fn`` as the step from ``from_version`` to ``from_version + 1``.

    Raises:
        ValueError: A step from that version is already registered, or ``from_version`` is
            not below :data:`SCHEMA_VERSION`.
    """

    def register(fn: Migration) -> Migration:
        if from_version in MIGRATIONS:
            raise ValueError(f"migration from schema v{from_version} registered twice")
        if not FIRST_VERSION <= from_version < SCHEMA_VERSION:
            raise ValueError(f"migration from v{from_version}: versions run {FIRST_VERSION}..{SCHEMA_VERSION}")
        MIGRATIONS[from_version] = fn
        return fn

    return register


def record_version(record: dict[str, Any], where: str) -> int:
    """The ``schema_version`` of a raw header or verdict record (absent: :data:`FIRST_VERSION`).

    Raises:
        LogVersionError: The field is not a positive integer (names ``where``).
    """
    v = record.get("schema_version", FIRST_VERSION)
    if isinstance(v, bool) or not isinstance(v, int) or v < FIRST_VERSION:
        raise LogVersionError(f"{where}: schema_version {v!r} is not a log schema version (1, 2, ...)")
    return v


def check_version(version: int, where: str) -> None:
    """Refuse a version this mafialab cannot read.

    Args:
        version: Schema version the file was written at.
        where: The file (``path`` or ``path:line``) for the message.

    Raises:
        LogVersionError: ``version`` is newer than :data:`SCHEMA_VERSION`, or an older
            version lacks a registered migration step.
    """
    if version > SCHEMA_VERSION:
        raise LogVersionError(
            f"{where}: written with log schema v{version}, newer than this mafialab reads "
            f"(v{SCHEMA_VERSION}); upgrade mafialab to read it"
        )
    for v in range(version, SCHEMA_VERSION):
        if v not in MIGRATIONS:
            raise LogVersionError(f"{where}: log schema v{version} cannot be read: no migration from v{v} to v{v + 1}")


def upgrade(record: dict[str, Any], version: int, where: str) -> dict[str, Any]:
    """Bring one raw record from schema ``version`` to :data:`SCHEMA_VERSION`.

    Records that have a ``schema_version`` field (headers, verdicts) get it set to the
    current version once migrated.

    Args:
        record: The record as read from JSON (changed in place and returned).
        version: Version the record was written at (the header's, for events, probes, calls).
        where: The file (and line) for error messages.

    Returns:
        The record at the current version.

    Raises:
        LogVersionError: See :func:`check_version`.
    """
    check_version(version, where)
    if version == SCHEMA_VERSION:
        return record
    for v in range(version, SCHEMA_VERSION):
        record = MIGRATIONS[v](record)
    if "schema_version" in record or record.get("kind") in ("game_start", "verdict"):
        record["schema_version"] = SCHEMA_VERSION
    return record


@migration(1)
def _v1_to_v2(record: dict[str, Any]) -> dict[str, Any]:
    """v1 -> v2 (forks): nothing v1 wrote changes; the record is returned as it is.

    v2 adds the header's optional ``parent``
    block (left out for a game that is not a fork), ``vote`` events with ``target: null`` (no
    vote, rules with ``day.no_vote``), the ``private_note`` event, and the rule fields
    ``day.no_vote`` / ``day.text_chars`` / ``day.statement_chars`` (written only when not the
    default). A v1 record is therefore a valid v2 record as it stands; a mafialab that reads
    only v1 refuses v2 logs instead of misreading them.
    """
    return record


@migration(2)
def _v2_to_v3(record: dict[str, Any]) -> dict[str, Any]:
    """v2 -> v3 (speech output guard): nothing v2 wrote changes; the record is returned as it is.

    v3 adds the optional ``repair`` field of a ``call`` record in ``calls.jsonl`` (what the
    agent removed from a usable answer before playing it, and why; ``null`` when nothing was
    removed). A v2 call record has no ``repair``, which reads as ``null``; a mafialab that
    reads only v2 refuses v3 logs (its call records forbid unknown fields) with a version
    message instead of a validation error.
    """
    return record


@migration(3)
def _v3_to_v4(record: dict[str, Any]) -> dict[str, Any]:
    """v3 -> v4 (log-probability probes): nothing v3 wrote changes; the record is returned as it is.

    v4 adds the optional ``distribution``, ``logprobs`` and ``scoring`` fields of a ``probe``
    record (the readout of a ``logprob`` probe; ``null`` for every other probe). A v3 probe
    record has none of them, which reads as ``null``; a mafialab that reads only v3 refuses
    v4 logs with a version message instead of reading the distribution as an unknown field.
    """
    return record
