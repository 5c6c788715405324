"""HTTP plumbing shared by the model bus, the agent API and the viewer: uvicorn in a thread and request guards."""

from __future__ import annotations

import asyncio
import hmac
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, MutableMapping
from typing import Any

import uvicorn
from fastapi import HTTPException, Request, Response
from fastapi.routing import APIRoute
from starlette.responses import JSONResponse
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from mafialab._json import NonFiniteNumber, loads_finite

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

LOOPBACK = "127.0.0.1"
"""The interface servers bind to unless told otherwise."""

HEADER_TIMEOUT_S = 10.0
"""Seconds a client has to send a request's line and headers, counted from its first byte
(or from the connection, for the first request); the connection is closed after."""

BODY_TIMEOUT_S = 30.0
"""Seconds a client has to send a request's whole body, counted from the server's first read
of it (408 after, and the connection is closed)."""


def check_bind(host: str, token: str | None, what: str) -> None:
    """Refuse to bind a non-loopback interface without a token.

    Raises:
        ValueError: ``host`` is not loopback and ``token`` is empty (the message names ``--host``).
    """
    if host not in (LOOPBACK, "localhost", "::1") and not token:
        raise ValueError(f"--host: {what} binds {host} only with a token (set --token-env); default {LOOPBACK}")


_Protocol: Any = AutoHTTPProtocol  # httptools' protocol when installed (a core dependency), else h11's


class _HeaderDeadline(_Protocol):  # type: ignore[misc]
    """uvicorn's HTTP protocol with a deadline for a request's line and headers.

    uvicorn's ``timeout_keep_alive`` covers the idle time between requests only, and every
    byte received cancels it: a client sending one header line per second would hold the
    connection for ever. Here a timer starts when a connection opens and when the first byte
    of a later request arrives, and is cancelled once the headers are complete (uvicorn has
    started the request's cycle); when it fires, the connection is closed.
    """

    header_timeout_s: float = HEADER_TIMEOUT_S
    _deadline: asyncio.TimerHandle | None = None
    _waiting_after: Any = None  # the cycle that was current when the timer started

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._start_deadline()

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and (self.cycle is None or self.cycle.response_complete):
            self._start_deadline()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self._deadline is not None and self.cycle is not self._waiting_after:
            self._stop_deadline()  # the headers are in: uvicorn made a new cycle

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_deadline()
        super().connection_lost(exc)

    def _start_deadline(self) -> None:
        self._waiting_after = self.cycle
        self._deadline = self.loop.call_later(self.header_timeout_s, self._deadline_passed)

    def _stop_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _deadline_passed(self) -> None:
        self._deadline = None
        transport = self.transport
        if transport is not None and not transport.is_closing() and transport.get_protocol() is self:
            transport.close()


def server_config(
    app: Any,
    host: str = LOOPBACK,
    port: int = 0,
    *,
    log_level: str = "warning",
    header_timeout_s: float = HEADER_TIMEOUT_S,
) -> uvicorn.Config:
    """The uvicorn configuration every mafialab server uses.

    Access log and lifespan off; requests whose line and headers take longer than
    ``header_timeout_s`` seconds to arrive have their connection closed (uvicorn itself has no
    such timeout). Body size and body time limits are :class:`BodyLimit`'s.

    Args:
        app: The ASGI app.
        host: Interface to bind.
        port: TCP port (0: a free one).
        log_level: uvicorn's log level.
        header_timeout_s: Seconds allowed for a request's line and headers (> 0).

    Raises:
        ValueError: ``header_timeout_s`` is not positive.
    """
    if not header_timeout_s > 0:
        raise ValueError(f"header_timeout_s: must be > 0, got {header_timeout_s}")
    protocol = type("HeaderDeadlineProtocol", (_HeaderDeadline,), {"header_timeout_s": float(header_timeout_s)})
    return uvicorn.Config(
        app, host=host, port=port, log_level=log_level, access_log=False, lifespan="off", http=protocol
    )


class BackgroundServer:
    """A uvicorn server in a daemon thread (port 0 picks a free port).

    Args:
        app: The ASGI app.
        host: Interface to bind.
        port: TCP port (0: a free one).
        log_level: uvicorn's log level.
        header_timeout_s: Seconds a client has to send a request's line and headers
            (:func:`server_config`).

    Raises:
        OSError: From :meth:`start` when the server did not start within the timeout (port taken?).
    """

    def __init__(
        self,
        app: Any,
        host: str = LOOPBACK,
        port: int = 0,
        log_level: str = "warning",
        *,
        header_timeout_s: float = HEADER_TIMEOUT_S,
    ):
        config = server_config(app, host, port, log_level=log_level, header_timeout_s=header_timeout_s)
        self.server = uvicorn.Server(config)
        self.host = host
        self._thread = threading.Thread(target=self.server.run, name="mafialab-server", daemon=True)

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        for s in self.server.servers:
            for sock in s.sockets:
                return int(sock.getsockname()[1])
        raise RuntimeError("server not started")

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (no trailing slash)."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout_s: float = 10.0) -> BackgroundServer:
        """Start serving and wait until the socket is bound; returns ``self``."""
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise OSError(f"cannot listen on {self.host}: the server did not start (port taken?)")
            time.sleep(0.01)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ask the server to exit and wait for its thread (at most ``timeout_s``)."""
        self.server.should_exit = True
        self._thread.join(timeout_s)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class BearerGuard:
    """ASGI middleware: 401 unless ``Authorization: Bearer <token>`` (constant-time compare).

    Args:
        app: The wrapped ASGI app.
        token: The shared token.
        open_paths: Paths served without a token (the OpenAPI schema and its page).
        prefix: Only paths starting with it need the token (``""``: every path).
    """

    def __init__(
        self, app: Any, token: str, open_paths: tuple[str, ...] = ("/openapi.json", "/docs"), prefix: str = ""
    ):
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.open_paths = open_paths
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path.startswith(self.prefix) and path not in self.open_paths:
            given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                resp = JSONResponse({"detail": "missing or wrong bearer token"}, status_code=401)
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


class _Refused(HTTPException):
    """A request body refused while it arrives (413 too large, 408 too slow); closes the connection."""

    def __init__(self, status_code: int, detail: str):
        super().__init__(status_code, detail, headers={"Connection": "close"})


class BodyLimit:
    """ASGI middleware: 413 for a request body over its cap, 408 for one that arrives too slowly.

    A ``Content-Length`` over the cap is answered before the body is read. Every body,
    chunked ones without a length included, is counted as it arrives: the first read that
    takes the count past the cap raises, so no more of it is read and the app gets no
    request. The whole body must arrive within ``body_timeout_s`` seconds of the app's
    first read. Either answer is ``{"detail": ...}`` with ``Connection: close``.

    Args:
        app: The wrapped ASGI app.
        max_body: Largest body in bytes.
        paths: Caps for particular paths (exact match), in place of ``max_body``.
        body_timeout_s: Seconds a body may take to arrive (> 0).
    """

    def __init__(
        self,
        app: Any,
        max_body: int,
        paths: Mapping[str, int] | None = None,
        body_timeout_s: float = BODY_TIMEOUT_S,
    ):
        self.app = app
        self.max_body = max_body
        self.paths = dict(paths or {})
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.paths.get(scope.get("path", ""), self.max_body)
        too_large = f"body larger than {cap} bytes"
        length = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if length is not None and (not length.isdigit() or int(length) > cap):
            await _refusal(_Refused(413, too_large))(scope, receive, send)
            return
        count = 0
        complete = False
        deadline: float | None = None
        started = False

        async def counted() -> MutableMapping[str, Any]:
            nonlocal count, complete, deadline
            if complete:  # the body is in: what follows is the disconnect, however late
                return await receive()
            loop = asyncio.get_running_loop()
            if deadline is None:
                deadline = loop.time() + self.body_timeout_s
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise _Refused(408, f"body not received within {self.body_timeout_s:g} s") from None
            if message["type"] == "http.request":
                count += len(message.get("body", b""))
                if count > cap:
                    raise _Refused(413, too_large)
                complete = not message.get("more_body", False)
            else:
                complete = True
            return message

        async def tracked(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _Refused as err:  # an app that let it through (FastAPI answers it itself)
            if started:
                raise
            await _refusal(err)(scope, receive, send)


def _refusal(err: _Refused) -> JSONResponse:
    return JSONResponse({"detail": err.detail}, status_code=err.status_code, headers=err.headers)


class _FiniteJSONRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            try:
                self._json = loads_finite(await self.body())
            except NonFiniteNumber as err:
                raise HTTPException(422, err.message("body")) from None
        return self._json


class FiniteJSONRoute(APIRoute):
    """A FastAPI route whose JSON body refuses ``NaN``, ``Infinity`` and ``-Infinity`` (422 naming the field).

    Python's JSON reader accepts them, and pydantic passes them to float fields; set it as
    ``app.router.route_class`` before adding routes (FastAPI's custom request class pattern).
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def finite_json(request: Request) -> Response:
            return await handler(_FiniteJSONRequest(request.scope, request.receive))

        return finite_json
