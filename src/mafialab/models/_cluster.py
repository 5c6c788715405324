"""Per-backend in-flight limits that hold across a Ray cluster (one named actor per backend).

Outside Ray nothing here runs and Ray is never imported: :class:`~mafialab.models.InFlightLimit`
checks :func:`active` (a module attribute) and keeps its in-process path. Inside a Ray worker
entry (``with cluster_limits():``) every keyed limit also takes a slot from the backend's slot
keeper, a detached async actor named after the backend key and the limit, so the limit counts
the calls of every worker of every job on the cluster together.

A worker that dies cannot release its slots, so slots are leases: each process that holds or
waits for slots renews its leases from a background thread every ``lease_s / 5`` seconds, and
the keeper frees every slot (and drops every waiting request) of a process it has not heard
from for ``lease_s`` seconds. A live process keeps its slots however long its calls take; a
dead one's come back after at most about ``lease_s`` seconds.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from mafialab._words import count

log = logging.getLogger(__name__)

NAMESPACE = "mafialab"
"""Ray namespace of the slot keepers (shared by every job on a cluster, so concurrent runs
against one server share its limit)."""

DEFAULT_LEASE_S = 30.0
"""Seconds after its process was last heard from that a holder's slots are freed."""

KEEPER_MAX_CONCURRENCY = 4096
"""Acquire requests one slot keeper serves at once (waiting ones included)."""


def keeper_name(key: str, limit: int) -> str:
    """The Ray actor name of the slot keeper for backend ``key`` with ``limit`` slots.

    ``mafialab-limit-`` and the first 16 hex digits of the SHA-256 of ``key|limit``: the same
    backend with another limit gets another keeper.
    """
    digest = hashlib.sha256(f"{key}|{int(limit)}".encode()).hexdigest()[:16]
    return f"mafialab-limit-{digest}"


class SlotKeeper:
    """The body of the slot-keeper actor: ``limit`` slots, leased per holder process.

    Run as a Ray async actor (every method runs on the actor's event loop, so the state needs
    no lock). Requests are granted at once when a slot is free and nobody waits; otherwise
    they wait, lowest ``priority`` first, first come first served within one priority.
    Ray does not promise that an async actor runs one caller's requests in the order they were
    sent, so a release that arrives before its acquire leaves a tombstone and the acquire is
    then refused.

    Args:
        key: The backend key (for :meth:`state`).
        limit: Slots (>= 1).
        lease_s: Seconds of silence after which a holder's slots are freed (> 0).
    """

    def __init__(self, key: str, limit: int, lease_s: float = DEFAULT_LEASE_S):
        self.key = key
        self.limit = int(limit)
        self.lease_s = float(lease_s)
        self.granted: dict[str, str] = {}  # lease -> holder
        self.waiting: dict[int, deque[tuple[str, str, asyncio.Future[bool]]]] = {}
        self.seen: dict[str, float] = {}  # holder -> monotonic time last heard from
        self.tombstones: dict[str, float] = {}  # lease released before its acquire arrived
        self.peak = 0
        self.reclaimed = 0
        self._reaper: asyncio.Task[None] | None = None

    def _touch(self, holder: str) -> None:
        self.seen[holder] = time.monotonic()

    def _n_waiting(self) -> int:
        return sum(1 for q in self.waiting.values() for _, _, f in q if not f.done())

    def _grant(self, lease: str, holder: str) -> None:
        self.granted[lease] = holder
        self.peak = max(self.peak, len(self.granted))

    def _fill(self) -> None:
        """Hand free slots to waiters, best priority first."""
        for prio in sorted(self.waiting):
            q = self.waiting[prio]
            while q and len(self.granted) < self.limit:
                lease, holder, fut = q.popleft()
                if not fut.done():
                    self._grant(lease, holder)
                    fut.set_result(True)

    async def acquire(self, holder: str, lease: str, priority: int = 0) -> bool:
        """Wait for a slot for ``lease``; ``True`` when granted, ``False`` when refused.

        Refused: the lease was released first (tombstone) or its holder was declared dead.
        """
        self._touch(holder)
        if self._reaper is None:  # started on the actor's event loop by the first request
            self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())
        if self.tombstones.pop(lease, None) is not None:
            return False
        if len(self.granted) < self.limit and not self._n_waiting():
            self._grant(lease, holder)
            return True
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(int(priority), deque()).append((lease, holder, fut))
        return await fut

    def release(self, holder: str, lease: str) -> None:
        """Free ``lease``'s slot, or withdraw its waiting request, or leave a tombstone."""
        self._touch(holder)
        if self.granted.pop(lease, None) is not None:
            self._fill()
            return
        for q in self.waiting.values():
            for item in q:
                if item[0] == lease:
                    q.remove(item)
                    if not item[2].done():
                        item[2].set_result(False)
                    return
        self.tombstones[lease] = time.monotonic()

    def renew(self, holder: str) -> None:
        """``holder`` is alive: its leases run on."""
        self._touch(holder)

    def reap(self) -> int:
        """Free the slots and drop the requests of holders silent for ``lease_s``; returns slots freed."""
        now = time.monotonic()
        dead = {h for h, t in self.seen.items() if now - t > self.lease_s}
        freed = 0
        if dead:
            for lease in [lease for lease, h in self.granted.items() if h in dead]:
                del self.granted[lease]
                freed += 1
            for q in self.waiting.values():
                for item in [it for it in q if it[1] in dead]:
                    q.remove(item)
                    if not item[2].done():
                        item[2].set_result(False)
            for h in dead:
                del self.seen[h]
            if freed:
                log.warning("%s: freed %s of %s", self.key, count(freed, "slot"), count(len(dead), "silent worker"))
        for lease in [k for k, t in self.tombstones.items() if now - t > self.lease_s]:
            del self.tombstones[lease]
        self.reclaimed += freed
        self._fill()
        return freed

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 4)
            self.reap()

    def state(self) -> dict[str, Any]:
        """The keeper's counts now.

        Returns:
            ``key``, ``limit``, ``in_use``, ``waiting``, ``peak`` (most slots held at once),
            ``holders`` (processes heard from within ``lease_s``), ``reclaimed`` (slots freed
            from silent processes so far) and ``lease_s``.
        """
        return {
            "key": self.key,
            "limit": self.limit,
            "in_use": len(self.granted),
            "waiting": self._n_waiting(),
            "peak": self.peak,
            "holders": len(self.seen),
            "reclaimed": self.reclaimed,
            "lease_s": self.lease_s,
        }


@dataclass
class _Cluster:
    """This process's connection to the slot keepers (one per Ray job)."""

    ray: Any
    job: str
    lease_s: float
    namespace: str
    holder: str
    handles: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    renewer: threading.Thread | None = None
    stopped: threading.Event = field(default_factory=threading.Event)

    def handle(self, key: str, limit: int) -> Any:
        """The keeper of ``key`` with ``limit`` slots (created on first use anywhere)."""
        name = keeper_name(key, limit)
        with self.lock:
            h = self.handles.get(name)
        if h is None:
            actor = _actor_class(self.ray).options(
                name=name,
                namespace=self.namespace,
                get_if_exists=True,
                lifetime="detached",
                num_cpus=0,
                max_restarts=-1,  # a keeper that died comes back (empty) ...
                max_task_retries=-1,  # ... and the requests sent to it meanwhile go to the new one
                max_concurrency=KEEPER_MAX_CONCURRENCY,
            )
            h = actor.remote(key, int(limit), self.lease_s)
            with self.lock:
                self.handles[name] = h
        self._start_renewer()
        return h

    def _start_renewer(self) -> None:
        with self.lock:
            if self.renewer is not None:
                return
            self.renewer = threading.Thread(target=self._renew_forever, name="mafialab-lease-renewer", daemon=True)
        self.renewer.start()

    def _renew_forever(self) -> None:
        while not self.stopped.wait(self.lease_s / 5):
            with self.lock:
                handles = list(self.handles.values())
            try:
                for h in handles:
                    h.renew.remote(self.holder)
            except Exception as err:  # Ray shut down under us: nothing left to renew
                log.debug("lease renewal stopped: %s", err)
                return

    @asynccontextmanager
    async def slot(self, key: str, limit: int, priority: int) -> AsyncIterator[None]:
        """Hold one of the cluster's ``limit`` slots of ``key`` for the block."""
        h = self.handle(key, limit)
        while True:
            lease = uuid.uuid4().hex
            try:
                granted = await h.acquire.remote(self.holder, lease, priority)
            except BaseException:  # cancelled (or the keeper failed) while waiting
                h.release.remote(self.holder, lease)  # a slot granted meanwhile is freed
                raise
            if granted:
                break
            log.warning("%s: the cluster slot keeper dropped a request (lease expired); asking again", key)
        try:
            yield
        finally:
            h.release.remote(self.holder, lease)  # sent at once; the answer is not awaited


_ACTOR_CLASS: Any = None


def _actor_class(ray: Any) -> Any:
    global _ACTOR_CLASS
    if _ACTOR_CLASS is None:
        _ACTOR_CLASS = ray.remote(SlotKeeper)
    return _ACTOR_CLASS


_ACTIVE: _Cluster | None = None
_DEPTH = 0
_GUARD = threading.Lock()


def active() -> _Cluster | None:
    """This process's cluster limits, or ``None`` (then limits are per process)."""
    return _ACTIVE


@contextmanager
def cluster_limits(*, lease_s: float = DEFAULT_LEASE_S, namespace: str = NAMESPACE) -> Iterator[bool]:
    """Make every backend's in-flight limit cluster-wide for the ``with`` block.

    Call it at the top of every function that runs as a Ray task or actor method and makes
    model calls (the one worker entry of :func:`mafialab.harness.ray_map` and
    :func:`mafialab.harness.ray_run` does, for every task they run). Inside it, each
    :class:`~mafialab.models.InFlightLimit` that has a ``key`` (the ``openai`` backend: base
    URL and model; ``bus``: hub URL and routing key) holds, besides
    its slot in this process, one of ``limit`` slots of a slot keeper shared by the whole Ray
    cluster (a detached actor named :func:`keeper_name` in ``namespace``, created by the
    first worker that needs it and reused by every later job). The first creator's
    ``lease_s`` holds for a keeper.

    Outside a Ray process (``ray`` not imported, or not initialized) the block runs with
    per-process limits and Ray is not imported. Nested blocks reuse the outer one.

    Args:
        lease_s: Seconds of silence from a process after which the keeper frees its slots
            (> 0); the process renews every ``lease_s / 5`` seconds.
        namespace: Ray namespace of the keepers.

    Yields:
        Whether limits are cluster-wide in the block.

    Raises:
        ValueError: ``lease_s`` <= 0.
    """
    global _ACTIVE, _DEPTH
    if lease_s <= 0:
        raise ValueError(f"lease_s: must be > 0, got {lease_s}")
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        yield False
        return
    with _GUARD:
        job = ray.get_runtime_context().get_job_id()
        outer = _ACTIVE
        if outer is None or outer.job != job:
            if outer is not None:
                outer.stopped.set()
            holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
            _ACTIVE = _Cluster(ray=ray, job=job, lease_s=float(lease_s), namespace=namespace, holder=holder)
        _DEPTH += 1
    try:
        yield True
    finally:
        with _GUARD:
            _DEPTH -= 1
            if _DEPTH == 0 and _ACTIVE is not None:
                # keep renewing while a release may still be in the air; a fresh block starts anew
                _ACTIVE.stopped.set()
                _ACTIVE = None


def cluster_limit_state(key: str, limit: int, *, namespace: str = NAMESPACE) -> dict[str, Any] | None:
    """What the cluster's slot keeper of backend ``key`` with ``limit`` slots holds now.

    Needs a connected Ray (``ray.init``). Returns :meth:`SlotKeeper.state`'s dict, or
    ``None`` when no such keeper exists.

    Raises:
        RuntimeError: Ray is not initialized.
    """
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        raise RuntimeError("cluster_limit_state: Ray is not initialized (ray.init first)")
    try:
        h = ray.get_actor(keeper_name(key, limit), namespace=namespace)
    except ValueError:
        return None
    state: dict[str, Any] = ray.get(h.state.remote())
    return state
