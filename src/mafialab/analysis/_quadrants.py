"""The quadrant of an innocent day vote: was the assessment right, was the move good?

Definition (MafiaScope §6; ``docs/counterfactual.md``, "Quadrants"): *assessment right*
when the voter's committed set - the other living players its latest usable
``role_assessment`` answer before its own vote labels Mafia, exactly as in F4 vote coupling -
holds at least one real hidden-team member (no such answer: no quadrant); *move good* when
the vote's target is a real hidden-team member. right & good = ``correct_good``, right & bad
= ``policy_gap``, wrong & bad = ``perception_gap``, wrong & good = ``luck``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mafialab.analysis._data import GameData, Probe
from mafialab.analysis._metrics import (
    _NONE,
    Method,
    _before,
    _use_seq,
    answer,
    committed_set,
    counted_votes,
    vocabulary,
)

QUADRANT_NAMES = ("correct_good", "policy_gap", "perception_gap", "luck")
"""Quadrant names in table order (right&good, right&bad, wrong&bad, wrong&good)."""


@dataclass(frozen=True)
class VoteQuadrant:
    """One innocent day vote with its quadrant.

    Attributes:
        round: Round of the vote.
        voter: Voter's name.
        target: Counted target's name.
        vote_seq: ``seq`` of the voter's own vote event.
        alive: Players alive at the tally (the voter included), sorted.
        committed: The committed set (``None``: no usable assessment before the vote).
        move_good: Whether the target is on the hidden team.
        quadrant: One of :data:`QUADRANT_NAMES`, or ``None`` without an assessment.
        model: The voter's agent label.
    """

    round: int
    voter: str
    target: str
    vote_seq: int
    alive: tuple[str, ...]
    committed: frozenset[str] | None
    move_good: bool
    quadrant: str | None
    model: str


def quadrant_of(assessment_right: bool, move_good: bool) -> str:
    """The quadrant name for the two bits (MafiaScope §6)."""
    if assessment_right:
        return "correct_good" if move_good else "policy_gap"
    return "luck" if move_good else "perception_gap"


def vote_quadrants(game: GameData, method: Method) -> list[VoteQuadrant]:
    """Every innocent day vote of ``game`` with its quadrant, in tally order.

    Vote units are those of F4 vote coupling (a counted vote for a living player whose
    voter's own vote event exists; ``method`` decides the alive set and which answers are
    usable). The committed set uses ``method.f4_mafia_label`` (exact ``"Mafia"`` for the
    reference method).

    Returns:
        One :class:`VoteQuadrant` per unit whose voter is not on the hidden team.
    """
    vocab = vocabulary(game, method)
    by_player: dict[str, list[Probe]] = {}
    for p in game.probes:
        if p.probe_id == "role_assessment":
            by_player.setdefault(p.player, []).append(p)
    use_seq = _use_seq(game, method)

    def last_assessment(player: str, ts: float | None, seq: int) -> Any:
        found: Any = _NONE
        for p in by_player.get(player, []):
            if not _before(p, ts, seq, use_seq):
                continue
            if method.f4_answers == "stored":
                a = p.parsed if p.parse_ok else _NONE
            else:
                a = answer(p, method, game.names)
                a = a if isinstance(a, list) else _NONE
            if a is not _NONE:
                found = a
        return found

    out: list[VoteQuadrant] = []
    for v in counted_votes(game, method):
        if v.voter in game.mafia:
            continue
        target, alive = v.target, v.alive
        ra = last_assessment(v.voter, v.vote_ts, v.vote_seq)
        committed = committed_set(ra, method, vocab, set(alive - {v.voter}))
        good = target in game.mafia
        quadrant = None if committed is None else quadrant_of(bool(committed & game.mafia), good)
        out.append(
            VoteQuadrant(
                round=v.round,
                voter=v.voter,
                target=target,
                vote_seq=v.vote_seq,
                alive=tuple(sorted(alive)),
                committed=committed,
                move_good=good,
                quadrant=quadrant,
                model=game.agents.get(v.voter, "unknown"),
            )
        )
    return out
