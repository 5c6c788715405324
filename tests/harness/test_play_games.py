"""play_games: many seeded games of one table, bounded concurrency, in seed order."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mafialab.engine import GameState
from mafialab.harness import GameResult, play_games
from mafialab.record import GAME_FILE, read_game
from mafialab.rules import WEREWOLF7


def test_games_come_back_in_seed_order_with_logs_and_callbacks(tmp_path: Path) -> None:
    started: list[int] = []
    done: list[tuple[int, str | None]] = []
    batches: dict[int, int] = {}

    def on_batch(seed: int, state: GameState) -> None:
        batches[seed] = batches.get(seed, 0) + 1

    def on_done(seed: int, res: GameResult | None) -> None:
        done.append((seed, res.game_id if res else None))

    specs = ["scripted"] * 6 + ["random"]
    results = asyncio.run(
        play_games(
            WEREWOLF7,
            specs,
            [5, 3, 9],
            out=tmp_path,
            parallel=2,
            on_start=started.append,
            on_batch=on_batch,
            on_done=on_done,
        )
    )
    assert [r.seed for r in results] == [5, 3, 9]
    assert sorted(started) == [3, 5, 9] and sorted(s for s, _ in done) == [3, 5, 9]
    assert all(batches[s] > 5 for s in (3, 5, 9))
    for r in results:
        assert r.path is not None
        game = read_game(r.path)
        assert game.header.seed == r.seed
        assert [s.agent for s in game.header.roster] == specs
        assert (r.path / GAME_FILE).is_file()


def test_a_table_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="specs: 6 agent specs for 7 seats"):
        asyncio.run(play_games(WEREWOLF7, ["scripted"] * 6, [1]))
    with pytest.raises(ValueError, match="parallel: must be >= 1"):
        asyncio.run(play_games(WEREWOLF7, ["scripted"] * 7, [1], parallel=0))
