"""Which games corpus figures count: one rule for ``report``, ``view`` and every corpus number.

By default corpus figures leave out fork branches (they replay a prefix of their root game,
so they are not independent games) and games the integrity gate marked degraded; games of
a skipped family (:data:`~mafialab.analysis._data.SKIPPED_FAMILIES`) have no figures to
give. ``--include-branches`` adds branches (the bootstrap then clusters on their root
game); degraded games are never counted. A branch's own page in the viewer shows that
branch's figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mafialab.analysis._data import GameData

BRANCH_FLAG = "--include-branches"
"""The option of ``report`` and ``view`` (and ``beliefshift freeze``) that adds fork branches."""


def _n(k: int, one: str, many: str) -> str:
    return f"{k} {one if k == 1 else many}"


def inclusion(games: Sequence[GameData], branches_left_out: Sequence[str] = ()) -> dict[str, Any]:
    """What corpus figures over ``games`` count and leave out, with the rule in one line.

    Args:
        games: The games given to the corpus figures (after
            :func:`~mafialab.analysis._data.split_branches`): the
            degraded and skipped-family ones among them are left out of every number.
        branches_left_out: Ids of the fork branches already left out by the rule.

    Returns:
        ``{"games": counted games, "branches": fork branches among them, "branches_left_out",
        "degraded", "skipped": counts of games left out, "rule": one line}``; the line reads
        e.g. ``corpus figures: 12 games; 23 fork branches and 1 degraded game left out
        (--include-branches adds branches)``.
    """
    counted = [g for g in games if not g.skipped and not g.degraded]
    return inclusion_block(
        len(counted),
        sum(g.branch for g in counted),
        sum(1 for g in games if g.degraded and not g.skipped),
        sum(1 for g in games if g.skipped),
        len(branches_left_out),
    )


def inclusion_block(counted: int, branches: int, degraded: int, skipped: int, branches_left_out: int) -> dict[str, Any]:
    """The ``inclusion`` block from counts (:func:`inclusion` counts them from games).

    Args:
        counted: Games the figures count.
        branches: Fork branches among them (with ``--include-branches``).
        degraded: Degraded games left out.
        skipped: Games of a skipped family left out.
        branches_left_out: Fork branches left out by the rule.

    Returns:
        The block :func:`inclusion` documents.
    """
    head = f"corpus figures: {_n(counted, 'game', 'games')}"
    if branches:
        head += f", {branches} of them fork {'branch' if branches == 1 else 'branches'} ({BRANCH_FLAG})"
    parts = []
    if branches_left_out:
        parts.append(_n(branches_left_out, "fork branch", "fork branches"))
    if degraded:
        parts.append(_n(degraded, "degraded game", "degraded games"))
    if skipped:
        parts.append(_n(skipped, "game of a skipped family", "games of a skipped family"))
    if parts:
        left = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] + " left out"
        tail = "" if branches else f" ({BRANCH_FLAG} adds branches)"
    elif branches:
        left, tail = "no degraded game to leave out", ""
    else:
        left = "no fork branch or degraded game to leave out"
        tail = f" (by default both are; {BRANCH_FLAG} adds branches)"
    return {
        "games": counted,
        "branches": branches,
        "branches_left_out": branches_left_out,
        "degraded": degraded,
        "skipped": skipped,
        "rule": f"{head}; {left}{tail}",
    }
