"""Request limits of the servers: body size counted as it arrives, header and body deadlines, NaN refused."""

from __future__ import annotations

import asyncio
import select
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from mafialab.agents import make_agent
from mafialab.remote import BackgroundServer, BusHub, SeatServer, create_bus_app
from mafialab.remote._seats import SeatRequest
from mafialab.rules import load_rules


def _status_line(sock: socket.socket, wait_s: float) -> bytes | None:
    """The first line the server sent within ``wait_s`` s; ``b""`` when it closed, ``None`` when silent."""
    ready, _, _ = select.select([sock], [], [], wait_s)
    if not ready:
        return None
    try:
        data = sock.recv(65536)
    except ConnectionResetError:
        return b""
    return data.split(b"\r\n", 1)[0]


def _send_chunks(port: int, path: str, headers: str, chunk: bytes, most: int) -> tuple[bytes | None, int]:
    """POST ``path`` as a chunked body never finished: one ``chunk`` at a time, up to ``most``.

    Returns:
        The server's status line (or ``None``) and the chunks sent before it answered.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Content-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n".encode()
        )
        for sent in range(most):
            line = _status_line(sock, 0.1)
            if line is not None:
                return line, sent
            sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        return _status_line(sock, 5.0), most


def _drip_headers(port: int, pause_s: float, most: int) -> int | None:
    """Send a request line, then one header line per ``pause_s`` s (at most ``most``).

    Returns:
        Header lines sent before the server closed the connection, or ``None`` when it never did.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for sent in range(most):
            if _status_line(sock, pause_s) == b"":
                return sent
            try:
                sock.sendall(f"X-Slow-{sent}: 1\r\n".encode())
            except (BrokenPipeError, ConnectionResetError):
                return sent
        return None


def _drip_body(port: int, path: str, headers: str, pause_s: float, most: int) -> bytes | None:
    """Announce a 1000-byte body and send one byte per ``pause_s`` s; the server's status line, if any."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Content-Type: application/json\r\n"
            "Content-Length: 1000\r\n\r\n{".encode()
        )
        for _ in range(most):
            line = _status_line(sock, pause_s)
            if line is not None:
                return line
            sock.sendall(b" ")
        return None


@pytest.fixture
def seat(tmp_path: Path):
    """A seat server with small limits and one remote seat holding an open probe question."""

    async def make(**limits: Any) -> tuple[SeatServer, str, asyncio.Task[Any]]:
        seats = await SeatServer(port=0, rate=(1000, 1.0), **limits).start()
        rules = load_rules("mafiascope7")
        agent = make_agent("remote?timeout=30", 2, rules, 1)
        (ticket,) = seats.open_game("g", [agent], tmp_path / "g")
        schema = {
            "type": "object",
            "properties": {"confidence": {"type": "number", "minimum": 0, "maximum": 100}},
            "required": ["confidence"],
        }
        req = SeatRequest("p1-conf", "probe", {"probe": {"id": "conf", "question": "How sure?"}}, schema,
                          time.time() + 30, time.monotonic(), lambda v: v)  # fmt: skip
        task = asyncio.create_task(agent.channel.ask(req))
        return seats, ticket.token, task

    return make


async def test_a_chunked_body_is_refused_once_it_passes_the_cap(seat) -> None:
    seats, token, task = await seat(max_body=16_384)
    try:
        auth = f"Authorization: Bearer {token}\r\n"
        line, sent = await asyncio.to_thread(_send_chunks, seats.port, "/v1/answer", auth, b" " * 4096, 64)
        # the body was never finished: the answer came as soon as the count passed 16 KiB
        assert line is not None and line.startswith(b"HTTP/1.1 413"), line
        assert sent < 16
        assert not task.done()  # the question is still open
    finally:
        task.cancel()
        await seats.stop()


async def test_a_client_dripping_header_lines_is_cut_off(seat) -> None:
    seats, token, task = await seat(header_timeout_s=0.5)
    try:
        sent = await asyncio.to_thread(_drip_headers, seats.port, 0.1, 100)
        assert sent is not None and sent < 100  # closed long before the client was done
        # a request whose headers are in is not cut: a long-poll outlives the header deadline
        async with httpx.AsyncClient(base_url=seats.url, timeout=10) as c:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            r = await c.get("/v1/next", params={"wait": 1.0, "since": 0}, headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 204
    finally:
        task.cancel()
        await seats.stop()


async def test_a_body_dripping_in_gets_408(seat) -> None:
    seats, token, task = await seat(body_timeout_s=0.5)
    try:
        auth = f"Authorization: Bearer {token}\r\n"
        line = await asyncio.to_thread(_drip_body, seats.port, "/v1/answer", auth, 0.1, 100)
        assert line is not None and line.startswith(b"HTTP/1.1 408"), line
    finally:
        task.cancel()
        await seats.stop()


async def test_an_answer_with_nan_gets_422_naming_the_field(seat) -> None:
    seats, token, task = await seat()
    try:
        async with httpx.AsyncClient(base_url=seats.url, timeout=10, headers={"Authorization": f"Bearer {token}"}) as c:
            for bad in ("NaN", "Infinity", "-Infinity", "1e999"):
                body = '{"request_id": "p1-conf", "answer": {"confidence": ' + bad + "}}"
                r = await c.post("/v1/answer", content=body, headers={"content-type": "application/json"})
                assert r.status_code == 422, r.text
                assert r.json()["detail"].startswith(f"body.answer.confidence: {bad} is not a JSON number")
            assert not task.done()  # still open: a good answer is taken
            r = await c.post("/v1/answer", json={"request_id": "p1-conf", "answer": {"confidence": 40}})
            assert r.status_code == 200
        value, _ = await asyncio.wait_for(task, 5)
        assert value == {"confidence": 40}
    finally:
        task.cancel()
        await seats.stop()


# ---------------------------------------------------------------------- the bus hub


def test_hub_bodies_are_capped_per_path() -> None:
    with BackgroundServer(create_bus_app(BusHub())) as srv, httpx.Client(base_url=srv.url, timeout=10) as c:
        big_meta = {"worker": "w", "models": ["k"], "meta": {"x": "y" * 100_000}}
        r = c.post("/register", json=big_meta)
        assert r.status_code == 413 and "65536" in r.json()["detail"]
        r = c.post("/result", json={"request_id": "r1", "text": "x" * 2_000_000})
        assert r.status_code == 413 and r.headers["connection"] == "close"
        # a seat's whole context fits (the /generate cap is larger)
        r = c.post("/generate", json={"model": "k", "messages": [{"role": "user", "content": "x" * 2_000_000}]})
        assert r.status_code == 503  # no worker, but the body was read
        line, sent = _send_chunks(srv.port, "/result", "", b" " * 65536, 64)
        assert line is not None and line.startswith(b"HTTP/1.1 413") and sent < 32
        assert c.get("/status").json()["workers"] == []


def test_hub_drops_slow_headers_and_slow_bodies() -> None:
    app = create_bus_app(BusHub(), body_timeout_s=0.5)
    with BackgroundServer(app, header_timeout_s=0.5) as srv:
        sent = _drip_headers(srv.port, 0.1, 100)
        assert sent is not None and sent < 100
        line = _drip_body(srv.port, "/register", "", 0.1, 100)
        assert line is not None and line.startswith(b"HTTP/1.1 408"), line


def test_hub_refuses_nan_naming_the_field() -> None:
    with BackgroundServer(create_bus_app(BusHub())) as srv, httpx.Client(base_url=srv.url, timeout=10) as c:
        body = '{"model": "k", "messages": [{"role": "user", "content": "hi", "weight": NaN}], "timeout": 1}'
        r = c.post("/generate", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 422
        assert r.json()["detail"].startswith("body.messages[0].weight: NaN is not a JSON number")
        r = c.post(
            "/result", content='{"request_id": "r1", "text": "t", "score": -Infinity}',
            headers={"content-type": "application/json"},
        )  # fmt: skip
        assert r.status_code == 422 and "body.score" in r.json()["detail"]
