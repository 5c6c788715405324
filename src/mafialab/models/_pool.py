"""Sharing backends between agents, and the per-backend call scheduler (limit and priorities)."""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mafialab.models import _cluster
from mafialab.models._protocol import ChatModel, ChatRequest, get_model

DEFAULT_OPENAI_CONCURRENCY = 128
"""Default ``max_concurrency`` of the ``openai`` backend: calls in flight at once per backend.

A batching server (vLLM, SGLang) serves hundreds of requests at once; a hosted API answers
a burst over its rate limit with HTTP 429, which is retried with backoff."""

PRIORITY_GAME = 0
"""Scheduling priority of game-facing calls (decisions, preflight, judge, benchmark calls)."""
PRIORITY_PROBE = 1
"""Scheduling priority of probe calls: admitted only when no game call is waiting."""

LOW_PRIORITY_PURPOSES = frozenset({"probe", "retest"})
"""Request purposes scheduled at :data:`PRIORITY_PROBE`; every other purpose is a game call."""


def call_priority(request: ChatRequest) -> int:
    """Scheduling priority of ``request``: :data:`PRIORITY_PROBE` for probe purposes, else game."""
    return PRIORITY_PROBE if request.purpose in LOW_PRIORITY_PURPOSES else PRIORITY_GAME


@dataclass
class _LoopSlots:
    in_use: int = 0
    waiting: dict[int, deque[asyncio.Future[None]]] = field(default_factory=dict)
    peak: int = 0


class InFlightLimit:
    """The call scheduler of one backend: at most ``limit`` calls in flight, by priority.

    A call waits for a slot with ``async with limit(priority):``. When every slot is busy,
    waiting calls are admitted lowest ``priority`` value first (:data:`PRIORITY_GAME` before
    :data:`PRIORITY_PROBE`), first come first served within one priority; a freed slot goes
    straight to the next waiter. State is kept per event loop, since a backend object may
    outlive one ``asyncio.run`` (tests, notebooks).

    With a ``key``, inside :func:`~mafialab.models.cluster_limits` (the entry of every Ray
    worker function of mafialab) the limit is cluster-wide: a call that got its slot here
    also takes one of ``limit`` slots from the cluster's slot keeper for ``key`` (a named
    Ray actor, same priorities), and gives it back when it ends, also on errors and
    cancellation. Elsewhere the limit is this process's and Ray is not imported.

    Args:
        limit: Calls allowed in flight at once (>= 1).
        key: The backend this limit protects (e.g. ``openai|<base_url>|<model>``), so Ray
            workers that build the same backend share one limit; ``None``: always per process.

    Attributes:
        limit: The limit.
        key: The backend key, or ``None``.

    Raises:
        ValueError: If ``limit`` < 1.
    """

    def __init__(self, limit: int, key: str | None = None):
        if limit < 1:
            raise ValueError(f"max_concurrency: must be >= 1, got {limit}")
        self.limit = int(limit)
        self.key = key
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopSlots] = weakref.WeakKeyDictionary()

    def _state(self) -> _LoopSlots:
        loop = asyncio.get_running_loop()
        st = self._slots.get(loop)
        if st is None:
            st = self._slots[loop] = _LoopSlots()
        return st

    def in_flight(self) -> int:
        """Calls holding a slot now, in the running loop."""
        return self._state().in_use

    def peak(self) -> int:
        """Most calls that held a slot at once so far, in the running loop."""
        return self._state().peak

    def waiting(self, priority: int | None = None) -> int:
        """Calls waiting for a slot now (of one ``priority``, or all), in the running loop."""
        st = self._state()
        queues = st.waiting.values() if priority is None else [st.waiting.get(priority, deque())]
        return sum(sum(1 for f in q if not f.done()) for q in queues)

    def _wake(self, st: _LoopSlots) -> None:
        """Hand the freed slot to the first waiter of the best priority, else free it."""
        for prio in sorted(st.waiting):
            q = st.waiting[prio]
            while q:
                fut = q.popleft()
                if not fut.done():
                    fut.set_result(None)  # the slot passes on: in_use is unchanged
                    return
        st.in_use -= 1

    @asynccontextmanager
    async def __call__(self, priority: int = PRIORITY_GAME) -> AsyncIterator[None]:
        """Hold one slot for the ``async with`` block (waits while all are busy)."""
        st = self._state()
        if st.in_use < self.limit and not any(not f.done() for q in st.waiting.values() for f in q):
            st.in_use += 1
        else:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            st.waiting.setdefault(priority, deque()).append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._wake(st)  # granted just as we were cancelled: pass it on
                else:
                    fut.cancel()
                    q = st.waiting.get(priority)
                    if q is not None and fut in q:
                        q.remove(fut)
                raise
        st.peak = max(st.peak, st.in_use)
        try:
            key = self.key
            cluster = _cluster.active() if key is not None else None
            if cluster is None or key is None:
                yield
            else:
                async with cluster.slot(key, self.limit, priority):
                    yield
        finally:
            self._wake(st)


class ModelPool:
    """Backends shared by every agent that names the same model string and options.

    Seven seats played by ``local/smollm2`` load the weights once and share one lock; seven
    seats played by ``openai/x`` share one HTTP client and one in-flight limit.
    """

    def __init__(self) -> None:
        self._models: dict[str, ChatModel] = {}

    def get(self, spec: str, **options: Any) -> ChatModel:
        """The shared backend for ``spec`` with ``options`` (built on first use).

        Raises:
            ModelSpecError: Malformed model string, unknown provider or option.
            ImportError: The backend's optional dependency is missing.
        """
        key = spec + "|" + repr(sorted(options.items()))
        model = self._models.get(key)
        if model is None:
            model = self._models[key] = get_model(spec, **options)
        return model

    def clear(self) -> None:
        """Forget every shared backend (they are garbage-collected when unused)."""
        self._models.clear()


DEFAULT_POOL = ModelPool()
"""The pool agents use unless given another."""
