"""Hugging Face dataset folders: the Parquet export with a dataset card, and back into game logs.

``export hf`` is ``export parquet`` into a folder (same tables, same schemas, same incremental
update) plus a ``README.md`` dataset card whose YAML front matter declares one ``datasets``
config per table; ``datasets.load_dataset(FOLDER, name=TABLE)`` reads it. Nothing is uploaded.
``import hf`` rebuilds the logs from the tables (the games table keeps each log's header and
status records), one part at a time.
"""

from __future__ import annotations

import json
import logging
import shutil
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from pydantic import TypeAdapter

from mafialab import __version__
from mafialab.analysis._export import (
    EXTRA_COLUMN,
    MANIFEST_FILE,
    PART_GLOB,
    TABLE_SCHEMAS,
    TABLES,
    Kind,
    OutputExistsError,
    _arrow_type,
    _cell,
    _is_export_folder,
    _kind,
    _remove,
    export_parquet,
)
from mafialab.engine import Event
from mafialab.record import (
    CALLS_FILE,
    GAME_FILE,
    PARTIAL_DIR,
    PROBES_FILE,
    GameHeader,
    GameStatus,
    JsonlWriter,
    LogFormatError,
    atomic_path,
    write_atomic,
)

log = logging.getLogger(__name__)

CARD_FILE = "README.md"
"""The dataset card of an ``export hf`` folder (the Hub reads the configs from its YAML front matter)."""

HfTable = tuple[str, tuple[tuple[str, Kind], ...], Iterable[dict[str, Any]]]
"""A table of an ``export hf`` folder besides the read side's five: ``(name, columns, rows)``;
``columns`` are ``(column, kind)`` pairs as in :data:`~mafialab.analysis._export.TABLE_SCHEMAS`
(e.g. the belief-shift benchmark's items, from :mod:`mafialab.beliefshift`)."""

_DTYPES = {"str": "string", "json": "string", "int": "int64", "float": "float64", "bool": "bool"}
"""``datasets`` feature dtype of each column kind of :data:`~mafialab.analysis._export.TABLE_SCHEMAS`."""


def export_hf(root: Path, out: Path, *, overwrite: bool = False, license: str = "unknown",
              skipped: list[str] | None = None, counts: dict[str, int] | None = None,
              on_game: Callable[[int, int], None] | None = None, extra: Sequence[HfTable] = ()) -> Path:  # fmt: skip
    """Write the tables of ``root`` as a Hugging Face dataset folder ``out`` (never uploaded).

    The folder is :func:`~mafialab.analysis.export_parquet`'s folder export (``out/<table>/part-*.parquet``
    and ``_manifest.json``; run again, it is updated incrementally) plus ``README.md``, a
    dataset card: YAML front matter with ``license``, one ``configs`` entry per table
    (``data_files: <table>/*.parquet``, ``games`` the default), ``dataset_info`` (each table's
    features, i.e. its schema, and row count) and ``mafialab_version``; then the rule sets,
    models, counts and the schema of each table as text.

    Args:
        root: Directory of game logs.
        out: The dataset folder (created).
        overwrite: As for :func:`~mafialab.analysis.export_parquet` (rebuild from scratch);
            also replaces a ``README.md`` that is not an earlier card of this export.
        license: The card's ``license`` field (a Hub licence id such as ``cc-by-4.0``;
            ``unknown`` until the owner of the games says).
        skipped: As for :func:`~mafialab.analysis.export_parquet`.
        counts: As for :func:`~mafialab.analysis.export_parquet`.
        on_game: As for :func:`~mafialab.analysis.export_parquet`.
        extra: More tables (:data:`HfTable`), each written whole as ``out/<name>/part-00000.parquet``
            and declared in the card like the others; one without rows is not written (an
            earlier export's folder of that name is removed).

    Returns:
        The card's path.

    Raises:
        OutputExistsError: ``out`` holds a ``README.md`` but no export (without ``overwrite``),
            or what :func:`~mafialab.analysis.export_parquet` refuses.
        ValueError: ``out`` ends in ``.parquet`` (a dataset is a folder).
        FileExistsError, FileNotFoundError, mafialab.record.LogFormatError: As for
            :func:`~mafialab.analysis.export_parquet`.
    """
    out = Path(out)
    if out.suffix == ".parquet":
        raise ValueError(f"{out}: a Hugging Face dataset is a folder; give a folder name, not FILE.parquet")
    card = out / CARD_FILE
    if card.exists() and not overwrite and not (out / MANIFEST_FILE).is_file():
        raise OutputExistsError(card)
    export_parquet(root, out, overwrite=overwrite, skipped=skipped, counts=counts, on_game=on_game)
    schemas = {name: columns for name, columns, rows in extra if _write_whole(out / name, columns, rows)}
    write_atomic(card, dataset_card(out, license=license, extra=schemas))
    return card


def _write_whole(folder: Path, columns: tuple[tuple[str, Kind], ...], rows: Iterable[dict[str, Any]]) -> bool:
    """Write ``rows`` as ``folder/part-00000.parquet`` (typed as ``columns``); none: remove ``folder``.

    Returns whether the table has rows. A value of another type than its column's is null, logged.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = list(rows)
    if folder.exists() and not _is_export_folder(folder):
        raise FileExistsError(f"{folder} holds other files than {PART_GLOB}; give another folder")
    if not rows:
        if folder.exists():
            _remove(folder)
        return False
    arrays = []
    for col, kind in columns:
        values = []
        for r in rows:
            try:
                values.append(_cell(r.get(col), kind))
            except TypeError as err:
                log.warning("%s column %r: %s, left null in the export", folder.name, col, err)
                values.append(None)
        arrays.append(pa.array(values, type=_arrow_type(kind)))
    table = pa.Table.from_arrays(arrays, schema=pa.schema([pa.field(c, _arrow_type(k)) for c, k in columns]))
    if folder.exists():
        _remove(folder)
    folder.mkdir(parents=True)
    with atomic_path(folder / "part-00000.parquet") as tmp:
        pq.write_table(table, tmp)
    return True


def model_columns(model: type[Any]) -> tuple[tuple[str, Kind], ...]:
    """A pydantic record model's fields as ``(column, kind)`` pairs (nested values: JSON), for an :data:`HfTable`."""
    return tuple((name, _kind(f.annotation)) for name, f in model.model_fields.items())


def hf_rows(src: Path, name: str, columns: tuple[tuple[str, Kind], ...]) -> Iterator[dict[str, Any]]:
    """The rows of table ``name`` of the dataset folder ``src`` as records (JSON columns decoded; nulls left out).

    Nothing when the folder has no such table.
    """
    import pyarrow.parquet as pq

    for f in sorted((Path(src) / name).glob(PART_GLOB)):
        for row in pq.read_table(f).to_pylist():
            yield {c: _value(row.get(c), k) for c, k in columns if row.get(c) is not None}


def _table_facts(out: Path, tables: Iterable[str]) -> tuple[dict[str, int], Counter[str], Counter[str], Counter[str]]:
    """Rows per table, games per rule set, seats per model and games per source of the export in ``out``."""
    import pyarrow.parquet as pq

    rows = dict.fromkeys(tables, 0)
    rules: Counter[str] = Counter()
    models: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    for t in rows:
        for f in sorted((out / t).glob(PART_GLOB)):
            rows[t] += pq.ParquetFile(f).metadata.num_rows
            if t == "games":
                tab = pq.read_table(f, columns=["rules_id", "source"])
                rules.update(str(x) for x in tab.column("rules_id").to_pylist())
                sources.update(str(x) for x in tab.column("source").to_pylist())
            elif t == "seats":
                models.update(str(x) for x in pq.read_table(f, columns=["model"]).column("model").to_pylist())
    return rows, rules, models, sources


def dataset_card(
    out: Path, *, license: str = "unknown", extra: dict[str, tuple[tuple[str, Kind], ...]] | None = None
) -> str:
    """The ``README.md`` dataset card of the export in ``out`` (front matter, then text); ``extra``: more tables."""
    schemas = {**TABLE_SCHEMAS, **(extra or {})}
    names = [*TABLES, *(extra or {})]
    rows, rules, models, sources = _table_facts(out, names)
    meta = {
        "license": license,
        "pretty_name": f"mafialab games ({out.name})",
        "tags": ["mafialab", "social-deduction", "mafia", "werewolf", "llm-agents"],
        "mafialab_version": __version__,
        "configs": [
            {"config_name": t, "data_files": [{"split": "train", "path": f"{t}/*.parquet"}], **({"default": True}
             if t == "games" else {})}
            for t in names
        ],
        "dataset_info": [
            {"config_name": t, "features": [{"name": c, "dtype": _DTYPES[k]} for c, k in schemas[t]],
             "splits": [{"name": "train", "num_examples": rows[t]}]}
            for t in names
        ],
    }  # fmt: skip
    lines = [
        "---",
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# mafialab games: {out.name}",
        "",
        f"Exported by mafialab {__version__} (`mafialab export hf`). Load a table with "
        f'`datasets.load_dataset("path/to/{out.name}", name="probes")`, or read `<table>/*.parquet` with '
        "pandas, Polars or DuckDB; `mafialab import hf` turns the folder back into game logs. The column "
        "meanings are in mafialab's docs/export.md.",
        "",
        f"Licence: `{license}`.",
        "",
        "## Counts",
        "",
        "| table | rows |",
        "|---|---|",
        *(f"| {t} | {rows[t]} |" for t in names),
        "",
        "## Rule sets",
        "",
        "| rule set | games |",
        "|---|---|",
        *(f"| {r} | {n} |" for r, n in sorted(rules.items())),
        "",
        "Sources: " + ", ".join(f"{s} ({n})" for s, n in sorted(sources.items())) + ".",
        "",
        "## Models",
        "",
        "| model (or agent) | seats |",
        "|---|---|",
        *(f"| {_md(m)} | {n} |" for m, n in sorted(models.items())),
        "",
        "## Schema",
        "",
        *(
            f"- `{t}`: " + ", ".join(f"`{c}` ({_DTYPES[k]}{', JSON' if k == 'json' else ''})" for c, k in schemas[t])
            for t in names
        ),
        "",
    ]
    return "\n".join(lines)


def _md(text: str) -> str:
    """``text`` for a Markdown table cell (model names are data: no pipe, no newline breaks the table)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


_EVENT_CLASSES: dict[str, type] = {
    cls.model_fields["kind"].default: cls for cls in typing.get_args(typing.get_args(Event)[0])
}
"""Event class by ``kind`` (to put an events row's ``text`` back as ``text`` or ``statement``)."""

_EVENTS: TypeAdapter[Event] = TypeAdapter(Event)


def _value(v: Any, kind: str) -> Any:
    """A cell as the record held it: a JSON column's list or object decoded; other values as they are."""
    if kind == "json" and isinstance(v, str) and v[:1] in ("[", "{"):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def _record(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """A probes or calls row back as its record (null cells left out; ``extra`` merged back in)."""
    rec = {c: _value(row.get(c), k) for c, k in TABLE_SCHEMAS[table] if c != EXTRA_COLUMN and row.get(c) is not None}
    extra = _value(row.get(EXTRA_COLUMN), "json")
    if isinstance(extra, dict):
        rec.update(extra)
    return rec


def _event(row: dict[str, Any]) -> Event:
    """An events row back as its engine event.

    Raises:
        LogFormatError: The row is not an event (the message names the game and ``seq``).
    """
    data = _value(row.get("data"), "json")
    rec: dict[str, Any] = dict(data) if isinstance(data, dict) else {}
    rec.update({k: row.get(k) for k in ("seq", "round", "phase", "kind", "ts")})
    rec["visibility"] = {
        "public": bool(row.get("public")),
        "teams": [t for t in (row.get("teams") or "").split(",") if t],
        "seats": [int(s) for s in (row.get("seats") or "").split(",") if s],
    }
    fields = getattr(_EVENT_CLASSES.get(str(row.get("kind"))), "model_fields", {})
    for k in ("seat", "target"):
        if k in fields:
            rec[k] = row.get(k)
    if row.get("text") is not None or "text" in fields or "statement" in fields:
        rec["text" if "text" in fields else "statement"] = row.get("text")
    try:
        return _EVENTS.validate_python(rec)
    except ValueError as err:
        raise LogFormatError(
            f"game {row.get('game_id')}: events row seq {row.get('seq')}: not an event ({err})"
        ) from None


def _game_folder(out: Path, row: dict[str, Any]) -> Path:
    """Where a games row's game is written: its ``path`` under ``out`` when that stays inside, else its id."""
    where = row.get("path")
    p = PurePosixPath(where) if isinstance(where, str) and where else None
    if p is None or p.is_absolute() or ".." in p.parts or p.parts[0].startswith("."):
        if where:
            log.warning("games row %s: path %r is not a folder under the output; written as %s",
                        row.get("game_id"), where, row.get("game_id"))  # fmt: skip
        p = PurePosixPath(str(row.get("game_id")))
    return out.joinpath(*p.parts)


def _part_names(src: Path) -> list[str]:
    """The part files of ``src``'s tables (every table's folder holds the same names).

    Raises:
        FileNotFoundError: ``src`` is not an export (no ``games/`` parts), or a table lacks a part.
    """
    names = sorted(p.name for p in (src / "games").glob(PART_GLOB))
    if not names:
        raise FileNotFoundError(f"{src}: no games/{PART_GLOB}: not a dataset folder of `mafialab export hf`")
    for t in TABLES:
        missing = [n for n in names if not (src / t / n).is_file()]
        if missing:
            raise FileNotFoundError(f"{src / t / missing[0]}: missing (every table has the parts games/ has)")
    return names


def import_hf(src: Path, out: Path, *, on_game: Callable[[int, int], None] | None = None) -> list[Path]:
    """Turn a dataset folder written by :func:`export_hf` (or ``export parquet``) back into game logs.

    Each games row becomes ``out/<path>/`` (the game's folder under the exported directory)
    holding ``game.jsonl`` (the header, the events in ``seq`` order, the status record),
    ``probes.jsonl`` and ``calls.jsonl`` (when the game has rows there). The tables are read
    one part (up to 100 games) at a time. A game is written into ``out/.partial/`` and moved
    into place whole.

    Args:
        src: The dataset folder (``games/``, ``seats/``, ``events/``, ``probes/``, ``calls/``).
        out: Folder to write the game folders into (created).
        on_game: Called after each game with (games written, games in the dataset).

    Returns:
        The game folders written, in the order of the games table.

    Raises:
        FileNotFoundError: ``src`` is not such a folder.
        FileExistsError: A game's folder exists in ``out`` (nothing is overwritten; the games
            before it are written).
        mafialab.record.LogFormatError: A games row without its ``header`` (an export of an
            earlier mafialab: export again), or a row that is not a record (message names the game).
    """
    import pyarrow.parquet as pq

    src, out = Path(src), Path(out)
    names = _part_names(src)
    total = sum(pq.ParquetFile(src / "games" / n).metadata.num_rows for n in names)
    written: list[Path] = []
    for name in names:
        tables = {t: pq.read_table(src / t / name).to_pylist() for t in TABLES}
        by_game: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for t in ("events", "probes", "calls"):
            for r in tables[t]:
                by_game.setdefault(str(r.get("game_id")), {}).setdefault(t, []).append(r)
        for g in tables["games"]:
            written.append(_write_game(out, g, by_game.get(str(g.get("game_id")), {})))
            if on_game is not None:
                on_game(len(written), total)
    for empty in (out / PARTIAL_DIR / "hf", out / PARTIAL_DIR):
        if empty.is_dir() and not any(empty.iterdir()):
            empty.rmdir()
    return written


def _write_game(out: Path, game: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> Path:
    """Write one game's logs from its games row and its rows of the other tables; returns its folder."""
    gid = str(game.get("game_id"))
    if not game.get("header"):
        raise LogFormatError(f"games row {gid}: no header (an export of an earlier mafialab): export it again")
    try:
        header = GameHeader.model_validate_json(game["header"])
        status = GameStatus.model_validate_json(game["status"]) if game.get("status") else None
    except ValueError as err:
        raise LogFormatError(f"games row {gid}: header or status is not a record ({err})") from None
    final = _game_folder(out, game)
    if final.exists():
        raise FileExistsError(f"{final} exists; nothing is overwritten: import into another folder")
    stage = out / PARTIAL_DIR / "hf" / gid
    if stage.exists():
        shutil.rmtree(stage)
    events = sorted((_event(r) for r in rows.get("events", [])), key=lambda e: e.seq)
    with JsonlWriter(stage / GAME_FILE, clock=None) as w:
        w.write(header)
        for ev in events:
            w.write(ev)
        if status is not None:
            w.write(status)
    for table, file in (("probes", PROBES_FILE), ("calls", CALLS_FILE)):
        if rows.get(table):
            with JsonlWriter(stage / file, clock=None) as w:
                for r in rows[table]:
                    w.write(_record(table, r))
    final.parent.mkdir(parents=True, exist_ok=True)
    stage.replace(final)
    return final
