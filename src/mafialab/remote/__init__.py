"""Seats played from outside the process (layer ``remote``).

The MafiaScope-compatible model bus (a hub that routes seats' chat calls to workers, and
a worker that serves any model mafialab can call). Never imports ``viewer``.
"""

from mafialab.remote._hub import DEFAULT_JOB_TIMEOUT_S, MAX_WAIT_S, WORKER_TTL_S, BusHub, create_bus_app
from mafialab.remote._server import LOOPBACK, BackgroundServer, check_bind
from mafialab.remote._worker import serve_jobs

__all__ = [
    "DEFAULT_JOB_TIMEOUT_S",
    "LOOPBACK",
    "MAX_WAIT_S",
    "WORKER_TTL_S",
    "BackgroundServer",
    "BusHub",
    "check_bind",
    "create_bus_app",
    "serve_jobs",
]
