"""Belief-shift benchmark files as tables of a Hugging Face dataset folder (``export hf``, ``import hf``).

Two tables beside the read side's five: ``beliefshift_benches`` (one row per ``BENCH.jsonl``
under the exported folder: its path there, ``bench_id``, its header record as JSON, its item
count) and ``beliefshift_items`` (one row per item: ``bench_id``, then the fields of
:class:`~mafialab.beliefshift._schema.BenchItem`, nested values as JSON).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path, PurePosixPath
from typing import Any

from mafialab.analysis import HfTable, hf_rows, model_columns
from mafialab.beliefshift._io import BeliefShiftFormatError, read_bench, write_jsonl
from mafialab.beliefshift._schema import BenchHeader, BenchItem
from mafialab.record import GAME_FILE

log = logging.getLogger(__name__)

BENCHES = "beliefshift_benches"
ITEMS = "beliefshift_items"
_BENCH_COLUMNS: tuple[tuple[str, Any], ...] = (("path", "str"), ("bench_id", "str"), ("header", "json"),
                                               ("n_items", "int"))  # fmt: skip
_ITEM_COLUMNS = (
    ("bench_id", "str"),
    *((c, "str" if c == "observer_seed" else k) for c, k in model_columns(BenchItem) if c != "kind"),
)
"""``observer_seed`` is text: a derived seed may not fit in a signed 64-bit integer."""


def _is_bench(path: Path) -> bool:
    """Whether ``path``'s first line is a ``bench_header`` record (read one line, not the file)."""
    try:
        with path.open(encoding="utf-8") as fh:
            first = json.loads(fh.readline() or "null")
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and first.get("kind") == "bench_header"


def bench_files(root: Path) -> list[Path]:
    """The benchmark files (``BENCH.jsonl`` of ``beliefshift freeze``, any name) under ``root``, not in game folders."""
    root = Path(root)
    found = []
    for p in sorted(root.rglob("*.jsonl")):
        rel = p.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or (p.parent / GAME_FILE).is_file():
            continue
        if _is_bench(p):
            found.append(p)
    return found


def bench_tables(root: Path) -> list[HfTable]:
    """The two belief-shift tables of the benchmark files under ``root`` (empty tables when none).

    A file that cannot be read as a benchmark is left out and logged.
    """
    benches: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    for p in bench_files(root):
        try:
            header, its = read_bench(p)
        except BeliefShiftFormatError as err:
            log.warning("%s: left out of the export (%s)", p, err)
            continue
        benches.append({"path": p.relative_to(root).as_posix(), "bench_id": header.bench_id,
                        "header": header.model_dump(mode="json"), "n_items": len(its)})  # fmt: skip
        items += [{"bench_id": header.bench_id, **i.model_dump(mode="json")} for i in its]
    return [(BENCHES, _BENCH_COLUMNS, benches), (ITEMS, _ITEM_COLUMNS, items)]


def restore_benches(src: Path, out: Path) -> list[Path]:
    """Write the benchmark files of the dataset folder ``src`` under ``out`` (at their paths); the files written.

    Raises:
        FileExistsError: A file exists at a bench's path (nothing is overwritten).
        BeliefShiftFormatError: A row is not a benchmark record (the message names the bench).
    """
    by_bench: dict[str, list[dict[str, Any]]] = {}
    for row in hf_rows(src, ITEMS, _ITEM_COLUMNS):
        by_bench.setdefault(str(row.pop("bench_id", "")), []).append(row)
    written = []
    for b in hf_rows(src, BENCHES, _BENCH_COLUMNS):
        rel = PurePosixPath(str(b.get("path") or f"{b.get('bench_id')}.jsonl"))
        if rel.is_absolute() or ".." in rel.parts:
            rel = PurePosixPath(f"{b.get('bench_id')}.jsonl")
        path = Path(out).joinpath(*rel.parts)
        if path.exists():
            raise FileExistsError(f"{path} exists; nothing is overwritten: import into another folder")
        try:
            header = BenchHeader.model_validate(b.get("header"))
            items = [BenchItem.model_validate(r) for r in by_bench.get(header.bench_id, [])]
        except ValueError as err:
            raise BeliefShiftFormatError(f"{src}: bench {b.get('bench_id')}: not a benchmark record ({err})") from None
        write_jsonl(path, header, items)
        written.append(path)
    return written
