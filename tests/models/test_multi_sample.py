"""Several answers to one request: the server's ``n`` where the backend supports it, concurrent calls otherwise."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from mafialab.models import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    MockModel,
    complete_n,
    get_model,
    max_samples_per_request,
    sample_seed,
)
from mafialab.testing import OpenAIStub, schema_instance

SCHEMA = {
    "type": "object",
    "properties": {"target": {"type": "string", "enum": ["Alex", "Bailey", "Casey", "Drew", "Emery"]}},
    "required": ["target"],
    "additionalProperties": False,
}


def by_seed(body: dict[str, Any]) -> str:
    """A schema-valid answer that depends on the request's seed (so samples differ)."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    return json.dumps(schema_instance(schema, str(body.get("seed")))) if schema else "free text"


def _req(seed: int | None = 11) -> ChatRequest:
    return ChatRequest(messages=[ChatMessage(role="user", content="Vote.")], json_schema=SCHEMA, seed=seed)


@pytest.mark.parametrize(("k", "max_n"), [(12, 5), (7, 7), (3, 16), (1, 4)])
async def test_k_samples_take_ceil_k_over_max_n_requests(k: int, max_n: int) -> None:
    async with OpenAIStub(responder=by_seed) as stub:
        m = get_model("openai/s", base_url=stub.base_url, max_n=max_n)
        got = await complete_n(m, _req(), k)
    assert len(got) == k and all(r.ok and r.parsed["target"] in SCHEMA["properties"]["target"]["enum"] for r in got)
    assert len(stub.requests) == math.ceil(k / max_n) and stub.choices_sent == k
    sizes = [b.get("n", 1) for b in stub.requests]
    assert sizes == [min(max_n, k - i * max_n) for i in range(len(sizes))]
    # later requests carry the seed of their first sample, so chunks do not repeat each other
    assert [b["seed"] for b in stub.requests] == [sample_seed(11, i * max_n) for i in range(len(sizes))]
    if k >= 5:
        assert len({r.text for r in got}) > 1
    # usage is counted once per request, on its first answer
    assert sum(r.usage.prompt_tokens > 0 for r in got) == len(stub.requests)


async def test_a_server_that_ignores_n_gets_concurrent_calls_for_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    async with OpenAIStub(responder=by_seed, max_n=1) as stub:  # llama.cpp's server: n ignored
        m = get_model("openai/s", base_url=stub.base_url, max_n=4)
        got = await complete_n(m, _req(), 6)
        assert len(got) == 6 and all(r.ok for r in got)
        assert len(stub.requests) == 6 and m.n_supported is False  # type: ignore[attr-defined]
        assert [b.get("n", 1) for b in stub.requests] == [4, 1, 1, 1, 1, 1]
        # later calls go straight to single requests
        again = await complete_n(m, _req(5), 3)
    assert len(again) == 3 and len(stub.requests) == 9 and all("n" not in b for b in stub.requests[6:])
    assert sorted(b["seed"] for b in stub.requests[:6]) == sorted(sample_seed(11, i) for i in range(6))
    assert sum("does not draw n answers" in r.message for r in caplog.records) == 1


async def test_a_server_that_refuses_n_gets_concurrent_calls() -> None:
    async with OpenAIStub(responder=by_seed, reject_n=True) as stub:
        m = get_model("openai/s", base_url=stub.base_url, max_n=8)
        got = await complete_n(m, _req(), 5)
    assert len(got) == 5 and all(r.ok for r in got)
    assert len(stub.requests) == 1 + 5 and stub.requests[0]["n"] == 5
    assert {b["seed"] for b in stub.requests[1:]} == {sample_seed(11, i) for i in range(5)}


async def test_a_failed_request_fails_each_of_its_samples() -> None:
    async with OpenAIStub(responder=lambda body: (503, {"error": {"message": "overloaded"}})) as stub:
        m = get_model("openai/s", base_url=stub.base_url, max_n=4)
        got = await complete_n(m, _req(), 6)
    assert len(got) == 6 and all(r.error and "503" in r.error for r in got)
    assert len(stub.requests) == 2  # 4 + 2: a server error is not a refusal of n


async def test_max_n_one_never_sends_n() -> None:
    async with OpenAIStub(responder=by_seed) as stub:
        m = get_model("openai/s", base_url=stub.base_url, max_n=1)
        assert max_samples_per_request(m) == 1
        got = await complete_n(m, _req(), 3)
    assert len(got) == 3 and len(stub.requests) == 3 and all("n" not in b for b in stub.requests)
    with pytest.raises(Exception, match="option max_n=0: expected an integer >= 1"):
        get_model("openai/s", base_url="http://127.0.0.1:9/v1", max_n=0)


async def test_backends_without_chat_n_get_concurrent_single_calls() -> None:
    seen: list[int | None] = []

    def answer(req: ChatRequest) -> Any:
        seen.append(req.seed)
        if len(seen) == 2:
            raise RuntimeError("boom")
        return {"target": "Alex"}

    m = MockModel(answer)
    assert max_samples_per_request(m) == 1
    got = await complete_n(m, _req(), 3)
    assert [r.ok for r in got] == [True, False, True] and "RuntimeError: boom" in (got[1].error or "")
    assert seen == [sample_seed(11, i) for i in range(3)] and seen[0] == 11
    assert sample_seed(None, 3) is None
    with pytest.raises(ValueError, match="n: at least 1"):
        await complete_n(m, _req(), 0)


async def test_a_chat_n_that_loses_samples_is_an_error() -> None:
    class Short:
        name, context_window, calls_network, counts_tokens, max_n = "short/x", None, False, False, 4

        def count_tokens(self, text: str) -> int:
            return len(text)

        async def chat(self, request: ChatRequest) -> ChatResponse:
            return ChatResponse(text="{}")

        async def chat_n(self, request: ChatRequest, n: int) -> list[ChatResponse]:
            return [ChatResponse(text="{}")]

    assert max_samples_per_request(Short()) == 4
    with pytest.raises(RuntimeError, match="returned 1 answer for n = 3"):
        await complete_n(Short(), _req(), 3)
