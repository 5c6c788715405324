"""Text from outside made writable: every character UTF-8 can encode (no I/O; imports no mafialab module).

A Python string may hold a lone surrogate (U+D800-U+DFFF): JSON allows one as an escape, so a
model server's answer, a bus worker's result or a remote seat's answer can carry it, and
``str.encode("utf-8")`` (every log writer) refuses it. Such text is made valid where it enters:
each character UTF-8 cannot encode becomes U+FFFD (the replacement character), and the
number replaced is recorded (``replaced_chars`` of a model call's record).
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
"""What a character UTF-8 cannot encode becomes (U+FFFD REPLACEMENT CHARACTER)."""

_UNENCODABLE = re.compile("[\ud800-\udfff]")
"""The characters ``str.encode("utf-8")`` refuses: the surrogates U+D800-U+DFFF (every other
code point has a UTF-8 form). A surrogate pair held as two characters is refused too (it is
not the character it would stand for in UTF-16), so each half counts as one."""


def valid_utf8(text: str) -> tuple[str, int]:
    """``text`` with each character UTF-8 cannot encode replaced by U+FFFD, and how many were.

    Args:
        text: Any string.

    Returns:
        ``(valid text, replaced)``: ``text`` itself when ``replaced`` is 0, so the text
        always encodes as UTF-8. E.g. ``valid_utf8("a" + chr(0xD800)) == ("a" + chr(0xFFFD), 1)``.
    """
    if _UNENCODABLE.search(text) is None:
        return text, 0
    return _UNENCODABLE.subn(REPLACEMENT, text)


def valid_utf8_value(value: Any) -> tuple[Any, int]:
    """A JSON-like value with every string in it (object keys too) made valid by :func:`valid_utf8`.

    Dicts and lists are walked to any depth without recursion (a deeply nested answer cannot
    exhaust the stack); other values (numbers, ``None``, tuples, objects) are kept as they are.

    Args:
        value: A parsed JSON value, or a string.

    Returns:
        ``(valid value, replaced)``: ``value`` itself when nothing was replaced; otherwise a
        copy whose containers are new (the input is never changed). When two keys of an
        object become equal, the later one's value is kept.
    """
    if not _needs_repair(value):
        return value, 0
    replaced = 0
    root: list[Any] = [value]
    todo: list[tuple[Any, Any]] = [(root, 0)]  # (container, key) of each value still to make valid
    while todo:
        holder, key = todo.pop()
        v = holder[key]
        if isinstance(v, str):
            holder[key], n = valid_utf8(v)
            replaced += n
        elif isinstance(v, list):
            holder[key] = copy = list(v)
            todo.extend((copy, i) for i in range(len(copy)))
        elif isinstance(v, dict):
            fresh: dict[Any, Any] = {}
            for k, x in v.items():
                if isinstance(k, str):
                    k, n = valid_utf8(k)
                    replaced += n
                fresh[k] = x
            holder[key] = fresh
            todo.extend((fresh, k) for k in fresh)
    return root[0], replaced


def _needs_repair(value: Any) -> bool:
    """Whether a string in ``value`` (a key or a value, at any depth) holds a character UTF-8 refuses."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            if _UNENCODABLE.search(v) is not None:
                return True
        elif isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
    return False
