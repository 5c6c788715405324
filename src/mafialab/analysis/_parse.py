"""Answer parsing for the metrics: the MafiaScope repair rule, the default rule, role names."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mafialab._jsonrepair import closed_prefix, parse_json_lenient
from mafialab.rules import RuleSet

_FENCE = re.compile(r"```(?:json)?\s*")
_NOT_FOUND = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: degenerate "[[[[..." output
        return _NOT_FOUND


def repair_json_reference(text: str) -> tuple[Any, bool]:
    """Parse a model answer with MafiaScope's repair rule (``IntrospectionEngine._extract_json``).

    The reference method's own rule; every other reader uses
    :func:`mafialab.models.parse_json_lenient`. Steps (MafiaScope's README, "Parse mode
    repaired" and exact reading 1): strip markdown fences; try the whole text (cleaned, then
    as given); otherwise from the first ``{`` or ``[`` keep everything up to the last fully
    closed nested element and close the brackets still open (an item cut off mid-way is
    dropped; a closing bracket that does not match the innermost open one makes the answer
    unrepairable); as a last resort take the first ``{`` to the last ``}``, then the first
    ``[`` to the last ``]``.

    Args:
        text: The raw answer.

    Returns:
        ``(value, ok)``: the parsed JSON value (any JSON type; ``None`` for ``null``) and
        whether parsing succeeded. ``(None, False)`` if nothing parses.
    """
    cleaned = _FENCE.sub("", text).replace("```", "").strip()
    for candidate in (cleaned, text.strip()):
        value = _loads(candidate)
        if value is not _NOT_FOUND:
            return value, True
    starts = [i for i in (cleaned.find("{"), cleaned.find("[")) if i != -1]
    if starts:
        repaired = closed_prefix(cleaned[min(starts) :], strict_closers=True)
        if repaired is not None:
            value = _loads(repaired)
            if value is not _NOT_FOUND:
                return value, True
    for open_ch, close_ch in (("{", "}"), ("[", "]")):
        start = cleaned.find(open_ch)
        end = cleaned.rfind(close_ch)
        if start == -1 or end <= start:
            continue
        value = _loads(cleaned[start : end + 1])
        if value is not _NOT_FOUND:
            return value, True
    return None, False


def repair_json(text: str) -> tuple[Any, bool]:
    """Parse a model answer for the ``default`` method: the one lenient parser, whole elements only.

    :func:`mafialab.models.parse_json_lenient` with ``partial=False``: fences and text
    around the JSON are dropped and ``json-repair`` fixes quotes and commas, but a
    half-written element is never kept (a confidence ``7`` cut from ``75`` would bias
    calibration), so an answer that broke off is kept up to its last complete element.

    Args:
        text: The raw answer.

    Returns:
        ``(value, ok)`` as in :func:`repair_json_reference`.
    """
    value, ok, _ = parse_json_lenient(text, partial=False)
    return value, ok


ATTITUDES = ("trusts", "neutral", "suspects")
"""The ``social_map`` attitude vocabulary (anything else is unusable)."""

REFERENCE_ROLES = ("Mafia", "Villager", "Doctor", "Sheriff")
"""MafiaScope's role vocabulary, in its matching order (``metrics_lib.norm_role``)."""

UNKNOWN = "Unknown"


@dataclass(frozen=True)
class RoleVocabulary:
    """Maps a free-text role guess to a role of the game, as MafiaScope's ``norm_role`` does.

    A guess is lower-cased and matched by substring against ``needles`` in order (the first
    needle the guess contains wins, so "Villager or Doctor" is Villager); else it is
    :data:`UNKNOWN` if it contains "unknown"; otherwise it is unrecognised (``None``, the
    guess is dropped).

    Attributes:
        needles: ``(lower-case substring, role name)`` pairs in matching order.
        mafia_roles: Role names of the hidden team.
    """

    needles: tuple[tuple[str, str], ...]
    mafia_roles: frozenset[str]

    def normalise(self, guess: Any) -> str | None:
        """The role named by ``guess``, :data:`UNKNOWN`, or ``None`` (unrecognised / not a string)."""
        if not isinstance(guess, str):
            return None
        g = guess.strip().lower()
        for needle, role in self.needles:
            if needle in g:
                return role
        if "unknown" in g:
            return UNKNOWN
        return None

    def is_mafia(self, role: str | None) -> bool:
        """Whether ``role`` belongs to the hidden team."""
        return role in self.mafia_roles

    @classmethod
    def reference(cls) -> RoleVocabulary:
        """MafiaScope's fixed vocabulary: mafia, villager, doctor, sheriff."""
        return cls(needles=tuple((r.lower(), r) for r in REFERENCE_ROLES), mafia_roles=frozenset({"Mafia"}))

    @classmethod
    def from_rules(cls, rules: RuleSet, extra: Sequence[str] = ()) -> RoleVocabulary:
        """Vocabulary of a rule set: its role names, hidden-team roles first.

        Order: hidden-team roles; the hidden team's display name and the generic words
        "mafia", "werewol", "wolf" (all meaning the first hidden-team role); town roles
        without a night ability; town roles with one (declaration order within each group),
        so that for ``mafiascope7`` the order is MafiaScope's (Mafia, Villager, Doctor).

        Args:
            rules: The game's rule set.
            extra: Further role names to recognise after the rule set's own (town roles),
                e.g. :data:`REFERENCE_ROLES` for imported MafiaScope games.
        """
        mafia = [r.name for r in rules.roles if r.team == "mafia"]
        plain = [r.name for r in rules.roles if r.team == "town" and r.ability is None]
        able = [r.name for r in rules.roles if r.team == "town" and r.ability is not None]
        needles: list[tuple[str, str]] = [(m.lower(), m) for m in mafia]
        team_words = [rules.lexicon.mafia_team.lower(), "mafia", "werewol", "wolf"]
        needles += [(w, mafia[0]) for w in team_words if mafia]
        needles += [(r.lower(), r) for r in plain + able]
        known = {r for _, r in needles}
        needles += [(r.lower(), r) for r in extra if r not in known]
        seen: set[str] = set()
        unique = []
        for needle, role in needles:
            if needle and needle not in seen:
                seen.add(needle)
                unique.append((needle, role))
        return cls(needles=tuple(unique), mafia_roles=frozenset(mafia))


def to_float(value: Any, default: float | None = None) -> float | None:
    """``float(value)`` as Python reads it (numbers, bools, numeric strings), else ``default``."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return default
