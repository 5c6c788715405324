"""Under Ray a backend's in-flight limit holds for all workers together; without Ray nothing changes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from mafialab.models import (
    PRIORITY_GAME,
    PRIORITY_PROBE,
    ChatMessage,
    ChatRequest,
    InFlightLimit,
    cluster_limit_state,
    cluster_limits,
    get_model,
)
from mafialab.models._cluster import SlotKeeper, keeper_name
from mafialab.testing import OpenAIStub


def _req() -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content="Hello.")])


def _wait_for(check: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return check()


# --- the keeper itself (a plain class: no Ray needed) ---------------------------------------


async def test_keeper_grants_by_priority_and_honours_early_releases() -> None:
    k = SlotKeeper("k", 1, lease_s=60)
    assert await k.acquire("h1", "a", PRIORITY_GAME) is True
    probe = asyncio.create_task(k.acquire("h1", "p", PRIORITY_PROBE))
    await asyncio.sleep(0)
    game = asyncio.create_task(k.acquire("h2", "g", PRIORITY_GAME))
    await asyncio.sleep(0)
    assert k.state()["waiting"] == 2 and k.state()["in_use"] == 1
    k.release("h1", "a")  # the game call goes first although the probe waited longer
    assert await game is True and not probe.done()
    k.release("h2", "g")
    assert await probe is True
    k.release("h1", "p")
    k.release("h1", "early")  # a release that overtook its acquire refuses that acquire
    assert await k.acquire("h1", "early") is False
    assert k.state() | {"holders": 0} == {"key": "k", "limit": 1, "in_use": 0, "waiting": 0, "peak": 1,
                                          "holders": 0, "reclaimed": 0, "lease_s": 60.0}  # fmt: skip
    k._reaper.cancel()  # type: ignore[union-attr]


async def test_keeper_frees_the_slots_of_a_silent_holder_and_keeps_a_renewing_one() -> None:
    k = SlotKeeper("k", 2, lease_s=60)
    assert await k.acquire("dead", "d1") and await k.acquire("alive", "a1")
    waiting_dead = asyncio.create_task(k.acquire("dead", "d2"))
    waiting_alive = asyncio.create_task(k.acquire("alive", "a2"))
    await asyncio.sleep(0)
    k.seen["dead"] -= 61  # not heard from for longer than the lease
    k.renew("alive")
    assert k.reap() == 1
    assert await waiting_dead is False  # the dead holder's request is dropped ...
    assert await waiting_alive is True  # ... and its slot goes to the live one
    assert k.state()["in_use"] == 2 and k.state()["reclaimed"] == 1 and set(k.granted) == {"a1", "a2"}
    k._reaper.cancel()  # type: ignore[union-attr]


# --- the non-Ray path ------------------------------------------------------------------------

NO_RAY = """
import asyncio, sys
from mafialab.models import ChatMessage, ChatRequest, cluster_limits, get_model
from mafialab.testing import OpenAIStub

async def main():
    async with OpenAIStub(latency_s=0.05) as stub:
        m = get_model(f"openai/t?base_url={stub.base_url}&max_concurrency=2")
        req = ChatRequest(messages=[ChatMessage(role="user", content="Hi.")])
        rs = await asyncio.gather(*(m.chat(req) for _ in range(6)))
    return sum(r.ok for r in rs), stub.max_in_flight

with cluster_limits() as on:
    ok, peak = asyncio.run(main())
print(on, ok, peak, "ray" in sys.modules)
"""


def test_without_ray_the_limit_is_per_process_and_ray_is_not_imported() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", NO_RAY], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "6", "2", "False"]


def test_cluster_limit_state_needs_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(RuntimeError, match="Ray is not initialized"):
        cluster_limit_state("k", 1)
    with pytest.raises(ValueError, match="lease_s"), cluster_limits(lease_s=0):
        pass


# --- on a small local Ray instance -----------------------------------------------------------


def _calls_on_worker(spec: str, n_calls: int, cluster: bool) -> int:
    """``n_calls`` concurrent calls to ``spec`` on a Ray worker; returns how many succeeded."""

    async def go() -> int:
        m = get_model(spec)
        rs = await asyncio.gather(*(m.chat(_req()) for _ in range(n_calls)))
        return sum(r.ok for r in rs)

    if not cluster:
        return asyncio.run(go())
    with cluster_limits() as on:
        assert on
        return asyncio.run(go())


def test_tasks_sharing_a_backend_never_exceed_its_limit_together(ray_by_value: Any) -> None:
    ray = ray_by_value
    task = ray.remote(max_retries=0)(_calls_on_worker)
    with OpenAIStub(latency_s=0.3).in_thread() as stub:
        spec = f"openai/shared-{uuid.uuid4().hex[:6]}?base_url={stub.base_url}&max_concurrency=2"
        assert ray.get([task.remote(spec, 6, True) for _ in range(4)]) == [6] * 4
        assert stub.max_in_flight == 2 and len(stub.requests) == 24
    key = f"openai|{stub.base_url}|{spec.split('?')[0][7:]}"
    # a worker sends its releases without waiting for them: the last may land just after ray.get
    _wait_for(lambda: (cluster_limit_state(key, 2) or {}).get("in_use") == 0)
    state = cluster_limit_state(key, 2)
    assert state is not None and state["peak"] == 2 and state["in_use"] == 0 and state["reclaimed"] == 0
    # the same tasks without the cluster's limits: each worker allows 2, so together more
    with OpenAIStub(latency_s=0.3).in_thread() as stub:
        spec = f"openai/unshared?base_url={stub.base_url}&max_concurrency=2"
        assert ray.get([task.remote(spec, 6, False) for _ in range(4)]) == [6] * 4
        assert stub.max_in_flight > 2


def _raise_and_cancel_on_worker(key: str) -> list[tuple[int, int]]:
    """A call that raises and a call cancelled while waiting at the keeper; (in_use, waiting) seen."""

    def seen() -> tuple[int, int]:
        st = cluster_limit_state(key, 1)
        assert st is not None
        return st["in_use"], st["waiting"]

    async def go() -> list[tuple[int, int]]:
        a, b = InFlightLimit(1, key=key), InFlightLimit(1, key=key)  # two backends, one server
        out = []
        try:
            async with a():
                out.append(seen())
                raise ValueError("the server's answer broke the client")
        except ValueError:
            pass
        async with a():  # the slot came back
            waiter = asyncio.create_task(b().__aenter__())
            await asyncio.sleep(0.5)
            out.append(seen())  # b waits at the keeper, not here
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            _wait_for(lambda: seen() == (1, 0))
            out.append(seen())
        _wait_for(lambda: seen() == (0, 0))
        out.append(seen())
        return out

    with cluster_limits():
        return asyncio.run(go())


def test_a_call_that_raises_or_is_cancelled_gives_its_slot_back(ray_by_value: Any) -> None:
    ray = ray_by_value
    key = f"test|raise-{uuid.uuid4().hex[:6]}"
    seen = ray.get(ray.remote(max_retries=0)(_raise_and_cancel_on_worker).remote(key))
    assert seen == [(1, 0), (1, 1), (1, 0), (0, 0)]


def _die_holding_a_slot(key: str, lease_s: float) -> None:
    """Hold a slot past the lease (renewed, so kept), then die without releasing it."""

    async def go() -> None:
        async with InFlightLimit(1, key=key)():
            await asyncio.sleep(2.5 * lease_s)
            st = cluster_limit_state(key, 1)
            assert st is not None and st["in_use"] == 1 and st["reclaimed"] == 0
            os._exit(1)

    with cluster_limits(lease_s=lease_s):
        asyncio.run(go())


def test_a_dead_workers_slot_is_freed_after_its_lease(ray_by_value: Any) -> None:
    ray = ray_by_value
    key = f"test|dead-{uuid.uuid4().hex[:6]}"
    ref = ray.remote(max_retries=0)(_die_holding_a_slot).remote(key, 1.0)
    with pytest.raises(ray.exceptions.WorkerCrashedError):
        ray.get(ref)
    died = time.monotonic()

    def freed() -> bool:
        st = cluster_limit_state(key, 1)
        return st is not None and st["in_use"] == 0 and st["reclaimed"] == 1

    assert _wait_for(freed, timeout_s=15.0)
    assert time.monotonic() - died < 10.0


def test_a_keeper_that_died_comes_back_and_calls_go_on(ray_local: Any) -> None:
    ray = ray_local
    key = f"test|restart-{uuid.uuid4().hex[:6]}"
    lim = InFlightLimit(2, key=key)

    async def two_calls() -> None:
        async def call() -> None:
            async with lim():
                await asyncio.sleep(0.05)

        await asyncio.wait_for(asyncio.gather(call(), call()), timeout=60)

    with cluster_limits():  # the driver is a Ray process too
        asyncio.run(two_calls())
        st = cluster_limit_state(key, 2)
        assert st is not None and st["peak"] == 2
        ray.kill(ray.get_actor(keeper_name(key, 2), namespace="mafialab"), no_restart=False)
        asyncio.run(two_calls())  # served by the restarted keeper
    assert _wait_for(lambda: (cluster_limit_state(key, 2) or {}).get("in_use") == 0)
