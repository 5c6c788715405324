"""Strict JSON for text from outside the process: every number must be a finite JSON number.

Python's :func:`json.loads` accepts ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON) and
turns ``1e999`` into an infinite float; none of them can be written back to a log as a
number, and a ``NaN`` passes every ``minimum``/``maximum`` check of a JSON schema. Answers
from models, remote seats and bus workers are read with :func:`loads_finite`, and values
parsed elsewhere (a repair library, a backend) are checked with :func:`nonfinite_path`.
"""

from __future__ import annotations

import json
import math
from typing import Any


class NonFiniteNumber(ValueError):
    """A JSON text holds ``NaN``, ``Infinity``, ``-Infinity`` or a number too large for a float.

    Attributes:
        path: Keys and indexes from the top value to the number (``()``: the top value).
        token: The number as written (``"NaN"``, ``"-Infinity"``, ``"1e999"``); for a parsed
            value, its ``repr``.
    """

    def __init__(self, path: tuple[str | int, ...], token: str):
        self.path = path
        self.token = token
        super().__init__(self.message())

    def message(self, root: str = "$") -> str:
        """``<path>: NaN is not a JSON number (...)``, the path written from ``root`` (``$``, ``body``)."""
        return f"{dotted(self.path, root)}: {self.token} is not a JSON number (use a finite number or null)"


def dotted(path: tuple[str | int, ...], root: str = "$") -> str:
    """``("answer", "items", 0)`` as ``$.answer.items[0]`` (``root`` alone for the top value)."""
    return root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


class _Bad:
    __slots__ = ("token",)

    def __init__(self, token: str):
        self.token = token


def _find(value: Any, bad: type | tuple[type, ...]) -> tuple[tuple[str | int, ...], Any] | None:
    """The first ``(path, leaf)`` whose leaf is a ``bad`` instance (or a non-finite float), without recursion."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, dict):
            stack.extend(((*path, str(k)), x) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend(((*path, i), x) for i, x in reversed(list(enumerate(v))))
        elif isinstance(v, bad) or (isinstance(v, float) and not math.isfinite(v)):
            return path, v
    return None


def nonfinite_path(value: Any) -> tuple[str | int, ...] | None:
    """The path to the first ``NaN`` or infinite float in a parsed value, or ``None`` when there is none."""
    found = _find(value, ())
    return None if found is None else found[0]


def loads_finite(text: str | bytes) -> Any:
    """:func:`json.loads` that refuses numbers JSON cannot hold.

    Args:
        text: A JSON text.

    Returns:
        The parsed value (every float in it finite).

    Raises:
        NonFiniteNumber: ``NaN``, ``Infinity``, ``-Infinity``, or a number that overflows a
            float (``1e999``); it names the first such number's path (a :class:`ValueError`).
        json.JSONDecodeError: The text is not JSON (a :class:`ValueError`).
        RecursionError: The value nests too deeply to parse.
    """
    seen: list[_Bad] = []

    def constant(token: str) -> _Bad:
        seen.append(_Bad(token))
        return seen[-1]

    def number(token: str) -> float | _Bad:
        f = float(token)
        return f if math.isfinite(f) else constant(token)

    value = json.loads(text, parse_constant=constant, parse_float=number)
    if seen:
        found = _find(value, _Bad)
        path, leaf = found if found is not None else ((), seen[0])
        raise NonFiniteNumber(path, leaf.token)
    return value
