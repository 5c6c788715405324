"""Reading and writing the benchmark's JSONL files (header line, then records)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from mafialab._files import atomic_path
from mafialab._words import count
from mafialab.beliefshift._schema import (
    ANNOTATION_VERSION,
    BENCH_VERSION,
    RESULTS_VERSION,
    Annotation,
    AnnotationHeader,
    BenchHeader,
    BenchItem,
    ResultRecord,
    ResultsHeader,
)
from mafialab.config import validation_message
from mafialab.record import JsonlWriter, LogFormatError, iter_jsonl

H = TypeVar("H", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)


class BeliefShiftFormatError(ValueError):
    """A benchmark file could not be read; the message names the file, line and field."""


def write_jsonl(path: Path, header: BaseModel | None, records: Iterable[BaseModel]) -> None:
    """Write ``header`` then ``records`` to ``path``, replacing the file.

    The file is written beside ``path`` and renamed over it (:func:`mafialab.record.atomic_path`),
    so an existing file is never left half-written.

    Raises:
        IsADirectoryError: ``path`` is a directory (nothing is written).
        OSError: The file cannot be written (``path`` is unchanged, the temporary file removed).
    """
    with atomic_path(path) as tmp, JsonlWriter(tmp, clock=None) as w:  # a folder is refused before any work
        if header is not None:
            w.write(header)
        for r in records:
            w.write(r)


def sha256_file(path: Path) -> str:
    """SHA-256 hex digest of a file."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def content_id(records: Sequence[BaseModel]) -> str:
    """First 16 hex digits of the SHA-256 of the records' canonical JSON."""
    h = hashlib.sha256()
    for r in records:
        h.update(json.dumps(r.model_dump(mode="json"), sort_keys=True, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def _validate(model: type[R], obj: dict[str, object], path: Path, line: int) -> R:
    try:
        return model.model_validate(obj)
    except ValidationError as err:
        kind = obj.get("kind")
        what = f"{kind} record" if isinstance(kind, str) and kind else "record"
        raise BeliefShiftFormatError(f"{path}:{line}: invalid {what} ({validation_message(err, limit=1)})") from None


def _read(
    path: Path,
    header_model: type[H],
    record_model: type[R],
    header_kind: str,
    version: int,
    *,
    need_header: bool,
    strict: bool = False,
) -> tuple[H | None, list[R], list[str]]:
    path = Path(path)
    problems: list[str] = []
    header: H | None = None
    records: list[R] = []
    try:
        rows = list(iter_jsonl(path, problems, warn=not strict))
    except LogFormatError as err:
        raise BeliefShiftFormatError(str(err)) from None
    if strict and problems:
        raise BeliefShiftFormatError(problems[0])
    for n, obj in rows:
        if obj.get("kind") == header_kind:
            if header is not None:
                raise BeliefShiftFormatError(f"{path}:{n}: second {header_kind} record")
            header = _validate(header_model, obj, path, n)
            v = getattr(header, "version", version)
            if v > version:
                raise BeliefShiftFormatError(
                    f"{path}:{n}: version: file format {v} is newer than this mafialab reads ({version})"
                )
        else:
            known = list(record_model.model_fields)
            if "kind" not in obj and not set(obj) & set(known):  # no field of the format: another kind of file
                fields = ", ".join(list(obj)[:5]) or "none"
                what = header_kind.removesuffix("_header")
                raise BeliefShiftFormatError(
                    f"{path}:{n}: not {'an' if what[0] in 'aeiou' else 'a'} {what} record (fields: {fields}; "
                    f"expected {', '.join(known[:4])}, ...): is this the right file?"
                )
            records.append(_validate(record_model, obj, path, n))
    if need_header and header is None:
        raise BeliefShiftFormatError(f"{path}: no {header_kind} record (is this the right file?)")
    return header, records, problems


@dataclass
class AnnotationSet:
    """An annotation file read back.

    Attributes:
        path: The file.
        header: Its header, or ``None`` for a bare list of annotations (e.g. hand-made).
        annotations: The (message, target) records.
        problems: Always empty since :func:`read_annotations` refuses an unreadable line
            (kept for callers that build a set by hand).
    """

    path: Path
    header: AnnotationHeader | None
    annotations: list[Annotation]
    problems: list[str] = field(default_factory=list)


def read_annotations(path: Path) -> AnnotationSet:
    """Read ``ANN.jsonl``.

    Every line must be a valid record: a line that is not a JSON object (not JSON, torn) is
    refused like an invalid record, never skipped, because a score or a benchmark computed on
    part of the annotations would look complete. ``beliefshift annotate`` writes the file
    whole (temporary file, then rename), so a crash never leaves a torn line behind.

    Raises:
        BeliefShiftFormatError: Unreadable file, a line that is not a JSON object, or an invalid
            record (message names ``file:line`` and the field).
    """
    header, recs, problems = _read(
        path, AnnotationHeader, Annotation, "annotation_header", ANNOTATION_VERSION, need_header=False, strict=True
    )
    return AnnotationSet(Path(path), header, recs, problems)


def read_bench(path: Path) -> tuple[BenchHeader, list[BenchItem]]:
    """Read ``BENCH.jsonl``.

    Raises:
        BeliefShiftFormatError: Missing header, newer version, or an invalid record.
    """
    header, items, _ = _read(path, BenchHeader, BenchItem, "bench_header", BENCH_VERSION, need_header=True)
    assert header is not None
    if header.n_items != len(items):
        raise BeliefShiftFormatError(
            f"{path}: n_items: header says {count(header.n_items, 'item')}, file has {len(items)} (truncated file?)"
        )
    return header, items


def read_results(path: Path) -> tuple[ResultsHeader | None, list[ResultRecord], list[str]]:
    """Read one results file: ``(header or None, records, problems)``.

    A torn last line (crash while writing) is reported in ``problems`` and skipped.

    Raises:
        BeliefShiftFormatError: Invalid record or newer version.
    """
    return _read(path, ResultsHeader, ResultRecord, "results_header", RESULTS_VERSION, need_header=False)
