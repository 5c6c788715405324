"""Wording shared by the messages of the library and the command line (no I/O; imports no mafialab module).

Any layer may import it: counted nouns (``1 game``, ``2 games``; never ``game(s)``) and the
kind of a parsed YAML/JSON value in plain words (``a list``; never a Python type name).
"""

from __future__ import annotations

import datetime as _dt
import shlex
from typing import Any


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``"<n> <noun>"`` with the noun singular for exactly 1, plural otherwise (0 games, 2 games).

    Args:
        n: The count (any integer).
        noun: The singular noun, e.g. ``"game"``; several words count by their last
            (``"model call"`` → ``"model calls"``).
        plural: The plural when it is not ``noun + "s"`` (``"branches"``).

    Returns:
        E.g. ``count(1, "game") == "1 game"``, ``count(3, "branch", "branches") == "3 branches"``.
    """
    return f"{n} {noun_for(n, noun, plural)}"


def noun_for(n: int, noun: str, plural: str | None = None) -> str:
    """The form of ``noun`` that goes with the number ``n``, without the number (``unknown event kinds``).

    Args:
        n: How many (any integer; only exactly 1 is singular).
        noun: The singular noun.
        plural: The plural when it is not ``noun + "s"``.

    Returns:
        ``noun`` for 1, else the plural: ``noun_for(2, "kind") == "kinds"``.
    """
    return noun if n == 1 else (plural or noun + "s")


def kind_of(value: Any) -> str:
    """What a value read from YAML or JSON is, in plain words with its article.

    ``{}`` → ``"a mapping"``, ``[]`` → ``"a list"``, ``"x"`` → ``"a string"``, ``3``/``2.5``
    → ``"a number"``, ``true`` → ``"true/false"``, ``null`` → ``"nothing (null)"``, a YAML date
    → ``"a date"``; anything else ``"a value of another kind"``. For messages such as
    ``FILE: expected a mapping of fields at the top level, found a list``, so that a reader
    never sees a Python type name (``got list``, ``got NoneType``).

    Args:
        value: A parsed value (the result of ``yaml.safe_load`` or ``json.loads``).

    Returns:
        The words, lower case, starting with an article where English uses one.
    """
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):  # before int, of which bool is one
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, _dt.date):  # datetime is a date too
        return "a date"
    if isinstance(value, set):  # YAML's !!set
        return "a set"
    if isinstance(value, bytes):  # YAML's !!binary
        return "binary data"
    return "a value of another kind"


def shell_word(path: object) -> str:
    """``path`` as one word to paste into a POSIX shell, in a command a message suggests.

    Quoted with :func:`shlex.quote` where it holds spaces or characters the shell reads
    (``'sp ace;$(x)'``), and led by ``./`` where it starts with ``-`` so no command takes it
    for an option (``./-weird``).

    Args:
        path: A path (or any value; its ``str()`` is used).

    Returns:
        E.g. ``shell_word("runs") == "runs"``, ``shell_word("my runs") == "'my runs'"``.
    """
    text = str(path)
    return shlex.quote("./" + text if text.startswith("-") else text)


def duration_words(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 20 min`` or ``2 d 4 h``: a duration rounded for an estimate."""
    s = max(0, round(seconds))
    if s < 90:
        return f"{s} s"
    m = round(s / 60)
    if m < 90:
        return f"{m} min"
    h, m = divmod(m, 60)
    if h < 48:
        return f"{h} h {m} min" if m else f"{h} h"
    d, h = divmod(h, 24)
    return f"{d} d {h} h" if h else f"{d} d"


def verb_for(subject: str, singular: str, plural: str) -> str:
    """The form of a verb that agrees with a team's name: ``plural`` for a plural name, else ``singular``.

    A name is plural when its last word (after any ``/`` of pooled names) ends in ``s`` but
    not ``ss``: ``Werewolves``, ``Villagers`` (→ ``win``); ``Mafia``, ``Town``, ``Village``
    (→ ``wins``), as "the Mafia wins" and "the Werewolves win" read.

    Args:
        subject: The name (``"Werewolves"``, ``"Village/Villagers"``).
        singular: The verb after a singular name (``"wins"``).
        plural: The verb after a plural name (``"win"``).
    """
    last = subject.rsplit("/", 1)[-1].split()[-1] if subject.strip() else subject
    return plural if last.endswith("s") and not last.endswith("ss") else singular


def team_wins(name: str) -> str:
    """``"Werewolves win"``, ``"Mafia wins"``: a team's name with ``win`` agreeing with it (:func:`verb_for`)."""
    return f"{name} {verb_for(name, 'wins', 'win')}"
