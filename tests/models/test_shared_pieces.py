"""The pieces every layer shares: model strings, declared backend attributes, lenient JSON, call records."""

from __future__ import annotations

import math

import pytest

from mafialab.analysis._parse import repair_json, repair_json_reference
from mafialab.models import (
    CHARS_PER_TOKEN,
    CallRecord,
    ChatModel,
    ChatResponse,
    MockModel,
    ModelSpecError,
    Usage,
    estimate_tokens,
    get_model,
    parse_json_lenient,
    parse_model_spec,
)
from mafialab.record import Price, PriceTable


def test_model_strings_parse_once() -> None:
    assert parse_model_spec('openai/gpt-4o?max_tokens=64&base_url=http://h:1/v1&extra={"a":1}') == (
        "openai/gpt-4o",
        {"max_tokens": 64, "base_url": "http://h:1/v1", "extra": {"a": 1}},
    )
    for bad in ("gpt-4o", "/x", "mock/x?=&&"):
        with pytest.raises(ModelSpecError, match=r"^model: "):
            parse_model_spec(bad)
    with pytest.raises(ModelSpecError, match=r"^'openai/': the model string names no model after 'openai/'"):
        parse_model_spec("openai/")
    with pytest.raises(ModelSpecError, match=r"^'bogus/x\?a=1': unknown model provider 'bogus' \(providers: .*mock"):
        parse_model_spec("bogus/x?a=1")
    m = get_model("mock/x?context_window=2048&calls_network=true", context_window=99)
    assert (m.name, m.context_window, m.calls_network) == ("mock/x", 99, True)  # keyword options win


def test_backends_declare_network_and_token_counting() -> None:
    m = MockModel([])
    assert isinstance(m, ChatModel)
    assert (m.calls_network, m.counts_tokens) == (False, False)
    assert m.count_tokens("x" * 10) == estimate_tokens("x" * 10) == math.ceil(10 / CHARS_PER_TOKEN) == 4
    from mafialab.models._openai import OpenAIModel

    assert (OpenAIModel.calls_network, OpenAIModel.counts_tokens) == (True, False)


@pytest.mark.parametrize(
    ("text", "partial", "value"),
    [
        ('{"a": 1}', True, {"a": 1}),
        ("```json\n[1, 2]\n```", False, [1, 2]),
        ('Sure: {"a": "b"} hope that helps', True, {"a": "b"}),
        ("{'a': 1, 'b': [1, 2,]}", True, {"a": 1, "b": [1, 2]}),  # json-repair fixes quotes and commas
        ('[{"p": "A", "c": 50}, {"p": "B", "c": 7', True, [{"p": "A", "c": 50}, {"p": "B", "c": 7}]),
        ('[{"p": "A", "c": 50}, {"p": "B", "c": 7', False, [{"p": "A", "c": 50}]),  # half item dropped
        ('{"text": "cut off her', True, {"text": "cut off her"}),
        ('{"text": "cut off her', False, None),
        ("no json here", True, None),
        ("[", True, None),
    ],
)
def test_one_lenient_parser(text: str, partial: bool, value: object) -> None:
    got, ok, _ = parse_json_lenient(text, partial=partial)
    assert (got, ok) == (value, value is not None)
    if not partial:
        assert repair_json(text) == (value, value is not None)  # the default metrics method is this parser


def test_reference_rule_differs_only_where_documented() -> None:
    # MafiaScope: a closer that does not match the innermost open bracket makes the scan fail
    raw = '[{"p": "A"}, {"p": "B"]'
    assert repair_json(raw) == ([{"p": "A"}], True)
    assert repair_json_reference(raw) == ({"p": "A"}, True)


def test_one_price() -> None:
    p = Price(input=2.0, output=8.0, cached_input=0.5)
    assert p.cost(1000, 100, 400) == pytest.approx((600 * 2 + 400 * 0.5 + 100 * 8) / 1e6)
    assert p.cost(10, 0, 50) == pytest.approx(10 * 0.5 / 1e6)  # cached tokens never exceed the prompt
    table = PriceTable(prices={"openai/*": p})
    assert table.cost("openai/x", 1000, 100, 400) == round(p.cost(1000, 100, 400), 8)
    assert table.price("other/x") is None and PriceTable().cost("local/smollm2", 10**6, 10**6, None) == 0.0


def test_call_record_of_a_response() -> None:
    resp = ChatResponse(text="{}", usage=Usage(prompt_tokens=30, completion_tokens=5, cached_tokens=10), latency_s=0.25)
    rec = CallRecord.of_response(resp, seat=2, purpose="vote", model="mock/m", status="ok", decision=7)
    assert (rec.game_id, rec.prompt_tokens, rec.completion_tokens, rec.cached_tokens, rec.latency_ms) == (
        "",
        30,
        5,
        10,
        250,
    )
    assert rec.model_copy(update={"game_id": "g1"}).model_dump()["game_id"] == "g1"


@pytest.mark.parametrize(
    "text",
    [
        "NaN",
        '{"confidence": NaN}',
        '[{"player": "A", "score": Infinity}]',
        '{"score": -Infinity}',
        '{"score": 1e999}',  # overflows a float: infinite
        '```json\n{"confidence": NaN}\n```',
        'Sure: {"confidence": NaN, "player": "A"} ok',  # json-repair would keep the NaN
        '[{"p": "A", "c": NaN}, {"p": "B", "c": 7',
    ],
)
def test_nan_and_infinity_are_not_json_numbers(text: str) -> None:
    assert parse_json_lenient(text) == (None, False, False)
    assert parse_json_lenient(text, partial=False) == (None, False, False)
    assert repair_json(text) == (None, False)


async def test_a_backend_hands_no_parsed_value_for_an_answer_with_nan() -> None:
    from mafialab.models import ChatMessage, ChatRequest

    m = MockModel(['{"confidence": NaN}', '{"confidence": 40}'])
    req = ChatRequest(messages=[ChatMessage(role="user", content="q")], json_schema={"type": "object"})
    first, second = await m.chat(req), await m.chat(req)
    assert (first.text, first.parsed) == ('{"confidence": NaN}', None)
    assert second.parsed == {"confidence": 40}


def test_strict_loading_names_the_field_of_a_non_finite_number() -> None:
    from mafialab._json import NonFiniteNumber, loads_finite, nonfinite_path

    assert loads_finite('{"a": [1, 2.5, {"b": null}]}') == {"a": [1, 2.5, {"b": None}]}
    with pytest.raises(NonFiniteNumber) as err:
        loads_finite('{"answer": {"items": [1, {"confidence": -Infinity}]}}')
    assert (err.value.path, err.value.token) == (("answer", "items", 1, "confidence"), "-Infinity")
    assert str(err.value).startswith("$.answer.items[1].confidence: -Infinity is not a JSON number")
    assert err.value.message("body").startswith("body.answer.items[1].confidence:")
    with pytest.raises(NonFiniteNumber, match=r"^\$: NaN"):
        loads_finite(b"NaN")
    assert nonfinite_path([1.0, {"x": float("nan")}]) == (1, "x")
    assert nonfinite_path({"x": [1, 2.0, None, "NaN"]}) is None
