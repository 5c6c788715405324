"""Leak tests over HTTP: a remote seat receives exactly what the one visibility function gives it."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from mafialab.agents import make_agent
from mafialab.engine import visible_events
from mafialab.harness import play_game
from mafialab.remote import Client, SeatServer, first_legal
from mafialab.rules import BUILTIN, load_rules


@pytest.mark.parametrize("rules_name", sorted(BUILTIN))
async def test_every_seat_receives_only_its_visible_events(rules_name: str, tmp_path: Path) -> None:
    rules = load_rules(rules_name)
    seed = 2
    async with SeatServer(port=0, rate=(1000, 1.0)) as seats:
        agents = [make_agent("remote?timeout=30", s, rules, seed) for s in range(rules.n_seats)]
        tickets = seats.open_game("g", agents, tmp_path / "g")
        clients = [Client(seats.url, t.token) for t in tickets]
        infos: dict[int, dict] = {}
        errors: list[BaseException] = []

        def run(i: int, c: Client) -> None:
            try:
                c.play(first_legal, wait=5, max_s=240)
            except BaseException as err:  # reported by the test thread
                errors.append(err)

        threads = [threading.Thread(target=run, args=(i, c), daemon=True) for i, c in enumerate(clients)]
        for th in threads:
            th.start()
        res = await asyncio.wait_for(
            play_game(rules, agents, seed, out=tmp_path, game_id="g", observers=[seats.observer("g")]), 300
        )
        await seats.close_game("g")
        for th in threads:
            await asyncio.to_thread(th.join, 30)
        for i, c in enumerate(clients):
            infos[i] = await asyncio.to_thread(c.seat)
    assert not errors, errors
    assert res.winner is not None
    events = res.state.events
    for s, c in enumerate(clients):
        mine = [ev.model_dump(mode="json") for ev in visible_events(events, s)]
        assert c.events == mine, f"seat {s} received other events than its view"
        hidden = {ev.seq for ev in events} - {e["seq"] for e in mine}
        assert hidden, "every seat has something it may not see"
        assert not {e["seq"] for e in c.events} & hidden
        info = infos[s]
        assert info["role"] == res.state.roles[s]
        assert set(info) >= {"seat", "role", "team", "teammates"}
        # teammates are only told to a team that knows its members
        mates = [
            res.state.names[m] for m in range(rules.n_seats) if m != s and res.state.teams[m] == res.state.teams[s]
        ]
        assert set(info["teammates"]) <= set(mates)
        c.close()
