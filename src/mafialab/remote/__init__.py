"""Seats played from outside the process (layer ``remote``).

* The MafiaScope-compatible model bus: a hub that routes seats' chat calls to workers
  (:func:`create_bus_app`), and a worker that serves any model mafialab can call
  (:func:`serve_jobs`); seats use it with ``bus/KEY?base_url=...`` model strings.
* The agent API for ``remote`` and ``human-web`` seats (:class:`SeatServer`), with per-seat
  tokens, structured decisions with legal options and deadlines, and a Python
  :class:`Client`.
* Human seats at the terminal (``human``).

Importing this package registers the ``remote``, ``human`` and ``human-web`` agent specs;
the servers and the client (FastAPI, uvicorn, httpx) load when one of their names is first
used, so a game without remote seats never loads them.
Never imports ``viewer``.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from mafialab.agents import register_agent_resolver
from mafialab.remote._factory import seat_factory
from mafialab.remote._human import HumanTerminalAgent, ProbedHumanTerminalAgent
from mafialab.remote._seats import (
    DEFAULT_REMOTE_TIMEOUT_S,
    SEAT_KINDS,
    ProbedRemoteAgent,
    RemoteAgent,
    SeatSpec,
    SeatSpecError,
    answer_schema,
    is_seat_spec,
    parse_seat_spec,
)

if TYPE_CHECKING:
    from mafialab._http import LOOPBACK, BackgroundServer, check_bind, served_hosts
    from mafialab.remote._api import SEATS_DIR, SeatServer, SeatTicket, create_agent_app, write_token
    from mafialab.remote._client import Client, RemoteError, first_legal
    from mafialab.remote._hub import DEFAULT_JOB_TIMEOUT_S, MAX_WAIT_S, WORKER_TTL_S, BusHub, create_bus_app
    from mafialab.remote._worker import serve_jobs

_LAZY = {
    **dict.fromkeys(("LOOPBACK", "BackgroundServer", "check_bind", "served_hosts"), "mafialab._http"),
    **dict.fromkeys(("SEATS_DIR", "SeatServer", "SeatTicket", "create_agent_app", "write_token"), "._api"),
    **dict.fromkeys(("Client", "RemoteError", "first_legal"), "._client"),
    **dict.fromkeys(("DEFAULT_JOB_TIMEOUT_S", "MAX_WAIT_S", "WORKER_TTL_S", "BusHub", "create_bus_app"), "._hub"),
    "serve_jobs": "._worker",
}
"""Public names whose modules load web servers or an HTTP client, and the module of each."""


def __getattr__(name: str) -> Any:
    """A name of :data:`_LAZY`, imported from its module on first use (then kept here)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


register_agent_resolver(is_seat_spec, seat_factory, SEAT_KINDS)

__all__ = [
    "DEFAULT_JOB_TIMEOUT_S",
    "HumanTerminalAgent",
    "DEFAULT_REMOTE_TIMEOUT_S",
    "LOOPBACK",
    "MAX_WAIT_S",
    "SEATS_DIR",
    "SEAT_KINDS",
    "WORKER_TTL_S",
    "BackgroundServer",
    "BusHub",
    "Client",
    "ProbedHumanTerminalAgent",
    "ProbedRemoteAgent",
    "RemoteAgent",
    "RemoteError",
    "SeatServer",
    "SeatSpec",
    "SeatSpecError",
    "SeatTicket",
    "answer_schema",
    "check_bind",
    "served_hosts",
    "create_agent_app",
    "create_bus_app",
    "first_legal",
    "is_seat_spec",
    "parse_seat_spec",
    "seat_factory",
    "serve_jobs",
    "write_token",
]
