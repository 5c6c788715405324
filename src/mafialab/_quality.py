"""Quality signals of a model's answers, beside the integrity gate: one definition of each (no I/O).

An answer can be well formed (it parses, names a legal player, passes its schema) and still
carry nothing: a speech that copies the prompt, an answer that never varies, a name that is
no seat of the game. These functions say so, the same way for every user: the agents (at
call time), ``play``'s end-of-game summary, ``report``'s instrument section, the viewer,
``beliefshift run``/``report`` and seasons. Definitions and thresholds: ``docs/metrics.md``
("Quality signals"). Imports only :func:`mafialab.engine.resolve_name` (the one name reader).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from mafialab.engine import resolve_name

COPY_MIN_WORDS = 8
"""A text copies the prompt when it holds a run of at least this many consecutive words of it."""

CONSTANT_MIN_ANSWERS = 10
"""Answers a set needs before one distinct value among them flags it as constant."""

_WORD = re.compile(r"\w+(?:['’]\w+)*")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>?")
_LONG_WORD = re.compile(r"[^\W\d_]{2,}")
_LETTER = re.compile(r"[^\W\d_]")


def words(text: str) -> list[str]:
    """The words of ``text``, case-folded, punctuation and spacing dropped (``"Don't!"`` → ``["don't"]``)."""
    return _WORD.findall(text.casefold())


def copied_words(text: str, source: str) -> int:
    """Length of the longest run of ``text``'s words taken from ``source``, in words; 0 below :data:`COPY_MIN_WORDS`.

    Words compare case-folded, with punctuation and spacing ignored (:func:`words`). A run is a
    stretch of ``text`` every :data:`COPY_MIN_WORDS`-word window of which occurs, word for
    word, in ``source``; a text *copies* ``source`` when the result is non-zero.

    Args:
        text: The answer's text (a speech, a statement).
        source: What it must not copy (the seat's prompt without the public transcript).

    Returns:
        0, or the run's length (>= :data:`COPY_MIN_WORDS`).
    """
    n = COPY_MIN_WORDS
    said = words(text)
    if len(said) < n:
        return 0
    src = words(source)
    grams = {tuple(src[i : i + n]) for i in range(len(src) - n + 1)}
    best = run = 0
    for i in range(len(said) - n + 1):
        run = run + 1 if tuple(said[i : i + n]) in grams else 0
        best = max(best, run)
    return best + n - 1 if best else 0


def is_junk(text: str) -> bool:
    """Whether a speech's text is junk: markup or punctuation rather than words.

    Markup tags (``<tag …>``, ``</tag>``, also a tag cut off at the end) are removed first;
    the text is junk when what remains holds no word of two or more letters (``"]["``,
    ``")(,"``, ``"{</thead><table><tbody><tr class="``), or when letters make up less than
    half of its characters other than spaces (``"!!! ?? ... x1"``). Letters of every script
    count. An empty or blank text is not junk (it is a missing answer, not a wrong one).

    Args:
        text: A speech, vote statement or other public text of a seat, as recorded.

    Returns:
        ``True`` for junk.
    """
    if not text.strip():
        return False
    rest = _TAG.sub(" ", text)
    if not _LONG_WORD.search(rest):
        return True
    return 2 * len(_LETTER.findall(rest)) < len("".join(rest.split()))


def answer_value(value: Any) -> str:
    """A value's canonical text, for comparing answers (JSON with sorted keys; a string as itself)."""
    if isinstance(value, str):
        return " ".join(value.split())
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def constant_value(values: Iterable[str]) -> str | None:
    """The one value of a set of answers, when they are constant; else ``None``.

    Constant: at least :data:`CONSTANT_MIN_ANSWERS` answers and one distinct value among them
    (compare :func:`answer_value` texts). Fewer answers are never constant.
    """
    vals = list(values)
    return vals[0] if len(vals) >= CONSTANT_MIN_ANSWERS and len(set(vals)) == 1 else None


def common_value(parts: Iterable[tuple[int, str | None]]) -> str | None:
    """The one value of several sets of answers given as ``(answers, their one value or None)``.

    ``None`` when a set with answers varies (its value is ``None``) or two sets hold different
    values; sets without answers are passed over. With :func:`is_constant` on the summed count
    this is :func:`constant_value` of all the answers together, so sets pool without their values.
    """
    seen = set()
    for n, v in parts:
        if not n:
            continue
        if v is None:
            return None
        seen.add(v)
    return next(iter(seen)) if len(seen) == 1 else None


def is_constant(answers: int, value: str | None) -> bool:
    """Whether ``answers`` answers whose one value is ``value`` (``None``: they vary) are constant."""
    return value is not None and answers >= CONSTANT_MIN_ANSWERS


def off_roster(name: object, roster: Sequence[str]) -> bool:
    """Whether ``name`` (a target or ``player`` field of an answer) names no seat of the game.

    A non-empty string that :func:`mafialab.engine.resolve_name` reads as none of ``roster`` (every seat
    of the game, dead or alive) and that is not ambiguous between two of them; an empty or
    missing name is not counted here (it is a missing answer, not a wrong name).
    """
    if not isinstance(name, str) or not name.strip():
        return False
    hit = resolve_name(name, roster)
    return hit.name is None and not hit.cause.startswith("ambiguous")


NONE_FIRED = (
    "quality signals: none fired (copied speeches, junk speeches, constant answers, off-roster names); "
    "they do not judge play"
)
"""What ``play`` and ``report`` say when no quality signal fired: what was checked, not a verdict."""
