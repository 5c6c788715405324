"""QA regressions: `play` never mixes a new game with stale log files of an earlier run."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafialab.agents import make_agent
from mafialab.harness import default_game_id, play_game
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE
from mafialab.rules import WEREWOLF7


@pytest.mark.parametrize("stale", [PROBES_FILE, CALLS_FILE, GAME_FILE])
async def test_play_refuses_a_game_dir_holding_a_stale_log_file(tmp_path: Path, stale: str) -> None:
    agents = [make_agent("scripted", s, WEREWOLF7, 0) for s in range(WEREWOLF7.n_seats)]
    game_dir = tmp_path / default_game_id(WEREWOLF7, 0, [a.label for a in agents])
    game_dir.mkdir()
    (game_dir / stale).write_text('{"old": "record"}\n')
    with pytest.raises(ValueError, match=stale.replace(".", r"\.")):
        await play_game(WEREWOLF7, agents, 0, out=tmp_path)
    assert (game_dir / stale).read_text() == '{"old": "record"}\n'
    assert sorted(p.name for p in game_dir.iterdir()) == [stale]


async def test_play_into_a_fresh_dir_still_writes(tmp_path: Path) -> None:
    agents = [make_agent("scripted", s, WEREWOLF7, 0) for s in range(WEREWOLF7.n_seats)]
    res = await play_game(WEREWOLF7, agents, 0, out=tmp_path)
    assert (tmp_path / res.game_id / GAME_FILE).is_file()
