"""Count phrases for the CLI's summary lines: ``1 game``, ``2 games``, never ``1 games`` or ``game(s)``."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``"<n> <noun>"`` with the noun singular for exactly 1, plural otherwise (0 games, 2 games).

    Args:
        n: The count (any integer).
        noun: The singular noun, e.g. ``"game"``.
        plural: The plural when it is not ``noun + "s"`` (``"branches"``).

    Returns:
        E.g. ``count(1, "game") == "1 game"``, ``count(3, "branch", "branches") == "3 branches"``.
    """
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
