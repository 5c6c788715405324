"""The one lenient JSON parser of model answers (fences, text around the JSON, truncation).

A low shared module (it imports only :mod:`mafialab._json`), so any layer may read model
answers with it; ``mafialab.models`` re-exports the public names.

Every reader of model answers uses :func:`parse_json_lenient`: the backends (answers to a
JSON schema), the probe runner, the judge and the metrics' ``default`` method. Only the
MafiaScope reference method keeps its own documented rule
(:func:`mafialab.analysis._parse.repair_json_reference`), because it must reproduce the published
numbers.
"""

from __future__ import annotations

import re
from typing import Any

import json_repair

from mafialab._json import NonFiniteNumber, loads_finite, nonfinite_path

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)(?:```|\Z)", re.DOTALL)
_FAILED = (None, False, False)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\Z)', re.DOTALL)  # a JSON string, or one cut off at the end
_CONSTANT = re.compile(r"\b(?:NaN|Infinity)\b")


class _NotANumber(Exception):
    """The answer holds NaN or an infinity: not JSON, and never repaired into a value."""


def _strict(text: str) -> tuple[Any, bool]:
    try:
        return loads_finite(text), True
    except NonFiniteNumber:
        raise _NotANumber from None
    except (ValueError, RecursionError):  # RecursionError: degenerate "[[[[..." output
        return None, False


def _scan(fragment: str) -> tuple[str, int, list[str], tuple[int, list[str]] | None]:
    """Walk the brackets of ``fragment`` (those inside JSON strings ignored).

    Returns:
        ``(end, i, open, cut)``: ``end`` is ``"complete"`` (the first value closes at ``i``),
        ``"mismatch"`` (the closer at ``i`` does not match the innermost open bracket) or
        ``"open"`` (the text ends with brackets ``open`` still open); ``cut`` is the end and the
        open brackets after the last fully closed nested element, or ``None``.
    """
    stack: list[str] = []
    in_string = escape = False
    cut: tuple[int, list[str]] | None = None
    for i, ch in enumerate(fragment):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack[-1] != ch:
                return "mismatch", i, stack, cut
            stack.pop()
            if not stack:
                return "complete", i, stack, cut
            cut = (i + 1, list(stack))
    return "open", len(fragment), stack, cut


def closed_prefix(fragment: str, *, strict_closers: bool = False) -> str | None:
    """``fragment`` up to its first complete value, or up to its last fully closed element.

    ``fragment`` starts at a ``{`` or ``[``. Brackets inside JSON strings are ignored. When a
    complete top-level value is found, the text after it is cut. When the text broke off
    (brackets still open), it is kept up to the last fully closed nested element and the
    brackets still open are closed, so a half-written item is dropped, never completed.

    Args:
        fragment: Text starting at the JSON value.
        strict_closers: What a closing bracket that does not match the innermost open one
            means: ``True``, the fragment is unrepairable (MafiaScope's rule); ``False``, the
            answer broke off there.

    Returns:
        The cut (and closed) text, or ``None`` when nothing complete precedes the break.
    """
    end, i, _, cut = _scan(fragment)
    if end == "complete":
        return fragment[: i + 1]
    if (end == "mismatch" and strict_closers) or cut is None:
        return None
    pos, still_open = cut
    return fragment[:pos] + "".join(reversed(still_open))


def is_cut_off(text: str) -> bool:
    """Whether ``text`` opens a JSON value (from its first ``{`` or ``[``) that is still open at its end.

    A value that closes, or a closing bracket that does not match, is not cut off (the latter
    is malformed). Used to tell an answer cut at the token cap from other unparseable text.
    """
    starts = [i for i in (text.find("{"), text.find("[")) if i != -1]
    return bool(starts) and _scan(text[min(starts) :])[0] == "open"


def parse_json_lenient(text: str, *, partial: bool = True) -> tuple[Any, bool, bool]:
    """Parse a model's JSON answer, repairing what models commonly get wrong.

    Steps: strip white space and parse as it is; else take the inside of the first Markdown
    code fence (an unterminated fence runs to the end) and parse that; else, from the first
    ``{`` or ``[`` (text without one is prose, not JSON), repair with ``json-repair``
    (drops text around the value, closes truncated strings, objects and lists, fixes quotes
    and commas), accepting only a non-empty object or list. An answer holding ``NaN``,
    ``Infinity``, ``-Infinity`` or a number too large for a float is not JSON and yields
    nothing (repair would keep the number, which passes every schema bound and is written
    to the log as ``null``).

    With ``partial=False`` a half-written element is never kept: before repair the text is
    cut to its first complete value, or to its last fully closed element with the open
    brackets closed (:func:`closed_prefix`); an answer that broke off before any element was
    complete yields nothing. This keeps, for example, a confidence ``7`` cut from ``75`` out
    of the metrics.

    Args:
        text: The raw answer.
        partial: Whether a half-written trailing element may be completed by repair.

    Returns:
        ``(value, ok, repaired)``: the value (``None`` when ``ok`` is false; any JSON value,
        ``null`` included, when the text parsed without repair), whether a usable value was
        found, and whether repair was needed (a fence stripped, text around the JSON dropped,
        a truncated answer closed).
    """
    try:
        return _lenient(text, partial)
    except _NotANumber:
        return _FAILED


def _lenient(text: str, partial: bool) -> tuple[Any, bool, bool]:
    s = text.strip()
    if not s:
        return _FAILED
    value, ok = _strict(s)
    if ok:
        return value, True, False
    m = _FENCE.search(s)
    if m is not None:
        s = m.group(1).strip()
        value, ok = _strict(s)
        if ok:
            return value, True, True
    start = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
    if start < 0:
        return _FAILED
    body = s[start:] if partial else closed_prefix(s[start:])
    if body is None or _CONSTANT.search(_STRING.sub('""', body)):  # json-repair keeps NaN, or makes it a string
        return _FAILED
    try:
        value = json_repair.loads(body)
    except Exception:  # json-repair is defensive, but never let a parser bug lose a record
        return _FAILED
    if isinstance(value, dict | list) and value not in ({}, []) and nonfinite_path(value) is None:
        return value, True, True
    return _FAILED


def parse_json(text: str) -> tuple[Any, bool]:
    """:func:`parse_json_lenient` as the backends use it.

    Returns:
        ``(value, repaired)``: the parsed value (``None`` when nothing usable was found) and
        whether repair was needed (true for a non-empty answer with nothing usable).
    """
    value, ok, repaired = parse_json_lenient(text)
    if not ok:
        return None, bool(text.strip())  # a non-empty answer that held nothing usable counts as repaired
    return value, repaired
