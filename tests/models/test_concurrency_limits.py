"""The in-flight limit of a backend is the real limit, and game calls go before probe calls."""

import asyncio

import pytest

from mafialab.models import (
    DEFAULT_OPENAI_CONCURRENCY,
    PRIORITY_GAME,
    PRIORITY_PROBE,
    ChatMessage,
    ChatRequest,
    InFlightLimit,
    backend_status,
    get_model,
)
from mafialab.testing import OpenAIStub


def _req(text: str = "Hello.", purpose: str = "chat") -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content=text)], purpose=purpose)


async def test_default_limit_allows_more_than_sixteen_calls_in_flight():
    async with OpenAIStub(latency_s=0.2) as stub:
        m = get_model("openai/t", base_url=stub.base_url)
        rs = await asyncio.gather(*(m.chat(_req()) for _ in range(40)))
    assert all(r.ok for r in rs)
    assert m.max_concurrency == DEFAULT_OPENAI_CONCURRENCY >= 64  # type: ignore[attr-defined]
    assert stub.max_in_flight == 40


async def test_concurrency_argument_raises_the_backend_limit():
    async with OpenAIStub(latency_s=0.2) as stub:
        m = get_model(f"openai/t?base_url={stub.base_url}&max_concurrency=2", concurrency=3)
        assert m.max_concurrency == 2  # type: ignore[attr-defined]  # explicit cap in the string holds
        m = get_model(f"openai/t?base_url={stub.base_url}", concurrency=300)
        assert m.max_concurrency == 300  # type: ignore[attr-defined]
        rs = await asyncio.gather(*(m.chat(_req()) for _ in range(150)))
    assert all(r.ok for r in rs)
    assert stub.max_in_flight == 150  # beyond the default of 128


async def test_explicit_cap_in_the_model_string_is_kept_and_logged(caplog):
    async with OpenAIStub(latency_s=0.1) as stub:
        m = get_model(f"openai/t?base_url={stub.base_url}&max_concurrency=3", concurrency=8)
        await asyncio.gather(*(m.chat(_req()) for _ in range(8)))
    assert stub.max_in_flight == 3
    assert "max_concurrency=3 in the model string caps the 8 calls" in caplog.text


def test_backends_without_the_option_are_unchanged():
    m = get_model("mock/x", concurrency=64)  # the mock takes no max_concurrency
    assert m.name == "mock/x"
    caps = {b.provider: (b.max_concurrency, b.concurrency_option) for b in backend_status()}
    assert caps["openai"] == (DEFAULT_OPENAI_CONCURRENCY, True)
    assert caps["local"] == (1, False)
    assert caps["mock"] == (None, False)


async def test_waiting_game_calls_are_admitted_before_waiting_probe_calls():
    limit = InFlightLimit(1)
    order: list[str] = []
    release = asyncio.Event()

    async def call(name: str, prio: int, hold: bool = False) -> None:
        async with limit(prio):
            order.append(name)
            if hold:
                await release.wait()

    first = asyncio.create_task(call("game0", PRIORITY_GAME, hold=True))
    await asyncio.sleep(0)
    tasks = [asyncio.create_task(call(f"probe{i}", PRIORITY_PROBE)) for i in range(3)]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(call("game1", PRIORITY_GAME)))
    await asyncio.sleep(0)
    assert limit.waiting(PRIORITY_PROBE) == 3 and limit.waiting(PRIORITY_GAME) == 1
    release.set()
    await asyncio.gather(first, *tasks)
    assert order == ["game0", "game1", "probe0", "probe1", "probe2"]
    assert limit.peak() == 1 and limit.in_flight() == 0


async def test_a_cancelled_waiter_gives_its_place_back():
    limit = InFlightLimit(1)
    release = asyncio.Event()

    async def hold() -> None:
        async with limit():
            await release.wait()

    async def quick() -> str:
        async with limit():
            return "ran"

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    waiter = asyncio.create_task(quick())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    release.set()
    await holder
    assert limit.in_flight() == 0
    assert await asyncio.wait_for(quick(), 1) == "ran"  # no slot was lost to the cancelled waiter


async def test_openai_backend_serves_game_calls_first_when_full():
    async with OpenAIStub(latency_s=0.05) as stub:
        m = get_model("openai/t", base_url=stub.base_url, max_concurrency=1)
        first = asyncio.create_task(m.chat(_req("g0")))
        await asyncio.sleep(0.01)
        probes = [asyncio.create_task(m.chat(_req(f"p{i}", purpose="probe"))) for i in range(3)]
        await asyncio.sleep(0)
        game = asyncio.create_task(m.chat(_req("g1", purpose="speak")))
        await asyncio.gather(first, game, *probes)
    sent = [b["messages"][0]["content"] for b in stub.requests]
    assert sent == ["g0", "g1", "p0", "p1", "p2"]
