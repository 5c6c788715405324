"""Seats played from outside the process (layer ``remote``).

* The MafiaScope-compatible model bus: a hub that routes seats' chat calls to workers
  (:func:`create_bus_app`), and a worker that serves any model mafialab can call
  (:func:`serve_jobs`); seats use it with ``bus/KEY?base_url=...`` model strings.
* The agent API for ``remote`` and ``human-web`` seats (:class:`SeatServer`), with per-seat
  tokens, structured decisions with legal options and deadlines, and a Python
  :class:`Client`.
* Human seats at the terminal (``human``).

Importing this package registers the ``remote``, ``human`` and ``human-web`` agent specs.
Never imports ``viewer``.
"""

from mafialab._http import LOOPBACK, BackgroundServer, check_bind, served_hosts
from mafialab.agents import register_agent_resolver
from mafialab.remote._api import SEATS_DIR, SeatServer, SeatTicket, create_agent_app, write_token
from mafialab.remote._client import Client, RemoteError, first_legal
from mafialab.remote._hub import DEFAULT_JOB_TIMEOUT_S, MAX_WAIT_S, WORKER_TTL_S, BusHub, create_bus_app
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
    seat_factory,
)
from mafialab.remote._worker import serve_jobs

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
