"""The agent API: an HTTP server for the seats of games played from outside the process.

Each remote or human-web seat of a game gets its own secret token (printed once, written
to ``<game dir>/.seats/<seat>.token`` with mode 0600); a token opens exactly one seat of
one game, and every answer comes from that seat's channel only. Endpoints (OpenAPI schema
at ``/openapi.json``):

* ``GET /v1/seat``: the seat's identity (own role and team only) and the game's state.
* ``GET /v1/next?since=N&wait=S``: long-poll for the seat's next request; the answer holds
  the events visible to the seat from index ``N`` on (and their rendered lines), the open
  request (a decision with its kind, legal options, answer schema and deadline, or a probe
  question), and ``next_since``. 204 when nothing came within ``S`` seconds.
* ``POST /v1/answer``: ``{"request_id", "answer": {...}}``; 422 with the reason when the
  answer is malformed or illegal (the request stays open until its deadline); a number
  written ``NaN``, ``Infinity`` or ``-Infinity`` is not JSON (422 naming the field).

Request bodies are capped (:data:`MAX_BODY_BYTES`, counted as they arrive, chunked or not)
and must arrive in time, like a request's headers (:data:`mafialab._http.BODY_TIMEOUT_S`,
:data:`mafialab._http.HEADER_TIMEOUT_S`).
* ``GET /play``: the human-web page (the token travels in the URL fragment, never to the server
  in a path or query; the page moves it into memory and clears the address bar on load).

A page of another origin gets 403 (:class:`mafialab._http.OriginGuard`): a request with a
foreign ``Origin:`` or ``Sec-Fetch-Site: cross-site``/``same-site`` is refused, except a
link that opens ``/play`` itself; on loopback ``Host:`` must be 127.0.0.1, localhost or ::1.
The page's own calls are same-origin, and programs send neither header.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from mafialab._http import (
    BODY_TIMEOUT_S,
    HEADER_TIMEOUT_S,
    LOOPBACK,
    BodyLimit,
    OriginGuard,
    served_hosts,
    server_config,
)
from mafialab._json import NonFiniteNumber, loads_finite
from mafialab.engine import Event, GameState
from mafialab.remote._seats import RemoteAgent, SeatChannel, SeatRequest

SEATS_DIR = ".seats"
"""Folder of a game directory holding the seat tokens (never read by ``view`` or ``export``)."""

MAX_BODY_BYTES = 16_384
"""Largest request body accepted (413 above)."""

MAX_POLL_S = 30.0
"""Longest long-poll (seconds)."""

DEFAULT_RATE = (30, 10.0)
"""Counted requests allowed per seat per window: 30 per 10 s (long-polls that wait are not counted)."""


class AnswerBody(BaseModel):
    """``POST /v1/answer``: the answer to the open request.

    Attributes:
        request_id: The request answered (``d<decision id>`` or ``p<n>-<probe id>``).
        answer: For a decision, an object following the request's ``schema`` (``{"target":
            NAME}``, ``{"target": NAME, "statement": TEXT}`` or ``{"text": TEXT}``); for a
            probe, any JSON value following the probe's schema.
    """

    request_id: str = Field(max_length=200)
    answer: Any


@dataclass(frozen=True)
class SeatTicket:
    """What the game prints once per remote seat.

    Attributes:
        game_id: The game.
        seat: The seat.
        kind: ``remote`` or ``human-web``.
        token: The seat's secret token.
        url: The API's base URL.
        token_file: Where the token was written, or ``None`` (no game directory).
    """

    game_id: str
    seat: int
    kind: str
    token: str
    url: str
    token_file: Path | None

    @property
    def page(self) -> str:
        """The human-web page with the token in the URL fragment."""
        return f"{self.url}/play#token={self.token}"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def write_token(game_dir: Path, seat: int, token: str) -> Path:
    """Write ``token`` to ``game_dir/.seats/<seat>.token`` (folder 0700, file 0600)."""
    folder = Path(game_dir) / SEATS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    path = folder / f"{seat}.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    os.chmod(path, 0o600)
    return path


class _SeatObserver:
    """Keeps every attached seat's view current and marks the end of the game."""

    def __init__(self, channels: Sequence[SeatChannel]):
        self.channels = list(channels)

    async def on_events(self, events: Sequence[Event], state: GameState) -> None:
        for ch in self.channels:
            await ch.update(state.view(ch.seat), over=state.is_terminal or None)


class SeatServer:
    """The agent API for the remote and human-web seats of one or more games, in the game's event loop.

    Args:
        host: Interface to bind (default 127.0.0.1; every seat has its own token, so
            another interface may be given).
        port: TCP port (default 8767; 0 picks a free one).
        rate: ``(requests, seconds)`` allowed per seat (long-polls that wait are not counted).
        max_body: Largest request body in bytes (413 above, counted as it arrives).
        header_timeout_s: Seconds a client has to send a request's line and headers (the
            connection is closed after).
        body_timeout_s: Seconds a client has to send a request's body (408 after).

    Usage::

        async with SeatServer(port=0) as seats:
            setup = mafialab.probes.GameSetup(battery, seats=seats, on_ticket=print)
            await play_game(rules, agents, seed, out=out, observers=setup.observers(rules, seed, agents, out))
            await seats.close_game(setup.game_id(rules, seed, agents))
    """

    def __init__(
        self,
        host: str = LOOPBACK,
        port: int = 8767,
        *,
        rate: tuple[int, float] = DEFAULT_RATE,
        max_body: int = MAX_BODY_BYTES,
        header_timeout_s: float = HEADER_TIMEOUT_S,
        body_timeout_s: float = BODY_TIMEOUT_S,
    ):
        self.host = host
        self.port = port
        self.rate = rate
        self.max_body = max_body
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s
        self.channels: dict[str, SeatChannel] = {}
        self._games: dict[str, list[SeatChannel]] = {}
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self.app = create_agent_app(self)

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` once started."""
        return f"http://{self.host}:{self.port}"

    # ------------------------------------------------------------------ games
    def open_game(self, game_id: str, agents: Sequence[Any], game_dir: Path | None = None) -> list[SeatTicket]:
        """Attach a fresh channel and token to every :class:`RemoteAgent` among ``agents``.

        Args:
            game_id: The game's id.
            agents: The game's agents (others are left alone).
            game_dir: The game directory; tokens go to ``game_dir/.seats/<seat>.token``.

        Returns:
            One ticket per remote seat (print each token once).
        """
        tickets = []
        chans = []
        for a in agents:
            if not isinstance(a, RemoteAgent):
                continue
            token = secrets.token_urlsafe(24)
            ch = SeatChannel(game_id, a.seat, a.spec, a.rules)
            a.channel = ch
            self.channels[_digest(token)] = ch
            chans.append(ch)
            path = write_token(game_dir, a.seat, token) if game_dir is not None else None
            tickets.append(SeatTicket(game_id, a.seat, a.spec.kind, token, self.url, path))
        self._games[game_id] = chans
        return tickets

    def observer(self, game_id: str) -> _SeatObserver:
        """The game observer that keeps the seats' views of ``game_id`` current and tells them the end.

        Put it after a probe observer: a seat told the game is over stops listening, and a
        probe may follow the game's last event.
        """
        return _SeatObserver(self._games.get(game_id, []))

    async def close_game(self, game_id: str) -> None:
        """Mark ``game_id`` over for its seats (their long-polls answer ``status: over``)."""
        for ch in self._games.get(game_id, []):
            await ch.update(over=True)

    # ------------------------------------------------------------------ serving
    async def start(self) -> SeatServer:
        """Start serving in the running event loop; returns ``self`` once the socket is bound.

        Raises:
            OSError: The port is taken.
        """
        server = _QuietServer(server_config(self.app, self.host, self.port, header_timeout_s=self.header_timeout_s))
        self._server = server
        self._task = asyncio.create_task(server.serve())
        while not server.started:
            if self._task.done():
                exc = self._task.exception()
                raise OSError(f"agent API: could not serve on {self.host}:{self.port}") from exc
            await asyncio.sleep(0.01)
        for s in server.servers:
            for sock in s.sockets:
                self.port = int(sock.getsockname()[1])
                break
        return self

    async def stop(self) -> None:
        """Stop serving (open long-polls end)."""
        for chans in self._games.values():
            for ch in chans:
                await ch.update(over=True)
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            try:
                await asyncio.wait_for(self._task, 10.0)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()

    async def __aenter__(self) -> SeatServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def seat_of(self, token: str | None) -> SeatChannel | None:
        """The channel opened by ``token``, or ``None``."""
        if not token:
            return None
        return self.channels.get(_digest(token))

    def counted(self, ch: SeatChannel) -> bool:
        """Count one request of ``ch``; ``False`` when it is over the rate limit."""
        limit, window = self.rate
        now = time.monotonic()
        while ch.hits and now - ch.hits[0] > window:
            ch.hits.popleft()
        if len(ch.hits) >= limit:
            return False
        ch.hits.append(now)
        return True


class _QuietServer(uvicorn.Server):
    """A uvicorn server that leaves signal handling to the game (Ctrl-C stops the game)."""

    def install_signal_handlers(self) -> None:  # uvicorn < 0.29
        pass

    def capture_signals(self) -> Any:  # uvicorn >= 0.29
        import contextlib

        return contextlib.nullcontext()


_bearer = HTTPBearer(auto_error=False, description="The seat's token (printed once; <game dir>/.seats/<seat>.token).")


def create_agent_app(seats: SeatServer) -> FastAPI:
    """The agent API's FastAPI app over ``seats`` (see the module docstring for the endpoints)."""
    app = FastAPI(
        title="mafialab agent API",
        description=(
            "Play one seat of a mafialab game over HTTP. Authenticate with the seat's token "
            "(Authorization: Bearer TOKEN). Long-poll /v1/next for requests, answer with /v1/answer."
        ),
        version="1",
    )

    app.add_middleware(BodyLimit, max_body=seats.max_body, body_timeout_s=seats.body_timeout_s)
    # added last: runs first; a link from elsewhere may open /play, no page of another origin may call the API
    app.add_middleware(OriginGuard, allowed_hosts=served_hosts(seats.host), navigation=True)

    def auth(creds: HTTPAuthorizationCredentials | None) -> SeatChannel | JSONResponse:
        ch = seats.seat_of(creds.credentials if creds else None)
        if ch is None:
            return JSONResponse(
                {"detail": "missing or wrong seat token"}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
        return ch

    def limited() -> JSONResponse:
        limit, window = seats.rate
        return JSONResponse(
            {"detail": f"rate limit: {limit} requests per {window:g} s"},
            status_code=429,
            headers={"Retry-After": str(max(1, round(window)))},
        )

    @app.get("/v1/seat", responses={401: {"description": "missing or wrong token"}})
    async def seat_info(request: Request) -> Response:
        """The seat's identity (its own role and team only), the players and the game's state."""
        ch = auth(await _bearer(request))
        if isinstance(ch, JSONResponse):
            return ch
        if not seats.counted(ch):
            return limited()
        return JSONResponse(ch.info())

    @app.get(
        "/v1/next",
        responses={
            204: {"description": "no request within the wait"},
            401: {"description": "missing or wrong token"},
            429: {"description": "too many requests"},
        },
    )
    async def next_request(
        request: Request,
        since: int = Query(0, ge=0, description="Events already received (the last answer's next_since)."),
        wait: float = Query(25.0, ge=0, description="Seconds to wait for a request (at most 30)."),
    ) -> Response:
        """Long-poll for the seat's next request (decision or probe) or the end of the game.

        The answer: ``status`` (``decision``, ``probe`` or ``over``), ``request`` (its ``id``,
        ``kind``, the decision or probe, legal ``options``, answer ``schema``, ``deadline``
        in Unix seconds and ``deadline_in_s``), ``events`` visible to the seat from index
        ``since`` on with their rendered ``lines``, and ``next_since``.
        """
        ch = auth(await _bearer(request))
        if isinstance(ch, JSONResponse):
            return ch
        t0 = time.monotonic()

        def open_request() -> SeatRequest | None:
            req = ch.pending
            return req if req is not None and not req.future.done() else None

        def ready() -> bool:  # an open request comes first: a probe may follow the game's last event
            return open_request() is not None or ch.over

        async with ch.cond:
            if not ready() and wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ch.cond.wait_for(ready), min(wait, MAX_POLL_S))
            waited = time.monotonic() - t0 > 0.05
            if not waited and not seats.counted(ch):  # a poll that answers at once counts
                return limited()
            req = open_request()
            if req is None and not ch.over:
                return Response(status_code=204)
            events, lines, nxt = ch.events_since(since)
        body: dict[str, Any] = {
            "status": "over" if req is None else req.kind,
            "request": None,
            "events": events,
            "lines": lines,
            "next_since": nxt,
        }
        if req is not None:
            body["request"] = {
                "id": req.id,
                "kind": req.kind,
                **req.body,
                "schema": req.schema,
                "deadline_in_s": round(max(0.0, req.deadline - time.time()), 3),
            }
        return JSONResponse(body)

    @app.post(
        "/v1/answer",
        responses={
            400: {"description": "malformed JSON"},
            401: {"description": "missing or wrong token"},
            409: {"description": "no such open request"},
            408: {"description": "body not received in time"},
            413: {"description": "body too large"},
            422: {"description": "answer does not follow the schema, is not legal, or holds NaN or an infinity"},
            429: {"description": "too many requests"},
        },
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": AnswerBody.model_json_schema()}},
            }
        },
    )
    async def answer(request: Request) -> Response:
        """Answer the open request; refused answers leave it open until its deadline."""
        ch = auth(await _bearer(request))
        if isinstance(ch, JSONResponse):
            return ch
        if not seats.counted(ch):
            return limited()
        raw = await request.body()  # BodyLimit stops reading past max_body (413)
        try:
            data = loads_finite(raw)
        except NonFiniteNumber as err:
            return JSONResponse({"detail": err.message("body")}, status_code=422)
        except (ValueError, RecursionError):
            return JSONResponse({"detail": "body is not valid JSON"}, status_code=400)
        try:
            body = AnswerBody.model_validate(data)
        except ValueError as err:
            return JSONResponse({"detail": f"body: {str(err)[:300]}"}, status_code=422)
        code, reason = ch.answer(body.request_id, body.answer)
        if code != 200:
            return JSONResponse({"detail": reason}, status_code=code)
        return JSONResponse({"accepted": True, "request_id": body.request_id})

    @app.get("/play", response_class=HTMLResponse, include_in_schema=False)
    async def play_page() -> HTMLResponse:
        """The human-web page (the token is read from the URL fragment by the page's script)."""
        page = resources.files("mafialab.remote").joinpath("static/play.html").read_text(encoding="utf-8")
        return HTMLResponse(
            page,
            headers={
                "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                "connect-src 'self'; base-uri 'none'; form-action 'none'",
                "Referrer-Policy": "no-referrer",
            },
        )

    @app.get("/play.js", include_in_schema=False)
    async def play_script() -> Response:
        js = resources.files("mafialab.remote").joinpath("static/play.js").read_text(encoding="utf-8")
        return Response(js, media_type="text/javascript")

    return app
