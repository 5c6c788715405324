"""The game preflight refuses a bare ``mock/NAME`` seat (every answer falls back); scripted mocks play."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.agents import make_agent
from mafialab.arena import SeasonError, season_from_dict
from mafialab.arena._season import preflight_season
from mafialab.cli import app
from mafialab.harness import PreflightError, play_game, preflight
from mafialab.models import MockModel, get_model
from mafialab.record import GAME_FILE, read_game
from mafialab.rules import WEREWOLF7
from tests.llm_helpers import llm_agents


def _bare(seat: int, spec: str = "mock/x") -> object:
    return make_agent(spec, seat, WEREWOLF7, 0)


def test_only_a_bare_mock_string_is_unscripted() -> None:
    assert get_model("mock/x").scripted is False
    assert get_model("mock/x", outputs=["{}"]).scripted is True
    assert get_model('mock/x?outputs=["{}"]').scripted is True
    assert MockModel(lambda req: "{}").scripted is True  # a callable is the caller's script (fuzzing)
    swapped = get_model("mock/x")
    swapped._fn = lambda req: '{"target": "Alex"}'  # a test's own answerer replaces the default one
    assert swapped.scripted is True


async def test_a_bare_mock_seat_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    agents = [_bare(s) for s in range(WEREWOLF7.n_seats)]
    with pytest.raises(PreflightError, match=r"mock/x has no scripted outputs.*override: --allow-degraded"):
        await play_game(WEREWOLF7, agents, 0, out=tmp_path)
    assert not list(tmp_path.rglob(GAME_FILE))
    # one bare mock seat among scripted ones is refused the same way
    mixed = [make_agent("scripted", s, WEREWOLF7, 0) for s in range(WEREWOLF7.n_seats)]
    mixed[3] = _bare(3, "mock/lazy")
    with pytest.raises(PreflightError, match="mock/lazy has no scripted outputs"):
        await preflight(mixed)


async def test_allow_degraded_plays_the_fallback_only_game_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agents = [_bare(s) for s in range(WEREWOLF7.n_seats)]
    with caplog.at_level(logging.WARNING, logger="mafialab.harness._calls"):
        res = await play_game(WEREWOLF7, agents, 0, out=tmp_path, allow_degraded=True)
    assert any("mock/x has no scripted outputs" in r.message and "allow_degraded" in r.message for r in caplog.records)
    status = read_game(res.path).status
    assert status is not None and status.degraded and status.answered_share == 0.0


async def test_scripted_and_hostile_mocks_are_not_called_by_the_preflight(tmp_path: Path) -> None:
    agents, model = llm_agents(WEREWOLF7, 0)  # answers scripted by the test: never spent by the preflight
    assert await preflight(agents) == []
    assert model.requests == []
    hostile = MockModel(lambda req: '{"target": ', name="mock/hostile")  # every answer unusable, on purpose
    from mafialab.agents import LLMAgent

    seats = [LLMAgent(s, WEREWOLF7, 0, hostile) for s in range(WEREWOLF7.n_seats)]
    res = await play_game(WEREWOLF7, seats, 0, out=tmp_path)
    assert read_game(res.path).status.degraded  # its fallbacks show in the integrity gate instead
    assert not [r for r in hostile.requests if r.purpose == "preflight"]


def test_play_refuses_a_bare_mock_and_plays_it_with_allow_degraded(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["play", "--agents", "mock/x", "--out", str(tmp_path / "a")])
    assert res.exit_code == 2, res.output
    assert "mock/x has no scripted outputs" in res.output and "--allow-degraded" in res.output
    assert not (tmp_path / "a").exists() or not list((tmp_path / "a").rglob(GAME_FILE))
    ok = CliRunner().invoke(app, ["play", "--agents", "mock/x", "--allow-degraded", "--out", str(tmp_path / "b")])
    assert ok.exit_code == 0, ok.output
    assert "1 game degraded" in ok.output


async def test_a_season_with_a_bare_mock_in_its_roster_is_not_started() -> None:
    cfg = season_from_dict(
        {"name": "s", "rules": "werewolf7", "games": 1, "seed": 0, "roster": ["mock/x", "scripted"], "judges": []}
    )
    with pytest.raises(SeasonError, match=r"mock/x has no scripted outputs.*limits.preflight: false"):
        await preflight_season(cfg)
    scripted = season_from_dict(
        {"name": "s", "rules": "werewolf7", "games": 1, "seed": 0, "roster": ['mock/x?outputs=["{}"]', "scripted"]}
    )
    assert await preflight_season(scripted) == {}
