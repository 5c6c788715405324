"""Reading a player name out of a model's answer: one resolver used wherever answers name players.

A person reading ``VOTE: **Finley**`` or ``{"target": "finley."}`` knows the answer is
Finley; a program comparing strings does not. :func:`resolve_name` reads names the way a
person would, and refuses (with a cause) wherever a person would have to guess.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

TRANSLITERATION: dict[str, str] = {
    # Russian/Ukrainian/Belarusian Cyrillic -> Latin, after the BGN/PCGN romanisation (simplified:
    # one spelling per letter, soft and hard signs dropped).
    "а": "a", "б": "b", "в": "v", "г": "g", "ґ": "g", "д": "d", "е": "e", "ё": "e", "є": "ye",
    "ж": "zh", "з": "z", "и": "i", "і": "i", "ї": "yi", "й": "y", "к": "k", "л": "l", "м": "m",
    "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t", "у": "u", "ў": "w", "ф": "f",
    "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "", "ы": "y", "ь": "", "э": "e",
    "ю": "yu", "я": "ya",
    # Greek -> Latin (ELOT 743, simplified)
    "α": "a", "β": "v", "γ": "g", "δ": "d", "ε": "e", "ζ": "z", "η": "i", "θ": "th", "ι": "i",
    "κ": "k", "λ": "l", "μ": "m", "ν": "n", "ξ": "x", "ο": "o", "π": "p", "ρ": "r", "σ": "s",
    "ς": "s", "τ": "t", "υ": "y", "φ": "f", "χ": "ch", "ψ": "ps", "ω": "o",
}  # fmt: skip
"""Letters of other scripts and their Latin spelling (lower case), used by :func:`transliterate`.

A script without an entry here (e.g. Chinese) is never matched: the answer is refused with
cause ``other_script``.
"""

_EMPHASIS = re.compile(r"[*_`~]+")
_QUOTES = "\"'«»“”‘’„‚‹›「」『』()[]{}<>"
_LEAD = re.compile(
    r"^\s*(?:(?:final\s+)?(?:vote|target|name|answer|choice|pick|nominat(?:e|ion)|kill|protect|investigate|"
    r"eliminate)\s*[:=\-–—]\s*|(?:i\s+)?(?:vote|choose|pick|nominate)\s+(?:for\s+|to\s+eliminate\s+)?)",
    re.IGNORECASE,
)
_LINE = re.compile(
    r"^\s*[*_`#>\-\s]*(?:vote|target|name|answer|choice|nominat(?:e|ion))[*_`\s]*[:=\-–—]\s*(.+?)\s*$",
    re.IGNORECASE | re.MULTILINE,
)


def transliterate(text: str) -> str:
    """Lower-cased ``text`` with letters of :data:`TRANSLITERATION` spelled in Latin.

    Accents are dropped first (``"Fínley"`` -> ``"finley"``); characters without an entry stay.
    """
    low = text.lower()
    out = "".join(TRANSLITERATION.get(ch, ch) for ch in low)
    return "".join(c for c in unicodedata.normalize("NFKD", out) if not unicodedata.combining(c))


def _skeleton(latin: str) -> str:
    """Consonant skeleton of a Latin spelling.

    Spellings of one name made through different romanisations meet: "Алекс" (aleks) and Alex
    -> ``lks``; "Грей" (grey) and Gray -> ``gr``.
    """
    s = latin.lower()
    for a, b in (("dzh", "j"), ("kh", "h"), ("x", "ks"), ("ck", "k"), ("ph", "f"), ("c", "k"), ("q", "k")):
        s = s.replace(a, b)
    s = re.sub(r"[^a-z]", "", s)
    s = re.sub(r"[aeiouyw]", "", s)
    return re.sub(r"(.)\1+", r"\1", s)


_ABOVE_LATIN = re.compile(r"[^\x00-\u024f]")
"""Characters past Latin Extended-B (the only ones :func:`_non_latin` needs to look at)."""


def _non_latin(text: str) -> bool:
    # the regex skips Latin text in C: a 100 kB answer costs microseconds, not a Python loop per character
    return any(
        ch.isalpha() and not ("a" <= ch.lower() <= "z") for m in _ABOVE_LATIN.finditer(text) if (ch := m.group())
    )


def _clean(text: str) -> str:
    s = _EMPHASIS.sub("", text).strip()
    s = _LEAD.sub("", s).strip()
    s = s.strip(_QUOTES + " \t\r\n").rstrip(".,!?;:").strip(_QUOTES + " \t\r\n")
    return re.sub(r"\s+", " ", s)


@dataclass(frozen=True)
class NameMatch:
    """The outcome of :func:`resolve_name`.

    Attributes:
        name: The roster name read from the answer, or ``None`` if it cannot be read.
        how: How it was read: ``exact``, ``normalised`` (emphasis, quotes, punctuation, case,
            a ``VOTE:`` label), ``line`` (a ``VOTE:``/``TARGET:`` line of a longer text),
            ``in_text`` (the only roster name inside a sentence), ``transliterated`` (another
            script, through :data:`TRANSLITERATION`); ``""`` when ``name`` is ``None``.
        cause: Why nothing was read (``empty``, ``ambiguous: A, B``, ``unknown``,
            ``other_script``); ``""`` on success.
    """

    name: str | None
    how: str = ""
    cause: str = ""


def resolve_name(answer: object, roster: Sequence[str]) -> NameMatch:
    """Read one name of ``roster`` from a model's answer, never guessing between two.

    Steps, first success wins: the exact string; the string without markdown emphasis,
    quotes, brackets, trailing punctuation and a leading ``VOTE:``/``TARGET:``/"I vote for"
    label, compared case-insensitively; the last ``VOTE:``/``TARGET:``/``NAME:`` line of a
    longer text; another script through :data:`TRANSLITERATION` (matched on the consonant
    skeleton, so "Алекс" is Alex and "Грей" is Gray, and only when exactly one roster name has
    that skeleton); the only roster name mentioned in the text as a whole word, in any case.
    Two different roster names in the text, or two roster names equal up to case, are
    ``ambiguous``: the caller must fall back and log the cause.

    Args:
        answer: The answer (any type; a non-string is ``unknown``).
        roster: The names that may be answered (e.g. the legal targets), in any order.

    Returns:
        A :class:`NameMatch`; ``name`` is one of ``roster`` or ``None`` with a ``cause``.
    """
    if not isinstance(answer, str):
        return NameMatch(None, cause="unknown")
    names = list(dict.fromkeys(roster))
    if answer in names:
        return NameMatch(answer, "exact")
    if not answer.strip():
        return NameMatch(None, cause="empty")
    folded: dict[str, list[str]] = {}
    for n in names:
        folded.setdefault(n.casefold(), []).append(n)

    def by_fold(s: str, how: str) -> NameMatch | None:
        hit = folded.get(s.casefold())
        if hit is None:
            return None
        if len(hit) > 1:
            return NameMatch(None, cause="ambiguous: " + ", ".join(hit))
        return NameMatch(hit[0], how)

    cleaned = _clean(answer)
    if (m := by_fold(cleaned, "normalised")) is not None:
        return m
    if not cleaned.isascii() and not _non_latin(cleaned) and (m := by_fold(transliterate(cleaned), "normalised")):
        return m  # accents: "Fínley"
    lines = _LINE.findall(answer)
    if lines:
        m = by_fold(_clean(lines[-1]), "line")
        if m is not None:
            return m
    if _non_latin(cleaned):
        return _by_script(cleaned, names)
    return _in_text(_EMPHASIS.sub("", answer), names)


def _by_script(text: str, names: list[str]) -> NameMatch:
    latin = transliterate(text)
    if _non_latin(latin):
        return NameMatch(None, cause="other_script")
    keys: dict[str, list[str]] = {}
    for n in names:
        keys.setdefault(_skeleton(transliterate(n)), []).append(n)
    words = re.findall(r"[a-z']+", latin)
    hits = sorted({n for w in [latin, *words] for n in keys.get(_skeleton(w), [])}) if words else []
    if len(hits) == 1:
        return NameMatch(hits[0], "transliterated")
    if len(hits) > 1:
        return NameMatch(None, cause="ambiguous: " + ", ".join(hits))
    return NameMatch(None, cause="unknown")


def _in_text(text: str, names: list[str]) -> NameMatch:
    # a case-insensitive regex cannot skip ahead: over ASCII text, a name absent from the
    # lower-cased text is ruled out first (a 100 kB answer is scanned once, not once per name)
    folded = text.lower() if text.isascii() else None
    hits = [
        n
        for n in names
        if (folded is None or not n.isascii() or n.lower() in folded)
        and re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text, re.IGNORECASE)
    ]
    if len(hits) == 1:
        return NameMatch(hits[0], "in_text")
    if len(hits) > 1:
        return NameMatch(None, cause="ambiguous: " + ", ".join(hits))
    return NameMatch(None, cause="unknown")
