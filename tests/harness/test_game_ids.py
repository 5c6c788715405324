"""A game id names one recorded game: the run configuration (probe battery, settings) is in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mafialab.agents import make_agent
from mafialab.harness import default_game_id, play_game, run_config
from mafialab.probes import load_battery, make_probe_observer
from mafialab.record import PROBES_FILE, read_game
from mafialab.rules import WEREWOLF7


def _agents(seed: int) -> list[Any]:
    return [make_agent("scripted", s, WEREWOLF7, seed) for s in range(WEREWOLF7.n_seats)]


async def _play(out: Path, battery: str | None) -> tuple[str, Path]:
    agents = _agents(2)
    obs = make_probe_observer(battery, agents, WEREWOLF7, 2, out=out) if battery else None
    res = await play_game(WEREWOLF7, agents, 2, out=out, observers=[obs] if obs else [])
    assert res.path is not None
    return res.game_id, res.path


async def test_the_same_seed_and_line_up_with_and_without_probes_get_different_ids(tmp_path: Path) -> None:
    plain, plain_dir = await _play(tmp_path, None)
    probed, probed_dir = await _play(tmp_path, "default")
    suspicion, suspicion_dir = await _play(tmp_path, "suspicion")
    assert len({plain, probed, suspicion}) == 3
    # one folder holds all three, each in its own directory, the probes beside the probed games
    assert not (plain_dir / PROBES_FILE).exists()
    assert (probed_dir / PROBES_FILE).is_file() and (suspicion_dir / PROBES_FILE).is_file()
    assert read_game(probed_dir).header.meta["probes"] == load_battery("default").fingerprint()
    assert "probes" not in read_game(plain_dir).header.meta


def test_the_probe_runner_writes_where_play_game_puts_the_game(tmp_path: Path) -> None:
    agents = _agents(5)
    obs = make_probe_observer("suspicion", agents, WEREWOLF7, 5, out=tmp_path)
    assert obs is not None
    want = default_game_id(WEREWOLF7, 5, [a.label for a in agents], run_config(agents, [obs]))
    assert obs.game_id == want
    assert want != default_game_id(WEREWOLF7, 5, [a.label for a in agents], run_config(agents))


def test_a_battery_fingerprint_changes_with_any_question() -> None:
    bat = load_battery("suspicion")
    changed = bat.model_copy(update={"probes": (bat.probes[0].model_copy(update={"max_tokens": 7}), *bat.probes[1:])})
    assert bat.fingerprint().startswith("suspicion:")
    assert bat.fingerprint() == load_battery("suspicion").fingerprint()
    assert changed.fingerprint() != bat.fingerprint()
    assert bat.model_copy(update={"description": "other words"}).fingerprint() == bat.fingerprint()


def test_agent_settings_are_part_of_the_id() -> None:
    mk = [make_agent("mock/a", s, WEREWOLF7, 0) for s in range(WEREWOLF7.n_seats)]
    hot = [make_agent("mock/a?temperature=1.5", s, WEREWOLF7, 0) for s in range(WEREWOLF7.n_seats)]
    labels = [a.label for a in mk]
    assert [a.label for a in hot] == labels
    assert default_game_id(WEREWOLF7, 0, labels, run_config(mk)) != default_game_id(
        WEREWOLF7, 0, labels, run_config(hot)
    )
