"""JSONL writing and reading of game logs."""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from mafialab._files import write_atomic
from mafialab._text import valid_utf8, valid_utf8_value
from mafialab._words import count, shell_word
from mafialab.config import validation_message
from mafialab.engine import Event
from mafialab.record._migrate import LogFormatError, record_version, upgrade
from mafialab.record._schema import (
    CLOCK_FIELDS,
    EVENT_ADAPTER,
    SCHEMA_VERSION,
    GameHeader,
    GameStatus,
    Verdict,
)

log = logging.getLogger(__name__)

GAME_FILE = "game.jsonl"
PARTIAL_DIR = ".partial"
"""Where a run keeps games (branches) it is still writing, inside its output folder.

A branch is played into ``OUT/.partial/<batch>/<id>/`` and renamed to ``OUT/<id>/`` once all its
files are written; :func:`iter_game_dirs` does not look into it (nor into any folder whose
name starts with a dot), so a half-written branch is never read as a game.
"""


def prepend_records(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Put ``records`` (one JSON line each) before the lines ``path`` already holds, all at once.

    Used where a file must start with records copied from elsewhere (a branch's
    ``probes.jsonl`` starts with its parent's probes of the prefix). The file is replaced with
    :func:`write_atomic`: a reader sees the old file or the new one. A missing file is created.

    Raises:
        OSError: The file cannot be read or written (it is then unchanged).
    """
    path = Path(path)
    tail = path.read_text(encoding="utf-8") if path.is_file() else ""
    write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records) + tail)


class JsonlWriter:
    """Append-only JSONL writer that flushes after every record.

    A crash loses at most the record being written. Opening is lazy: constructing the
    writer touches no file until the first :meth:`write`.

    Args:
        path: File to append to (its directory is created on first write).
        clock: Function returning Unix seconds, used to fill a record's ``ts`` if it is
            ``None``; pass ``None`` to leave ``ts`` alone.
    """

    def __init__(self, path: Path, clock: Any = time.time):
        self.path = Path(path)
        self._clock = clock
        self._fh: IO[str] | None = None

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        """Serialise one record as a line and flush it.

        Text is made valid where it enters (model, bus and remote answers); should a string
        still hold a character UTF-8 cannot encode (a lone surrogate such as U+D800),
        it is written as U+FFFD and a warning names the file and the count, rather than
        losing the record (and the run with it).
        """
        if isinstance(record, BaseModel):
            if self._clock is not None and getattr(record, "ts", 0) is None:
                record = record.model_copy(update={"ts": round(self._clock(), 3)})
            try:
                line = record.model_dump_json()
                replaced = 0
            except PydanticSerializationError:  # a string UTF-8 cannot encode
                data, replaced = valid_utf8_value(record.model_dump())
                line = to_json(data).decode()  # as model_dump_json writes it
        else:
            line, replaced = valid_utf8(json.dumps(record, ensure_ascii=False))
        if replaced:
            log.warning("%s: %s UTF-8 cannot encode written as U+FFFD", self.path, count(replaced, "character"))
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("a", encoding="utf-8")
        self._fh.write(line + "\n")
        self._fh.flush()

    def close(self) -> None:
        """Close the file (safe to call twice)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_jsonl(
    path: Path,
    problems: list[str] | None = None,
    *,
    warn: bool = True,
    bad_lines: list[int] | None = None,
    unique: bool = False,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each JSON object line of ``path``.

    Blank lines are skipped. A line that is not a JSON object (a torn last line, say) is
    reported as ``"<path>:<line>: <why>"`` to ``problems`` (and logged as a warning unless
    ``warn`` is false) and skipped; its line number (from 1) is appended to ``bad_lines``.
    With ``unique``, a line equal to an earlier one (a copy-paste, a doubled write: records
    with their own clock field are never equal) is reported the same way as ``repeated line
    (line M is the same; kept that one)`` and skipped, so it is never counted twice.

    Text is made valid UTF-8 as it is read: bytes that are not UTF-8 and JSON escapes of lone
    surrogates (which no UTF-8 writer can write back) become U+FFFD, so a
    record read here can always be written again (a fork, an export, the viewer).

    Raises:
        LogFormatError: If the file cannot be opened.
    """
    try:
        fh = Path(path).open(encoding="utf-8-sig", errors="replace")  # noqa: SIM115 (closed below)
    except IsADirectoryError:
        raise LogFormatError(f"{path} is a folder, not a file: expected a JSONL file") from None
    except OSError as err:
        raise LogFormatError(f"{path}: cannot open: {err.strerror}") from None
    seen: dict[bytes, int] = {}  # digest of a line -> its first line number (with unique)
    with fh:
        for n, line in enumerate(fh, start=1):
            if not line or line.isspace():  # (not strip(): no copy of a 300 kB line)
                continue
            if unique:
                key = hashlib.blake2b(line.rstrip("\r\n").encode("utf-8", "surrogatepass"), digest_size=16).digest()
                first = seen.setdefault(key, n)
                if first != n:
                    msg = f"{path}:{n}: repeated line (line {first} is the same; kept that one)"
                    if warn:
                        log.warning(msg)
                    if problems is not None:
                        problems.append(msg)
                    continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                col = min(err.pos, len(line.rstrip())) + 1  # (json counts the line's newline as a line of its own)
                msg = f"{path}:{n}: not valid JSON ({err.msg.removesuffix(' at')} at column {col})"
            except RecursionError:
                msg = f"{path}:{n}: JSON nested too deeply to read"
            else:
                if isinstance(obj, dict):
                    if "\\ud" in line or "\\uD" in line:  # a "\\ud800" escape reads as a lone surrogate
                        obj, _ = valid_utf8_value(obj)
                    yield n, obj
                    continue
                msg = f"{path}:{n}: not a JSON object"
            if warn:
                log.warning(msg)
            if problems is not None:
                problems.append(msg)
            if bad_lines is not None:
                bad_lines.append(n)


@dataclass
class GameLog:
    """A game log read back from ``game.jsonl``.

    Attributes:
        path: The game directory.
        header: The ``game_start`` record.
        events: Engine events in order.
        status: The ``game_status`` record if one was written.
        problems: Unreadable lines (``file:line: why``), skipped.
        schema_version: Log schema version the file was written at (the records above
            have been migrated to :data:`~mafialab.record.SCHEMA_VERSION`).
    """

    path: Path
    header: GameHeader
    events: list[Event]
    status: GameStatus | None = None
    problems: list[str] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION

    @property
    def game_id(self) -> str:
        """The game id."""
        return self.header.game_id

    @property
    def winner(self) -> str | None:
        """Winning team id, or ``None`` if the game did not finish."""
        end = next((e for e in reversed(self.events) if e.kind == "game_end"), None)
        return end.winner if end is not None else None


_SEAT_FIELDS = ("seat", "target", "killed", "saved", "outcome")
_SEAT_LIST_FIELDS = ("members", "alive", "candidates")
_SEAT_MAP_FIELDS = {"votes": True, "tally": False}  # field -> whether its values are seats too (keys always are)


@functools.cache
def _seat_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """``(field, shape)`` of an event class's fields that hold seats; shape ``one``, ``list``, ``map`` or ``keys``."""
    fields = getattr(cls, "model_fields", {})
    return (
        tuple((n, "one") for n in _SEAT_FIELDS if n in fields)
        + tuple((n, "list") for n in _SEAT_LIST_FIELDS if n in fields)
        + tuple((n, "map" if both else "keys") for n, both in _SEAT_MAP_FIELDS.items() if n in fields)
    )


def seat_range_problem(event: Event, n_seats: int) -> str | None:
    """Why ``event`` cannot belong to a game of ``n_seats`` seats (a seat it names is out of range), else ``None``.

    The seats an event names: ``seat``, ``target``, ``killed``, ``saved``, ``outcome`` (one seat
    or ``None``); ``members``, ``alive``, ``candidates`` (lists); ``votes`` (voter -> target,
    both seats), ``tally`` (target -> count); ``visibility.seats``.

    Example: ``"seat 99 in 'seat' is out of range: the roster has seats 0-6"``.
    """
    for name, shape in (*_seat_fields(type(event)), ("visibility.seats", "list")):
        v: Any = event.visibility.seats if name == "visibility.seats" else getattr(event, name)
        if v is None:
            continue
        seats: Iterable[Any] = (
            (v,) if shape == "one" else v if shape == "list" else v.keys() if shape == "keys" else [*v, *v.values()]
        )
        for seat in seats:
            if isinstance(seat, int) and not 0 <= seat < n_seats:
                return f"seat {seat} in {name!r} is out of range: the roster has seats 0-{n_seats - 1}"
    return None


def _missing_runs(file: Path, numbered: dict[int, int], bad_lines: list[int], problem: Callable[[str], None]) -> None:
    """Report each run of ``seq`` numbers no line holds (lines deleted), unless unreadable lines could hold it.

    Args:
        file: The log, for the messages.
        numbered: ``seq`` -> the line of its first record.
        bad_lines: Lines that could hold a number but show none (unreadable JSON, no ``seq``).
        problem: Receives ``file:line: seq A-B missing before this line (N events deleted or
            never written)``, the line being the one holding the number after the run.
    """
    seqs = sorted(numbered)
    for a, b in itertools.pairwise(seqs):
        gap = b - a - 1
        if gap <= 0:
            continue
        lo, hi = sorted((numbered[a], numbered[b]))
        if sum(1 for x in bad_lines if lo < x < hi) >= gap:
            continue  # each unreadable line between is named on its own
        missing = f"{a + 1}" if gap == 1 else f"{a + 1}-{b - 1}"
        problem(
            f"{file}:{numbered[b]}: seq {missing} missing before this line "
            f"({count(gap, 'event')} deleted or never written)"
        )


def read_game(path: Path, *, warn: bool = True) -> GameLog:
    """Read a game directory (or its ``game.jsonl``).

    Args:
        path: The game directory, or its ``game.jsonl``.
        warn: Log each problem (below) as a warning. A caller that reads a game a second time
            passes ``False`` so the same warning is not printed twice; :attr:`GameLog.problems`
            lists them either way.

    Records written at an older schema version are migrated (see ``docs/log-format.md``,
    "Versions"); :attr:`GameLog.schema_version` keeps the version as written.

    Raises:
        LogFormatError: If the file is missing (a folder of several games lists them), its
            first record is not a ``game_start``
            header (a raw MafiaScope log gets a hint to import it), or the header is invalid.
        LogVersionError: If the log was written at a newer schema version than this mafialab
            reads (a :class:`LogFormatError`; the message names the file and both versions).

    A line that is not JSON, an invalid record, or an event naming a seat the roster does not
    have (:func:`seat_range_problem`: a ``role_assigned`` for seat 99 in a 7-seat game) is
    skipped, logged as a warning and listed in :attr:`GameLog.problems` as ``file:line: why``;
    so is a record repeating an earlier record's ``seq`` (a duplicated line: the first is
    kept, ``repeated seq N``). Records are numbered ``seq`` 0, 1, 2, … in file order; a run of
    numbers that no line holds, readable or not (lines deleted, or never written), is listed
    and warned about the same way, as ``file:line: seq A-B missing before this line (N events
    deleted or never written)``, and so is a line whose number is lower than the line's before
    it (``seq N out of order (line L before it has seq M)``, lines swapped). The file itself is
    never changed.
    """
    path = Path(path)
    file = _one_game_file(path)
    problems: list[str] = []
    header: GameHeader | None = None
    status: GameStatus | None = None
    events: list[Event] = []
    version = SCHEMA_VERSION
    first_line: dict[int, int] = {}  # seq -> line of the record kept for it (valid records only)
    bad_lines: list[int] = []  # lines without a readable seq (unreadable JSON): each may have held one
    numbered: dict[int, int] = {}  # seq -> line of its first record, valid or not (for gaps and order)
    prev: tuple[int, int] | None = None  # (seq, line) of the record before, for lines out of order

    def problem(msg: str) -> None:
        problems.append(msg)
        if warn:
            log.warning(msg)

    for n, obj in iter_jsonl(file, problems, warn=warn, bad_lines=bad_lines):
        kind = obj.get("kind")
        seq = obj.get("seq")
        if kind != "game_status":
            if not isinstance(seq, int) or isinstance(seq, bool):
                bad_lines.append(n)  # an invalid record without its number
            elif seq not in numbered:
                if prev is not None and seq < prev[0]:
                    problem(f"{file}:{n}: seq {seq} out of order (line {prev[1]} before it has seq {prev[0]})")
                numbered[seq] = n
                prev = (seq, n)
        if kind != "game_status" and isinstance(seq, int) and seq in first_line:
            # a repeated line (a copy-paste, a doubled write): keep the first, skip this one
            # like any invalid record, and say so; the file is never changed
            problem(f"{file}:{n}: repeated seq {seq} (line {first_line[seq]} has it; kept that one)")
            continue
        if header is None and kind != "game_start" and not problems:
            # the header is written first; without it nothing else can be read (and a foreign
            # log would otherwise yield one error per line)
            hint = " (a raw MafiaScope log: convert it with `mafialab import mafiascope`)" if kind == "setup" else ""
            raise LogFormatError(f"{file}: line {n} is {kind!r}{hint}: no valid game_start header record")
        if kind == "game_start" and header is None:
            # before validation: a newer header may hold fields this version does not know
            version = record_version(obj, f"{file}:{n}")
        obj = upgrade(obj, version, f"{file}:{n}")
        try:
            if kind == "game_start":
                header = GameHeader.model_validate(obj)
                first_line[header.seq] = n
            elif kind == "game_status":
                status = GameStatus.model_validate(obj)
            else:
                ev = EVENT_ADAPTER.validate_python(obj)
                why = seat_range_problem(ev, len(header.roster)) if header is not None else None
                if why is None:
                    events.append(ev)
                    first_line[ev.seq] = n
                else:  # skipped like any invalid record (kept in the file), and said so
                    problem(f"{file}:{n}: invalid {kind} record ({why})")
        except ValidationError as err:
            problem(f"{file}:{n}: invalid {kind or 'record'} record ({validation_message(err, limit=1)})")
    _missing_runs(file, numbered, bad_lines, problem)
    if header is None:
        bad = next((p for p in problems if "invalid game_start record" in p), None)
        reason = " " + bad.partition("invalid game_start record ")[2] if bad else ""
        if file.name != GAME_FILE and not bad:
            reason = f" ({file.name} is not a game log: expected one game's folder, holding {GAME_FILE})"
        raise LogFormatError(f"{file}: no valid game_start header record{reason}")
    return GameLog(
        path=file.parent, header=header, events=events, status=status, problems=problems, schema_version=version
    )


def read_header(path: Path) -> GameHeader:
    """The ``game_start`` header of a game, found by the rules :func:`read_game` reads it by.

    Cheap: a valid header on the first line is all that is read. A game whose header this
    raises for is a game :func:`read_game` refuses, and the other way round.

    Args:
        path: The game directory, or its ``game.jsonl``.

    Raises:
        LogFormatError: No valid header (the first record is another kind, or every
            ``game_start`` record is invalid), or a log schema newer than this mafialab reads
            (:class:`LogVersionError`).
    """
    file = _one_game_file(Path(path))
    problems: list[str] = []
    for n, obj in iter_jsonl(file, problems, warn=False):
        kind = obj.get("kind")
        if kind != "game_start":
            if not problems:  # read_game stops here too: the header is written first
                raise LogFormatError(f"{file}: line {n} is {kind!r}: no valid game_start header record")
            continue
        where = f"{file}:{n}"
        try:
            return GameHeader.model_validate(upgrade(obj, record_version(obj, where), where))
        except ValidationError as err:
            problems.append(f"{where}: invalid game_start record ({validation_message(err, limit=1)})")
    raise LogFormatError(f"{file}: no valid game_start header record" + (f" ({problems[-1]})" if problems else ""))


def none_readable_message(root: Path, dirs: list[Path], reasons: list[str], shown: int = 3) -> str:
    """Why none of the games under ``root`` can be read, in one line (``view`` and ``report``).

    A folder of raw MafiaScope logs (every game's first record is MafiaScope's ``setup``)
    says so and how to import it; any other folder gets its first ``shown`` reasons, with no
    import hint (a newer log schema or a broken header has nothing to do with MafiaScope).

    Args:
        root: The folder given.
        dirs: Its game directories (:func:`iter_game_dirs`).
        reasons: Why each could not be read (each names its file).
        shown: How many reasons to quote; the rest are counted.
    """
    raw = [d for d in dirs if _first_kind(d / GAME_FILE) == "setup"]
    if dirs and len(raw) == len(dirs):
        return (
            f"{root} holds {count(len(raw), 'MafiaScope log')} (first record 'setup'), not mafialab logs: import them "
            f"first: mafialab import mafiascope {shell_word(root)} --out LOGS"
        )
    more = f" (and {len(reasons) - shown} more)" if len(reasons) > shown else ""
    return f"none of the {count(len(dirs), 'game')} under {root} can be read: " + "; ".join(reasons[:shown]) + more


def _first_kind(path: Path) -> object:
    """The ``kind`` of the first JSON object line of ``path`` (``None`` when there is none or it cannot be read)."""
    try:
        first = next(iter_jsonl(path, [], warn=False), None)
    except LogFormatError:
        return None
    return first[1].get("kind") if first is not None else None


def log_version(game_dir: Path) -> int:
    """Schema version of a game directory: its ``game.jsonl`` header's ``schema_version``.

    :data:`~mafialab.record.SCHEMA_VERSION` when the directory has no readable header
    (a probes or calls file on its own is taken to be current).

    Raises:
        LogVersionError: The header's ``schema_version`` is not a positive integer.
    """
    file = Path(game_dir) / GAME_FILE
    if not file.is_file():
        return SCHEMA_VERSION
    for n, obj in iter_jsonl(file, []):
        if obj.get("kind") == "game_start":
            return record_version(obj, f"{file}:{n}")
        break
    return SCHEMA_VERSION


def iter_game_dirs(root: Path) -> list[Path]:
    """Game directories under ``root``, sorted.

    ``root`` itself if it holds a ``game.jsonl`` (or is one); an empty list if ``root`` does
    not exist or holds no game. Folders below ``root`` whose name starts with a dot are not
    searched: a branch still being written (:data:`PARTIAL_DIR`) is no game yet.
    """
    root = Path(root)
    if root.name == GAME_FILE and root.is_file():
        return [root.parent]
    if (root / GAME_FILE).is_file():
        return [root]
    return sorted(p.parent for p in find_files(root, GAME_FILE))


def find_files(root: Path, name: str) -> list[Path]:
    """Every file called ``name`` under ``root`` (``root`` included), sorted.

    Folders below ``root`` whose name starts with a dot are not searched. Like
    ``root.rglob(name)``, links to folders are followed (each real folder once), but a folder
    that disappears while it is searched (a fork branch moved out of :data:`PARTIAL_DIR` by
    another job) is passed over instead of failing the search.
    """
    found: list[Path] = []
    seen: set[str] = set()
    for top, folders, files in os.walk(root, followlinks=True):  # os.walk passes over vanished folders
        real = os.path.realpath(top)
        if real in seen:  # a link back to a folder already searched
            folders[:] = []
            continue
        seen.add(real)
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        if name in files:
            found.append(Path(top) / name)
    return sorted(found)


GAMES_WANTED = "a game's folder (holding game.jsonl), its game.jsonl, or a folder of game folders (a runs folder)"
"""What a command reading many games takes, for messages."""


def no_games_message(root: Path) -> str:
    """Why ``root`` gave no game (:func:`iter_game_dirs` is empty): what it is and what is wanted.

    Args:
        root: The path a user gave where game logs were expected.

    Returns:
        One line, e.g. ``"README.md is a file, not a game log: expected a game's folder …"``;
        a folder with no game also says to import MafiaScope logs first.
    """
    root = Path(root)
    if not root.exists():
        return f"{root} does not exist: expected {GAMES_WANTED}"
    if not root.is_dir():
        return f"{root} is a file, not a game log: expected {GAMES_WANTED}"
    return (
        f"{root} is a folder with no game.jsonl in it or below: expected {GAMES_WANTED} "
        "(convert MafiaScope logs first with `mafialab import mafiascope`)"
    )


def _one_game_file(path: Path) -> Path:
    """The ``game.jsonl`` of one game at ``path`` (a game folder or the file).

    Raises:
        LogFormatError: ``path`` does not exist, or is a folder without a ``game.jsonl`` (a
            folder of several games lists the first few, so the user can pick one).
    """
    if not path.exists():
        raise LogFormatError(f"{path} does not exist: expected one game's folder (holding {GAME_FILE})")
    if not path.is_dir():
        return path
    file = path / GAME_FILE
    if file.exists():
        return file
    games = iter_game_dirs(path)
    if not games:
        raise LogFormatError(
            f"{path} is a folder with no {GAME_FILE}: expected one game's folder (holding {GAME_FILE})"
        )
    shown = [str(g) for g in games[:5]] + ([f"… {len(games) - 5} more"] if len(games) > 5 else [])
    raise LogFormatError(
        f"{path} is a folder of games ({len(games)} found), not one game's folder: give one of " + ", ".join(shown)
    )


def probe_sort_key(rec: Any) -> tuple[int, int, int]:
    """The order of probe records: ``(after_seq, seat, position)`` (trigger, seat, battery order).

    ``probes.jsonl`` is written in the order answers arrive (probes run beside the game), so
    every reader sorts by this key (a stable sort: records with equal keys keep file order).
    Takes a :class:`~mafialab.record.ProbeRecord` or a record mapping; missing fields count
    as 0 (``seat``: -1).
    """
    if isinstance(rec, dict):
        seat = rec.get("seat")
        return (int(rec.get("after_seq") or 0), seat if isinstance(seat, int) else -1, int(rec.get("position") or 0))
    return (int(rec.after_seq or 0), int(rec.seat), int(rec.position))


def strip_clock(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``records`` without clock fields (:data:`CLOCK_FIELDS`), for comparisons."""
    return [{k: v for k, v in r.items() if k not in CLOCK_FIELDS} for r in records]


def read_records(path: Path) -> list[dict[str, Any]]:
    """All JSON-object lines of a JSONL file (bad lines skipped and logged)."""
    return [obj for _, obj in iter_jsonl(path)]


def latest_verdicts(verdicts: Iterable[Verdict]) -> list[Verdict]:
    """The last verdict of each judge, in order of each judge's first appearance."""
    last: dict[str, Verdict] = {}
    for v in verdicts:
        last[v.judge] = v
    return list(last.values())
