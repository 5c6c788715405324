"""Controlled deals: duplicate deals, role-rotation blocks and per-game name shuffling.

The season file's ``deals:`` block (:class:`~mafialab.arena._config.Deals`) turns the plan of
:func:`~mafialab.arena._seating.plan_seating` (one line-up per seeded deal) into the games of
a season; see ``docs/arena.md``, "Controlled deals".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mafialab.arena._config import SeasonConfig
from mafialab.arena._seating import plan_seating
from mafialab.engine import deal_roles, stream
from mafialab.rules import RuleSet


@dataclass(frozen=True)
class PlannedGame:
    """One game of a season plan.

    Attributes:
        seed: The game's seed (engine streams; also the deal unless ``roles`` is given).
        seating: Roster entry index per seat.
        roles: Role per seat when it is not the seed's deal (role rotation), else ``None``.
        names: Table name per seat when names are shuffled, else ``None`` (the rule set's).
        block: Deal block (``seeded``: the game number).
    """

    seed: int
    seating: list[int]
    roles: list[str] | None
    names: list[str] | None
    block: int


def rotate(seq: Sequence[int] | Sequence[str], shift: int) -> list:  # type: ignore[type-arg]
    """``out[(s + shift) % n] = seq[s]``: everything moves ``shift`` seats up."""
    n = len(seq)
    out = list(seq)
    for s, x in enumerate(seq):
        out[(s + shift) % n] = x
    return out


def shuffled_names(rules: RuleSet, season_seed: int, slot: int) -> list[str]:
    """The table names of game ``slot``: the rule set's names permuted by stream ``names:<slot>``."""
    names = list(rules.seat_names[: rules.n_seats])
    stream(season_seed, f"names:{slot}").shuffle(names)
    return names


def plan_games(cfg: SeasonConfig) -> list[PlannedGame]:
    """Every game of a season: seed, seating, roles and names, from its ``deals`` block.

    ``seeded``: game ``j`` has seed ``S + j`` and the balanced seating of
    :func:`plan_seating`. ``duplicate``: block ``b`` (``rotations`` games) has seed ``S + b``
    and the line-up :func:`plan_seating` gives that deal, rotated ``k·step`` seats in game
    ``k`` of the block. ``role_rotation``: block ``b`` keeps the line-up planned for seed
    ``S + b·rotations`` on its seats; game ``k`` of the block plays seed ``S + j`` with that
    seed's deal shifted ``k·step`` seats. ``step = seats // rotations``.

    Raises:
        SeasonConfigError: Unknown rule set.
    """
    rules = cfg.load_rules()
    n, k, s0 = rules.n_seats, cfg.rotations(), cfg.seed
    step = max(1, n // k)
    mode = cfg.deals.mode
    blocks = cfg.games // k
    base_seeds = [s0 + (b if mode == "duplicate" else b * k) for b in range(blocks)]
    lineups = plan_seating(len(cfg.roster), rules, base_seeds, s0)
    out = []
    for j in range(cfg.games):
        b, r = divmod(j, k)
        names = shuffled_names(rules, s0, j) if cfg.deals.shuffle_names else None
        if mode == "duplicate":
            out.append(PlannedGame(base_seeds[b], rotate(lineups[b], r * step), None, names, b))
        elif mode == "role_rotation":
            roles = rotate(deal_roles(rules, base_seeds[b]), r * step)
            out.append(PlannedGame(s0 + j, list(lineups[b]), roles, names, b))
        else:
            out.append(PlannedGame(s0 + j, lineups[j], None, names, j))
    return out
