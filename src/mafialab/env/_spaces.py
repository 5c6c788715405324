"""Gymnasium spaces of the environment: the Unicode text space, the action and observation spaces."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium.spaces import Dict, Discrete, MultiBinary, Text

from mafialab.env._core import KINDS, PHASES, obs_text_chars, text_cap
from mafialab.rules import RuleSet


@dataclass(frozen=True)
class _Charset:
    """One character table shared by every :class:`UnicodeText` (built once per process)."""

    text: str
    chars: tuple[str, ...] = field(repr=False)
    set: frozenset[str] = field(repr=False)

    @functools.cached_property
    def index(self) -> dict[str, np.int32]:
        """Character → its position in :attr:`chars` (only flattening a space needs it)."""
        return {c: np.int32(i) for i, c in enumerate(self.chars)}


@functools.cache
def _charset() -> _Charset:
    """Every printable Unicode character (``str.isprintable``), plus the newline.

    About 145,000 characters (Unicode 15): letters, marks, numbers, punctuation, symbols and
    the space of every script; no control, format, surrogate, private-use or unassigned code
    point. Built once per process (a fraction of a second) and shared by every space.
    """
    text = "\n" + "".join(c for c in map(chr, range(0x110000)) if c.isprintable())
    chars = tuple(text)
    return _Charset(text=text, chars=chars, set=frozenset(chars))


class UnicodeText(Text):
    r"""A :class:`gymnasium.spaces.Text` over every printable Unicode character and ``\n``.

    It behaves as ``Text(max_length, min_length=..., charset=<those characters>)`` (contains,
    masks, flattening, equality), with two differences that keep it usable at this size:
    the character table is built once per process and shared by every instance, and an
    unmasked :meth:`sample` draws character indices directly (``Text.sample`` turns the
    145,000-character list into an array on every call, about a second each).

    Args:
        max_length: Longest string (characters).
        min_length: Shortest string (characters).
        seed: Seed of the space's sampler.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | None = None):
        super().__init__(max_length, min_length=min_length, charset="\n", seed=seed)
        self._table = _charset()

    @property
    def character_set(self) -> frozenset[str]:
        """The characters of the space (printable Unicode and the newline)."""
        return self._table.set

    @property
    def character_list(self) -> tuple[str, ...]:
        """The characters in code-point order (the newline first)."""
        return self._table.chars

    def character_index(self, char: str) -> np.int32:
        """The position of ``char`` in :attr:`character_list`."""
        return self._table.index[char]

    @property
    def characters(self) -> str:
        """The characters as one string, in :attr:`character_list` order."""
        return self._table.text

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A random string: uniform length in ``[min_length, max_length]``, uniform characters.

        With ``mask`` or ``probability`` it samples as :meth:`gymnasium.spaces.Text.sample`.
        """
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        length = int(self.np_random.integers(self.min_length, self.max_length + 1))
        chars = self._table.chars
        return "".join(chars[i] for i in self.np_random.integers(0, len(chars), size=length))

    def __repr__(self) -> str:
        """Gives a string representation of this space (without its 145,000 characters)."""
        return f"UnicodeText({self.min_length}, {self.max_length}, charset=printable Unicode and newline)"

    def __eq__(self, other: object, /) -> bool:
        """Same length bounds and characters."""
        if isinstance(other, UnicodeText):
            return self.min_length == other.min_length and self.max_length == other.max_length
        return super().__eq__(other)


def action_space(rules: RuleSet) -> Dict:
    """``Dict(choice=Discrete(n_seats + 1), text=UnicodeText(rules.day.text_chars))``.

    ``choice`` ``0 … n_seats-1`` names a seat, ``n_seats`` names nobody (a free-text decision,
    or a vote cast for nobody where the rules allow it).
    """
    n = rules.n_seats
    return Dict({"choice": Discrete(n + 1), "text": UnicodeText(text_cap(rules), min_length=1)})


def observation_space(rules: RuleSet) -> Dict:
    """The observation space of one seat (see ``docs/env.md``)."""
    n = rules.n_seats
    decision = Dict(
        {
            "kind": Discrete(len(KINDS) + 1),
            "phase": Discrete(len(PHASES)),
            "round": Discrete(rules.round_cap + 1),
            "needs_text": Discrete(2),
            "max_chars": Discrete(text_cap(rules) + 1),
        }
    )
    return Dict(
        {
            "text": UnicodeText(obs_text_chars(rules)),
            "decision": decision,
            "role": Discrete(len(rules.roles)),
            "alive": MultiBinary(n),
            "choice_mask": MultiBinary(n + 1),
        }
    )
