"""The model-bus hub: a stateless router between games (engine side) and workers.

Compatible with MafiaScope's bus protocol, so a worker written for it works unchanged:

* worker side: ``POST /register`` ``{"worker", "models", "meta"}`` → ``{"worker", "poll",
  "secret"}`` (409 when the id belongs to a live worker and the body has not its
  ``secret``); ``GET /work?worker=ID&wait=S`` long-polls (S <= 55 s): 204 nothing yet, 200
  a job ``{"request_id", "model", "messages", "max_tokens", "kind"}``, 409 unknown worker
  (the hub restarted: register again); ``POST /result`` ``{"request_id", "text"}``
  (optionally ``"worker"``): 410 when the engine already gave up on the request, 409 when no
  worker has taken it yet or ``worker`` names another worker than the one that took it (the
  job stays with its worker).
* engine side: ``POST /generate`` ``{"model", "messages", "max_tokens", "kind", "timeout"}``
  → ``{"text"}`` (plus ``replaced_chars`` when the hub replaced characters of the worker's
  text that UTF-8 cannot encode, see :class:`ResultBody`); 503 when no live worker serves the
  routing key or the wait timed out.
* ``GET /status``: live workers, queue depth, calls in flight.

Dispatch is at most once (a job a worker took and never answered is not re-queued: the
engine times out and the seat's turn degrades like after any model error). A worker is live
while it keeps polling (time to live 60 s). One optional shared bearer token guards every
request. Request ids are 128 random bits, handed only to the worker that takes the job:
a result naming no worker is taken to come from it. A worker that registers with ``"bind":
true`` (mafialab's do) binds its id to the registration's secret: ``/work`` and ``/result``
for it then need the header ``X-Bus-Secret`` (403 otherwise), so no other client can poll
as it or answer its jobs. MafiaScope's workers know no secret; on a hub shared with other
users of the machine, guard them with the hub's bearer token. Request bodies are capped
(:data:`MAX_BODY_BYTES`; 413) and must arrive in time (408), and numbers written ``NaN`` or
``Infinity`` are refused (422). The hub keeps no game state.

A browser page of another origin gets 403 (:class:`mafialab._http.OriginGuard`): a request
with a foreign ``Origin:`` or ``Sec-Fetch-Site: cross-site``/``same-site`` takes no job and
posts no call, and on loopback ``Host:`` must be 127.0.0.1, localhost or ::1 (a rebound DNS
name gets nothing). Workers and games are programs: they send neither header and are unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import secrets
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI, Header, HTTPException, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from mafialab._http import BODY_TIMEOUT_S, LOOPBACK_NAMES, BearerGuard, BodyLimit, FiniteJSONRoute, OriginGuard
from mafialab._text import valid_utf8, valid_utf8_value

WORKER_TTL_S = 60.0
"""Seconds a worker stays live after its last poll (the reference protocol's time to live)."""

MAX_WAIT_S = 55.0
"""Longest long-poll a worker may ask for (seconds)."""

DEFAULT_JOB_TIMEOUT_S = 120.0
"""Seconds the engine side waits for a worker when its request names no ``timeout``."""

GONE_MEMORY = 10_000
"""Request ids of given-up jobs remembered (so a late result gets 410, not 404)."""

MAX_BODY_BYTES = {"/register": 64 * 1024, "/result": 1024 * 1024, "/generate": 8 * 1024 * 1024}
"""Largest request body per path in bytes (413 above; other paths take no body and get the
``/register`` cap): a registration's keys and meta, a model's answer, a seat's whole context."""


class _WireBody(BaseModel):
    """A request body whose strings are made valid UTF-8 before validation.

    A lone surrogate (U+D800 written as a JSON escape, which JSON allows) becomes U+FFFD, so
    it can neither be stored (a worker id, a seat's messages) nor echoed in a 422 that UTF-8
    cannot encode.
    """

    @model_validator(mode="before")
    @classmethod
    def _valid_utf8(cls, data: Any) -> Any:
        return valid_utf8_value(data)[0]


class RegisterBody(_WireBody):
    """``POST /register``: a worker and the routing keys it serves (``["*"]``: every key)."""

    model_config = ConfigDict(extra="allow")

    worker: str = Field(min_length=1, max_length=200)
    models: list[str] = Field(default_factory=lambda: ["*"])
    meta: dict[str, Any] = Field(default_factory=dict)
    secret: str | None = Field(default=None, max_length=200)
    """The secret this hub gave the id's registration (needed while that worker is live)."""
    bind: bool = False
    """Bind the id to the secret: ``/work`` and ``/result`` for it then need ``X-Bus-Secret``
    (mafialab's workers ask for it; MafiaScope's workers, which know no secret, do not)."""


class ResultBody(BaseModel):
    """``POST /result``: the text answering ``request_id`` (``error``: the worker's model failed).

    Text from a worker is made valid UTF-8 as it arrives: each character UTF-8 cannot encode
    in ``request_id``, ``text`` or ``error`` (a lone surrogate such as U+D800, which
    JSON allows) becomes U+FFFD, and those of ``text`` and ``error`` are added to
    ``replaced_chars``, which goes back to the engine side with the text.

    ``worker``, when given, must be the worker that took the job (MafiaScope's workers send
    none: the request id, given to that worker only, stands for it).
    """

    model_config = ConfigDict(extra="allow")

    request_id: str = Field(max_length=200)
    text: str = ""
    error: str | None = None
    worker: str | None = Field(default=None, max_length=200)
    replaced_chars: int = Field(default=0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _valid_utf8(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return valid_utf8_value(data)[0]
        n = sum(valid_utf8(v)[1] for k, v in data.items() if k in ("text", "error") and isinstance(v, str))
        data, _ = valid_utf8_value(data)
        given = data.get("replaced_chars", 0)
        if n or given:  # a worker's own count is at most one per character of its text
            most = sum(len(v) for k, v in data.items() if k in ("text", "error") and isinstance(v, str))
            given = min(given, most) if isinstance(given, int) and given > 0 else 0
            data = {**data, "replaced_chars": given + n}
        return data


class GenerateBody(_WireBody):
    """``POST /generate`` (engine side): one chat call for the worker serving ``model``.

    Attributes:
        model: The routing key.
        messages: Chat messages ``{"role", "content"}``: the seat's full private context.
        max_tokens: Generation cap, or ``None``.
        kind: ``generate`` (a game move) or ``probe`` (a belief question; a stateful worker
            must keep it from changing later game answers).
        timeout: Seconds to wait for a worker (default :data:`DEFAULT_JOB_TIMEOUT_S`).
    """

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1)
    messages: list[dict[str, Any]]
    max_tokens: int | None = None
    kind: Literal["generate", "probe"] = "generate"
    timeout: float | None = Field(default=None, gt=0, le=3600)


@dataclass
class _Worker:
    worker: str
    models: list[str]
    meta: dict[str, Any]
    last_seen: float
    secret: str
    polling: int = 0
    served: int = 0
    bound: bool = False

    def refuses(self, secret: str | None) -> bool:
        """Whether a request naming this worker with ``secret`` is refused (a bound id, a wrong secret)."""
        return self.bound and not hmac.compare_digest((secret or "").encode(), self.secret.encode())

    def serves(self, key: str) -> bool:
        return "*" in self.models or key in self.models


@dataclass
class _Job:
    request_id: str
    body: GenerateBody
    future: asyncio.Future[ResultBody]
    created: float
    worker: str | None = None
    taken: float | None = None

    def wire(self) -> dict[str, Any]:
        b = self.body
        return {
            "request_id": self.request_id,
            "model": b.model,
            "messages": b.messages,
            "max_tokens": b.max_tokens,
            "kind": b.kind,
        }


@dataclass
class BusHub:
    """The hub's state (in memory; one per served app).

    Args:
        token: Shared bearer token required on every request, or ``None`` (no check).
        ttl_s: Seconds a worker stays live after its last poll.
        clock: Monotonic clock (seconds), replaceable in tests.
    """

    token: str | None = None
    ttl_s: float = WORKER_TTL_S
    clock: Any = time.monotonic
    workers: dict[str, _Worker] = field(default_factory=dict)
    queue: deque[_Job] = field(default_factory=deque)
    in_flight: dict[str, _Job] = field(default_factory=dict)
    gone: OrderedDict[str, None] = field(default_factory=OrderedDict)
    answered: int = 0
    timed_out: int = 0
    _ids: Any = field(default_factory=itertools.count)
    _cond: asyncio.Condition | None = None

    @property
    def cond(self) -> asyncio.Condition:
        """The condition workers wait on (created in the serving loop)."""
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    def _is_live(self, w: _Worker, now: float) -> bool:
        return w.polling > 0 or now - w.last_seen <= self.ttl_s

    def live(self, key: str | None = None) -> list[_Worker]:
        """Live workers (polling now or polled within ``ttl_s``), serving ``key`` if given."""
        now = self.clock()
        out = [w for w in self.workers.values() if self._is_live(w, now)]
        return [w for w in out if key is None or w.serves(key)]

    def _forget(self, job: _Job) -> None:
        with contextlib.suppress(ValueError):
            self.queue.remove(job)
        self.in_flight.pop(job.request_id, None)
        self.gone[job.request_id] = None
        while len(self.gone) > GONE_MEMORY:
            self.gone.popitem(last=False)

    def _take(self, worker: _Worker) -> _Job | None:
        for job in self.queue:
            if worker.serves(job.body.model):
                self.queue.remove(job)
                job.worker = worker.worker
                job.taken = self.clock()
                self.in_flight[job.request_id] = job
                return job
        return None

    def status(self) -> dict[str, Any]:
        """``{"workers": [...], "queue_depth", "in_flight", "answered", "timed_out"}``."""
        now = self.clock()
        return {
            "workers": [
                {
                    "worker": w.worker,
                    "models": w.models,
                    "meta": w.meta,
                    "polling": w.polling > 0,
                    "last_seen_s": round(now - w.last_seen, 3),
                    "served": w.served,
                }
                for w in self.live()
            ],
            "queue_depth": len(self.queue),
            "in_flight": len(self.in_flight),
            "answered": self.answered,
            "timed_out": self.timed_out,
        }

    # ------------------------------------------------------------------ operations
    def register(self, body: RegisterBody) -> dict[str, str]:
        """Add a worker, or refresh one that sends its secret; returns ``{"worker", "poll", "secret"}``.

        An id whose worker is live (polling, or polled within ``ttl_s``) is not taken over:
        registering it again needs the ``secret`` its registration was given. Once that
        worker has gone quiet for ``ttl_s``, anyone may register the id (with a new secret).

        Raises:
            PermissionError: The id belongs to a live worker and ``body.secret`` is not its secret.
        """
        models = [str(m) for m in body.models] or ["*"]
        now = self.clock()
        old = self.workers.get(body.worker)
        same = old is not None and hmac.compare_digest((body.secret or "").encode(), old.secret.encode())
        if old is not None and not same and self._is_live(old, now):
            raise PermissionError(
                f"worker id {body.worker!r} is registered by a live worker; choose another id, send the "
                f"registration's secret, or wait until it has not polled for {self.ttl_s:g} s"
            )
        secret = old.secret if old is not None and same else secrets.token_urlsafe(24)
        polling = old.polling if old is not None and same else 0
        self.workers[body.worker] = _Worker(
            body.worker, models, body.meta, now, secret, polling=polling, bound=body.bind
        )
        return {"worker": body.worker, "poll": f"/work?worker={body.worker}", "secret": secret}

    async def work(self, worker_id: str, wait: float, secret: str | None = None) -> dict[str, Any] | None:
        """Long-poll for a job for ``worker_id`` (``None`` when none came within ``wait`` s).

        Raises:
            KeyError: The worker is not registered (the hub restarted).
            PermissionError: The id is bound to its registration's secret and ``secret`` is not it.
        """
        worker = self.workers.get(worker_id)
        if worker is None:
            raise KeyError(worker_id)
        if worker.refuses(secret):
            raise PermissionError(f"worker id {worker_id!r} is bound to its registration's secret (X-Bus-Secret)")
        worker.polling += 1
        worker.last_seen = self.clock()
        got: list[_Job] = []

        def ready() -> bool:
            job = self._take(worker)
            if job is not None:
                got.append(job)
            return job is not None

        try:
            async with self.cond:
                if not ready() and wait > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.cond.wait_for(ready), wait)
        finally:
            worker.polling -= 1
            worker.last_seen = self.clock()
        if not got:
            return None
        worker.served += 1
        return got[0].wire()

    def result(self, body: ResultBody, secret: str | None = None) -> tuple[int, str]:
        """Deliver a worker's answer to the job it took.

        Returns:
            ``(200, "")`` delivered; ``(410, reason)`` the engine already gave up, or no such
            request; ``(409, reason)`` no worker has taken the job yet, or ``body.worker``
            names another worker than the one that took it; ``(403, reason)`` the worker that
            took it is bound to its secret and ``secret`` is not it (the job stays as it was).
        """
        rid = body.request_id
        job = self.in_flight.get(rid)
        if job is None:
            if any(j.request_id == rid for j in self.queue):
                return 409, f"request {rid!r} has not been taken by any worker"
            return 410, f"request {rid!r} is gone (timed out or unknown)"
        if body.worker is not None and body.worker != job.worker:
            return 409, f"request {rid!r} was taken by another worker than {body.worker!r}"
        taker = self.workers.get(job.worker) if job.worker is not None else None
        if taker is not None and taker.refuses(secret):
            return 403, f"request {rid!r} was taken by a worker bound to its secret (X-Bus-Secret)"
        del self.in_flight[rid]
        if job.future.done():
            return 410, f"request {rid!r} is gone (timed out or unknown)"
        job.future.set_result(body)
        self.answered += 1
        return 200, ""

    async def generate(self, body: GenerateBody, default_timeout: float) -> ResultBody | str:
        """Queue a call and wait for a worker's answer; a reason string on failure (503)."""
        if not self.live(body.model):
            return f"no live worker serves model {body.model!r}"
        loop = asyncio.get_running_loop()
        job = _Job(f"r{next(self._ids)}-{secrets.token_hex(16)}", body, loop.create_future(), self.clock())
        timeout = body.timeout or default_timeout
        async with self.cond:
            self.queue.append(job)
            self.cond.notify_all()
        try:
            return await asyncio.wait_for(asyncio.shield(job.future), timeout)
        except TimeoutError:
            self.timed_out += 1
            where = f"worker {job.worker}" if job.worker else "no worker took it"
            return f"timed out after {timeout:g} s ({where})"
        finally:  # also when the engine disconnected: a late result then gets 410
            if not job.future.done():
                job.future.cancel()
            self._forget(job)


def create_bus_app(
    hub: BusHub | None = None,
    *,
    default_timeout: float = DEFAULT_JOB_TIMEOUT_S,
    allowed_hosts: frozenset[str] | None = LOOPBACK_NAMES,
    body_timeout_s: float = BODY_TIMEOUT_S,
) -> FastAPI:
    """The hub as a FastAPI app (serve it with uvicorn; ``mafialab bus serve`` does).

    Args:
        hub: The state (default: a fresh :class:`BusHub` without a token).
        default_timeout: Seconds a ``/generate`` waits when the body names no ``timeout``.
        allowed_hosts: ``Host:`` names served (default the loopback names; ``None``: any, for
            a hub on another interface, which needs a token).
        body_timeout_s: Seconds a request body may take to arrive (408 after).

    Returns:
        The app; its ``state.hub`` is the :class:`BusHub`.
    """
    hub = hub or BusHub()
    app = FastAPI(
        title="mafialab model bus",
        description="A MafiaScope-compatible model bus: workers long-poll for seats' chat calls.",
        version="1",
    )
    app.state.hub = hub
    app.router.route_class = FiniteJSONRoute  # NaN and Infinity are not JSON numbers (422)

    if hub.token is not None:
        app.add_middleware(BearerGuard, token=hub.token)
    app.add_middleware(
        BodyLimit, max_body=MAX_BODY_BYTES["/register"], paths=MAX_BODY_BYTES, body_timeout_s=body_timeout_s
    )
    app.add_middleware(OriginGuard, allowed_hosts=allowed_hosts)  # added last: runs first

    @app.post("/register", responses={409: {"description": "the id belongs to a live worker"}})
    async def register(body: RegisterBody) -> dict[str, str]:
        """Register a worker for routing keys (``["*"]``: all); keep the ``secret`` to register the id again."""
        try:
            return hub.register(body)
        except PermissionError as err:
            raise HTTPException(409, str(err)) from None

    @app.get("/work", responses={204: {"description": "no job within the wait"}, 409: {"description": "register"}})
    async def work(
        worker: str = Query(...),
        wait: float = Query(25.0, ge=0),
        x_bus_secret: str | None = Header(None, description="The registration's secret (a bound id needs it)."),
    ) -> Response:
        """Long-poll for a job (``wait`` capped at 55 s)."""
        try:
            job = await hub.work(worker, min(wait, MAX_WAIT_S), x_bus_secret)
        except KeyError:
            raise HTTPException(409, f"unknown worker {worker!r}: register again") from None
        except PermissionError as err:
            raise HTTPException(403, str(err)) from None
        if job is None:
            return Response(status_code=204)
        return JSONResponse(job)

    @app.post(
        "/result",
        responses={
            409: {"description": "not taken yet, or taken by another worker"},
            410: {"description": "the engine gave up on this request"},
        },
    )
    async def result(
        body: ResultBody,
        x_bus_secret: str | None = Header(None, description="The registration's secret (a bound id needs it)."),
    ) -> dict[str, bool]:
        """Deliver the text answering a job (from the worker that took it)."""
        code, reason = hub.result(body, x_bus_secret)
        if code != 200:
            raise HTTPException(code, reason)
        return {"ok": True}

    @app.post("/generate", responses={503: {"description": "no live worker, or timed out"}})
    async def generate(body: GenerateBody) -> dict[str, Any]:
        """Engine side: one chat call, answered by a worker serving ``model``."""
        got = await hub.generate(body, default_timeout)
        if isinstance(got, str):
            raise HTTPException(503, got)
        if got.error:
            raise HTTPException(502, f"worker error: {got.error[:500]}")
        # replaced_chars only when a character was replaced: the MafiaScope answer is {"text"}
        return {"text": got.text, "replaced_chars": got.replaced_chars} if got.replaced_chars else {"text": got.text}

    @app.get("/status")
    async def status() -> dict[str, Any]:
        """Live workers, queue depth and calls in flight."""
        return hub.status()

    return app
