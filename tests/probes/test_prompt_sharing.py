"""A battery's preamble: shared by every seat's probe calls at a trigger, before the private block."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mafialab.agents import ScriptedAgent, make_agent
from mafialab.engine import Action, GameState
from mafialab.harness import play_game
from mafialab.models import ChatRequest, ChatResponse, prompt_text
from mafialab.probes import ProbeBatteryError, ProbeRunner, load_battery, make_probe_observer, render_preamble
from mafialab.rules import MAFIASCOPE7, WEREWOLF7
from mafialab.testing import OpenAIStub
from tests.llm_helpers import legal_answer, llm_agents


def _answer(req: ChatRequest) -> Any:
    return "[]" if req.purpose == "probe" else legal_answer(req)


async def _probe_after_first_speech() -> tuple[GameState, list[ChatRequest], ProbeRunner, Any]:
    state = GameState(MAFIASCOPE7, 0)
    d = state.pending()[0]
    state.apply(Action(decision=d.id, seat=d.seat, text="hello"))
    agents, model = llm_agents(MAFIASCOPE7, 0, _answer)
    runner = ProbeRunner(load_battery("default"), agents, game_id="g")
    await runner.on_events(state.events[-1:], state)
    await runner.finish()
    return state, [r for r in model.requests if r.purpose == "probe"], runner, agents


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


async def test_every_seat_reads_the_preamble_after_the_transcript_and_before_its_private_block() -> None:
    state, reqs, runner, _ = await _probe_after_first_speech()
    bat = load_battery("default")
    alive = ", ".join(state.names[s] for s in range(7))
    preamble = render_preamble(bat, {"players": alive, "roles": "", "mafia_team": "Mafia"})
    assert alive in preamble and "{" not in preamble
    assert len(reqs) == 7 * 4 + 1
    prompts = [prompt_text(r.messages) for r in reqs]
    for req, prompt in zip(reqs, prompts, strict=True):
        seat = req.meta["seat"]
        ctx = req.messages[-2].content
        # public transcript, then the preamble, then this seat's own block; the question is last
        assert (
            ctx.index("Transcript so far:") < ctx.index(preamble) < ctx.index(f"Private to you ({state.names[seat]})")
        )
        assert prompt.count(preamble) == 1 and preamble not in req.messages[-1].content
        for other in range(7):  # no other seat's private block or role
            if other != seat:
                assert f"Private to you ({state.names[other]})" not in prompt
                assert f"You are {state.names[other]}." not in prompt
    # every probe call of the trigger shares its prompt at least up to the end of the preamble
    upto = min(p.index(preamble) + len(preamble) for p in prompts)
    assert all(_common(prompts[0], p) >= upto for p in prompts[1:])
    # the record keeps what the agent was asked: preamble, blank line, question
    rec = next(r for r in runner.records if r.probe_id == "suspicion_ranking")
    assert rec.question.startswith(preamble + "\n\n") and reqs[0].messages[-1].content in {
        r.question.split("\n\n", 1)[1] for r in runner.records
    }


async def test_game_decisions_carry_no_preamble_and_are_the_same_with_and_without_probes(tmp_path: Path) -> None:
    models = []
    for probes in ("default", "none"):
        agents, model = llm_agents(WEREWOLF7, 5, _answer)
        runner = make_probe_observer(probes, agents, WEREWOLF7, 5, out=None, game_id="g")
        await play_game(WEREWOLF7, agents, 5, observers=[runner] if runner else [])
        models.append(model)
    first = load_battery("default").preamble.splitlines()[0]
    decisions = [prompt_text(r.messages) for r in models[0].requests if r.purpose != "probe"]
    assert decisions and all(first not in p for p in decisions)
    assert decisions == [prompt_text(r.messages) for r in models[1].requests if r.purpose != "probe"]
    probes = [prompt_text(r.messages) for r in models[0].requests if r.purpose == "probe"]
    assert len(probes) > 100 and all(first in p for p in probes)


async def test_an_agent_without_the_preamble_parameter_gets_it_before_the_question() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    class Plain:
        label = "plain"

        async def probe(self, question, view, json_schema, max_tokens, probe_id):  # type: ignore[no-untyped-def]
            asked.append((question, {}))
            return ChatResponse(text="[]")

    class Keyword:
        label = "keyword"

        async def probe(self, question, view, json_schema, max_tokens, probe_id, **kw):  # type: ignore[no-untyped-def]
            asked.append((question, kw))
            return ChatResponse(text="[]")

    state = GameState(MAFIASCOPE7, 0)
    d = state.pending()[0]
    state.apply(Action(decision=d.id, seat=d.seat, text="hello"))
    bat = load_battery("suspicion")
    runner = ProbeRunner(bat, [Plain() if s % 2 else Keyword() for s in range(7)], game_id="g")
    await runner.on_events(state.events[-1:], state)
    await runner.finish()
    assert len(asked) == 7
    preambles = {kw.get("preamble") for _, kw in asked if kw}
    assert len(preambles) == 1  # one text for every seat at the trigger
    (pre,) = preambles
    assert pre and pre.startswith("A private question follows")
    for question, kw in asked:
        if kw:
            assert not question.startswith(pre)
        else:
            assert question.startswith(pre + "\n\n")


@pytest.mark.parametrize(
    ("preamble", "needle"),
    [
        ("You are {player}.", "preamble: placeholder {player} is not allowed there"),
        ("Alive but you: {others}", "preamble: placeholder {others} is not allowed there"),
        ("Before: {last_p}", "preamble: placeholder {last_p} is not allowed there"),
        ("JSON {", "preamble: not a valid template"),
    ],
)
def test_a_preamble_with_seat_specific_fields_is_refused(tmp_path: Path, preamble: str, needle: str) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump({"preamble": preamble, "probes": [{"id": "p", "question": "Q"}]}), "utf-8")
    with pytest.raises(ProbeBatteryError) as exc:
        load_battery(path)
    assert needle in str(exc.value) and str(exc.value).startswith(f"{path}: ")


def test_a_battery_without_preamble_keeps_its_fingerprint(tmp_path: Path) -> None:
    doc = {"probes": [{"id": "p", "question": "Who? {players}"}]}
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(doc), "utf-8")
    plain = load_battery(path)
    # the hash over the fields the battery had before it had a preamble
    import hashlib

    skip = {"description": True, "preamble": True, "first_token": True, "probes": {0: {"kind", "candidates"}}}
    body = plain.model_dump_json(exclude=skip, by_alias=True)  # (fields of logprob probes came later too)
    assert plain.fingerprint() == f"b:{hashlib.sha256(body.encode()).hexdigest()[:8]}"
    # the value mafialab gave this battery before batteries had a preamble
    assert plain.fingerprint() == "b:10c8d6fa"
    path.write_text(yaml.safe_dump({**doc, "preamble": "Alive: {players}"}), "utf-8")
    assert load_battery(path).fingerprint() != plain.fingerprint()


async def test_scripted_answers_do_not_depend_on_the_preamble() -> None:
    state = GameState(MAFIASCOPE7, 0)
    d = state.pending()[0]
    state.apply(Action(decision=d.id, seat=d.seat, text="hello"))
    agent = ScriptedAgent(3, MAFIASCOPE7, 0)
    view = state.view(3)
    a = await agent.probe("Q", view, None, 10, "suspicion_ranking")
    b = await agent.probe("Q", view, None, 10, "suspicion_ranking", preamble="anything")
    assert a.text == b.text and a.parsed == b.parsed


async def test_the_benchmark_game_shares_nine_tenths_of_its_prompt_characters(tmp_path: Path) -> None:
    # benchmarks/throughput.py's game (mafiascope7, seed 0, default battery, every seat on the
    # OpenAI-compatible stub): issue 14's target for the share in calls.jsonl's closing summary
    async with OpenAIStub() as stub:
        spec = f"openai/stub?base_url={stub.base_url}"
        agents = [make_agent(spec, s, MAFIASCOPE7, 0) for s in range(7)]
        runner = make_probe_observer("default", agents, MAFIASCOPE7, 0, out=tmp_path)
        res = await play_game(MAFIASCOPE7, agents, 0, out=tmp_path, observers=[runner] if runner else [])
    summary = res.call_summary
    assert summary is not None and summary.calls > 800 and summary.shared_prefix_share is not None
    assert summary.shared_prefix_share >= 0.9, summary.line()
