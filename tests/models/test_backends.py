import asyncio
import logging

import pytest

from mafialab.agents import make_llm_agent
from mafialab.models import (
    ChatMessage,
    ChatRequest,
    ModelPool,
    ModelSpecError,
    backend_status,
    get_model,
    parse_json,
)
from mafialab.models._local import locate_weights, merge_same_role
from mafialab.record import PriceTable, load_prices
from mafialab.rules import load_rules
from mafialab.testing import OpenAIStub, schema_instance

SCHEMA = {
    "type": "object",
    "properties": {"target": {"type": "string", "enum": ["Alex", "Bailey"]}},
    "required": ["target"],
    "additionalProperties": False,
}


def _req(schema=SCHEMA, **kw):
    return ChatRequest(messages=[ChatMessage(role="user", content="Vote.")], json_schema=schema, **kw)


async def test_openai_sends_json_schema_and_parses(monkeypatch):
    monkeypatch.setenv("TEST_KEY", "sk-secret-123")
    async with OpenAIStub() as stub:
        m = get_model("openai/tiny", base_url=stub.base_url, api_key_env="TEST_KEY", max_tokens=7, temperature=0.3,
                      extra={"reasoning_effort": "low"})  # fmt: skip
        r = await m.chat(_req(seed=5))
    assert r.ok and r.parsed in ({"target": "Alex"}, {"target": "Bailey"})
    body = stub.requests[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert body["max_tokens"] == 7 and body["temperature"] == 0.3 and body["seed"] == 5
    assert body["reasoning_effort"] == "low"  # extra request fields go into the body
    assert stub.headers[0]["authorization"] == "Bearer sk-secret-123"
    assert "sk-secret" not in repr(m)


async def test_openai_429_retried_with_backoff():
    async with OpenAIStub(rate_limit_first=2) as stub:
        m = get_model("openai/tiny", base_url=stub.base_url, backoff_s=0.01)
        r = await m.chat(_req())
    assert r.ok and len(stub.requests) == 3
    async with OpenAIStub(rate_limit_first=10) as stub:
        m = get_model("openai/tiny", base_url=stub.base_url, rate_limit_retries=1, backoff_s=0.01)
        r = await m.chat(_req())
    assert not r.ok and r.error_kind == "rate_limit" and len(stub.requests) == 2


async def test_openai_reasoning_kept_apart_and_usage():
    def responder(body):
        return {
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": '{"target": "Bailey"}', "reasoning_content": "Alex seems town."}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 9, "total_tokens": 109,
                      "prompt_tokens_details": {"cached_tokens": 64}},
        }  # fmt: skip

    async with OpenAIStub(responder=responder) as stub:
        r = await get_model("openai/t", base_url=stub.base_url).chat(_req())
    assert r.text == '{"target": "Bailey"}' and r.reasoning == "Alex seems town."
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.cached_tokens) == (100, 9, 64)

    async with OpenAIStub(responder=lambda b: '<think>hmm</think>{"target": "Alex"}') as stub:
        r = await get_model("openai/t", base_url=stub.base_url).chat(_req())
    assert r.parsed == {"target": "Alex"} and r.reasoning == "hmm" and "think" not in r.text


async def test_openai_errors_are_values_and_key_never_logged(monkeypatch, caplog):
    monkeypatch.setenv("K", "sk-do-not-log")
    caplog.set_level(logging.DEBUG)
    m = get_model("openai/t", base_url="http://127.0.0.1:9/v1", api_key_env="K", timeout=2)
    r = await m.chat(_req())
    assert not r.ok and r.error_kind == "transport" and r.text == ""
    async with OpenAIStub(responder=lambda b: (500, {"error": {"message": "boom"}})) as stub:
        r = await get_model("openai/t", base_url=stub.base_url, api_key_env="K").chat(_req())
    assert r.error == "HTTP 500: boom"
    async with OpenAIStub(responder=lambda b: "") as stub:
        r = await get_model("openai/t", base_url=stub.base_url).chat(_req())
    assert r.error_kind == "empty"
    assert "sk-do-not-log" not in caplog.text


async def test_openai_uses_the_sdks_aiohttp_transport_and_names_errors_as_httpx_does():
    openai = pytest.importorskip("openai")
    if getattr(openai, "DefaultAioHttpClient", None) is None:
        pytest.skip("this openai SDK has no aiohttp transport")
    try:
        openai.DefaultAioHttpClient()
    except RuntimeError:
        pytest.skip("openai's aiohttp extra is not installed")
    async with OpenAIStub(latency_s=1.0) as stub:
        m = get_model("openai/t", base_url=stub.base_url, timeout=0.2)
        assert isinstance((await m._client())._client, openai.DefaultAioHttpClient)
        slow = await m.chat(_req())
    refused = await get_model("openai/t", base_url="http://127.0.0.1:9/v1", timeout=2).chat(_req())
    assert refused.error == "APIConnectionError: Connection error."  # as the httpx transport says it
    assert slow.error == "APITimeoutError: Request timed out."  # a real timeout stays one


def test_the_aiohttp_session_is_closed_when_its_event_loop_ends():
    openai = pytest.importorskip("openai")
    aiohttp = pytest.importorskip("aiohttp")
    if getattr(openai, "DefaultAioHttpClient", None) is None:
        pytest.skip("this openai SDK has no aiohttp transport")
    stub = OpenAIStub()

    async def one_call(m):
        return await m.chat(_req()), await m._client()

    with stub.in_thread():
        m = get_model("openai/t", base_url=stub.base_url)
        first, client = asyncio.run(one_call(m))
        second, again = asyncio.run(one_call(m))  # a new loop: a new client, the first stays closed
    session = client._client._transport.client
    assert first.ok and second.ok and again is not client
    assert isinstance(session, aiohttp.ClientSession) and session.closed  # no "Unclosed client session"
    assert again._client._transport.client.closed


async def test_openai_in_flight_limit():
    async with OpenAIStub(latency_s=0.05) as stub:
        m = get_model("openai/t", base_url=stub.base_url, max_concurrency=3)
        rs = await asyncio.gather(*(m.chat(_req()) for _ in range(10)))
    assert all(r.ok for r in rs) and stub.max_in_flight == 3


def test_openai_options_checked(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY"):
        get_model("openai/gpt-4o-mini")
    with pytest.raises(ModelSpecError, match="unknown option 'bse_url'"):
        get_model("openai/x", bse_url="http://h/v1")
    with pytest.raises(ModelSpecError, match="provider/model"):
        get_model("gpt-4o")


def test_pool_shares_instances():
    pool = ModelPool()
    a = pool.get("mock/a")
    assert pool.get("mock/a") is a and pool.get("mock/b") is not a


def test_backend_status_lists_all():
    st = {b.provider: b for b in backend_status()}
    assert {"mock", "openai", "local"} <= set(st)
    assert st["mock"].usable


@pytest.mark.parametrize(
    ("text", "value", "repaired"),
    [
        ('{"a": 1}', {"a": 1}, False),
        ('```json\n{"a": 1}\n```', {"a": 1}, True),
        ('Sure: {"a": "b"} hope that helps', {"a": "b"}, True),
        ('{"text": "cut off her', {"text": "cut off her"}, True),
        ("no json here", None, True),
        ("", None, False),
    ],
)
def test_parse_json(text, value, repaired):
    assert parse_json(text) == (value, repaired)


def test_schema_instance_is_valid():
    v = schema_instance(
        {"type": "object", "properties": {"t": {"enum": ["a", "b"]}, "s": {"type": "string", "maxLength": 5}}}
    )
    assert v["t"] in ("a", "b") and len(v["s"]) <= 5


def test_merge_same_role():
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert merge_same_role(msgs) == [{"role": "system", "content": "s"}, {"role": "user", "content": "a\n\nb"}]


def test_local_unknown_model_and_option():
    with pytest.raises(ModelSpecError, match="unknown embedded model 'gpt5'"):
        locate_weights("gpt5")
    with pytest.raises(ModelSpecError, match="unknown option 'ctx'"):
        get_model("local/smollm2", ctx=10)


def test_price_table(tmp_path):
    t = PriceTable()
    assert t.cost("local/smollm2", 1000, 100, None) == 0.0 and t.cost("openai/x", 1, 1, None) is None
    f = tmp_path / "p.yaml"
    f.write_text("openai/gpt-4o-mini: {input: 0.15, output: 0.6, cached_input: 0.075}\n")
    t = load_prices(f)
    # (1e6 - 2e5) * 0.15 + 2e5 * 0.075 + 1e5 * 0.6, per million
    assert t.cost("openai/gpt-4o-mini", 1_000_000, 100_000, 200_000) == pytest.approx(0.12 + 0.015 + 0.06)
    f.write_text("openai/x: {input: -1, output: 0}\n")
    with pytest.raises(ValueError, match=r"openai/x\.input"):
        load_prices(f)


RULES = load_rules("werewolf7")


def test_mock_outputs_string_refused() -> None:
    # malformed JSON in the spec stays a string; iterating it would script one character per call
    with pytest.raises(ModelSpecError, match=r"^outputs: "):
        make_llm_agent("mock/x?outputs=[1,2", 0, RULES, 1)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openai/x?max_concurrency=abc", "openai/x: option max_concurrency='abc': expected an integer"),
        ("openai/x?timeout=", "openai/x: option timeout='': expected a number"),
        ("openai/x?max_n=2.5", "openai/x: option max_n=2.5: expected an integer"),
        ("openai/x?timeout=-1", "openai/x: option timeout=-1: expected seconds > 0"),
        ("openai/x?timeout=0", "openai/x: option timeout=0: expected seconds > 0"),
        ("openai/x?timeout=nan", "openai/x: option timeout='nan': expected a finite number"),
        ("openai/x?timeout=NaN", "openai/x: option timeout=nan: expected a finite number"),
        ("openai/x?timeout=inf", "openai/x: option timeout='inf': expected a finite number"),
        ("openai/x?timeout=1e999", "openai/x: option timeout=inf: expected a finite number"),
        ("openai/x?backoff_s=-0.5", "openai/x: option backoff_s=-0.5: expected seconds >= 0"),
        ("openai/x?max_concurrency=0", "openai/x: option max_concurrency=0: expected an integer >= 1"),
        ("openai/x?rate_limit_retries=-1", "openai/x: option rate_limit_retries=-1: expected an integer >= 0"),
        ("bus/k?base_url=http://h&timeout=-1", "bus/k: option timeout=-1: expected seconds > 0"),
        ("bus/k?base_url=http://h&timeout=inf", "bus/k: option timeout='inf': expected a finite number"),
    ],
)
def test_a_bad_numeric_option_value_is_named_with_its_option(monkeypatch, spec, message):
    # not a number, or a number out of the option's range
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(ModelSpecError) as err:
        get_model(spec)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("spec", "option"),
    [
        ("openai/x?timeout=-1", "timeout"),
        ("openai/x?timeout=abc", "timeout"),
        ("openai/x?max_n=0", "max_n"),
        ("openai/x?max_concurrency=0", "max_concurrency"),
        ("openai/x?json_mode=bogus", "json_mode"),
        ("openai/x?nope=1", "nope"),
        ("bus/k?base_url=http://h&token_env=UNSET_TOKEN_VAR&max_concurrency=0", "max_concurrency"),
    ],
)
def test_a_bad_option_is_reported_before_a_missing_credential(monkeypatch, spec, option):
    # the user fixes the string first; a missing key said nothing about the typo
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("UNSET_TOKEN_VAR", raising=False)
    with pytest.raises(ModelSpecError) as err:
        get_model(spec)
    assert option in str(err.value)
    assert "OPENAI_API_KEY" not in str(err.value) and "UNSET_TOKEN_VAR" not in str(err.value)


def test_a_good_string_without_a_key_still_names_the_missing_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="api_key_env: environment variable OPENAI_API_KEY is not set"):
        get_model("openai/x?timeout=30&max_n=4")


def test_numeric_option_strings_reach_the_backend_as_numbers(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    m = get_model("openai/x?max_concurrency=7&timeout=2.5")
    assert m.max_concurrency == 7
