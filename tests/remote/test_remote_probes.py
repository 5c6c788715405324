"""Remote seats answer probe questions only with ``probe=1`` (``--probe-remote``), while the game waits."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

from mafialab.agents import make_agent
from mafialab.engine import GameState
from mafialab.harness import play_game
from mafialab.probes import make_probe_observer
from mafialab.remote import Client, ProbedRemoteAgent, RemoteAgent, SeatServer, first_legal
from mafialab.rules import load_rules


async def test_probed_remote_seat_answers_while_the_game_waits(tmp_path: Path) -> None:
    rules = load_rules("mafiascope7")
    seed = 6
    state = GameState(rules, seed)
    stalls: list[bool] = []

    def policy(req: dict[str, Any], client: Client) -> Any:
        if req["kind"] != "probe":
            return first_legal(req)
        names = req["schema"]["items"]["properties"]["player"]["enum"]
        before = len(state.events)
        time.sleep(0.15)  # a slow person: the game must not move on meanwhile
        stalls.append(len(state.events) == before)
        return [{"player": n, "score": 10 * i} for i, n in enumerate(names)]

    async with SeatServer(port=0, rate=(1000, 1.0)) as seats:
        agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
        agents[2] = make_agent("remote?timeout=30&probe=1", 2, rules, seed)
        agents[4] = make_agent("remote?timeout=30", 4, rules, seed)
        assert isinstance(agents[2], ProbedRemoteAgent) and type(agents[4]) is RemoteAgent
        assert not hasattr(agents[4], "probe")
        tickets = seats.open_game("g", agents, tmp_path / "g")
        obs = make_probe_observer("suspicion", agents, rules, seed, out=tmp_path, game_id="g")
        clients = [Client(seats.url, t.token) for t in tickets]
        errors: list[BaseException] = []

        def run(c: Client) -> None:
            try:
                c.play(policy, wait=5, max_s=240)
            except BaseException as err:  # reported by the test
                errors.append(err)

        threads = [threading.Thread(target=run, args=(c,)) for c in clients]
        for th in threads:
            th.start()
        res = await asyncio.wait_for(
            play_game(
                rules, agents, seed, out=tmp_path, game_id="g", state=state, observers=[obs, seats.observer("g")]
            ),
            300,
        )
        await seats.close_game("g")
        for th in threads:
            await asyncio.to_thread(th.join, 30)
    assert not errors, errors
    assert res.winner is not None
    probes = [json.loads(x) for x in (tmp_path / "g" / "probes.jsonl").read_text().splitlines()]
    by_seat = {p["seat"] for p in probes}
    assert 2 in by_seat and 4 not in by_seat
    mine = [p for p in probes if p["seat"] == 2]
    for p in mine:  # the answer as the seat sent it (the runner may order it by score)
        assert p["parse_ok"] and json.loads(p["answer_raw"]) == [
            {"player": x["player"], "score": 10 * i} for i, x in enumerate(json.loads(p["answer_raw"]))
        ]
        assert sorted(x["score"] for x in p["answer_parsed"]) == [10 * i for i in range(len(p["answer_parsed"]))]
    assert stalls and all(stalls), "the game moved on while a remote seat was asked a probe"
    header = json.loads((tmp_path / "g" / "game.jsonl").read_text().splitlines()[0])
    assert header["meta"]["agents"]["2"]["probed"] is True and header["meta"]["agents"]["4"]["probed"] is False
    calls = [
        c for c in map(json.loads, (tmp_path / "g" / "calls.jsonl").read_text().splitlines()) if c["kind"] == "call"
    ]
    assert len([c for c in calls if c["seat"] == 2 and c["purpose"] == "probe" and c["status"] == "ok"]) == len(mine)
