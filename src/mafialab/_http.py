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
