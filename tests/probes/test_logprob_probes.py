"""Log-probability probes (issue 36): the DSL, the runner's records, refusal, non-invasiveness, backends."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from mafialab.agents import LLMAgent, make_agent
from mafialab.harness import play_game
from mafialab.models import ChatRequest, MockModel, get_model
from mafialab.models._scoring import echo_logprob, softmax
from mafialab.probes import ProbeBatteryError, battery_from_dict, load_battery, make_probe_observer
from mafialab.record import GAME_FILE, PROBES_FILE, ProbeRecord, read_records, strip_clock
from mafialab.rules import MAFIASCOPE7, WEREWOLF7, RuleSet
from mafialab.testing import OpenAIStub, schema_instance

DATA = Path(__file__).parent.parent / "data" / "logprobs"


def _answer(req: ChatRequest) -> str:
    if req.json_schema is None:
        return "ok"
    return json.dumps(schema_instance(req.json_schema, salt=req.messages[-1].content + str(req.seed)))


def _logprobs(req: ChatRequest, candidates: list[str]) -> list[float]:
    """A deterministic score per candidate from the request's last message (known to the test)."""
    key = req.messages[-1].content
    return [-int(hashlib.sha256((key + c).encode()).hexdigest()[:4], 16) / 8000 for c in candidates]


def _agents(rules: RuleSet, seed: int, model: MockModel) -> list[LLMAgent]:
    return [LLMAgent(s, rules, seed, model) for s in range(rules.n_seats)]


def _game_lines(path: Path) -> list[dict[str, Any]]:
    recs = strip_clock(read_records(path / GAME_FILE))
    head = {k: v for k, v in recs[0].items() if k != "game_id"}
    head["meta"] = {k: v for k, v in head.get("meta", {}).items() if k != "probes"}
    status = recs[-1]  # its count of model calls includes the probe calls
    assert status["kind"] == "game_status"
    status = {**status, "detail": {k: v for k, v in status["detail"].items() if k != "calls"}}
    return [head, *recs[1:-1], status]


# --------------------------------------------------------------------------- the DSL


def test_the_built_in_battery_pairs_a_stated_and_a_logprob_question() -> None:
    b = load_battery("logprob-suspicion")
    stated, scored = b.probes
    assert (stated.kind, scored.kind) == ("answer", "logprob") and scored.candidates == "$others"
    assert stated.question.splitlines()[0] == scored.question.splitlines()[0]  # the same question
    assert not b.after_each_message and b.after_each_round and not b.night_actions


@pytest.mark.parametrize(
    ("probe", "field"),
    [
        ({"kind": "logprob"}, "probes[0].candidates: a logprob probe needs candidates"),
        ({"kind": "logprob", "candidates": "$nobody"}, "probes[0].candidates: expected $players, $others, $roles"),
        ({"kind": "logprob", "candidates": ["yes", "yes"]}, "probes[0].candidates: at least two different"),
        ({"kind": "logprob", "candidates": ["a", "b"], "schema": {"type": "string"}}, "probes[0].schema: a logprob"),
        ({"candidates": ["a", "b"]}, "probes[0].candidates: only a probe of kind logprob"),
    ],
)
def test_a_bad_logprob_probe_is_named_by_its_field(probe: dict[str, Any], field: str) -> None:
    with pytest.raises(ProbeBatteryError, match=field.replace("$", r"\$").replace("[", r"\[").replace("]", r"\]")):
        battery_from_dict({"probes": [{"id": "x", "question": "Who?", **probe}]}, source="b.yaml")


def test_first_token_and_kind_change_the_fingerprint_only_when_used() -> None:
    base = {"probes": [{"id": "x", "question": "Who?"}]}
    assert battery_from_dict(base).fingerprint() == battery_from_dict({**base, "first_token": False}).fingerprint()
    scored = {"probes": [{"id": "x", "question": "Who?", "kind": "logprob", "candidates": ["a", "b"]}]}
    assert battery_from_dict(scored).fingerprint() != battery_from_dict({**scored, "first_token": True}).fingerprint()


# --------------------------------------------------------------------------- a mock game


async def _mock_game(rules: RuleSet, seed: int, out: Path, battery: Any) -> tuple[Path, MockModel, list[ProbeRecord]]:
    model = MockModel(_answer, logprobs=_logprobs)
    agents = _agents(rules, seed, model)
    runner = make_probe_observer(battery, agents, rules, seed, out=out)
    res = await play_game(rules, agents, seed, out=out, observers=[runner] if runner else [])
    assert res.path is not None
    return res.path, model, list(runner.records) if runner else []


@pytest.mark.parametrize("rules", [MAFIASCOPE7, WEREWOLF7], ids=lambda r: r.name)
async def test_a_logprob_battery_leaves_the_game_byte_identical(rules: RuleSet, tmp_path: Path) -> None:
    plain, m0, _ = await _mock_game(rules, 5, tmp_path / "plain", None)
    probed, m1, recs = await _mock_game(rules, 5, tmp_path / "probed", "logprob-suspicion")
    assert _game_lines(plain) == _game_lines(probed)
    game0 = [r for r in m0.requests if r.purpose != "probe"]
    game1 = [r for r in m1.requests if r.purpose != "probe"]
    assert game0 == game1 and not m0.scored and m1.scored
    questions = {req.messages[-1].content for req, _ in m1.scored}
    assert not any(m.content in questions for r in game1 for m in r.messages)
    scored = [r for r in recs if r.probe_id == "suspect_logprob"]
    assert scored and len(scored) == len(m1.scored)
    for r in scored:
        assert r.error is None and r.scoring == "sequence" and r.answer_raw == ""
        assert r.distribution is not None and r.logprobs is not None
        assert abs(math.fsum(r.distribution.values()) - 1.0) <= 1e-9
        assert r.player not in r.distribution and len(r.distribution) >= 2  # $others: the alive others
        assert r.answer_parsed == max(r.distribution, key=r.distribution.__getitem__) and r.parse_ok
    # the recorded numbers are those the model gave, normalised by log-sum-exp
    (req, cands), rec = m1.scored[0], min(scored, key=lambda r: (r.after_seq, r.seat))
    got = {c: lp for c, lp in zip(cands, _logprobs(req, cands), strict=True)}
    first = [r for r in scored if r.logprobs == got]
    assert first and first[0].distribution == dict(zip(cands, softmax(list(got.values())), strict=True))
    assert rec.distribution is not None
    # the records read back from probes.jsonl as written
    back = [ProbeRecord.model_validate(x) for x in read_records(probed / PROBES_FILE)]

    def key(r: ProbeRecord) -> tuple[Any, ...]:
        return (r.after_seq, r.seat, r.position, r.distribution, r.logprobs, r.scoring, r.answer_parsed)

    assert sorted(map(key, back), key=str) == sorted(map(key, recs), key=str)


async def test_first_token_is_recorded_with_each_answer(tmp_path: Path) -> None:
    battery = battery_from_dict(
        {**load_battery("logprob-suspicion").model_dump(by_alias=True, exclude={"name"}), "first_token": True},
        name="lp-first",
    )
    _, _, recs = await _mock_game(WEREWOLF7, 2, tmp_path, battery)
    scored = [r for r in recs if r.probe_id == "suspect_logprob"]
    assert scored and all(r.scoring == "first_token" for r in scored)


# --------------------------------------------------------------------------- refusal


def test_a_seat_that_cannot_score_refuses_the_battery_before_the_game() -> None:
    rules = WEREWOLF7
    scripted = [make_agent("scripted", s, rules, 0) for s in range(rules.n_seats)]
    with pytest.raises(ProbeBatteryError, match=r"seat 0 \(scripted\) cannot answer them: it has no log-probabilities"):
        make_probe_observer("logprob-suspicion", scripted, rules, 0, out=None)
    no_scores = _agents(rules, 0, MockModel(_answer))
    with pytest.raises(ProbeBatteryError, match="mock/mock was given no logprobs"):
        make_probe_observer("logprob-suspicion", no_scores, rules, 0, out=None)
    assert make_probe_observer("suspicion", scripted, rules, 0, out=None) is not None  # text batteries still run


def test_an_openai_backend_set_to_no_scoring_is_refused() -> None:
    model = get_model("openai/m?base_url=http://127.0.0.1:9/v1&scoring=none")
    agents = _agents(WEREWOLF7, 0, model)  # type: ignore[arg-type]
    with pytest.raises(ProbeBatteryError, match="scoring=none"):
        make_probe_observer("logprob-suspicion", agents, WEREWOLF7, 0, out=None)


# --------------------------------------------------------------------------- a stand-in server

TABLE = {"Alex": -0.25, "Bailey": -1.0, "Casey": -2.5, "Dana": -0.75}


async def test_the_stub_server_gives_known_distributions_through_completions() -> None:
    async with OpenAIStub(logprobs=TABLE) as stub:
        model = get_model(f"openai/stub?base_url={stub.base_url}")
        req = ChatRequest(messages=[{"role": "user", "content": "Who is Mafia?"}], purpose="probe")
        got = await model.score_choices(req, ["Alex", "Bailey", "Casey"])  # type: ignore[attr-defined]
        assert got.error is None and got.method == "completions" and got.logprobs == [-0.25, -1.0, -2.5]
        want = [math.exp(x) / sum(math.exp(y) for y in (-0.25, -1.0, -2.5)) for x in (-0.25, -1.0, -2.5)]
        assert got.distribution() == pytest.approx(want, abs=1e-12)
        sent = [b for b in stub.requests if "prompt" in b]
        assert len(sent) == 3 and all(b["echo"] is True and b["logprobs"] == 1 for b in sent)
        assert sorted(b["prompt"].rsplit("Assistant: ", 1)[1] for b in sent) == ["Alex", "Bailey", "Casey"]


async def test_the_stub_server_gives_known_distributions_through_top_logprobs() -> None:
    async with OpenAIStub(logprobs=TABLE) as stub:
        model = get_model(f"openai/stub?base_url={stub.base_url}&scoring=top_logprobs")
        req = ChatRequest(messages=[{"role": "user", "content": "Who is Mafia?"}], purpose="probe")
        got = await model.score_choices(req, ["Dana", "Alex"])  # type: ignore[attr-defined]
        assert got.logprobs == [-0.75, -0.25] and got.scoring == "first_token"
        assert stub.requests[-1]["top_logprobs"] == 20 and stub.requests[-1]["max_tokens"] == 1
        missing = await model.score_choices(req, ["Alex", "Alex Smith"])  # type: ignore[attr-defined]
        assert missing.logprobs is None and "'Alex Smith' is not one of the 4 first-token alternatives" in (
            missing.error or ""
        )


async def test_a_chat_only_server_answers_an_error_not_a_distribution() -> None:
    async with OpenAIStub() as stub:  # no /v1/completions: HTTP 404
        model = get_model(f"openai/stub?base_url={stub.base_url}")
        req = ChatRequest(messages=[{"role": "user", "content": "Who?"}], purpose="probe")
        got = await model.score_choices(req, ["Alex", "Bailey"])  # type: ignore[attr-defined]
        assert got.logprobs is None and got.error is not None and got.error.startswith("HTTP 404")


# --------------------------------------------------------------------------- response fixtures


def test_vllm_documented_echo_response_is_read() -> None:
    """vLLM's legacy completions ``logprobs`` object (docs: Completions API, ``echo`` + ``logprobs``)."""
    body = json.loads((DATA / "vllm_completions_echo.json").read_text())
    choice = body["choices"][0]
    prefix = "User: Who is Mafia?\n\nAssistant:"
    prompt = prefix + " Bailey"
    # tokens: the prompt's (first has no logprob), then the generated one
    assert echo_logprob(choice["logprobs"], len(prefix), len(prompt), False) == pytest.approx(-1.25 + -0.5)
    assert echo_logprob(choice["logprobs"], len(prefix), len(prompt), True) == pytest.approx(-1.25)


def test_llama_cpp_python_recorded_echo_response_is_read() -> None:
    """An answer recorded live from ``python -m llama_cpp.server`` with the embedded SmolLM2 (tests/data/logprobs)."""
    rec = json.loads((DATA / "llama_cpp_python_completions_echo.json").read_text())
    body, prefix = rec["response"], rec["prefix"]
    prompt = rec["request"]["prompt"]
    lp = echo_logprob(body["choices"][0]["logprobs"], len(prefix), len(prompt), False)
    assert lp == pytest.approx(rec["candidate_logprob"], abs=1e-9) and lp < 0


async def test_recorded_llama_cpp_python_answers_served_again_give_their_distribution() -> None:
    rec = json.loads((DATA / "llama_cpp_python_completions_echo.json").read_text())
    answers = {rec["request"]["prompt"]: rec["response"]}
    answers.update({o["request"]["prompt"]: o["response"] for o in rec["others"].values()})
    want = {"Bailey": rec["candidate_logprob"], **{c: o["candidate_logprob"] for c, o in rec["others"].items()}}
    async with OpenAIStub(completions=lambda body: answers[body["prompt"]]) as stub:
        model = get_model(f"openai/smollm2?base_url={stub.base_url}")
        msgs = [
            {"role": "system", "content": "You play Mafia."},
            {
                "role": "user",
                "content": "Players: Alex, Bailey, Casey. Which player is most likely Mafia? Answer with the name only.",
            },
        ]
        got = await model.score_choices(ChatRequest(messages=msgs), ["Alex", "Bailey", "Casey"])  # type: ignore[attr-defined]
    assert got.error is None and got.logprobs == pytest.approx([want["Alex"], want["Bailey"], want["Casey"]], abs=1e-12)
    assert [b["prompt"] for b in stub.requests] == [rec["others"]["Alex"]["request"]["prompt"], rec["request"]["prompt"],
                                                   rec["others"]["Casey"]["request"]["prompt"]]  # fmt: skip


# --------------------------------------------------------------------------- retest


async def test_retest_of_a_logprob_battery_shows_a_zero_floor(tmp_path: Path) -> None:
    from mafialab.probes import logprob_retest_floor, run_retest
    from mafialab.record import RETEST_FILE, read_retests

    game, _, _ = await _mock_game(WEREWOLF7, 4, tmp_path / "game", "logprob-suspicion")
    model = MockModel(_answer, logprobs=_logprobs)
    n = await run_retest(
        game,
        tmp_path / "retest",
        points=3,
        repeats=3,
        battery="logprob-suspicion",
        build_agent=lambda spec, seat, rules, seed: LLMAgent(seat, rules, seed, model),
    )
    recs = read_retests([tmp_path / "retest" / RETEST_FILE])
    assert n == len(recs) > 0 and any(r.distribution for r in recs)
    floor = logprob_retest_floor(recs)
    assert floor is not None and floor["pairs"] > 0 and floor["flips"] == 0 and floor["max_tv"] == 0.0


def test_a_v3_probe_record_reads_without_a_distribution() -> None:
    from mafialab.record import SCHEMA_VERSION
    from mafialab.record._migrate import upgrade

    v3 = {"kind": "probe", "game_id": "g", "round": 1, "msg_index": -1, "seat": 0, "player": "Alex", "role": "Seer",
          "probe_id": "suspicion_ranking", "position": 0, "after_seq": 5, "question": "q", "answer_raw": "[]"}  # fmt: skip
    rec = ProbeRecord.model_validate(upgrade(dict(v3), 3, "probes.jsonl:1"))
    assert SCHEMA_VERSION == 4 and rec.distribution is None and rec.logprobs is None and rec.scoring is None
