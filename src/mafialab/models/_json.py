"""Tolerant JSON parsing of model answers (fences, trailing text, truncation)."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*(?:```\s*)?$", re.DOTALL)


def parse_json(text: str) -> tuple[Any, bool]:
    """Parse a model's JSON answer.

    Tries strict JSON first; then strips a Markdown fence and repairs with ``json-repair``
    (closing a truncated string or object, dropping trailing prose).

    Args:
        text: The raw answer.

    Returns:
        ``(value, repaired)``: the parsed value (``None`` when nothing usable was found) and
        whether repair was needed. Never raises on any text (deep nesting, huge or
        non-finite numbers, control characters give ``None`` or the repaired value).
    """
    s = text.strip()
    if not s:
        return None, False
    try:
        return json.loads(s), False
    except (ValueError, RecursionError):  # RecursionError: degenerate deeply nested "{{{{..." output
        pass
    m = _FENCE.match(s)
    if m:
        s = m.group(1)
    start = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None, True
    import json_repair

    try:
        value = json_repair.loads(s[start:])
    except Exception:  # json-repair raises assorted errors on garbage
        return None, True
    if value in ("", None):
        return None, True
    return value, True
