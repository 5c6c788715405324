"""Serve a built site (and, given a log directory, the fork API) with uvicorn in a thread."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mafialab._http import LOOPBACK, BackgroundServer, check_bind, served_hosts
from mafialab.record import PriceTable
from mafialab.viewer._api import ForkService, create_app
from mafialab.viewer._arena import ARENA_GAMES

HOST = LOOPBACK
"""The interface the viewer binds to unless a token allows another."""


def check_host(host: str, token: str | None) -> None:
    """Refuse a non-loopback interface without a bearer token.

    Raises:
        ValueError: ``host`` is not loopback and ``token`` is empty (the message names
            ``--host`` and ``--token-env``).
    """
    check_bind(host, token, "the viewer")


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
        allow_agents: Agent specs a fork request may name beside the parent's roster
            (``--allow-agents``); the only specs the Arena panel may seat.
        arena_games: Cap on Arena games in flight (``--max-arena-games``).
        prices: Price table of the Arena panel's estimates and games (``--prices``).

    Raises:
        ValueError: A non-loopback ``host`` without a token, ``logs`` with an unbuilt ``site``,
            or an ``allow_agents`` spec a fork job cannot play (a seat played from outside, a
            malformed model string).
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
        allow_agents: Sequence[str] = (),
        arena_games: int = ARENA_GAMES,
        prices: PriceTable | None = None,
    ):
        check_host(host, token)
        self.host = host
        self.service = (
            ForkService(
                logs,
                site,
                token=token,
                parallel=parallel,
                build_agent=build_agent,
                allow_agents=allow_agents,
                arena_games=arena_games,
                prices=prices,
            )
            if logs is not None
            else None
        )
        self.app = create_app(Path(site), self.service, allowed_hosts=served_hosts(host))
        self._server = BackgroundServer(self.app, host, port)

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        return self._server.port

    @property
    def url(self) -> str:
        """The site URL, ``http://<host>:<port>/``."""
        return self._server.url + "/"

    def start(self, timeout_s: float = 15.0) -> SiteServer:
        """Start serving in a daemon thread and wait until the socket is bound; returns ``self``.

        Raises:
            OSError: The server did not start (port taken).
        """
        self._server.start(timeout_s)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop serving (running fork jobs are abandoned) and wait for the thread."""
        self._server.stop(timeout_s)

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
