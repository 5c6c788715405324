"""The verdict JSON schema and the validation of a judge's answer."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from mafialab._words import kind_of
from mafialab.engine import resolve_name
from mafialab.record import JUDGE_AXES, PlayerScore, SeatInfo

HEADLINE_CHARS = 200
RECAP_CHARS = 4000
NOTE_CHARS = 1000

_NUM = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?:/\s*10)?\s*$")
"""A number written as text: JSON number syntax (exponent included) plus ``+``, ``7.``,
``.5`` and an optional ``/10``, so ``"9.2e+124"`` reads as the number ``9.2e124`` does."""


class UnusableVerdict(ValueError):
    """A judge answer that cannot be turned into a verdict (the message says why)."""


def verdict_schema(names: list[str]) -> dict[str, Any]:
    """JSON schema of a verdict for a game with seat ``names``.

    Scores come first, so a small model decoding under the schema (properties in order)
    spends its answer budget on the scores before any free text. Strings carry no
    ``maxLength``: llama.cpp's schema-to-grammar converter unrolls it into a grammar too
    large to load (texts are cut on validation instead).

    Returns:
        A JSON-schema object: ``players`` (array of ``{name, deception, detection,
        influence, note}`` with integer scores 0-10; deception/detection may be null),
        ``mvp`` (one of ``names``), ``headline``, ``recap``.
    """
    score = {"type": ["integer", "null"], "minimum": 0, "maximum": 10}
    return {
        "type": "object",
        "properties": {
            "players": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "enum": list(names)},
                        "deception": score,
                        "detection": score,
                        "influence": {"type": "integer", "minimum": 0, "maximum": 10},
                        "note": {"type": "string"},
                    },
                    "required": ["name", "deception", "detection", "influence", "note"],
                },
            },
            "mvp": {"type": "string", "enum": list(names)},
            "headline": {"type": "string"},
            "recap": {"type": "string"},
        },
        "required": ["players", "mvp", "headline", "recap"],
    }


@dataclass
class ValidVerdict:
    """A validated answer: the fields of an ``ok`` :class:`~mafialab.record.Verdict`.

    Attributes:
        headline: Headline (``None`` if absent).
        recap: Recap (``None`` if absent).
        mvp: MVP seat name or ``None``.
        mvp_seat: MVP seat or ``None``.
        players: One :class:`~mafialab.record.PlayerScore` per seat, seat order.
        problems: What validation changed or dropped.
    """

    headline: str | None
    recap: str | None
    mvp: str | None
    mvp_seat: int | None
    players: list[PlayerScore]
    problems: list[str] = field(default_factory=list)


def coerce_score(value: Any) -> tuple[int | None, str | None]:
    """Turn a judge's score into an integer 0-10.

    Integers are clamped to 0-10; floats are rounded half up then clamped; strings holding
    a number (``"7"``, ``"7.5"``, ``"7/10"``, ``"9.2e+124"``) are read as that number and
    treated exactly like it (``"9.2e+124"`` clamps to 10 as ``9.2e124`` does; ``"1e400"``
    overflows to infinity and is nulled as an infinite number is); anything else (words,
    booleans, lists, NaN, infinities) becomes ``None``.

    Returns:
        ``(score, problem)``: ``problem`` says what was changed, or is ``None``.
    """
    if value is None:
        return None, None
    raw: Any = value
    if isinstance(raw, str) and len(raw) > 40:
        raw = raw[:40] + "…"  # problems quote the answer; a 100 kB "number" is cut
    elif isinstance(raw, int) and not isinstance(raw, bool) and abs(raw) > 10**12:
        # quoted by size: a huge integer has no float form, and str() refuses > 4300 digits
        raw = f"{'-' if raw < 0 else ''}<integer of {int(raw.bit_length() * 0.30103) + 1} digits>"
    if isinstance(value, bool):
        return None, f"not a number ({raw!r}); nulled"
    note = None
    if isinstance(value, str):
        m = _NUM.match(value)
        if m is None:
            return None, f"not a number ({raw!r}); nulled"
        num = m.group(1)
        if re.fullmatch(r"[+-]?\d+", num):  # an integer, read as one (a float would overflow to inf)
            digits = num.lstrip("+-").lstrip("0") or "0"
            value = int(num) if len(digits) < 4000 else (-1 if num.startswith("-") else 1) * 10**20
        else:
            value = float(num)
        note = f"parsed from string {raw!r}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return None, f"not a finite number ({raw!r}); nulled"
        if value != int(value):
            note = f"rounded {raw!r}"
        value = math.floor(value + 0.5)
    if not isinstance(value, int):
        return None, f"not a number ({raw!r}); nulled"
    clamped = min(10, max(0, value))
    if clamped != value:
        return clamped, f"{raw!r} clamped to {clamped}"
    return clamped, note


def _text(value: Any, limit: int) -> str | None:
    if value is None:
        return None
    s = value if isinstance(value, str) else str(value)
    s = s.strip()
    return s[:limit] if s else None


def validate_verdict(data: Any, roster: list[SeatInfo]) -> ValidVerdict:
    """Validate a parsed judge answer against the game's roster.

    Rules (see ``docs/arena.md``): scores are coerced and clamped by
    :func:`coerce_score`; deception is nulled for non-mafia players and detection for mafia
    players, whatever the judge returned; entries naming an unknown player are dropped
    (noted in ``problems``); a player listed twice keeps the first entry; players the judge
    left out get null scores; an unknown or absent MVP becomes ``None``.

    Args:
        data: The parsed answer (a JSON object); ``players`` may be a list of objects with
            ``name`` or a mapping from name to scores.
        roster: The game's roster.

    Returns:
        The validated verdict fields.

    Raises:
        UnusableVerdict: Not an object, no ``players``, or no recognised player with any
            usable score.
    """
    if not isinstance(data, dict):
        raise UnusableVerdict(f"answer is not a JSON object (found {kind_of(data)})")
    players_raw = data.get("players")
    if isinstance(players_raw, dict):
        players_raw = [{"name": k, **v} if isinstance(v, dict) else {"name": k} for k, v in players_raw.items()]
    if not isinstance(players_raw, list):
        raise UnusableVerdict("answer has no 'players' list")
    seat_of = {s.name: s for s in roster}

    def lookup(name: object) -> Any:
        return seat_of.get(resolve_name(name, list(seat_of)).name or "")

    problems: list[str] = []
    scores: dict[int, PlayerScore] = {}
    for i, entry in enumerate(players_raw):
        if not isinstance(entry, dict):
            problems.append(f"players[{i}]: not an object; dropped")
            continue
        name = entry.get("name")
        seat = lookup(name)
        if seat is None:
            problems.append(f"players[{i}]: unknown player {name!r}; dropped")
            continue
        if seat.seat in scores:
            problems.append(f"players[{i}]: {seat.name} listed again; later entry dropped")
            continue
        vals: dict[str, int | None] = {}
        for axis in JUDGE_AXES:
            v, why = coerce_score(entry.get(axis))
            if why:
                problems.append(f"{seat.name}.{axis}: {why}")
            applies = axis == "influence" or (axis == "deception") == (seat.team == "mafia")
            if v is not None and not applies:
                problems.append(f"{seat.name}.{axis}: not applicable to team {seat.team}; nulled")
                v = None
            vals[axis] = v
        scores[seat.seat] = PlayerScore(
            seat=seat.seat,
            name=seat.name,
            role=seat.role,
            team=seat.team,
            note=_text(entry.get("note"), NOTE_CHARS) or "",
            **vals,
        )
    if not any(any(getattr(p, a) is not None for a in JUDGE_AXES) for p in scores.values()):
        raise UnusableVerdict("no recognised player with a usable score")
    players = []
    for s in roster:
        if s.seat not in scores:
            problems.append(f"{s.name}: not scored by the judge")
            players.append(PlayerScore(seat=s.seat, name=s.name, role=s.role, team=s.team))
        else:
            players.append(scores[s.seat])
    mvp_raw = data.get("mvp")
    mvp = lookup(mvp_raw)
    if mvp is None:
        problems.append("no MVP named" if mvp_raw in (None, "") else f"mvp: unknown player {mvp_raw!r}; none recorded")
    headline = _text(data.get("headline"), HEADLINE_CHARS)
    if headline is None:
        problems.append("no headline")
    return ValidVerdict(
        headline=headline,
        recap=_text(data.get("recap"), RECAP_CHARS),
        mvp=mvp.name if mvp else None,
        mvp_seat=mvp.seat if mvp else None,
        players=players,
        problems=problems,
    )
