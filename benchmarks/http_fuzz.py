"""Hostile HTTP at mafialab's three servers: the agent API, the model bus hub and the viewer's fork API.

Usage: python benchmarks/http_fuzz.py [--requests 200] [--seed 0] [--big-mb 20]

Starts each server on 127.0.0.1 (free ports, nothing else is ever addressed) and sends it a
seeded stream of bad requests, written byte by byte on a raw socket so that nothing is
smoothed over by a client library:

* bodies over the server's cap, with a ``Content-Length`` and chunked without one (the
  chunked upload stops as soon as the server answers; the bytes it had to send are counted);
* non-standard JSON numbers (``NaN``, ``Infinity``), lone UTF-16 surrogates as JSON escapes,
  bytes that are not UTF-8, JSON nested 100,000 deep, wrong content types;
* requests a cross-site page could make (a foreign ``Origin``, ``Sec-Fetch-Site:
  cross-site``) and a forged ``Host`` (DNS rebinding);
* unknown paths and methods.

The agent API is fuzzed while a game is being played: its remote seat is played by the fuzzer,
which sends hostile answers to every open request before a legal one, so the game goes on.

Checks, per server: no answer is a 500 (a handler that raised) and no request goes unanswered;
each hostile case gets the status its rule says (413 over the cap, 403 cross-site, 415 not
JSON, 4xx otherwise); a cross-site or malformed request starts no fork job; the server still
answers a plain request afterwards; and the played game ends with every log file valid
UTF-8. Prints a JSON summary; exit code 1 when any check failed. The test suite runs a short
version (``tests/harness/test_hostile_inputs.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import select
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE
from mafialab.remote import (
    BackgroundServer,
    BusHub,
    Client,
    RemoteError,
    SeatServer,
    create_bus_app,
    first_legal,
)
from mafialab.rules import load_rules
from mafialab.viewer import SiteServer, build_site

FOREIGN = "http://evil.example:8000"
"""An origin no mafialab server serves."""


@dataclass
class Req:
    """One raw request: what is sent and which statuses its rule allows."""

    case: str
    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""
    chunked: bool = False
    expect: tuple[int, ...] = ()
    """Allowed statuses (empty: any status below 500)."""


@dataclass
class Tally:
    """What one server answered."""

    server: str
    sent: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "requests": self.sent,
            "statuses": dict(sorted(self.statuses.items())),
            "problems": len(self.problems),
            "first_problems": self.problems[:10],
        }


def send(host: str, port: int, req: Req, *, timeout_s: float = 10.0, chunk: int = 64 * 1024) -> tuple[int | None, int]:
    """Send ``req`` on a fresh connection; ``(status or None when unanswered, body bytes sent)``.

    A chunked body is sent in ``chunk``-byte pieces and the upload stops as soon as the
    server has answered (or closed the connection), as a well-behaved hostile client would
    not: the count shows how much the server read before refusing.
    """
    head = [f"{req.method} {req.path} HTTP/1.1"]
    headers = {"Host": f"{host}:{port}", "Connection": "close", **req.headers}
    if req.chunked:
        headers["Transfer-Encoding"] = "chunked"
    elif req.body or req.method == "POST":
        headers.setdefault("Content-Length", str(len(req.body)))
    head += [f"{k}: {v}" for k, v in headers.items()]
    sent = 0
    with socket.create_connection((host, port), timeout=timeout_s) as s:
        try:
            s.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            if req.chunked:
                for i in range(0, len(req.body), chunk):
                    if select.select([s], [], [], 0)[0]:
                        break  # the server answered (or closed) mid-upload
                    piece = req.body[i : i + chunk]
                    s.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    sent += len(piece)
                else:
                    s.sendall(b"0\r\n\r\n")
            else:
                s.sendall(req.body)
                sent = len(req.body)
        except OSError:
            pass  # reset mid-upload: the answer may still be readable
        return _status(s, timeout_s), sent


def _status(s: socket.socket, timeout_s: float) -> int | None:
    """The status code of the response on ``s`` (``None``: closed or timed out unanswered)."""
    s.settimeout(timeout_s)
    buf = b""
    try:
        while b"\r\n" not in buf:
            got = s.recv(4096)
            if not got:
                break
            buf += got
    except OSError:
        pass
    parts = buf.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[0].startswith(b"HTTP/") and parts[1].isdigit() else None


def _json(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def hostile(rng: random.Random, path: str, valid: dict[str, Any], cap: int, big: int, browser: bool) -> Req:
    """One hostile request against ``POST path`` whose good body would be ``valid``.

    Args:
        rng: The run's seeded stream.
        path: A state-changing endpoint.
        valid: A body the endpoint would accept (the hostile variants spoil it).
        cap: The server's body cap in bytes.
        big: Bytes of an oversized chunked upload.
        browser: Whether the endpoint refuses JSON sent as another content type (415).
    """
    js = {"Content-Type": "application/json"}
    kind = rng.choice(
        [
            "oversized",
            "chunked_oversized",
            "nan",
            "infinity",
            "surrogate",
            "not_utf8",
            "deep",
            "text_plain",
            "foreign_origin",
            "cross_site",
            "unknown_path",
            "bad_method",
        ]
    )
    key = next(iter(valid))
    if kind == "oversized":
        return Req(kind, "POST", path, js, _json({**valid, "pad": "x" * (cap + 1)}), expect=(413,))
    if kind == "chunked_oversized":
        return Req(kind, "POST", path, js, b'{"pad": "' + b"x" * big + b'"}', chunked=True, expect=(413,))
    if kind in ("nan", "infinity"):
        word = "NaN" if kind == "nan" else "-Infinity"
        body = json.dumps({**valid, "score": 1.5}).replace("1.5", word).encode()
        return Req(kind, "POST", path, js, body, expect=(400, 403, 409, 410, 415, 422))
    if kind == "surrogate":
        body = json.dumps({**valid, key: "x\\ud800y"}).replace("\\\\ud800", "\\ud800").encode()
        return Req(kind, "POST", path, js, body)
    if kind == "not_utf8":
        return Req(kind, "POST", path, js, b'{"' + key.encode() + b'": "\xff\xfe\xc3("}', expect=(400, 403, 409, 422))
    if kind == "deep":
        return Req(kind, "POST", path, js, b"[" * 100_000 + b"]" * 100_000, expect=(400, 403, 413, 422))
    if kind == "text_plain":
        headers = {"Content-Type": "text/plain", "Origin": FOREIGN} if browser else {"Content-Type": "text/plain"}
        return Req(kind, "POST", path, headers, _json(valid), expect=(403, 415) if browser else ())
    if kind == "foreign_origin":
        return Req(kind, "POST", path, {**js, "Origin": FOREIGN}, _json(valid), expect=(403,))
    if kind == "cross_site":
        return Req(kind, "POST", path, {**js, "Sec-Fetch-Site": "cross-site"}, _json(valid), expect=(403,))
    if kind == "unknown_path":
        return Req(kind, "GET", "/" + "".join(rng.choice("abc/%.") for _ in range(20)), {}, expect=(400, 403, 404))
    return Req(kind, rng.choice(["PUT", "DELETE", "PATCH"]), path, js, _json(valid), expect=(403, 404, 405))


def _judge(tally: Tally, req: Req, status: int | None, sent: int, cap: int) -> None:
    tally.sent += 1
    tally.statuses[f"{req.case}:{status}"] += 1
    if status is None:
        tally.problems.append(f"{req.case} {req.method} {req.path}: no answer")
    elif status >= 500 and status not in (502, 503):
        tally.problems.append(f"{req.case} {req.method} {req.path}: {status}")
    elif req.expect and status not in req.expect:
        tally.problems.append(f"{req.case} {req.method} {req.path}: {status}, expected one of {list(req.expect)}")
    if req.chunked and sent > 16 * cap + 4 * 1024 * 1024:
        tally.problems.append(f"{req.case}: the server read {sent} bytes of a body capped at {cap}")


def fuzz_bus(rng: random.Random, n: int, big: int) -> Tally:
    """Hostile requests at the bus hub (register, result, work); then a plain ``/status``."""
    tally = Tally("bus")
    cap = 1024 * 1024
    srv = BackgroundServer(create_bus_app(BusHub(), default_timeout=2.0)).start()
    try:
        host, port = "127.0.0.1", srv.port
        for _ in range(n):
            path, valid = rng.choice(
                [
                    ("/register", {"worker": f"w{rng.randint(0, 9)}", "models": ["*"]}),
                    ("/result", {"request_id": f"r{rng.randint(0, 9)}", "text": "hello"}),
                ]
            )
            req = hostile(rng, path, valid, cap, big, browser=False)
            status, sent = send(host, port, req)
            _judge(tally, req, status, sent, cap)
        for origin in ({"Origin": FOREIGN}, {"Sec-Fetch-Site": "cross-site"}):  # a page taking a job
            req = Req("cross_site_work", "GET", "/work?worker=w1&wait=0", origin, expect=(403,))
            status, sent = send(host, port, req)
            _judge(tally, req, status, sent, cap)
        if httpx.get(f"{srv.url}/status", timeout=10).status_code != 200:
            tally.problems.append("the hub no longer answers /status")
    finally:
        srv.stop()
    return tally


def _recorded_game(root: Path) -> Path:
    """A small scripted game under ``root/logs`` (the fork API's parent)."""
    rules = load_rules("mafiascope7")
    agents = [make_agent("scripted", s, rules, 3) for s in range(rules.n_seats)]
    asyncio.run(play_game(rules, agents, 3, out=root / "logs", game_id="parent"))
    return root / "logs"


def fuzz_forks(rng: random.Random, n: int, big: int, root: Path) -> Tally:
    """Hostile requests at ``POST /api/forks``; none may start a job; then a plain ``/api/info``."""
    tally = Tally("fork API")
    logs = _recorded_game(root)
    build_site(logs, root / "site", jobs=1)
    with SiteServer(root / "site", 0, logs=logs) as srv:
        host, port = "127.0.0.1", srv.port
        steps = httpx.get(f"{srv.url}api/games/parent/steps", timeout=10).json()
        step = steps[0]["step"] if isinstance(steps, list) and steps else 0
        cap = 64 * 1024
        for _ in range(n):
            # every variant is spoiled in one way: an unknown agent spec, and the hostile change
            valid = {"game": "parent", "step": step, "replicas": 1, "agents": "openai/x?base_url=http://127.0.0.1:9"}
            req = hostile(rng, "/api/forks", valid, cap, big, browser=True)
            status, sent = send(host, port, req)
            _judge(tally, req, status, sent, cap)
            if status is not None and 200 <= status < 300:
                tally.problems.append(f"{req.case}: a spoiled fork request was accepted ({status})")
        forged = Req("forged_host", "GET", "/api/jobs", {"Host": "rebound.example:80"}, expect=(400, 403, 421))
        status, sent = send(host, port, forged)
        _judge(tally, forged, status, sent, cap)
        jobs = httpx.get(f"{srv.url}api/jobs", timeout=10)
        if jobs.status_code != 200:
            tally.problems.append(f"the fork API no longer answers /api/jobs ({jobs.status_code})")
        elif jobs.json():
            tally.problems.append(f"hostile requests started {len(jobs.json())} fork jobs")
    return tally


def _answers(rng: random.Random, request: dict[str, Any], big: int, cap: int) -> Iterator[Req]:
    """Hostile answers to one open request of the agent API, before the legal one."""
    rid = request["id"]
    legal = first_legal(request)
    good = {"request_id": rid, "answer": legal}
    for _ in range(3):
        yield hostile(rng, "/v1/answer", good, cap, big, browser=False)
    if isinstance(legal, dict):
        for k in legal:  # a bare NaN in place of each answer field: never accepted, never recorded
            body = json.dumps({"request_id": rid, "answer": {**legal, k: 1.5}}).replace("1.5", "NaN")
            yield Req(
                "nan_field",
                "POST",
                "/v1/answer",
                {"Content-Type": "application/json"},
                body.encode(),
                expect=(400, 422),
            )


def fuzz_agent_api(rng: random.Random, n: int, big: int, root: Path) -> Tally:
    """Hostile answers to a remote seat of a game being played; then the game must end cleanly."""
    tally = Tally("agent API")
    rules = load_rules("mafiascope7")
    seed = 11
    cap = 16 * 1024

    async def main() -> None:
        async with SeatServer(port=0) as seats:
            agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
            for s in REMOTE_SEATS:
                agents[s] = make_agent("remote?timeout=30", s, rules, seed)
            tickets = seats.open_game("remote", agents, root / "games" / "remote")
            host, port = "127.0.0.1", seats.port
            budget = [n]
            lock = threading.Lock()

            def hostile_turn(request: dict[str, Any], token: str) -> None:
                with lock:  # one seeded stream shared by the seats' threads
                    reqs = list(_answers(rng, request, big, cap))[: max(0, budget[0])]
                    budget[0] -= len(reqs)
                for req in reqs:
                    req.headers["Authorization"] = f"Bearer {token}"
                    status, sent = send(host, port, req)
                    _judge(tally, req, status, sent, cap)
                    if req.case == "nan_field" and status == 200:
                        tally.problems.append("an answer holding NaN was accepted")

            def player(token: str) -> None:
                with Client(seats.url, token) as client:
                    while True:
                        got = client.next(wait=5)
                        if got is None:
                            continue
                        if got["status"] == "over":
                            return
                        request = got["request"]
                        hostile_turn(request, token)
                        try:
                            client.answer(request["id"], first_legal(request))
                        except RemoteError as err:  # 409 when a hostile answer was taken (counted above)
                            if err.status != 409:
                                tally.problems.append(f"the legal answer was refused: {err}")

            threads = [threading.Thread(target=player, args=(t.token,), daemon=True) for t in tickets]
            for th in threads:
                th.start()
            await play_game(
                rules, agents, seed, out=root / "games", game_id="remote", observers=[seats.observer("remote")]
            )
            await seats.close_game("remote")
            for th in threads:
                await asyncio.to_thread(th.join, 60)

    try:
        asyncio.run(main())
    except Exception as err:  # the thing being measured
        tally.problems.append(f"the game crashed: {type(err).__name__}: {str(err)[:200]}")
        return tally
    gdir = root / "games" / "remote"
    for name in (GAME_FILE, CALLS_FILE, PROBES_FILE):
        if (gdir / name).is_file():
            try:
                (gdir / name).read_bytes().decode("utf-8")
            except UnicodeDecodeError as err:
                tally.problems.append(f"{name} is not valid UTF-8: {err.reason}")
    if '"kind":"game_end"' not in (gdir / GAME_FILE).read_text(encoding="utf-8", errors="replace").replace(" ", ""):
        tally.problems.append("the game has no game_end")
    return tally


REMOTE_SEATS = (0, 1, 2, 3, 4, 5, 6)
"""Seats of the fuzzed game played through the agent API (all of ``mafiascope7``'s)."""

SERVERS: dict[str, Callable[..., Tally]] = {"bus": fuzz_bus, "forks": fuzz_forks, "agent_api": fuzz_agent_api}


def run(requests: int, seed: int, big_mb: float = 20.0, servers: tuple[str, ...] = tuple(SERVERS)) -> dict[str, Any]:
    """Fuzz each server with ``requests`` hostile requests; the summary (see the module docstring)."""
    rng = random.Random(seed)
    big = int(big_mb * 1024 * 1024)
    rows = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mafialab-http-fuzz-") as tmp:
        for name in servers:
            fn = SERVERS[name]
            tally = fn(rng, requests, big) if name == "bus" else fn(rng, requests, big, Path(tmp) / name)
            rows.append(tally.row())
    return {
        "servers": rows,
        "requests": sum(r["requests"] for r in rows),
        "problems": sum(r["problems"] for r in rows),
        "wall_s": round(time.perf_counter() - t0, 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", type=int, default=200, help="hostile requests per server (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--big-mb", type=float, default=20.0, help="size of the oversized chunked uploads (MB)")
    p.add_argument("--server", choices=sorted(SERVERS), action="append", help="only these servers (repeatable)")
    a = p.parse_args(argv)
    res = run(a.requests, a.seed, a.big_mb, tuple(a.server or SERVERS))
    print(json.dumps(res, indent=2, ensure_ascii=False))
    return 0 if res["problems"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
