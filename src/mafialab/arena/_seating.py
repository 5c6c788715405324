"""Balanced seating of a season's roster across games (see ``docs/arena.md``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mafialab.engine import deal_roles, stream
from mafialab.rules import RuleSet, Team


@dataclass
class SeatingTally:
    """Running counts per roster entry, used to balance the next game.

    Attributes:
        games: Games with at least one seat, per entry.
        seats: Seats played (seat-games), per entry.
        teams: Seats per team, per entry.
        roles: Seats per role name, per entry.
        positions: Seats per seat number, per entry.
    """

    n_entries: int
    n_seats: int
    games: list[int] = field(init=False)
    seats: list[int] = field(init=False)
    teams: dict[str, list[int]] = field(init=False)
    roles: dict[str, list[int]] = field(init=False)
    positions: list[list[int]] = field(init=False)

    def __post_init__(self) -> None:
        self.games = [0] * self.n_entries
        self.seats = [0] * self.n_entries
        self.teams = {"town": [0] * self.n_entries, "mafia": [0] * self.n_entries}
        self.roles = {}
        self.positions = [[0] * self.n_seats for _ in range(self.n_entries)]

    def add(self, seating: Sequence[int], roles: Sequence[str], teams: Sequence[Team]) -> None:
        """Count one game's seating (entry per seat)."""
        for s, e in enumerate(seating):
            self.seats[e] += 1
            self.teams[teams[s]][e] += 1
            self.roles.setdefault(roles[s], [0] * self.n_entries)[e] += 1
            self.positions[e][s] += 1
        for e in set(seating):
            self.games[e] += 1


def _participants(tally: SeatingTally, n_seats: int, order_rank: list[int]) -> list[int]:
    """Seats per entry in one game (see :func:`plan_seating`, step 1)."""
    n = tally.n_entries
    in_game = [0] * n
    for _ in range(n_seats):
        e = min(
            range(n),
            key=lambda e: (
                in_game[e],
                tally.games[e] if in_game[e] == 0 else 0,
                tally.seats[e] + in_game[e],
                order_rank[e],
            ),
        )
        in_game[e] += 1
    return in_game


def _mafia_split(in_game: list[int], n_mafia: int, mafia_so_far: list[int], order_rank: list[int]) -> list[int]:
    """Mafia seats per entry in one game (see :func:`plan_seating`, step 2)."""
    n = len(in_game)
    now = [0] * n
    for _ in range(n_mafia):
        e = min(
            (e for e in range(n) if now[e] < in_game[e]),
            key=lambda e: (mafia_so_far[e] + now[e], now[e], order_rank[e]),
        )
        now[e] += 1
    return now


def _repair_mafia(part: list[list[int]], maf: list[list[int]]) -> None:
    """Even out mafia seats across games by exchanges that keep games and seats unchanged.

    While some entry ``hi`` has at least two mafia seats more than some entry ``lo``,
    find a chain ``hi = u0 → u1 → … → uk = lo`` where, in some game, ``u_i`` has a mafia
    seat and ``u_{i+1}`` a town seat, and swap along it (``hi`` loses one mafia seat,
    ``lo`` gains one, the others keep their counts). Stops when no such chain exists.
    """
    n = len(part[0]) if part else 0
    while True:
        total = [sum(m[e] for m in maf) for e in range(n)]
        improved = False
        for hi in sorted(range(n), key=lambda e: -total[e]):
            targets = {e for e in range(n) if total[hi] - total[e] >= 2}
            if not targets:
                continue
            prev: dict[int, tuple[int, int]] = {hi: (-1, -1)}
            queue = [hi]
            found = None
            while queue and found is None:
                u = queue.pop(0)
                for g in range(len(part)):
                    if maf[g][u] == 0:
                        continue
                    for v in range(n):
                        if v in prev or part[g][v] - maf[g][v] == 0:
                            continue
                        prev[v] = (u, g)
                        if v in targets:
                            found = v
                            break
                        queue.append(v)
                    if found is not None:
                        break
            if found is None:
                continue
            v = found
            while v != hi:
                u, g = prev[v]
                maf[g][u] -= 1
                maf[g][v] += 1
                v = u
            improved = True
            break
        if not improved:
            return


def _place(
    tally: SeatingTally, chosen: dict[Team, list[int]], roles: Sequence[str], teams: Sequence[Team]
) -> list[int]:
    """Put the chosen entries on concrete seats of their team (min-cost assignment)."""
    seating = [-1] * len(roles)
    for t, entries in chosen.items():
        seats = [s for s in range(len(roles)) if teams[s] == t]
        if not seats:
            continue
        cost = np.zeros((len(entries), len(seats)))
        for i, e in enumerate(entries):
            for j, s in enumerate(seats):
                role_n = tally.roles.get(roles[s], [0] * tally.n_entries)[e]
                cost[i, j] = role_n * (tally.n_seats + 1) + tally.positions[e][s]
        from scipy.optimize import linear_sum_assignment  # scipy loads only when seats are assigned

        rows, cols = linear_sum_assignment(cost)
        for i, j in zip(rows, cols, strict=True):
            seating[seats[j]] = entries[i]
    return seating


def _repair_roles(plans: list[list[int]], deals: list[list[str]], teams: list[list[Team]], n_entries: int) -> None:
    """Even out each role's count by swapping two same-team seats inside a game.

    A swap of entry ``hi`` (holding role ``r``) with entry ``lo`` (another role ``r2`` of
    the same team) is made when ``hi`` holds ``r`` at least twice more often than ``lo``
    and the swap lowers the sum over roles and entries of squared role counts (so
    ``r2`` does not get worse by more than ``r`` improves; this also guarantees the loop
    ends). Games, seats and mafia seats are unchanged.
    """
    cnt: dict[str, list[int]] = {}
    for seating, deal in zip(plans, deals, strict=True):
        for s, e in enumerate(seating):
            cnt.setdefault(deal[s], [0] * n_entries)[e] += 1
    for _ in range(100):
        changed = False
        for g, (seating, deal) in enumerate(zip(plans, deals, strict=True)):
            for s_hi in range(len(seating)):
                r = deal[s_hi]
                for s_lo in range(len(seating)):
                    r2 = deal[s_lo]
                    if r2 == r or teams[g][s_lo] != teams[g][s_hi]:
                        continue
                    hi, lo = seating[s_hi], seating[s_lo]
                    d = cnt[r][hi] - cnt[r][lo]
                    d2 = cnt[r2][hi] - cnt[r2][lo]
                    if d < 2 or d2 + 1 >= d - 1:
                        continue
                    seating[s_hi], seating[s_lo] = lo, hi
                    cnt[r][hi] -= 1
                    cnt[r][lo] += 1
                    cnt[r2][lo] -= 1
                    cnt[r2][hi] += 1
                    changed = True
                    break
        if not changed:
            return


def plan_seating(n_entries: int, rules: RuleSet, seeds: Sequence[int], season_seed: int) -> list[list[int]]:
    """Seat a roster of ``n_entries`` over the games with ``seeds``.

    The role of every seat is known in advance (:func:`~mafialab.engine.deal_roles` of the
    game's seed), so the plan balances roles as well as games. Games are planned in order,
    greedily; for each game:

    1. Participants: the table's seats are handed out one at a time to the entry that
       minimises, in order: seats it already has in this game (so an entry holds at most
       one seat per game when the roster is at least as large as the table, and
       ``floor``/``ceil`` of ``seats / entries`` seats otherwise); games played so far
       (entries not yet in this game only); seats played so far; a per-game random rank
       (stream ``seating:<game>`` of the season seed).
    2. Teams: the mafia seats go one at a time to the participant (with a seat left in
       this game) with the fewest mafia seats so far, counting this game's, then the fewest
       mafia seats in this game, then the rank; the participants' other seats are town.
    3. Repair: while one entry has two or more mafia seats more than another, a chain of
       mafia/town seat swaps inside games moves one mafia seat from the first to the
       second without changing anyone's games or seats (breadth-first search over
       entries; see ``_repair_mafia``).
    4. Seats: within each team, chosen entries are put on concrete seats by a minimum-cost
       assignment whose cost is, per entry and seat, the entry's count of that seat's role
       (weighted first) and of that seat number.

    5. Roles: while an entry holds some role (e.g. Angel) at least twice more often than
       another, and they sit on the same team in a game where the first holds that role,
       they swap seats if that lowers the total squared role counts (``_repair_roles``).

    Properties (tested): every entry's games, seats and mafia seats differ from every other
    entry's by at most one; within a game, an entry holds at most one seat when the roster
    is at least as large as the table, else every entry plays with floor/ceil seats. Other
    roles (Angel, Sheriff …) are balanced best-effort: a spread of at most two seats in
    every case we measured (97 % of cases at most one).

    Args:
        n_entries: Roster size (>= 1).
        rules: The rule set (seat count, deck).
        seeds: The game seeds, in game order.
        season_seed: Seed for the tie-break rank.

    Returns:
        Per game, the roster entry index of each seat.

    Raises:
        ValueError: ``n_entries < 1``.
    """
    if n_entries < 1:
        raise ValueError("roster: needs at least one entry")
    deals = [deal_roles(rules, seed) for seed in seeds]
    team_of: list[list[Team]] = [[rules.role(r).team for r in roles] for roles in deals]
    ranks = []
    for g in range(len(seeds)):
        order = list(range(n_entries))
        stream(season_seed, f"seating:{g}").shuffle(order)
        rank = [0] * n_entries
        for i, e in enumerate(order):
            rank[e] = i
        ranks.append(rank)
    tally = SeatingTally(n_entries, rules.n_seats)
    part: list[list[int]] = []
    maf: list[list[int]] = []
    mafia_so_far = [0] * n_entries
    for g in range(len(seeds)):
        in_game = _participants(tally, rules.n_seats, ranks[g])
        for e, c in enumerate(in_game):
            tally.seats[e] += c
            tally.games[e] += c > 0
        m = _mafia_split(in_game, team_of[g].count("mafia"), mafia_so_far, ranks[g])
        for e in range(n_entries):
            mafia_so_far[e] += m[e]
        part.append(in_game)
        maf.append(m)
    _repair_mafia(part, maf)
    tally = SeatingTally(n_entries, rules.n_seats)
    plans = []
    for g in range(len(seeds)):
        chosen: dict[Team, list[int]] = {
            "mafia": [e for e in range(n_entries) for _ in range(maf[g][e])],
            "town": [e for e in range(n_entries) for _ in range(part[g][e] - maf[g][e])],
        }
        seating = _place(tally, chosen, deals[g], team_of[g])
        tally.add(seating, deals[g], team_of[g])
        plans.append(seating)
    _repair_roles(plans, deals, team_of, n_entries)
    return plans


def reseat(
    seating: Sequence[int], rules: RuleSet, old_seed: int, new_seed: int, old_roles: Sequence[str] | None = None
) -> list[int]:
    """Seating for a replacement game with ``new_seed`` that keeps each entry's team.

    The entries that held mafia seats under ``old_seed`` take the mafia seats dealt by
    ``new_seed`` (in seat order), likewise for town; so a replayed game leaves every
    entry's games, seats and mafia seats unchanged. ``old_roles``: the old game's roles when
    they were not its seed's deal (role rotation).

    Raises:
        ValueError: The two deals have different team sizes (cannot happen with one rule set).
    """
    old = [rules.role(r).team for r in (old_roles or deal_roles(rules, old_seed))]
    new = [rules.role(r).team for r in deal_roles(rules, new_seed)]
    out = [-1] * len(seating)
    for t in ("mafia", "town"):
        src = [seating[s] for s in range(len(seating)) if old[s] == t]
        dst = [s for s in range(len(seating)) if new[s] == t]
        if len(src) != len(dst):
            raise ValueError("reseat: team sizes differ between deals")
        for e, s in zip(src, dst, strict=True):
            out[s] = e
    return out
