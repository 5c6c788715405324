"""``GameSetup``: the one place a game's probes and outside seats are attached (every caller uses it)."""

from __future__ import annotations

import ast
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mafialab
from mafialab.agents import make_agent
from mafialab.engine import Event, GameState
from mafialab.harness import play_game
from mafialab.probes import GameSetup, ProbeRunner, load_battery, make_probe_observer
from mafialab.record import GAME_FILE, PROBES_FILE, read_records, strip_clock
from mafialab.rules import WEREWOLF7

SRC = Path(mafialab.__file__).parent


class _Host:
    """A seat host that records what it was asked (the order and the ids)."""

    def __init__(self) -> None:
        self.opened: list[tuple[str, Path | None]] = []
        self.events: list[str] = []

    def open_game(self, game_id: str, agents: Sequence[Any], game_dir: Path | None = None) -> list[str]:
        self.opened.append((game_id, game_dir))
        return [f"ticket {game_id}"]

    def observer(self, game_id: str) -> _Host:
        return self

    async def on_events(self, events: Sequence[Event], state: GameState) -> None:
        self.events += [e.kind for e in events]

    async def finish(self) -> None:
        self.events.append("finish")


def _agents(seed: int) -> list[Any]:
    return [make_agent("scripted", s, WEREWOLF7, seed) for s in range(WEREWOLF7.n_seats)]


async def test_the_probes_come_before_the_seats_under_the_id_the_game_gets(tmp_path: Path) -> None:
    host, tickets = _Host(), []
    setup = GameSetup.of("suspicion", seats=host, on_ticket=tickets.append)
    agents = _agents(3)
    observers = setup.observers(WEREWOLF7, 3, agents, tmp_path)
    assert [type(o) for o in observers] == [ProbeRunner, _Host]  # a seat hears the end after the last probe
    result = await play_game(WEREWOLF7, agents, 3, out=tmp_path, observers=observers)
    gid = result.game_id
    assert setup.game_id(WEREWOLF7, 3, agents) == gid
    assert host.opened == [(gid, tmp_path / gid)] and tickets == [f"ticket {gid}"]
    assert host.events[-1] == "finish" and "speech" in host.events
    assert len(read_records(tmp_path / gid / PROBES_FILE)) == len(observers[0].records) > 0  # type: ignore[attr-defined]


async def test_records_are_those_of_the_probe_runner_alone(tmp_path: Path) -> None:
    """The game log and probe records through a setup equal a hand-wired runner's (clocks and latencies aside)."""
    files = []
    for way in ("setup", "runner"):
        agents, out = _agents(5), tmp_path / way
        if way == "setup":
            observers = GameSetup.of("default").observers(WEREWOLF7, 5, agents, out)
        else:
            runner = make_probe_observer("default", agents, WEREWOLF7, 5, out=out)
            observers = [runner] if runner is not None else []
        res = await play_game(WEREWOLF7, agents, 5, out=out, observers=observers)
        assert res.path is not None
        files.append([_timeless(read_records(res.path / f)) for f in (GAME_FILE, PROBES_FILE)])
    assert files[0] == files[1] and files[0][1]


def _timeless(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "latency_ms"} for r in strip_clock(records)]


def test_no_battery_and_a_disabled_one_attach_nothing_and_keep_the_unprobed_id() -> None:
    agents = _agents(0)
    off = load_battery("default").model_copy(update={"enabled": False})
    plain = GameSetup().game_id(WEREWOLF7, 0, agents)
    for setup in (GameSetup(), GameSetup.of("none"), GameSetup(off), GameSetup.of(None)):
        assert setup.battery is None and setup.probes is None
        assert setup.observers(WEREWOLF7, 0, agents, None) == []
        assert setup.game_id(WEREWOLF7, 0, agents) == plain
    probed = GameSetup.of("default")
    assert probed.probes == load_battery("default").fingerprint()
    assert probed.game_id(WEREWOLF7, 0, agents) != plain


def test_a_setup_without_callbacks_travels_to_a_worker() -> None:
    setup = GameSetup.of("suspicion")
    assert pickle.loads(pickle.dumps(setup)) == setup


def test_only_game_setup_builds_a_probe_runner_or_opens_outside_seats() -> None:
    """``play``, seasons, forks (bifurcation and the fork API through them) and Inspect wire nothing by hand."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("probes/"):  # the runner, its factory, the retest and the setup itself
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            f = node.func if isinstance(node, ast.Call) else None
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in ("make_probe_observer", "ProbeRunner", "open_game"):
                found.append(f"{rel}:{node.lineno}: {name}")
    assert found == []
