"""Hand-off latency of a decision through the model bus and through the agent API (loopback).

Both measure what the network path adds to a decision whose answer is ready at once:

* bus: a game-side ``bus/...`` backend posts a call to the hub (``mafialab bus serve``'s
  app, uvicorn on 127.0.0.1, in its own process), a worker in a third process (written to the bus protocol with
  plain httpx, answering instantly) long-polls it, answers, and the hub hands the text back.
* agent API: a ``remote`` seat opens a decision on the seat server (in the game's event
  loop); a client in another process (``mafialab.remote.Client``, answering with the first
  legal option) long-polls it and posts the answer; the seat's ``decide`` returns.

Target: median hand-off under 20 ms for each.

Usage: python benchmarks/remote_latency.py [--n 200]
Prints JSON: per path, n, median_ms, p90_ms, max_ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import socket
import statistics
import time
from typing import Any

import httpx
import uvicorn

from mafialab.engine import GameState
from mafialab.models import ChatMessage, ChatRequest, get_model
from mafialab.remote import (
    BusHub,
    Client,
    RemoteAgent,
    SeatServer,
    create_bus_app,
    first_legal,
    parse_seat_spec,
)
from mafialab.rules import load_rules


def _bus_worker(url: str, n: int) -> None:
    with httpx.Client(base_url=url, timeout=30) as c:
        c.post("/register", json={"worker": "bench", "models": ["bench"]}).raise_for_status()
        done = 0
        while done < n:
            r = c.get("/work", params={"worker": "bench", "wait": 10})
            if r.status_code != 200:
                continue
            c.post("/result", json={"request_id": r.json()["request_id"], "text": "ok"})
            done += 1


def _hub(port: int) -> None:
    uvicorn.run(create_bus_app(BusHub()), host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _api_client(url: str, token: str) -> None:
    with Client(url, token) as c:
        c.play(first_legal, wait=10, max_s=600)


def _stats(xs: list[float]) -> dict[str, Any]:
    ms = sorted(x * 1000 for x in xs)
    return {
        "n": len(ms),
        "median_ms": round(statistics.median(ms), 2),
        "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 2),
        "max_ms": round(ms[-1], 2),
    }


async def bench_bus(n: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    hub = ctx.Process(target=_hub, args=(port,), daemon=True)
    hub.start()
    worker = None
    try:
        async with httpx.AsyncClient(timeout=30) as probe:
            for _ in range(200):
                try:
                    await probe.get(f"{url}/status")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            worker = ctx.Process(target=_bus_worker, args=(url, n + 5), daemon=True)
            worker.start()
            while not (await probe.get(f"{url}/status")).json()["workers"]:
                await asyncio.sleep(0.05)
        model = get_model(f"bus/bench?base_url={url}&timeout=30")
        req = ChatRequest(messages=[ChatMessage(role="user", content="Say ok.")], purpose="vote")
        for _ in range(5):  # warm-up
            await model.chat(req)
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            r = await model.chat(req)
            out.append(time.perf_counter() - t0)
            assert r.ok, r.error
    finally:
        if worker is not None:
            worker.join(30)
            if worker.is_alive():
                worker.kill()
        hub.kill()
        hub.join(10)
    return _stats(out)


async def bench_api(n: int) -> dict[str, Any]:
    rules = load_rules("werewolf7")
    state = GameState(rules, 1)
    while True:  # the first vote of the game
        batch = state.pending()
        votes = [d for d in batch if d.kind == "vote"]
        if votes:
            break
        for d in batch:
            state.apply(state.random_action(d))
    d = votes[0]
    agent = RemoteAgent(d.seat, rules, 1, parse_seat_spec("remote?timeout=30"))
    async with SeatServer(port=0, rate=(100_000, 1.0)) as seats:
        (ticket,) = seats.open_game("bench", [agent])
        proc = mp.get_context("spawn").Process(target=_api_client, args=(seats.url, ticket.token))
        proc.start()
        view = state.view(d.seat)
        await seats.observer("bench").on_events([], state)
        try:
            for _ in range(5):
                await agent.decide(d, view)
            out = []
            for _ in range(n):
                t0 = time.perf_counter()
                a = await agent.decide(d, view)
                out.append(time.perf_counter() - t0)
                assert not a.fallback
            await seats.close_game("bench")
        finally:
            await asyncio.to_thread(proc.join, 30)
            if proc.is_alive():
                proc.kill()
    return _stats(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200, help="Decisions timed per path.")
    args = ap.parse_args()
    res = {"bus": asyncio.run(bench_bus(args.n)), "agent_api": asyncio.run(bench_api(args.n)), "target_median_ms": 20}
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
