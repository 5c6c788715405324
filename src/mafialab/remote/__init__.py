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

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from typing import TYPE_CHECKING

from mafialab._lazy import lazy_names
from mafialab.agents import register_agent_resolver
from mafialab.remote._factory import seat_factory as seat_factory
from mafialab.remote._human import HumanTerminalAgent as HumanTerminalAgent
from mafialab.remote._human import ProbedHumanTerminalAgent as ProbedHumanTerminalAgent
from mafialab.remote._seats import DEFAULT_REMOTE_TIMEOUT_S as DEFAULT_REMOTE_TIMEOUT_S
from mafialab.remote._seats import SEAT_KINDS as SEAT_KINDS
from mafialab.remote._seats import ProbedRemoteAgent as ProbedRemoteAgent
from mafialab.remote._seats import (
    RemoteAgent,
    SeatSpecError,
    parse_seat_spec,
)
from mafialab.remote._seats import SeatSpec as SeatSpec
from mafialab.remote._seats import answer_schema as answer_schema
from mafialab.remote._seats import is_seat_spec as is_seat_spec

if TYPE_CHECKING:
    from mafialab._http import LOOPBACK as LOOPBACK
    from mafialab._http import (
        BackgroundServer,
    )
    from mafialab._http import check_bind as check_bind
    from mafialab._http import served_hosts as served_hosts
    from mafialab.remote._api import SEATS_DIR as SEATS_DIR
    from mafialab.remote._api import (
        SeatServer,
    )
    from mafialab.remote._api import SeatTicket as SeatTicket
    from mafialab.remote._api import create_agent_app as create_agent_app
    from mafialab.remote._api import write_token as write_token
    from mafialab.remote._client import Client, RemoteError, first_legal
    from mafialab.remote._hub import DEFAULT_JOB_TIMEOUT_S as DEFAULT_JOB_TIMEOUT_S
    from mafialab.remote._hub import MAX_WAIT_S as MAX_WAIT_S
    from mafialab.remote._hub import WORKER_TTL_S as WORKER_TTL_S
    from mafialab.remote._hub import (
        BusHub,
        create_bus_app,
    )
    from mafialab.remote._worker import serve_jobs

_LAZY = {
    **dict.fromkeys(("LOOPBACK", "BackgroundServer", "check_bind", "served_hosts"), "mafialab._http"),
    **dict.fromkeys(("SEATS_DIR", "SeatServer", "SeatTicket", "create_agent_app", "write_token"), "._api"),
    **dict.fromkeys(("Client", "RemoteError", "first_legal"), "._client"),
    **dict.fromkeys(("DEFAULT_JOB_TIMEOUT_S", "MAX_WAIT_S", "WORKER_TTL_S", "BusHub", "create_bus_app"), "._hub"),
    "serve_jobs": "._worker",
}
"""Public names whose modules load web servers or an HTTP client, and the module of each."""


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())

register_agent_resolver(is_seat_spec, seat_factory, SEAT_KINDS)

__all__ = [
    "BackgroundServer",
    "BusHub",
    "Client",
    "RemoteAgent",
    "RemoteError",
    "SeatServer",
    "SeatSpecError",
    "create_bus_app",
    "first_legal",
    "parse_seat_spec",
    "serve_jobs",
]
