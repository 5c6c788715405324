"""Exports of game logs as tables: Parquet (events, probes, calls) and temporal belief edges.

``export parquet`` streams: one game is read at a time and its rows go to the Parquet
writers as Arrow record batches (a row group every few megabytes), so memory does not grow
with the corpus. Each table has one schema declared here (:data:`TABLE_SCHEMAS`), whatever
fields a game's records happen to carry.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import types
import typing
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from mafialab import __version__
from mafialab.analysis._data import iter_each, load_games
from mafialab.analysis._metrics import DEFAULT, Method, answer, vocabulary
from mafialab.analysis._parse import to_float
from mafialab.analysis._summary import logs_digest
from mafialab.record import (
    CALLS_FILE,
    PROBES_FILE,
    CallRecord,
    GameLog,
    LogFormatError,
    ProbeRecord,
    atomic_path,
    iter_call_records,
    iter_game_dirs,
    iter_probe_records,
    no_games_message,
    none_readable_message,
    read_game,
    write_atomic,
)
from mafialab.rules import winner_name

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

log = logging.getLogger(__name__)

EVENT_COLUMNS = ("game_id", "seq", "round", "phase", "kind", "ts", "public", "teams", "seats", "seat", "target",
                 "text", "data")  # fmt: skip
"""Columns of the events table; ``data`` holds the event's other fields as JSON."""

GAME_COLUMNS = ("game_id", "path", "rules_id", "seed", "winner", "winner_name", "rounds", "reason", "source", "parent",
                "degraded", "probes", "n_seats", "header", "status")  # fmt: skip
"""Columns of the games table: one row per game (``winner``: the team id, ``winner_name``: as the rule set
names it; ``reason``: how it ended; ``probes``: the battery; ``header`` and ``status``: the log's
``game_start`` and ``game_status`` records as JSON, so the logs can be rebuilt from the tables)."""

SEAT_COLUMNS = ("game_id", "seat", "name", "role", "team", "agent", "model", "survived")
"""Columns of the seats table: one row per seat of each game (``survived``: alive at the end)."""

TABLES = ("games", "seats", "events", "probes", "calls")
"""The tables of :func:`log_tables`, in order."""

TGN_COLUMNS = ("source", "target", "time", "weight", "label", "game_id", "round", "msg_index", "probe_id", "after_seq")
"""Columns of the belief-edge list (the first five are the temporal-graph edge list)."""

EXTRA_COLUMN = "extra"
"""Column of the probes table holding a record's fields that :class:`~mafialab.record.ProbeRecord`
does not name (what an importer kept from the source), as a JSON object; null when none."""

Kind = typing.Literal["str", "int", "float", "bool", "json"]
"""A column's type: Parquet ``string``, ``int64``, ``double``, ``boolean``, or ``string``
holding JSON (a list or an object; a scalar is written as text). Every column may be null."""


def _kind(annotation: Any) -> Kind:
    """The column type of a record field's annotation (``X | None`` is ``X``; unknown: JSON)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "str" if all(isinstance(a, str) for a in typing.get_args(annotation)) else "json"
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _kind(args[0]) if len(args) == 1 else "json"
    simple: dict[Any, Kind] = {str: "str", bool: "bool", int: "int", float: "float"}
    return simple.get(annotation, "json")


def _record_columns(model: type[BaseModel]) -> tuple[tuple[str, Kind], ...]:
    """``game_id``, the model's fields, then :data:`EXTRA_COLUMN` if the model keeps other fields."""
    fields = tuple((name, _kind(f.annotation)) for name, f in model.model_fields.items() if name != "game_id")
    extra: tuple[tuple[str, Kind], ...] = (
        ((EXTRA_COLUMN, "json"),) if model.model_config.get("extra") == "allow" else ()
    )
    return (("game_id", "str"), *fields, *extra)


TABLE_SCHEMAS: dict[str, tuple[tuple[str, Kind], ...]] = {
    "games": (("game_id", "str"), ("path", "str"), ("rules_id", "str"), ("seed", "int"), ("winner", "str"),
              ("winner_name", "str"), ("rounds", "int"), ("reason", "str"), ("source", "str"), ("parent", "str"),
              ("degraded", "bool"), ("probes", "str"), ("n_seats", "int"), ("header", "json"), ("status", "json")),
    "seats": (("game_id", "str"), ("seat", "int"), ("name", "str"), ("role", "str"), ("team", "str"),
              ("agent", "str"), ("model", "str"), ("survived", "bool")),
    "events": (("game_id", "str"), ("seq", "int"), ("round", "int"), ("phase", "str"), ("kind", "str"),
               ("ts", "float"), ("public", "bool"), ("teams", "str"), ("seats", "str"), ("seat", "int"),
               ("target", "int"), ("text", "str"), ("data", "json")),
    "probes": _record_columns(ProbeRecord),
    "calls": _record_columns(CallRecord),
}  # fmt: skip
"""The one schema of each table of :data:`TABLES`: ``(column, kind)`` pairs in order.

``games``, ``seats`` and ``events`` have :data:`GAME_COLUMNS`, :data:`SEAT_COLUMNS` and
:data:`EVENT_COLUMNS`; ``probes`` and ``calls`` have ``game_id``, the fields of
:class:`~mafialab.record.ProbeRecord` / :class:`~mafialab.models.CallRecord` (probes then
:data:`EXTRA_COLUMN`; a call has no other field). A field missing from a record is null; a
value of another type than its column's (a damaged log) is null and logged."""

ROW_GROUP_BYTES = 8 << 20
"""A table's rows are buffered (as Arrow batches) up to about this many bytes, then written
as one Parquet row group; so memory stays flat whatever the corpus size."""

GAMES_PER_FILE = 100
"""A table's part file holds the rows of this many games; the next game starts a new part.

An open Parquet writer's memory grows with what it has written (measured: about 55 KB per
probed game in RSS, outside the Arrow pool), so a part is closed every 100 games: peak RSS
then stays flat."""

PART_GLOB = "part-*.parquet"
"""The files of one table's folder (``part-00000.parquet``, ``part-00001.parquet`` …)."""


def _json(x: Any) -> str | None:
    return None if x is None else json.dumps(x, ensure_ascii=False, sort_keys=True)


def _flat(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: (_json(v) if isinstance(v, (dict, list)) else v) for k, v in rec.items()}


def _cell(v: Any, kind: Kind) -> Any:
    """``v`` as a value of a ``kind`` column; raises ``TypeError`` when it is not one."""
    if v is None:
        return None
    if kind in ("str", "json"):
        if isinstance(v, str):
            return v
        return _json(v) if isinstance(v, (dict, list)) else str(v)
    if kind == "bool":
        if isinstance(v, bool):
            return v
    elif kind == "int":
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    raise TypeError(f"{v!r} is not {kind}")


def _arrow_type(kind: Kind) -> pa.DataType:
    import pyarrow as pa

    return {"str": pa.string(), "json": pa.string(), "int": pa.int64(), "float": pa.float64(),
            "bool": pa.bool_()}[kind]  # fmt: skip


def table_schema(table: str) -> pa.Schema:
    """The Arrow schema of ``table`` (one of :data:`TABLES`), from :data:`TABLE_SCHEMAS`."""
    import pyarrow as pa

    return pa.schema([pa.field(c, _arrow_type(k)) for c, k in TABLE_SCHEMAS[table]])


def _batch(table: str, rows: list[dict[str, Any]], where: Path) -> pa.RecordBatch:
    """``rows`` of ``table`` as a record batch of its schema (a cell of the wrong type: null, logged)."""
    import pyarrow as pa

    arrays = []
    for col, kind in TABLE_SCHEMAS[table]:
        values = []
        bad = 0
        for r in rows:
            try:
                values.append(_cell(r.get(col), kind))
            except TypeError as err:
                if not bad:
                    log.warning("%s: %s column %r: %s, left null in the export", where, table, col, err)
                bad += 1
                values.append(None)
        if bad > 1:
            log.warning("%s: %s column %r: %d values of another type in all, left null", where, table, col, bad)
        arrays.append(pa.array(values, type=_arrow_type(kind)))
    return pa.RecordBatch.from_arrays(arrays, schema=table_schema(table))


def _rel_path(game_dir: Path, root: Path) -> str:
    """A game's folder as the games table's ``path`` names it: under ``root``, else as given."""
    try:
        return game_dir.relative_to(root).as_posix()
    except ValueError:
        return game_dir.as_posix()


def _game_rows(log_: GameLog, root: Path) -> dict[str, list[dict[str, Any]]]:
    """The rows of one game in each table of :data:`TABLES` (cells not yet typed)."""
    d = log_.path
    gid = log_.game_id
    h = log_.header
    end = next((e for e in reversed(log_.events) if e.kind == "game_end"), None)
    dead = {e.seat for e in log_.events if e.kind == "elimination"}
    where = _rel_path(d, Path(root))
    won = end.winner if end is not None else None
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    rows["games"].append(
        {"game_id": gid, "path": where, "rules_id": h.rules_id, "seed": h.seed, "winner": won,
         "winner_name": winner_name(won, h.rules) if won is not None else None,
         "rounds": end.rounds if end is not None else None,
         "reason": end.reason if end is not None else None, "source": h.source,
         "parent": h.parent.game_id if h.parent is not None else None,
         "degraded": bool(log_.status is not None and log_.status.degraded),
         "probes": h.meta.get("probes") if isinstance(h.meta.get("probes"), str) else None,
         "n_seats": len(h.roster), "header": h.model_dump_json(),
         "status": log_.status.model_dump_json() if log_.status is not None else None}
    )  # fmt: skip
    described = h.meta.get("agents") if isinstance(h.meta.get("agents"), dict) else {}
    for st in sorted(h.roster, key=lambda x: x.seat):
        desc = described.get(str(st.seat)) if isinstance(described, dict) else None
        model = desc.get("model") if isinstance(desc, dict) else None
        rows["seats"].append(
            {"game_id": gid, "seat": st.seat, "name": st.name, "role": st.role, "team": st.team,
             "agent": st.agent, "model": model if isinstance(model, str) else st.agent,
             "survived": st.seat not in dead if end is not None else None}
        )  # fmt: skip
    for ev in log_.events:
        data = ev.model_dump(mode="json")
        vis = data.pop("visibility")
        row = {k: data.pop(k, None) for k in ("seq", "round", "phase", "kind", "ts", "seat", "target")}
        text = data.pop("text", None)
        if text is None:
            text = data.pop("statement", None)
        rows["events"].append(
            {
                "game_id": gid,
                **row,
                "public": vis["public"],
                "teams": ",".join(vis["teams"]),
                "seats": ",".join(str(s) for s in vis["seats"]),
                "text": text,
                "data": _json(data),
            }
        )
    readers = ((PROBES_FILE, "probes", iter_probe_records), (CALLS_FILE, "calls", iter_call_records))
    for name, table, reader in readers:
        if not (d / name).is_file():
            continue
        named = {c for c, _ in TABLE_SCHEMAS[table]}
        unnamed = False
        # the one reader per file kind: another game's records are skipped and named
        for _, rec in reader(d, game_id=gid):
            if name == CALLS_FILE and rec.get("kind", "call") != "call":
                continue  # the closing call_summary record (prefix reuse) is not a call
            other = {k: v for k, v in rec.items() if k not in named}
            if other and EXTRA_COLUMN not in named and not unnamed:
                log.warning("%s: fields %s are not %s fields, left out of the export", d / name, sorted(other), table)
                unnamed = True
            # a call recorded before the harness knew the game has game_id "": the game's own id
            own = rec.get("game_id") or gid
            rows[table].append({**_flat(rec), "game_id": own, EXTRA_COLUMN: _json(other) if other else None})
    return rows


def game_batches(game_dir: Path, root: Path) -> dict[str, pa.RecordBatch]:
    """One game's rows in each table of :data:`TABLES`, as record batches of :func:`table_schema`.

    The per-game work of an export (run as a Ray task with ``--ray``, so it only reads the
    game's folder and returns the batches).

    Args:
        game_dir: The game's folder.
        root: The exported directory (the ``path`` column is relative to it).

    Raises:
        mafialab.record.LogFormatError: The game's log cannot be read.
    """
    return _game_batches(Path(game_dir), Path(root))[1]


def iter_log_batches(
    root: Path, skipped: list[str] | None = None, *, ray: str | None = None
) -> Iterator[dict[str, pa.RecordBatch]]:
    """The tables of each game under ``root``, one game at a time, as Arrow record batches.

    Yields, per game in the order of :func:`~mafialab.record.iter_game_dirs`, a dict from each
    name of :data:`TABLES` to a batch of :func:`table_schema` (possibly empty). Only the game
    being read is held (with ``ray``, the games in flight: :func:`mafialab.analysis._ray.map_games`).

    Args:
        root: Directory searched recursively for ``game.jsonl``.
        skipped: As for :func:`log_tables` (filled once every game has been tried).
        ray: A Ray cluster's address (:func:`mafialab.harness.connect_ray`): each game's
            batches (:func:`game_batches`) are made by a Ray task that reads the game from
            ``root`` as given (shared storage); they are yielded in the same order, so the
            batches are the same. ``None``: made here.

    Raises:
        FileNotFoundError: If ``root`` holds no game.
        mafialab.record.LogFormatError: A game cannot be read (without ``skipped``), or none
            can (with it).
        ImportError: ``ray`` given and Ray is not installed (the message says how to install it).
        mafialab.harness.RayConnectError: No cluster at ``ray``.
    """
    dirs = iter_game_dirs(Path(root))
    if not dirs:
        raise FileNotFoundError(no_games_message(Path(root)))
    per_game = partial(game_batches, root=Path(root))
    if ray is None:
        yield from iter_each(Path(root), dirs, per_game, skipped)
        return
    from mafialab.analysis._ray import map_games

    mapped = map_games(per_game, dirs, address=ray)

    def take(_: Path) -> dict[str, pa.RecordBatch]:
        got = next(mapped)  # the games come back in the order of dirs
        if isinstance(got, LogFormatError):
            raise got
        return got

    try:
        yield from iter_each(Path(root), dirs, take, skipped)
    finally:
        mapped.close()  # the tasks not taken (the export stopped early) are cancelled now


def log_tables(root: Path, skipped: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Every game under ``root`` as five tables: ``games``, ``seats``, ``events``, ``probes``, ``calls``.

    Holds the whole corpus in memory; for a large one, :func:`export_parquet` streams to a
    Parquet dataset that pandas, Polars or DuckDB read lazily (docs/export.md).

    ``games`` has the columns :data:`GAME_COLUMNS` (one row per game: rules, seed, winner,
    rounds, how it ended, source, parent of a branch, degraded flag, probe battery);
    ``seats`` has :data:`SEAT_COLUMNS` (seat, name, role, team, agent, model, survived).

    ``events`` has the columns :data:`EVENT_COLUMNS` (one row per engine event, the game
    header excluded; ``text`` is a speech/chat text or a vote statement); ``probes`` has one
    row per ``probes.jsonl`` line with the record's fields (nested values such as
    ``answer_parsed`` as JSON strings); ``calls`` has one row per ``calls.jsonl`` line, flattened
    the same way (no row when no game has model calls, e.g. imported games). Every table has
    the columns and types of :data:`TABLE_SCHEMAS` whatever the games hold, and the same
    pandas dtypes as ``pd.read_parquet`` of the export.

    Args:
        root: Directory searched recursively for ``game.jsonl``.
        skipped: When given, a game that cannot be read (no valid header, a newer log
            schema) is left out and its reason (naming the file) appended, as ``report`` and
            ``view`` skip it; without it the first such game raises.

    Raises:
        FileNotFoundError: If ``root`` holds no game.
        mafialab.record.LogFormatError: A game cannot be read (without ``skipped``), or none
            can (with it).
    """
    import pyarrow as pa

    batches: dict[str, list[pa.RecordBatch]] = {name: [] for name in TABLES}
    for game in iter_log_batches(root, skipped):
        for name, b in game.items():
            batches[name].append(b)
    return {name: pa.Table.from_batches(b, schema=table_schema(name)).to_pandas() for name, b in batches.items()}


class OutputExistsError(FileExistsError):
    """A table folder or file :func:`export_parquet` would write exists and ``overwrite`` is false.

    Attributes:
        path: The first such path (the output folder when it holds an export of another folder).
        other_root: The folder of game logs that the export in ``path`` was made from, when it
            is not the one being exported (from its manifest); ``None`` otherwise.
    """

    def __init__(self, path: Path, other_root: Path | None = None):
        if other_root is None:
            super().__init__(f"{path} exists (overwrite=True replaces it)")
        else:
            super().__init__(f"{path} holds an export of {other_root} (overwrite=True replaces it)")
        self.path = path
        self.other_root = other_root


class _Parts:
    """Buffered Parquet writing of one schema: a row group per ~:data:`ROW_GROUP_BYTES`.

    With ``folder``, a new part file every ``games_per_file`` games; else the one ``path``.
    """

    def __init__(self, schema: pa.Schema, *, folder: Path | None = None, path: Path | None = None,
                 games_per_file: int = 0):  # fmt: skip
        self.schema = schema
        self.folder = folder
        self.path = path
        self.games_per_file = games_per_file
        self.buf: list[pa.RecordBatch] = []
        self.size = 0
        self.games = 0
        self.writer: pq.ParquetWriter | None = None
        self.files: list[Path] = []

    def add(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self.buf.append(batch)
            self.size += batch.nbytes
        if self.size >= ROW_GROUP_BYTES:
            self._flush()

    def game_done(self) -> None:
        self.games += 1
        if self.folder is not None and self.games_per_file and self.games % self.games_per_file == 0:
            self._flush()
            self._close()

    def _open(self) -> pq.ParquetWriter:
        import pyarrow.parquet as pq

        if self.writer is None:
            p = self.path if self.folder is None else self.folder / f"part-{len(self.files):05d}.parquet"
            assert p is not None
            self.writer = pq.ParquetWriter(p, self.schema)
            self.files.append(p)
        return self.writer

    def _flush(self) -> None:
        import pyarrow as pa

        if not self.buf:
            return
        t = pa.Table.from_batches(self.buf, schema=self.schema)
        self._open().write_table(t, row_group_size=t.num_rows)
        self.buf, self.size = [], 0

    def _close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def close(self) -> None:
        """Write what is buffered and close; a table with no row still gets one (empty) file."""
        self._flush()
        if not self.files:
            self._open()
        self._close()

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _stacked_schema() -> pa.Schema:
    """The columns of every table in :data:`TABLES` order (each once), then ``table``."""
    import pyarrow as pa

    fields: dict[str, pa.Field] = {}
    for name in TABLES:
        for f in table_schema(name):
            if f.name in fields and fields[f.name].type != f.type:  # a column name means one type
                raise AssertionError(f"column {f.name!r}: {fields[f.name].type} and {f.type}")
            fields.setdefault(f.name, f)
    return pa.schema([*fields.values(), pa.field("table", pa.string())])


def _stack(name: str, batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    n = batch.num_rows
    own = set(batch.schema.names)
    arrays = [batch.column(f.name) if f.name in own else pa.nulls(n, f.type) for f in schema if f.name != "table"]
    return pa.RecordBatch.from_arrays([*arrays, pa.array([name] * n, pa.string())], schema=schema)


def _is_export_folder(p: Path) -> bool:
    """Whether ``p`` is a folder holding nothing but part files (what :func:`export_parquet` writes)."""
    return p.is_dir() and all(c.is_file() and c.match(PART_GLOB) for c in p.iterdir())


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    else:
        p.unlink(missing_ok=True)


EXPORT_FORMAT_VERSION = 2
"""Version of a folder export's layout, of :data:`MANIFEST_FILE` and of what a game's rows hold; an
export of another version (or with other :data:`TABLE_SCHEMAS`) is rebuilt whole rather than
updated. Raise it whenever the rows made from the same logs change, so no export keeps old rows."""

MANIFEST_FILE = "_manifest.json"
"""A folder export's manifest, ``OUT/_manifest.json``: the exported folder, and per game its path,
id, the hash of its logs' bytes and the part and row ranges holding its rows (docs/export.md).
The leading underscore keeps dataset readers (pyarrow, Spark) from taking it for data."""


class _ManifestGame(BaseModel):
    """One exported game of a :data:`MANIFEST_FILE`.

    Attributes:
        path: The game's folder under the exported folder (the games table's ``path``); its key.
        game_id: The game's id.
        hash: :func:`~mafialab.analysis._summary.logs_digest` of its logs when exported.
        part: The number of the part files holding its rows.
        rows: Table -> ``(first row, rows)`` of the game in that table's part file.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    game_id: str
    hash: str
    part: int
    rows: dict[str, tuple[int, int]]


class _ManifestUnread(BaseModel):
    """A game that could not be read; named again, not read again, while its logs and mafialab are unchanged.

    Attributes:
        path: As :attr:`_ManifestGame.path`.
        hash: Of its logs, as :attr:`_ManifestGame.hash`.
        reason: Why it cannot be read (naming the file).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    hash: str
    reason: str


class _ManifestPart(BaseModel):
    """One part of a folder export: a file ``part-<id>.parquet`` in every table's folder.

    Attributes:
        id: The part's number.
        games: How many games it holds.
        bytes: Table -> the size of its file (a file of another size was changed behind the
            manifest's back: the export is rebuilt).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int
    games: int
    bytes: dict[str, int]


class _Manifest(BaseModel):
    """``OUT/_manifest.json`` of a folder export (:data:`MANIFEST_FILE`).

    ``complete`` is false while the part files are being replaced: a run that finds it false
    (a run killed part-way) rebuilds the export whole.
    """

    model_config = ConfigDict(extra="forbid")

    format: typing.Literal["mafialab-export"] = "mafialab-export"
    version: int = EXPORT_FORMAT_VERSION
    schemas: str
    root: str
    complete: bool
    mafialab: str = ""
    parts: list[_ManifestPart] = []
    games: list[_ManifestGame] = []
    unread: list[_ManifestUnread] = []


def _schemas_digest() -> str:
    """A short hash of :data:`TABLE_SCHEMAS` (an export with other schemas is rebuilt)."""
    return hashlib.sha256(json.dumps(TABLE_SCHEMAS).encode()).hexdigest()[:16]


def _part_name(part: int) -> str:
    return f"part-{part:05d}.parquet"


def _root_id(root: Path) -> str:
    """How a manifest names the exported folder: its absolute, resolved path."""
    return Path(root).resolve().as_posix()


def _prior_export(out: Path, root: Path) -> tuple[_Manifest | None, str | None, Path | None]:
    """What ``out``'s manifest says: ``(manifest to update, why it cannot be updated, other root)``.

    ``(None, None, None)``: no manifest. ``other root``: a readable manifest of an export of
    another folder (refused without ``overwrite``). ``why``: a manifest that is there but
    unusable (unreadable, another version, a run killed part-way, part files that do not match
    it): the export is rebuilt whole.
    """
    path = out / MANIFEST_FILE
    if not path.is_file():
        return None, None, None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return None, f"cannot be read ({err})", None
    if not isinstance(raw, dict):
        return None, "is not a manifest (not a JSON object)", None
    if isinstance(raw.get("root"), str) and raw["root"] != _root_id(root):
        return None, None, Path(raw["root"])
    if raw.get("version") != EXPORT_FORMAT_VERSION:
        return None, f"has format version {raw.get('version')!r}, this mafialab writes {EXPORT_FORMAT_VERSION}", None
    try:
        m = _Manifest.model_validate(raw)
    except ValidationError as err:
        return None, f"is not a manifest ({err.error_count()} errors, first: {err.errors()[0]['msg']})", None
    if not m.complete:
        return None, "says an earlier run was stopped part-way", None
    if m.schemas != _schemas_digest():
        return None, "was written with other table schemas", None
    parts = {p.id: p for p in m.parts}
    if any(g.part not in parts or set(g.rows) != set(TABLES) for g in m.games):
        return None, "names a part it does not list", None
    for name in TABLES:
        folder = out / name
        on_disk = {c.name: c for c in folder.iterdir()} if folder.is_dir() else {}
        if set(on_disk) != {_part_name(i) for i in parts}:
            return None, f"does not list the part files in {folder}", None
        for i, p in parts.items():
            if on_disk[_part_name(i)].stat().st_size != p.bytes.get(name):
                return None, f"does not match {on_disk[_part_name(i)]} (changed since)", None
    return m, None, None


def _copy_rows(src: Path, ranges: list[tuple[int, int]], dst: _Parts) -> None:
    """Append rows ``[start, start + n)`` of each of ``ranges`` (in order) of the Parquet file ``src`` to ``dst``.

    Streams the file batch by batch: only one batch is held besides ``dst``'s buffer.
    """
    import pyarrow.parquet as pq

    if not any(n for _, n in ranges):
        return
    offset = 0
    with pq.ParquetFile(src) as pf:
        for batch in pf.iter_batches(batch_size=16_384):
            n = batch.num_rows
            for start, count in ranges:
                lo, hi = max(start, offset), min(start + count, offset + n)
                if lo < hi:
                    dst.add(batch.slice(lo - offset, hi - lo))
            offset += n


def _game_batches(game_dir: Path, root: Path) -> tuple[str, dict[str, pa.RecordBatch]]:
    """Read one game and type its rows: ``(game id, table -> record batch)``; the per-game step of an export.

    Raises:
        mafialab.record.LogFormatError: The game cannot be read.
    """
    game = read_game(game_dir)
    rows = _game_rows(game, Path(root))
    return game.game_id, {name: _batch(name, rows[name], game.path) for name in TABLES}


def _write_part(part: int, kept: list[_ManifestGame], fresh: list[tuple[str, Path]], *, out: Path,
                staging: dict[str, Path], hashes: dict[str, str], unread: list[_ManifestUnread] | None,
                read: Callable[[Path], tuple[str, dict[str, pa.RecordBatch]]],
                ) -> tuple[_ManifestPart, list[_ManifestGame]]:  # fmt: skip
    """Write part ``part`` of every table into ``staging``: ``kept`` games' rows, then ``fresh`` ones'.

    The rows of ``kept`` are copied from the part's files in ``out`` (not re-read from the
    logs); each game of ``fresh`` (``(path, folder)``) is read with ``read`` (:func:`_game_batches`
    here, or the next result of its Ray tasks). One that cannot be read is appended to
    ``unread`` (without it, raises :class:`~mafialab.record.LogFormatError`).
    """
    name = _part_name(part)
    writers = {t: _Parts(table_schema(t), path=staging[t] / name) for t in TABLES}
    at = dict.fromkeys(TABLES, 0)
    games: list[_ManifestGame] = []
    try:
        kept = sorted(kept, key=lambda g: g.rows["games"][0])
        for t in TABLES:
            if kept:
                _copy_rows(out / t / name, [g.rows[t] for g in kept], writers[t])
        for g in kept:
            rows = {}
            for t in TABLES:
                rows[t] = (at[t], g.rows[t][1])
                at[t] += g.rows[t][1]
            games.append(g.model_copy(update={"part": part, "rows": rows}))
        for where, d in fresh:
            try:
                gid, batches = read(d)
            except LogFormatError as err:
                if unread is None:
                    raise
                unread.append(_ManifestUnread(path=where, hash=hashes[where], reason=str(err)))
                continue
            rows = {}
            for t in TABLES:
                writers[t].add(batches[t])
                rows[t] = (at[t], batches[t].num_rows)
                at[t] += batches[t].num_rows
            games.append(_ManifestGame(path=where, game_id=gid, hash=hashes[where], part=part, rows=rows))
        for w in writers.values():
            w.close()
    except BaseException:
        for w in writers.values():
            w.abort()
        raise
    sizes = {t: (staging[t] / name).stat().st_size for t in TABLES}
    return _ManifestPart(id=part, games=len(games), bytes=sizes), games


def export_parquet(root: Path, out: Path, *, overwrite: bool = False, skipped: list[str] | None = None,
                   counts: dict[str, int] | None = None, ray: str | None = None,
                   on_game: Callable[[int, int], None] | None = None) -> list[Path]:  # fmt: skip
    """Write the tables of :func:`log_tables` as Parquet, one game at a time; update an earlier export incrementally.

    Memory stays flat as the corpus grows: each game's rows are written as they are read
    (buffered into row groups of about :data:`ROW_GROUP_BYTES`). The schemas are
    :data:`TABLE_SCHEMAS`, the same in every export.

    Into a folder, the export keeps a manifest (:data:`MANIFEST_FILE`) of which games each part
    holds and the hash of each game's log files. Exporting the same ``root`` into the same
    ``out`` again updates it: a game whose logs are unchanged is not read again, and its part
    files are left untouched; new and changed games are read and written to new part files (or
    fill up the last one); a part that held a changed or removed game is rewritten without its
    rows. A manifest that cannot be used (unreadable, another format version, part files changed
    since) is logged and the export rebuilt whole.

    Args:
        root: Directory of game logs.
        out: A directory (created) that gets a dataset folder per table, ``games/``,
            ``seats/``, ``events/``, ``probes/``, ``calls/``, each of part files
            ``part-00000.parquet`` … (up to :data:`GAMES_PER_FILE` games each, the same games in
            every table's part of one number; a part with no row of a table is an empty file
            there, so its columns are there); or a file ending in ``.parquet``: one table, the five
            stacked (every column of any table, in table order, then a ``table`` column naming
            the source table; rows game by game), always written whole.
        overwrite: Rebuild from scratch, replacing what exists. Without it an existing output is
            refused (nothing is written) unless it is a folder export of this same ``root``
            (its manifest says so), which is updated. An export of an earlier version
            (``games.parquet`` … in ``out``) counts as existing and is removed, so no stale table
            is left beside the new ones.
        skipped: Receives the reason for each game that cannot be read, which is left out
            (:func:`log_tables`); without it such a game raises.
        counts: When given, receives (folder export) ``games`` (exported), ``read`` (games read
            from their logs this run), ``unchanged`` (games kept without reading),
            ``parts_written`` and ``parts_removed`` (part numbers written or removed this run).
        ray: A Ray cluster's address: each game to read is turned into its batches by a Ray
            task (reading the game from ``root`` as given: shared storage); the driver writes
            them in order, so the files are those of a local export. ``None``: read here.
        on_game: Called after each game read from its logs with (games read, games to read),
            for progress displays (a game kept unchanged is not read, nor counted).

    Returns:
        The paths written: the five table folders, or the one file.

    Raises:
        OutputExistsError: A path to be written exists and ``overwrite`` is false, and it is not
            an export of ``root`` to update (checked before anything is written).
        FileExistsError: ``out`` without the ``.parquet`` suffix is a file, or a table's
            folder in it holds files other than part files (never removed, even with
            ``overwrite``).
        FileNotFoundError, LogFormatError: From :func:`log_tables`; nothing is left written
            (an earlier export in ``out`` is left as it was).
        ImportError, mafialab.harness.RayConnectError: ``ray`` given and Ray is missing or
            unreachable; nothing is written.
    """
    out = Path(out)
    if ray is not None:
        from mafialab.harness import connect_ray

        connect_ray(ray)  # before anything is written: without Ray, no empty folder is left
    if out.suffix == ".parquet":
        return _export_stacked(root, out, overwrite=overwrite, skipped=skipped, ray=ray, on_game=on_game)
    if out.is_file():
        raise FileExistsError(f"{out} is a file; give a directory or a FILE.parquet")
    targets = [out / name for name in TABLES]
    foreign = [p for p in targets if p.is_dir() and not _is_export_folder(p)]
    if foreign:
        raise FileExistsError(f"{foreign[0]} holds other files than {PART_GLOB}; give another folder")
    taken = [p for name in TABLES for p in (out / f"{name}.parquet", out / name) if p.exists()]
    prior, why, other = _prior_export(out, root) if out.is_dir() else (None, None, None)
    if not overwrite:
        if other is not None:
            raise OutputExistsError(out, other)
        if prior is None and why is None and taken:
            raise OutputExistsError(taken[0])
        if why is not None:
            log.warning("%s %s: the export is rebuilt whole", out / MANIFEST_FILE, why)
    else:
        prior = None
    return _export_folder(Path(root), out, prior, taken, skipped=skipped, counts=counts, ray=ray, on_game=on_game)


_Job = tuple[int, list[_ManifestGame], list[tuple[str, Path]]]
"""One part to write: its id, the games it keeps as they are, and the new games (path, folder) read into it."""

_Written = dict[int, tuple[_ManifestPart, list[_ManifestGame]]]
"""The parts written, by id: the part and its games."""

_Read = Callable[[Path], tuple[str, dict[str, "pa.RecordBatch"]]]
"""Reads one game folder into its game id and a record batch per table."""


@dataclass
class _ExportPlan:
    """What one folder export does: the games kept as they are, the games unread, the parts (re)written.

    Attributes:
        hashes: logs digest of every game of the root, by its path under the root.
        parts: the prior export's parts, by id (empty when written anew).
        kept: the prior games still current, by the part that holds them.
        unread: games known unreadable with unchanged logs (filled with the new ones as parts are written).
        rewrite: ids of prior parts written again (a game in them changed or went, or the last one is filled up).
        jobs: the parts to write, in order.
    """

    hashes: dict[str, str]
    parts: dict[int, _ManifestPart]
    kept: dict[int, list[_ManifestGame]]
    unread: list[_ManifestUnread]
    rewrite: set[int]
    jobs: list[_Job]

    @property
    def n_read(self) -> int:
        """How many games this run reads."""
        return sum(len(fresh) for _, _, fresh in self.jobs)


def _plan_export(root: Path, dirs: list[Path], prior: _Manifest | None, *, skipped: list[str] | None) -> _ExportPlan:
    """Sort the game folders ``dirs`` of ``root`` into kept, known unreadable and to read, and lay out the parts."""
    current = [(_rel_path(d, root), d) for d in dirs]
    hashes = {where: logs_digest(d) for where, d in current}
    old = {g.path: g for g in prior.games} if prior is not None else {}
    known_unread: dict[str, _ManifestUnread] = {}
    if prior is not None and skipped is not None and prior.mafialab == __version__:  # another mafialab may read it
        known_unread = {u.path: u for u in prior.unread}
    parts = {p.id: p for p in prior.parts} if prior is not None else {}
    kept: dict[int, list[_ManifestGame]] = {i: [] for i in parts}
    unread: list[_ManifestUnread] = []
    pending: list[tuple[str, Path]] = []
    for where, d in current:
        g = old.get(where)
        u = known_unread.get(where)
        if g is not None and g.hash == hashes[where]:
            kept[g.part].append(g)
        elif u is not None and u.hash == hashes[where]:
            unread.append(u)  # still unreadable: named again, not read again
        else:
            pending.append((where, d))
    rewrite, jobs = _part_jobs(parts, kept, pending)
    return _ExportPlan(hashes=hashes, parts=parts, kept=kept, unread=unread, rewrite=rewrite, jobs=jobs)


def _part_jobs(parts: dict[int, _ManifestPart], kept: dict[int, list[_ManifestGame]],
               pending: list[tuple[str, Path]]) -> tuple[set[int], list[_Job]]:  # fmt: skip
    """The prior parts to rewrite and the parts to write, placing the ``pending`` games.

    A part that held a changed or removed game is rewritten, filled up with new games; then the
    last part is filled up (rather than a part of a few games started each run); the rest go
    into new parts of :data:`GAMES_PER_FILE` games.
    """
    rewrite = {i for i, p in parts.items() if len(kept[i]) < p.games}
    last = max(parts, default=None)
    jobs: list[_Job] = []
    for i in sorted(rewrite):
        room = max(0, GAMES_PER_FILE - len(kept[i]))
        jobs.append((i, kept[i], pending[:room]))
        pending = pending[room:]
    if pending and last is not None and last not in rewrite and len(kept[last]) < GAMES_PER_FILE:
        rewrite.add(last)
        room = GAMES_PER_FILE - len(kept[last])
        jobs.append((last, kept[last], pending[:room]))
        pending = pending[room:]
    nxt = last + 1 if last is not None else 0
    while pending:
        jobs.append((nxt, [], pending[:GAMES_PER_FILE]))
        pending = pending[GAMES_PER_FILE:]
        nxt += 1
    return rewrite, jobs


def _game_reader(
    root: Path, plan: _ExportPlan, *, ray: str | None, on_game: Callable[[int, int], None] | None
) -> tuple[_Read, Generator[Any, None, None] | None]:
    """The function that reads one game for the parts, and the Ray results it takes them from (to close), if any.

    With ``ray`` the games are turned into batches by Ray tasks, taken back in the order the
    parts are written (so the files are those of a local run).
    """
    read: _Read = partial(_game_batches, root=root)
    mapped = None
    if ray is not None and plan.n_read:
        from mafialab.analysis._ray import map_games

        mapped = map_games(read, [d for _, _, fresh in plan.jobs for _, d in fresh], address=ray)
        results = mapped

        def read(_: Path) -> tuple[str, dict[str, pa.RecordBatch]]:
            got = next(results)  # the games come back in the order the parts take them
            if isinstance(got, LogFormatError):
                raise got
            return got

    if on_game is not None:
        read = _counting(read, on_game, plan.n_read)
    return read, mapped


def _write_parts(root: Path, out: Path, dirs: list[Path], plan: _ExportPlan, staging: dict[str, Path], *,
                 skipped: list[str] | None, ray: str | None,
                 on_game: Callable[[int, int], None] | None) -> _Written:  # fmt: skip
    """Write every part of ``plan`` into the ``staging`` folders; on any failure they are removed.

    Raises:
        LogFormatError: no game of the root could be read (with ``skipped``).
    """
    if plan.jobs:
        out.mkdir(parents=True, exist_ok=True)
        for t in staging.values():
            _remove(t)
            t.mkdir()
    written: _Written = {}
    read, mapped = _game_reader(root, plan, ray=ray, on_game=on_game)
    try:
        for i, keep, fresh in plan.jobs:
            written[i] = _write_part(i, keep, fresh, out=out, staging=staging, hashes=plan.hashes,
                                     unread=plan.unread if skipped is not None else None, read=read)  # fmt: skip
        n_games = sum(len(v) for i, v in plan.kept.items() if i not in plan.rewrite)
        n_games += sum(p.games for p, _ in written.values())
        if not n_games and skipped is not None:
            raise LogFormatError(none_readable_message(root, dirs, [u.reason for u in plan.unread]))
    except BaseException:
        for t in staging.values():
            _remove(t)
        raise
    finally:
        if mapped is not None:
            mapped.close()  # the tasks not taken (the export stopped early) are cancelled now
    return written


def _export_folder(root: Path, out: Path, prior: _Manifest | None, taken: list[Path], *,
                   skipped: list[str] | None, counts: dict[str, int] | None,
                   ray: str | None = None,
                   on_game: Callable[[int, int], None] | None = None) -> list[Path]:  # fmt: skip
    """Export ``root`` into the folder ``out``: update ``prior`` (the manifest there), or write anew when ``None``.

    With ``ray`` the games to read are turned into batches by Ray tasks, taken back in the
    order the parts are written (so the files are those of a local run).
    """
    dirs = iter_game_dirs(root)
    if not dirs:
        raise FileNotFoundError(no_games_message(root))
    plan = _plan_export(root, dirs, prior, skipped=skipped)
    staging = {name: out / f".{name}.partial" for name in TABLES}
    written = _write_parts(root, out, dirs, plan, staging, skipped=skipped, ray=ray, on_game=on_game)
    if skipped is not None:
        skipped.extend(u.reason for u in sorted(plan.unread, key=lambda u: u.path))
    new_parts = {i: p for i, p in plan.parts.items() if i not in plan.rewrite}
    new_games = [g for i, gs in plan.kept.items() if i not in plan.rewrite for g in gs]
    for i, (p, gs) in written.items():
        if p.games:
            new_parts[i] = p
            new_games += gs
    manifest = _Manifest(
        schemas=_schemas_digest(),
        root=_root_id(root),
        complete=True,
        mafialab=__version__,
        parts=[new_parts[i] for i in sorted(new_parts)],
        games=sorted(new_games, key=lambda g: g.path),
        unread=sorted(plan.unread, key=lambda u: u.path),
    )
    if counts is not None:
        counts.update(
            games=len(new_games),
            read=plan.n_read,
            unchanged=sum(len(v) for v in plan.kept.values()),
            parts_written=sum(1 for p, _ in written.values() if p.games),
            parts_removed=sum(1 for i in plan.parts if i not in new_parts),
        )
    if prior is not None and not plan.jobs and manifest == prior:
        return [out / name for name in TABLES]  # nothing changed: nothing is written
    # a run killed from here on leaves a manifest saying so: the next run rebuilds the export
    unfinished = (prior or _Manifest(schemas="", root=_root_id(root), complete=False)).model_copy(
        update={"complete": False}
    )
    write_atomic(out / MANIFEST_FILE, unfinished.model_dump_json())
    _move_parts_in(out, staging, written, replace=taken if prior is None else None)
    write_atomic(out / MANIFEST_FILE, manifest.model_dump_json(indent=1) + "\n")
    return [out / name for name in TABLES]


def _move_parts_in(out: Path, staging: dict[str, Path], written: _Written, *, replace: list[Path] | None) -> None:
    """Put the staged tables in place: whole (removing the old tables ``replace``), or part by part when ``None``.

    A part left without a game (every new game in it unreadable) is not kept; updating part by
    part, its earlier file goes.
    """
    for t in staging.values():
        for i, (p, _) in written.items():
            if not p.games:
                (t / _part_name(i)).unlink()
    if replace is not None:  # a folder is not replaced by a rename; an earlier version's tables go too
        for old_table in replace:
            _remove(old_table)
        for name, t in staging.items():
            t.replace(out / name)
        return
    for name, t in staging.items():
        for i, (p, _) in written.items():
            if p.games:
                (t / _part_name(i)).replace(out / name / _part_name(i))
            else:
                (out / name / _part_name(i)).unlink(missing_ok=True)
        _remove(t)


def _counting(read: Callable[[Path], Any], on_game: Callable[[int, int], None], total: int) -> Callable[[Path], Any]:
    """``read``, calling ``on_game(games read, total)`` after each game (read or refused)."""
    done = 0

    def counted(d: Path) -> Any:
        nonlocal done
        try:
            return read(d)
        finally:
            done += 1
            on_game(done, total)

    return counted


def _export_stacked(
    root: Path, out: Path, *, overwrite: bool, skipped: list[str] | None, ray: str | None = None,
    on_game: Callable[[int, int], None] | None = None,
) -> list[Path]:  # fmt: skip
    """:func:`export_parquet` into one file ``out``, written whole (the five tables stacked)."""
    if out.exists() and not overwrite:
        raise OutputExistsError(out)
    with atomic_path(out) as tmp:  # the file appears whole, or not at all
        writer = _Parts(_stacked_schema(), path=tmp)
        try:
            stacked = _stacked_schema()
            total = len(iter_game_dirs(root)) if on_game is not None else 0
            for n, game in enumerate(iter_log_batches(root, skipped, ray=ray), 1):
                for name, batch in game.items():
                    writer.add(_stack(name, batch, stacked))
                if on_game is not None:
                    on_game(n, total)
            writer.close()
        except BaseException:
            writer.abort()
            raise
    return [out]


def belief_edges(root: Path, method: Method = DEFAULT) -> pd.DataFrame:
    """Timestamped, confidence-weighted belief edges of every probed game under ``root``.

    One edge per item of a usable probe answer (answers re-parsed as the metrics do):

    * ``role_assessment``: source = probed player, target = the player assessed, label =
      ``role:<normalised role>`` (``role:Unknown``), weight = confidence / 100;
    * ``suspicion_ranking``: label ``suspicion:<rank>`` (1 = most suspected, in stored order),
      weight = the stated score (``NaN`` if none);
    * ``social_map``: source = probed player, target = the player whose attitude it predicts,
      label ``attitude:<trusts|neutral|suspects>``, weight = confidence / 100.

    ``time`` is the probe's Unix timestamp (``after_seq``, the event order, when missing).

    Returns:
        A DataFrame with columns :data:`TGN_COLUMNS`, sorted by game and time.
    """
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for g in load_games(root):
        vocab = vocabulary(g, method)
        for p in g.probes:
            ans = answer(p, method, g.names)
            base = {
                "source": p.player,
                "time": p.ts if p.ts is not None else float(p.after_seq),
                "game_id": g.game_id,
                "round": p.round,
                "msg_index": p.msg,
                "probe_id": p.probe_id,
                "after_seq": p.after_seq,
            }
            items: list[Any] = []
            if p.probe_id in ("role_assessment", "suspicion_ranking") and isinstance(ans, list):
                items = ans
            elif p.probe_id == "social_map" and isinstance(ans, dict) and isinstance(ans.get("toward_me"), list):
                items = ans["toward_me"]
            rank = 0
            for item in items:
                if not isinstance(item, dict) or not isinstance(item.get("player"), str):
                    continue
                tgt = item["player"]
                if tgt == p.player or tgt not in g.role:
                    continue
                if p.probe_id == "role_assessment":
                    role = vocab.normalise(item.get("guessed_role"))
                    if role is None:
                        continue
                    c = to_float(item.get("confidence"))
                    rows.append({**base, "target": tgt, "label": f"role:{role}",
                                 "weight": c / 100 if c is not None else float("nan")})  # fmt: skip
                elif p.probe_id == "suspicion_ranking":
                    rank += 1
                    s = to_float(item.get("score"))
                    rows.append({**base, "target": tgt, "label": f"suspicion:{rank}",
                                 "weight": s if s is not None else float("nan")})  # fmt: skip
                else:
                    att = item.get("attitude")
                    if att not in ("trusts", "neutral", "suspects"):
                        continue
                    c = to_float(item.get("confidence"))
                    rows.append({**base, "target": tgt, "label": f"attitude:{att}",
                                 "weight": c / 100 if c is not None else float("nan")})  # fmt: skip
    df = pd.DataFrame(rows, columns=list(TGN_COLUMNS))
    return df.sort_values(["game_id", "time"], kind="stable").reset_index(drop=True)
