"""Controlled deals: duplicate deals, role-rotation blocks, name shuffling (season file ``deals:``)."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from mafialab.arena import SeasonConfigError, plan_season, run_season, season_from_dict
from mafialab.arena._manifest import GAMES_DIR
from mafialab.engine import deal_roles
from mafialab.record import read_game
from mafialab.rules import load_rules

ARENA12 = load_rules("arena12")


def season(**over) -> dict:
    base = {
        "name": "d",
        "games": 12,
        "seed": 7,
        "roster": [{"agent": "scripted" if i % 2 else "random", "name": f"e{i}"} for i in range(13)],
    }
    base.update(over)
    return base


def test_duplicate_deals_give_every_lineup_entry_every_seat_of_the_deal():
    cfg = season_from_dict(season(games=24, deals={"mode": "duplicate"}))
    m = plan_season(cfg)
    for b in range(2):
        block = [s for s in m.slots if s.block == b]
        assert len(block) == 12
        assert {s.seed for s in block} == {7 + b}  # one deal per block: the same hands
        lineup = set(block[0].seating)
        assert len(lineup) == 12
        for seat in range(12):  # each entry of the line-up holds each seat (so each hand) once
            assert sorted(s.seating[seat] for s in block) == sorted(lineup)
        for e in lineup:
            assert sorted(s.seating.index(e) for s in block) == list(range(12))
        assert all(s.roles is None for s in block)


def test_duplicate_deals_are_played_as_planned(tmp_path: Path):
    cfg = season_from_dict(season(deals={"mode": "duplicate"}))
    m = asyncio.run(run_season(cfg, tmp_path / "s"))
    deal = deal_roles(ARENA12, 7)
    hands: dict[str, set[int]] = {}
    for slot in m.slots:
        game = read_game(tmp_path / "s" / GAMES_DIR / slot.game_id)
        assert [p.role for p in game.header.roster] == deal  # every game of the block: the same deal
        assert game.header.meta["entries"] == [cfg.roster[e].name for e in slot.seating]
        for seat, name in enumerate(game.header.meta["entries"]):
            hands.setdefault(name, set()).add(seat)
        assert slot.speaking_order and sorted(slot.speaking_order) == sorted(set(slot.speaking_order))
    played = [n for n, seats in hands.items() if seats]
    assert len(played) == 12 and all(hands[n] == set(range(12)) for n in played)


def test_role_rotation_keeps_the_lineup_and_moves_the_roles():
    cfg = season_from_dict(season(games=8, deals={"mode": "role_rotation", "rotations": 4}))
    m = plan_season(cfg)
    for b in range(2):
        block = [s for s in m.slots if s.block == b]
        assert len({tuple(s.seating) for s in block}) == 1  # one line-up on fixed seats
        assert [s.seed for s in block] == [7 + 4 * b + k for k in range(4)]  # fresh engine streams
        base = deal_roles(ARENA12, 7 + 4 * b)
        for k, s in enumerate(block):  # the base deal shifted 3 seats (12 // 4) per game
            assert s.roles == [base[(seat - 3 * k) % 12] for seat in range(12)]


def test_role_rotation_is_played_with_the_rotated_roles(tmp_path: Path):
    cfg = season_from_dict(season(games=4, deals={"mode": "role_rotation", "rotations": 4}))
    m = asyncio.run(run_season(cfg, tmp_path / "s"))
    for slot in m.slots:
        game = read_game(tmp_path / "s" / GAMES_DIR / slot.game_id)
        assert [p.role for p in game.header.roster] == slot.roles
        assert game.header.seed == slot.seed


def test_name_shuffling_changes_names_but_not_the_deal(tmp_path: Path):
    plain = asyncio.run(run_season(season_from_dict(season(games=4)), tmp_path / "plain"))
    shuf = asyncio.run(run_season(season_from_dict(season(games=4, deals={"shuffle_names": True})), tmp_path / "shuf"))
    default = list(ARENA12.seat_names[:12])
    moved = 0
    for a, b in zip(plain.slots, shuf.slots, strict=True):
        assert (a.seed, a.seating) == (b.seed, b.seating)  # same seeds and seating
        ga = read_game(tmp_path / "plain" / GAMES_DIR / a.game_id)
        gb = read_game(tmp_path / "shuf" / GAMES_DIR / b.game_id)
        assert [p.role for p in ga.header.roster] == [p.role for p in gb.header.roster]  # same deal
        assert ga.header.seed == gb.header.seed
        assert a.names is None and [p.name for p in ga.header.roster] == default
        assert b.names is not None and sorted(b.names) == sorted(default)
        assert [p.name for p in gb.header.roster] == b.names  # the log records the table names
        assert gb.header.rules_id == ga.header.rules_id
        moved += b.names != default
    assert moved == 4
    assert len({tuple(s.names or ()) for s in shuf.slots}) == 4  # a fresh permutation per game


@pytest.mark.parametrize(
    ("deals", "games", "field"),
    [
        ({"mode": "duplicate"}, 13, "games: 13 is not a multiple of deals.rotations (12"),
        ({"mode": "duplicate", "rotations": 13}, 13, "deals.rotations: 13 rotations of a 12-seat table"),
        ({"mode": "shuffle"}, 12, "deals.mode"),
        ({"shuffle": True}, 12, "deals.shuffle"),
        ({"mode": "role_rotation", "rotations": 0}, 12, "deals.rotations"),
    ],
)
def test_bad_deals_name_the_field(deals: dict, games: int, field: str):
    with pytest.raises(SeasonConfigError) as err:
        season_from_dict(season(games=games, deals=deals))
    assert field in str(err.value)


def test_plan_balance_still_holds_with_seeded_deals_and_names():
    cfg = season_from_dict(season(games=13, deals={"shuffle_names": True}))
    m = plan_season(cfg)
    seats = Counter(e for s in m.slots for e in s.seating)
    assert max(seats.values()) - min(seats.values()) <= 1
    assert [s.seed for s in m.slots] == [7 + j for j in range(13)]
