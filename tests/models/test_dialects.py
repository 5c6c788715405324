"""Structured-output dialects of OpenAI-compatible servers: request shapes, auto choice, switching."""

import json

import pytest

from mafialab.agents import make_agent
from mafialab.harness import PreflightError, play_game
from mafialab.models import ChatMessage, ChatRequest, ModelSpecError, get_model
from mafialab.models._dialects import DIALECT_NAMES, DIALECTS, PROMPT_SCHEMA_NOTE, get_dialect, next_dialect
from mafialab.record import CALLS_FILE, iter_jsonl, read_game
from mafialab.rules import WEREWOLF7
from mafialab.testing import OpenAIStub

SCHEMA = {
    "type": "object",
    "properties": {"target": {"type": "string", "enum": ["Alex", "Bailey"]}},
    "required": ["target"],
    "additionalProperties": False,
}


def _req(schema=SCHEMA):
    return ChatRequest(messages=[ChatMessage(role="user", content="Vote.")], json_schema=schema, max_tokens=32)


def _completion(content, finish="stop"):
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"content": content, "role": "assistant"}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 13, "total_tokens": 53},
    }  # fmt: skip


# Recorded exchanges: the request fields each server documents for a JSON schema, and an
# answer in that server's response format (llama-cpp-python's were recorded from its 0.3
# server with SmolLM2-135M; the others follow the servers' documented examples).
EXCHANGES = [
    # OpenAI Chat Completions API (also vLLM, SGLang, llama-server, LM Studio, Ollama /v1)
    ("json_schema", {"response_format": {"type": "json_schema",
                                         "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True}}},
     _completion('{"target":"Bailey"}')),
    # llama-cpp-python server: response_format.type is text | json_object, with an optional schema
    ("json_object", {"response_format": {"type": "json_object", "schema": SCHEMA}},
     _completion('{ "target": "Alex"}')),
    # vLLM >= 0.10.2: extra parameter structured_outputs.json
    ("structured_outputs", {"structured_outputs": {"json": SCHEMA}}, _completion('{"target": "Alex"}')),
    # vLLM <= 0.11: extra parameter guided_json
    ("guided_json", {"guided_json": SCHEMA}, _completion('{"target": "Alex"}')),
    # Ollama's native request field
    ("format", {"format": SCHEMA}, _completion('{"target": "Alex"}')),
]  # fmt: skip


@pytest.mark.parametrize(("mode", "fields", "answer"), EXCHANGES, ids=[e[0] for e in EXCHANGES])
async def test_request_body_follows_each_servers_documented_shape(mode, fields, answer):
    async with OpenAIStub(responder=lambda body: answer) as stub:
        m = get_model("openai/m", base_url=stub.base_url, json_mode=mode, extra={"top_k": 5})
        r = await m.chat(_req())
    body = stub.requests[0]
    schema_fields = {"response_format", "structured_outputs", "guided_json", "format"}
    assert {k: v for k, v in body.items() if k in schema_fields} == fields  # exactly one dialect's field
    assert body["messages"] == [{"role": "user", "content": "Vote."}]  # the prompt is untouched
    assert body["top_k"] == 5 and body["max_tokens"] == 32  # user extras travel beside the dialect's field
    assert r.ok and r.parsed == json.loads(answer["choices"][0]["message"]["content"])


async def test_prompt_dialect_writes_the_schema_into_the_last_user_message():
    async with OpenAIStub() as stub:
        m = get_model("openai/m", base_url=stub.base_url, json_mode="prompt")
        r = await m.chat(_req())
    body = stub.requests[0]
    assert not {"response_format", "structured_outputs", "guided_json", "format"} & set(body)
    note = PROMPT_SCHEMA_NOTE.format(schema=json.dumps(SCHEMA))
    assert body["messages"][-1]["content"] == "Vote.\n\n" + note
    assert r.ok and r.parsed["target"] in ("Alex", "Bailey")


def test_json_mode_accepts_every_dialect_name_and_names_the_known_ones():
    for name in DIALECT_NAMES:
        assert get_model("openai/m", base_url="http://127.0.0.1:9/v1", json_mode=name).dialect == name
    assert get_model("openai/m", base_url="http://127.0.0.1:9/v1", json_mode="schema").dialect == "json_schema"
    assert get_model("openai/m", base_url="http://127.0.0.1:9/v1").json_mode == "auto"
    with pytest.raises(ModelSpecError, match=r"json_mode: expected auto or one of json_schema, json_object"):
        get_model("openai/m", base_url="http://127.0.0.1:9/v1", json_mode="grammar")
    assert [d.name for d in DIALECTS][-1] == "prompt" and next_dialect("prompt") is None
    assert next_dialect("json_schema") is get_dialect("json_object")


def test_dialect_schema_in_reads_back_what_apply_wrote():
    base = {"model": "m", "messages": [{"role": "user", "content": "Vote."}]}
    for d in DIALECTS:
        body = d.apply(base, SCHEMA)
        wire = {**{k: v for k, v in body.items() if k != "extra_body"}, **body.get("extra_body", {})}
        assert d.schema_in(wire) == SCHEMA, d.name
        others = [o for o in DIALECTS if o.name != d.name and o.field != d.field and o.field is not None]
        assert all(o.schema_in(wire) is None for o in others), d.name
    assert base == {"model": "m", "messages": [{"role": "user", "content": "Vote."}]}  # not mutated
    # a json_object answer format without our schema is not read as json_schema (and back)
    assert get_dialect("json_schema").schema_in({"response_format": {"type": "json_object", "schema": SCHEMA}}) is None


@pytest.mark.parametrize(
    ("server", "chosen"),
    [("openai", "json_schema"), ("vllm", "json_schema"), ("vllm-0.6", "json_schema"), ("sglang", "json_schema"),
     ("llama-cpp-python", "json_object"), ("ollama", "json_schema"), ("ollama-native-proxy", "format"),
     ("prompt-only", "prompt")],
)  # fmt: skip
async def test_auto_picks_the_first_dialect_the_server_answers_usably(server, chosen):
    async with OpenAIStub(server=server) as stub:
        m = get_model("openai/m", base_url=stub.base_url)
        choice = await m.negotiate(24)
        n_probes = len(stub.requests)
        again = await m.negotiate(24)
        r = await m.chat(_req())
    assert choice.usable and choice.dialect == chosen and m.dialect == chosen, choice.line()
    assert [name for name, _ in choice.tried] == list(DIALECT_NAMES[: DIALECT_NAMES.index(chosen) + 1])
    assert n_probes == len(choice.tried)  # one probe per dialect tried
    assert all(b["max_tokens"] == 24 for b in stub.requests[:n_probes])  # the run's cap
    probe_schema = get_dialect(chosen).schema_in(stub.requests[n_probes - 1])
    assert probe_schema["properties"]["target"]["enum"] == ["Alex", "Blair"]  # a two-name vote
    assert again is choice and len(stub.requests) == n_probes + 1  # reused, never probed twice
    assert r.ok and r.parsed["target"] in ("Alex", "Bailey")
    assert f"structured output as {chosen}" in choice.line()


async def test_llama_cpp_python_refusal_is_named_in_the_choice_line():
    async with OpenAIStub(server="llama-cpp-python") as stub:
        choice = await get_model("openai/m", base_url=stub.base_url).negotiate(32)
    name, outcome = choice.tried[0]
    assert name == "json_schema" and outcome.startswith("HTTP 500") and "response_format" in outcome


async def test_a_call_refused_for_its_dialect_switches_once_and_retries():
    async with OpenAIStub(server="llama-cpp-python") as stub:
        m = get_model("openai/m", base_url=stub.base_url)  # auto, not preflighted: starts at json_schema
        r1 = await m.chat(_req())
        r2 = await m.chat(_req())
    assert r1.ok and r2.ok and r1.parsed["target"] in ("Alex", "Bailey")
    kinds = [b["response_format"]["type"] for b in stub.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]  # refused, retried, remembered
    assert m.dialect == "json_object"


async def test_switching_happens_once_per_call_and_never_for_a_fixed_mode_or_other_errors():
    async with OpenAIStub(reject_schema=True) as stub:  # refuses every response_format
        m = get_model("openai/m", base_url=stub.base_url)
        r1 = await m.chat(_req())  # json_schema refused -> json_object refused: the call fails
        r2 = await m.chat(_req())  # json_object refused -> structured_outputs
    assert not r1.ok and "response_format" in r1.error and r2.ok
    assert m.dialect == "structured_outputs" and len(stub.requests) == 4
    async with OpenAIStub(server="llama-cpp-python") as stub:
        m = get_model("openai/m", base_url=stub.base_url, json_mode="json_schema")
        r = await m.chat(_req())
    assert not r.ok and r.error.startswith("HTTP 500") and len(stub.requests) == 1 and m.dialect == "json_schema"
    async with OpenAIStub(responder=lambda b: (500, {"error": {"message": "out of memory"}})) as stub:
        m = get_model("openai/m", base_url=stub.base_url)
        r = await m.chat(_req())
    assert r.error == "HTTP 500: out of memory" and len(stub.requests) == 1 and m.dialect == "json_schema"


async def test_server_usable_in_no_dialect_is_refused_with_one_line(tmp_path):
    rules = WEREWOLF7.model_copy(update={"round_cap": 1})
    async with OpenAIStub(responder=lambda b: "I would rather not say.") as stub:
        spec = f"openai/free-text?base_url={stub.base_url}"
        agents = [make_agent(spec, s, rules, 3) for s in range(rules.n_seats)]
        with pytest.raises(PreflightError) as err:
            await play_game(rules, agents, 3, out=tmp_path)
        assert len(stub.requests) == len(DIALECTS)
        assert not list(tmp_path.iterdir())  # nothing written
        res = await play_game(rules, agents, 3, out=tmp_path, allow_degraded=True)
    line = str(err.value)
    assert "\n" not in line and "no schema-valid answer at max_tokens=32" in line and "--allow-degraded" in line
    assert all(f"{name}: " in line for name in DIALECT_NAMES)
    assert res.degraded and res.fallbacks == res.decisions  # played anyway, marked degraded


async def test_unreachable_server_is_refused_without_trying_every_dialect(tmp_path):
    agents = [make_agent("openai/x?base_url=http://127.0.0.1:9/v1&timeout=2", s, WEREWOLF7, 1) for s in range(7)]
    with pytest.raises(PreflightError, match=r"did not answer a test call \(json_schema: APIConnectionError"):
        await play_game(WEREWOLF7, agents, 1, out=tmp_path, allow_degraded=True)


async def test_game_through_llama_cpp_python_emulation_loses_no_call_and_records_the_dialect(tmp_path):
    rules = WEREWOLF7.model_copy(update={"round_cap": 2})
    async with OpenAIStub(server="llama-cpp-python") as stub:
        spec = f"openai/smollm2?base_url={stub.base_url}&max_tokens=48"
        agents = [make_agent(spec, s, rules, 5) for s in range(rules.n_seats)]
        res = await play_game(rules, agents, 5, out=tmp_path)
        bodies = list(stub.requests)
    calls = [c for _, c in iter_jsonl(res.path / CALLS_FILE) if c["kind"] == "call"]
    assert calls and all(c["status"] == "ok" for c in calls), [c["error"] for c in calls if c["error"]]
    assert [b["response_format"]["type"] for b in bodies[:2]] == ["json_schema", "json_object"]  # preflight
    assert all(b["response_format"]["type"] == "json_object" for b in bodies[2:])  # every game call
    log = read_game(res.path)
    assert log.header.meta["structured_output"] == {"openai/smollm2": "json_object"}
    assert log.status is not None and log.status.detail["structured_output"] == {"openai/smollm2": "json_object"}
    assert res.fallbacks == 0 and not res.degraded
