"""The Werewolf skins and the TextArena rule set play and are probed like ``mafiascope7``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafialab.agents import LLMAgent
from mafialab.harness import play_game
from mafialab.models import ChatRequest, MockModel
from mafialab.probes import make_probe_observer
from mafialab.record import PROBES_FILE, read_game, read_records
from mafialab.rules import BUILTIN, MAFIASCOPE7, load_rules
from mafialab.testing import schema_instance

NEW = ["mafiascope7-werewolf", "mafiascope7-werewolf-seer", "secretmafia6"]


def _answer(request: ChatRequest) -> str:
    # schema-valid JSON that differs with the prompt, so targets vary from call to call
    if request.json_schema is None:
        return "nothing to add"
    return json.dumps(schema_instance(request.json_schema, request.messages[-1].content))


@pytest.mark.parametrize("name", NEW)
async def test_a_mock_backend_plays_a_probed_game(name: str, tmp_path: Path) -> None:
    rules = load_rules(name)
    model = MockModel(_answer, name="mock/m")
    agents = [LLMAgent(s, rules, 3, model) for s in range(rules.n_seats)]
    runner = make_probe_observer("light", agents, rules, 3, out=tmp_path)
    assert runner is not None
    res = await play_game(rules, agents, 3, out=tmp_path, observers=[runner])
    assert res.path is not None
    log = read_game(res.path)
    assert log.header.rules_id == f"{name}-v1" and log.winner in ("town", "mafia")
    assert not [e for e in log.events if getattr(e, "fallback", False)], "every mock answer is a legal move"
    probes = list(read_records(res.path / PROBES_FILE))
    # the light battery asks every seat alive at the end of round 1 (at least) once
    alive_r1 = set(range(rules.n_seats)) - {e.seat for e in log.events if e.kind == "elimination" and e.round <= 1}
    assert alive_r1 <= {p["seat"] for p in probes}
    assert all(p["role"] in {r.name for r in rules.roles} for p in probes)


def test_the_werewolf_skin_changes_words_only() -> None:
    skin, seer = BUILTIN["mafiascope7-werewolf"], BUILTIN["mafiascope7-werewolf-seer"]
    words = {"name", "description", "roles", "lexicon"}
    assert skin.model_dump(exclude=words) == MAFIASCOPE7.model_dump(exclude=words)
    assert [(r.count, r.team, r.ability) for r in skin.roles] == [
        (r.count, r.team, r.ability) for r in MAFIASCOPE7.roles
    ]
    assert [r.name for r in skin.roles] == ["Werewolf", "Guardian", "Villager"]
    assert skin.lexicon.mafia_team == "Werewolves" and skin.lexicon.game == "Werewolf"
    # the Seer variant: one Villager becomes a Seer with a private evidence channel, nothing else changes
    assert seer.model_dump(exclude={"name", "description", "roles"}) == skin.model_dump(
        exclude={"name", "description", "roles"}
    )
    assert {r.name: r.count for r in seer.roles} == {"Werewolf": 2, "Guardian": 1, "Seer": 1, "Villager": 3}
    assert seer.role("Seer").ability == "investigate" and seer.night.investigate_result == "team"


async def test_the_seers_evidence_reaches_the_seer_alone(tmp_path: Path) -> None:
    from mafialab.agents import make_agent
    from mafialab.engine import visible_events

    rules = BUILTIN["mafiascope7-werewolf-seer"]
    agents = [make_agent("scripted", s, rules, 5) for s in range(rules.n_seats)]
    res = await play_game(rules, agents, 5, out=tmp_path)
    log = read_game(res.path)  # type: ignore[arg-type]
    seer = next(s.seat for s in log.header.roster if s.role == "Seer")
    results = [e for e in log.events if e.kind == "investigation_result"]
    assert results and all(e.seat == seer for e in results)
    for s in range(rules.n_seats):
        seen = [e for e in visible_events(log.events, s) if e.kind == "investigation_result"]
        assert seen == (results if s == seer else [])
