"""Checking probe answers: parsed by the one lenient parser, then schema and player checks."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from mafialab._json import NonFiniteNumber, dotted, loads_finite, nonfinite_path
from mafialab._text import valid_utf8_value
from mafialab.engine import resolve_name
from mafialab.models import parse_json_lenient

MAX_ISSUES = 8
"""Most issues kept per answer (the rest are counted)."""

_MAX_DEPTH = 32
"""Deepest nesting of lists/objects accepted in an answer. Probe answers nest two or three
levels; a degenerate ``[[[[...`` answer nests hundreds deep and would exhaust the recursion
limit when validated or written, so it counts as unparsed (its raw text is kept)."""


def _nesting_depth(value: Any) -> int:
    """Nesting depth of a JSON value (a scalar is 0, ``[]`` is 1), computed without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
        else:
            deepest = max(deepest, d)
            continue
        deepest = max(deepest, d + 1)
    return deepest


@dataclass
class ParsedAnswer:
    """A probe answer after tolerant parsing.

    Attributes:
        value: The parsed JSON value, or ``None`` when the text held none.
        ok: Whether ``value`` is a usable JSON value (an object or a list after repair;
            any JSON value when the text parsed as it was).
        repaired: Whether parsing needed repair: a markdown fence stripped, text around the
            JSON dropped, or a truncated answer closed
            (:func:`~mafialab.models.parse_json_lenient`).
        schema_ok: Whether ``value`` validates against the probe's schema (``None`` when
            there is no schema or nothing parsed).
        issues: Human-readable problems: schema violations (``$[0].confidence: ...``) and
            player names that are unknown or dead.
    """

    value: Any = None
    ok: bool = False
    repaired: bool = False
    schema_ok: bool | None = None
    issues: list[str] = field(default_factory=list)


def _named_players(value: Any, path: str = "$") -> Iterator[tuple[str, str]]:
    """Yield ``(path, name)`` for every string ``player`` field in ``value``."""
    if isinstance(value, dict):
        for k, v in value.items():
            sub = f"{path}.{k}"
            if k == "player" and isinstance(v, str):
                yield sub, v
            else:
                yield from _named_players(v, sub)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _named_players(v, f"{path}[{i}]")


def check_players(value: Any, names: Collection[str], alive: Collection[str]) -> list[str]:
    """Issues for ``player`` fields that name nobody at the table or a dead player.

    Args:
        value: A parsed answer.
        names: Every seat name of the game.
        alive: Names of the players alive when the probe ran.

    Returns:
        Issues such as ``"$[2].player: 'Zed' is not a player"`` or
        ``"$[0].player: 'Alex' is dead"`` (names read with :func:`mafialab.engine.resolve_name`:
        emphasis, quotes, case and other scripts as a person would read them, never a guess).
    """
    out = []
    for path, name in _named_players(value):
        canon = resolve_name(name, list(names)).name
        if canon is None:
            out.append(f"{path}: {name!r} is not a player")
        elif canon not in alive:
            out.append(f"{path}: {name!r} is dead")
    return out


def parse_answer(
    text: str,
    schema: dict[str, Any] | None = None,
    *,
    parsed: Any = None,
    names: Collection[str] = (),
    alive: Collection[str] = (),
) -> ParsedAnswer:
    """Parse and check one probe answer; nothing raises, problems are recorded.

    An answer holding ``NaN``, ``Infinity`` or ``-Infinity`` (not JSON numbers) is not
    parsed (``ok`` false, its raw text kept by the caller), with an issue naming the field.

    Args:
        text: The raw answer text.
        schema: The (rendered) JSON schema of the probe, or ``None``.
        parsed: A value the backend already parsed (constrained decoding); used as is
            when not ``None``.
        names: Every seat name (for the player check; empty skips it).
        alive: Names alive at the probe (for the player check).

    Returns:
        The :class:`ParsedAnswer`, with the raw text left to the caller to keep.
    """
    if parsed is not None:
        bad = nonfinite_path(parsed)
        if bad is not None:  # NaN or an infinity from a backend's own parsing: not a JSON number
            return ParsedAnswer(issues=[f"{dotted(bad)}: not a finite JSON number; not used"])
        value, ok, repaired = parsed, True, False
    else:
        value, ok, repaired = parse_json_lenient(text)
        if not ok:
            try:
                loads_finite(text.strip())
            except NonFiniteNumber as err:  # say why an answer such as "NaN" was not used
                return ParsedAnswer(issues=[f"{err}; not used"])
            except (ValueError, RecursionError):
                pass
    if ok and _nesting_depth(value) > _MAX_DEPTH:
        return ParsedAnswer(issues=[f"$: nested more than {_MAX_DEPTH} levels deep; not used"])
    value, _ = valid_utf8_value(value)  # a "\\ud800" escape in the text parses into a lone surrogate
    res = ParsedAnswer(value=value, ok=ok, repaired=repaired)
    if not ok:
        return res
    issues: list[str] = []
    if schema is not None:
        validator = jsonschema.Draft202012Validator(schema)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
        res.schema_ok = not errors
        for e in errors:
            path = "$" + "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in e.absolute_path)
            issues.append(f"{path}: {e.message}")
    if names:
        issues.extend(check_players(value, names, alive))
    if len(issues) > MAX_ISSUES:
        issues = [*issues[:MAX_ISSUES], f"... and {len(issues) - MAX_ISSUES} more"]
    res.issues = issues
    return res
