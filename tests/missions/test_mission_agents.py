"""Mission games are played by LLM agents (mock backend), probed, with the same retry and fallback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafialab.agents import LLMAgent
from mafialab.agents._prompts import Renderer, decision_schema, load_prompt_pack
from mafialab.engine import GameState
from mafialab.harness import play_game
from mafialab.models import ChatRequest, MockModel
from mafialab.probes import make_probe_observer
from mafialab.record import PROBES_FILE, read_game, read_records
from mafialab.rules import BUILTIN
from mafialab.testing import schema_instance

MISSION = ["resistance5", "avalon5", "mafiascope-resistance"]


def _answer(request: ChatRequest) -> str:
    if request.json_schema is None:
        return "nothing to add"
    value = schema_instance(request.json_schema, request.messages[-1].content)
    if isinstance(value, dict) and "choice" in value:  # approve every team, then play the last card offered
        enum = request.json_schema["properties"]["choice"]["enum"]
        value["choice"] = "approve" if "approve" in enum else enum[-1]
    return json.dumps(value)


@pytest.mark.parametrize("name", MISSION)
async def test_a_mock_backend_plays_a_probed_mission_game(name: str, tmp_path: Path) -> None:
    rules = BUILTIN[name]
    model = MockModel(_answer, name="mock/m")
    agents = [LLMAgent(s, rules, 3, model) for s in range(rules.n_seats)]
    runner = make_probe_observer("light", agents, rules, 3, out=tmp_path)
    assert runner is not None
    res = await play_game(rules, agents, 3, out=tmp_path, observers=[runner])
    log = read_game(res.path)  # type: ignore[arg-type]
    assert log.header.rules_id == f"{name}-v1" and log.winner in ("town", "mafia")
    assert log.events[-1].reason in ("missions", "rejections", "assassination")
    assert not [e for e in log.events if getattr(e, "fallback", False)], "every mock answer is a legal move"
    kinds = {e.kind for e in log.events}
    assert {"team_pick", "team_proposal", "team_vote", "team_vote_tally"} <= kinds
    probes = list(read_records(res.path / PROBES_FILE))  # type: ignore[operator]
    assert {p["seat"] for p in probes} == set(range(5))
    assert all(p["role"] in {r.name for r in rules.roles} for p in probes)


def test_choice_answers_are_schema_checked_and_read() -> None:
    rules = BUILTIN["mafiascope-resistance"]
    st = GameState(rules, 1)
    while st.pending()[0].kind != "team_vote":
        d = st.pending()[0]
        from mafialab.engine import Action

        st.apply(Action(decision=d.id, seat=d.seat, target=d.options[0] if d.wants_target else None,
                        text="hi" if d.needs_text else None))  # fmt: skip
    d = st.pending()[0]
    schema = decision_schema(d, st.view(d.seat), 300)
    assert schema["properties"]["choice"]["enum"] == ["approve", "reject"] and "statement" in schema["required"]
    prompt = Renderer(load_prompt_pack("en"), rules).decision_prompt(d, st.view(d.seat), 300)
    assert "Alex proposes the team" in prompt and "approve" in prompt
    agent = LLMAgent(d.seat, rules, 1, MockModel(lambda r: "x", name="m"))
    from mafialab.models import ChatResponse

    view = st.view(d.seat)
    got = agent._interpret(d, view, ChatResponse(text="VOTE: Approve -- they look fine"))
    assert not isinstance(got, str) and got[0].choice == "approve" and got[0].text
    blank = agent._interpret(d, view, ChatResponse(text='{"choice": "maybe", "statement": "unsure"}'))
    assert not isinstance(blank, str) and blank[0].choice is None  # mafiascope-resistance: a blank vote rejects
    r5 = BUILTIN["resistance5"]
    d5 = d.model_copy(update={"no_vote": False, "needs_text": False})
    a5 = LLMAgent(d.seat, r5, 1, MockModel(lambda r: "x", name="m"))
    assert a5._interpret(d5, view, ChatResponse(text='{"choice": "maybe"}')) == "choice is not one of approve, reject"


async def test_an_unusable_choice_is_retried_then_falls_back(tmp_path: Path) -> None:
    rules = BUILTIN["resistance5"]

    def answer(request: ChatRequest) -> str:
        schema = request.json_schema or {}
        if "choice" in schema.get("properties", {}):
            return '{"choice": "perhaps"}'  # never usable
        return _answer(request)

    model = MockModel(answer, name="mock/bad")
    agents = [LLMAgent(s, rules, 2, model) for s in range(rules.n_seats)]
    res = await play_game(rules, agents, 2, out=tmp_path)
    log = read_game(res.path)  # type: ignore[arg-type]
    votes = [e for e in log.events if e.kind == "team_vote"]
    assert votes and all(v.fallback and v.choice in ("approve", "reject") for v in votes)
    assert log.winner in ("town", "mafia")


@pytest.mark.parametrize(("name", "word"), [("resistance5", "Mission"), ("avalon5", "Mission"), ("mafiascope7", "Day")])
def test_a_round_reads_as_the_rule_sets_word(name: str, word: str) -> None:
    """A mission game's round is a mission: its prompts, person questions and event text say so (lexicon.day)."""
    from mafialab.engine import Action
    from mafialab.remote._questions import person_questions

    rules = BUILTIN[name]
    assert rules.lexicon.day == word and ("day" in rules.lexicon.model_dump()) == (word != "Day")
    st = GameState(rules, 1)
    while st.pending()[0].kind != "speak" or st.pending()[0].phase != "day":
        d = st.pending()[0]
        st.apply(Action(decision=d.id, seat=d.seat, target=d.options[0] if d.wants_target else None,
                        text="hi" if d.needs_text else None, choice=d.choices[0] if d.choices else None))  # fmt: skip
    d = st.pending()[0]
    r = Renderer(load_prompt_pack("en"), rules)
    view = st.view(d.seat)
    assert r.decision_prompt(d, view, 300).startswith(f"{word} 1, discussion round 1: it is your turn to talk.")
    question = r.decision_prompt(d, view, 300, templates=person_questions())
    assert question.startswith(f"{word} 1, discussion round 1: your turn to talk.")
    context = "\n".join(m.content for m in r.context(view, 0)[0])
    assert f"[GAME] {word} 1 begins." in context and ("Day 1" in context) == (word == "Day")
