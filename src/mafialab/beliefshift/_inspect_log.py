"""Result records from Inspect AI logs of the ``mafialab/beliefshift`` task.

The task's scorer keeps each observation's :class:`ResultRecord` in its score's metadata
(key ``result``), so ``beliefshift report`` reads an Inspect log (``.eval`` or ``.json``)
as it reads a results file. Reading needs the optional extra ``mafialab[inspect]``.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mafialab.beliefshift._io import BeliefShiftFormatError
from mafialab.beliefshift._schema import ResultRecord
from mafialab.config import validation_message

RESULT_KEY = "result"
"""Key of the :class:`ResultRecord` (as JSON) in a ``mafialab/beliefshift`` score's metadata."""

INSPECT_HINT = "pip install 'mafialab[inspect]'"
"""Install line of the optional Inspect AI extra."""


def is_inspect_log(path: Path) -> bool:
    """Whether ``path`` looks like an Inspect AI log: a ``.eval`` file, or a ``.json`` file.

    A ``.eval`` log is a zip archive; a ``.json`` log is one JSON object (never JSON Lines,
    so a results file, whose first line is a record, is never taken for one).
    """
    path = Path(path)
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json" or not path.is_file():
        return False
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip()
    return head.startswith(b"{") and b'"eval"' in head


def read_inspect_results(path: Path) -> tuple[list[ResultRecord], list[str]]:
    """Read the observations of a ``mafialab/beliefshift`` Inspect log: ``(records, problems)``.

    Each sample's score carrying ``metadata["result"]`` gives one record; a sample without
    one (an error, a sample cancelled before it was scored) is listed in ``problems``.

    Args:
        path: An Inspect log file (``.eval`` or ``.json``).

    Raises:
        ImportError: Inspect AI is not installed (the message gives the install line).
        BeliefShiftFormatError: The file is not a readable Inspect log, not a log of the
            ``mafialab/beliefshift`` task, or holds an invalid record (names sample and field).
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as err:  # pragma: no cover - exercised without the extra only
        raise ImportError(f"{path}: reading Inspect logs needs Inspect AI: {INSPECT_HINT}") from err
    path = Path(path)
    try:
        try:  # the records are in the scores: skip the transcripts (much of a large log)
            log = read_eval_log(str(path), exclude_fields={"messages", "events"})
        except TypeError:  # an Inspect without exclude_fields
            log = read_eval_log(str(path))
    except (OSError, ValueError, zipfile.BadZipFile, json.JSONDecodeError) as err:
        raise BeliefShiftFormatError(f"{path}: not a readable Inspect log ({type(err).__name__}: {err})") from None
    task = log.eval.task
    if not task.endswith("beliefshift"):
        raise BeliefShiftFormatError(f"{path}: task: an Inspect log of {task!r}, not of mafialab/beliefshift")
    records: list[ResultRecord] = []
    problems: list[str] = []
    for sample in log.samples or []:
        found = _result_of(sample.scores or {})
        if found is None:
            why = f"error: {sample.error.message}" if sample.error is not None else "no result in its score"
            problems.append(f"{path}: sample {sample.id}: {why}")
            continue
        try:
            records.append(ResultRecord.model_validate(found))
        except ValidationError as err:
            raise BeliefShiftFormatError(
                f"{path}: sample {sample.id}: invalid result ({validation_message(err, limit=1)})"
            ) from None
    if log.status != "success":
        problems.append(f"{path}: the eval's status is {log.status!r}; results may be partial")
    return records, problems


def _result_of(scores: dict[str, Any]) -> dict[str, Any] | None:
    for score in scores.values():
        meta = getattr(score, "metadata", None) or {}
        if isinstance(meta.get(RESULT_KEY), dict):
            return dict(meta[RESULT_KEY])
    return None
