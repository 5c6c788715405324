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


LOOPBACK_NAMES: frozenset[str] = frozenset({LOOPBACK, "localhost", "::1"})
"""Host names a loopback server answers to (a ``Host:`` naming anything else is a rebound DNS name)."""

CROSS_SITES = frozenset({b"cross-site", b"same-site"})
"""``Sec-Fetch-Site`` of a request a page of another origin made (``same-site``: e.g. another port of this host)."""


def served_hosts(host: str) -> frozenset[str] | None:
    """The ``Host:`` names a server bound to ``host`` accepts: the loopback names on loopback, else ``None`` (any).

    A server on another interface needs a token (:func:`check_bind`), which a page of another
    origin cannot send; its ``Host:`` names (the machine's names and addresses) are not known here.
    """
    return LOOPBACK_NAMES if host in LOOPBACK_NAMES else None


def _host_name(netloc: str) -> str:
    """``127.0.0.1`` from ``127.0.0.1:8765``, ``::1`` from ``[::1]:8765``; lower case.

    Anything but ``name``, ``name:port`` or ``[address]`` with an optional ``:port`` (digits)
    gives the whole text back, which names no served host (``[::1]evil.com`` is not ``::1``).
    """
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        inside, sep, rest = netloc[1:].partition("]")
        port_ok = rest == "" or (rest.startswith(":") and rest[1:].isdigit())
        return inside if sep and port_ok else netloc
    name, sep, port = netloc.rpartition(":")
    if netloc.count(":") == 1:
        return name if port.isdigit() else netloc
    return netloc


class OriginGuard:
    """ASGI middleware: 403 for a request a page of another origin made, or one under a foreign ``Host:``.

    The rules, in order (each refusal names its reason):

    1. ``Host:`` must name one of ``allowed_hosts`` (port aside), so a DNS name rebound to
       127.0.0.1 reaches nothing; ``None`` accepts any name.
    2. An ``Origin:`` header (browsers send it on every POST and cross-origin fetch) must be this
       server's origin (``http(s)://`` + the request's own ``Host:``); ``Origin: null`` is foreign.
    3. ``Sec-Fetch-Site: cross-site`` or ``same-site`` (another page of the same host, such as
       another local port) is refused, except a top-level page load (``GET``/``HEAD`` with
       ``Sec-Fetch-Mode: navigate`` and ``Sec-Fetch-Dest: document``) when ``navigation`` is set:
       a link from elsewhere may open the page, no page may fetch from it.
    4. With ``csrf``: a state-changing request (not ``GET``/``HEAD``/``OPTIONS``) under
       ``csrf_prefix`` that comes from a browser (it carries ``Origin`` or any ``Sec-Fetch-*``
       header) must carry ``csrf_header: <csrf>``, the token the served page holds.

    Programs (curl, scripts, MafiaScope workers) send neither ``Origin`` nor ``Sec-Fetch-*`` and
    pass rules 2-4 unchanged; only rule 1 applies to them.

    Args:
        app: The wrapped ASGI app.
        allowed_hosts: Host names (no port) the server is reached under; ``None``: any
            (:func:`served_hosts` gives the set for a bind address).
        navigation: Let a cross-site top-level page load through (a server with pages).
        csrf: The per-session token the served page sends back, or ``None`` (no rule 4).
        csrf_header: The request header carrying it.
        csrf_prefix: Paths rule 4 applies to.
    """

    def __init__(
        self,
        app: Any,
        allowed_hosts: frozenset[str] | None = LOOPBACK_NAMES,
        *,
        navigation: bool = False,
        csrf: str | None = None,
        csrf_header: str = "x-mafialab-csrf",
        csrf_prefix: str = "/",
    ):
        self.app = app
        self.allowed_hosts = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
        self.navigation = navigation
        self.csrf = csrf.encode() if csrf is not None else None
        self.csrf_name = csrf_header
        self.csrf_header = csrf_header.lower().encode()
        self.csrf_prefix = csrf_prefix

    def refusal(self, scope: Scope) -> str | None:
        """Why the request of ``scope`` is refused, or ``None`` when it may pass."""
        headers: dict[bytes, bytes] = {}
        for k, v in scope.get("headers", []):
            headers.setdefault(k, v)
        host = headers.get(b"host", b"").decode("latin-1")
        if self.allowed_hosts is not None and _host_name(host) not in self.allowed_hosts:
            names = ", ".join(sorted(self.allowed_hosts))
            return f"Host: {host!r} is not a name this server is reached under ({names}); a rebound DNS name?"
        origin = headers.get(b"origin")
        if origin is not None:
            scheme, sep, netloc = origin.decode("latin-1").partition("://")
            if not (sep and scheme in ("http", "https") and netloc.lower() == host.lower()):
                foreign = origin.decode("latin-1")
                return f"Origin: a page of {foreign!r} may not call this server (served origin: {host})"
        method = scope.get("method", "GET")
        site = headers.get(b"sec-fetch-site", b"")
        if site in CROSS_SITES:
            page_load = (
                method in ("GET", "HEAD")
                and headers.get(b"sec-fetch-mode") == b"navigate"
                and headers.get(b"sec-fetch-dest") == b"document"
            )
            if not (self.navigation and page_load):
                return f"Sec-Fetch-Site: {site.decode('latin-1')}: a page of another origin may not call this server"
        if (
            self.csrf is not None
            and method not in ("GET", "HEAD", "OPTIONS")
            and scope.get("path", "").startswith(self.csrf_prefix)
            and (origin is not None or any(k.startswith(b"sec-fetch-") for k in headers))
            and not hmac.compare_digest(headers.get(self.csrf_header, b""), self.csrf)
        ):
            return (
                f"{self.csrf_name}: missing or wrong page token (a browser's POST sends the served page's; reload it)"
            )
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            why = self.refusal(scope)
            if why is not None:
                await JSONResponse({"detail": why}, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
