"""HTTP plumbing shared by the model bus, the agent API and the viewer: uvicorn in a thread and request guards."""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn
from starlette.responses import JSONResponse

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

LOOPBACK = "127.0.0.1"
"""The interface servers bind to unless told otherwise."""


def check_bind(host: str, token: str | None, what: str) -> None:
    """Refuse to bind a non-loopback interface without a token.

    Raises:
        ValueError: ``host`` is not loopback and ``token`` is empty (the message names ``--host``).
    """
    if host not in (LOOPBACK, "localhost", "::1") and not token:
        raise ValueError(f"--host: {what} binds {host} only with a token (set --token-env); default {LOOPBACK}")


class BackgroundServer:
    """A uvicorn server in a daemon thread (port 0 picks a free port).

    Args:
        app: The ASGI app.
        host: Interface to bind.
        port: TCP port (0: a free one).
        log_level: uvicorn's log level.

    Raises:
        OSError: From :meth:`start` when the server did not start within the timeout (port taken?).
    """

    def __init__(self, app: Any, host: str = LOOPBACK, port: int = 0, log_level: str = "warning"):
        config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False, lifespan="off")
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


class BodyLimit:
    """ASGI middleware: 413 for a request whose ``Content-Length`` is over ``max_body`` bytes.

    A body sent without a length is checked where it is read (the handlers read it whole
    and compare).
    """

    def __init__(self, app: Any, max_body: int):
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            length = next((v for k, v in scope["headers"] if k == b"content-length"), None)
            if length is not None and (not length.isdigit() or int(length) > self.max_body):
                resp = JSONResponse({"detail": f"body larger than {self.max_body} bytes"}, status_code=413)
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


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
    """``127.0.0.1`` from ``127.0.0.1:8765``, ``::1`` from ``[::1]:8765``; lower case."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc[1:].partition("]")[0]
    return netloc.rpartition(":")[0] if netloc.count(":") == 1 else netloc


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
