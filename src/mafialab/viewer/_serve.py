"""Serve a built site (and, given a log directory, the fork API) with uvicorn in a thread."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from mafialab.viewer._api import ForkService, create_app

HOST = "127.0.0.1"
"""The interface the viewer binds to unless a token allows another."""


def check_host(host: str, token: str | None) -> None:
    """Refuse a non-loopback interface without a bearer token.

    Raises:
        ValueError: ``host`` is not loopback and ``token`` is empty (the message names
            ``--host`` and ``--token-env``).
    """
    if host not in (HOST, "localhost", "::1") and not token:
        raise ValueError(f"--host: the viewer binds {host} only with a token (--token-env VAR); default {HOST}")


class SiteServer:
    """The site over HTTP (FastAPI + uvicorn), bound to 127.0.0.1 by default, running in a thread.

    Without ``logs`` the built site is served read-only. With ``logs`` (the directory the
    site was built from) the fork API of :mod:`mafialab.viewer._api` is served beside it and
    the page shows a Branch button.

    Args:
        site: The site directory (holding ``index.html``).
        port: TCP port; 0 picks a free one.
        host: Interface to bind; anything but loopback needs ``token``.
        logs: The served log directory (enables the fork API; jobs write to ``logs/forks``).
        token: Bearer token the API requires (``None``: none, loopback only).
        parallel: Replicas played at once over all fork jobs.
        build_agent: Agent factory for fork jobs (tests).

    Raises:
        ValueError: A non-loopback ``host`` without a token, or ``logs`` with an unbuilt ``site``.
        OSError: From :meth:`start` if the port is taken.
    """

    def __init__(
        self,
        site: Path,
        port: int = 0,
        *,
        host: str = HOST,
        logs: Path | None = None,
        token: str | None = None,
        parallel: int = 2,
        build_agent: Any = None,
    ):
        check_host(host, token)
        self.host = host
        self.service = (
            ForkService(logs, site, token=token, parallel=parallel, build_agent=build_agent)
            if logs is not None
            else None
        )
        self.app = create_app(Path(site), self.service)
        config = uvicorn.Config(self.app, host=host, port=port, log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="mafialab-view", daemon=True)

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        for s in self._server.servers:
            for sock in s.sockets:
                return int(sock.getsockname()[1])
        raise RuntimeError("server not started")

    @property
    def url(self) -> str:
        """The site URL, ``http://<host>:<port>/``."""
        return f"http://{self.host}:{self.port}/"

    def start(self, timeout_s: float = 15.0) -> SiteServer:
        """Start serving in a daemon thread and wait until the socket is bound; returns ``self``.

        Raises:
            OSError: The server did not start (port taken).
        """
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise OSError(f"cannot listen on {self.host}: the server did not start (port taken?)")
            time.sleep(0.01)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop serving (running fork jobs are abandoned) and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout_s)

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
