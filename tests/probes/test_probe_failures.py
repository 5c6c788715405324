"""Probe answers are never dropped without a word: a lone surrogate is recorded as U+FFFD; a failed task is logged and counted."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from mafialab.agents import ScriptedAgent
from mafialab.analysis import DEFAULT, compute_report, load_games
from mafialab.engine import Action, Decision, PlayerView
from mafialab.harness import play_game
from mafialab.models import ChatRequest, ChatResponse
from mafialab.probes import battery_from_dict, load_battery, make_probe_observer
from mafialab.rules import MAFIASCOPE7
from tests.llm_helpers import legal_answer, llm_agents

LONE = "\ud800"


def _lines(path: Path) -> list[dict[str, Any]]:
    """Every record of a JSONL file, read as strict UTF-8 (none may hold a lone surrogate)."""
    out = [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]
    for r in out:
        json.dumps(r, ensure_ascii=False).encode("utf-8")  # raises on a "\ud800" escape read back
    return out


def test_a_lone_surrogate_in_probe_answers_keeps_every_probe_record(tmp_path: Path):
    def answer(req: ChatRequest) -> Any:
        if req.purpose == "probe":  # the escape as a server's JSON holds it, and the character itself
            return '[{"player": "\\ud800", "note": "' + LONE + '"}]'
        return legal_answer(req)

    battery = load_battery("default")
    agents, _ = llm_agents(MAFIASCOPE7, 2, answer)
    runner = make_probe_observer(battery, agents, MAFIASCOPE7, 2, out=tmp_path, game_id="g")
    assert runner is not None
    res = asyncio.run(play_game(MAFIASCOPE7, agents, 2, out=tmp_path, game_id="g", observers=[runner]))
    assert res.winner is not None
    records = _lines(tmp_path / "g" / "probes.jsonl")
    assert len(records) == runner.calls == len(runner.records) > 0 and runner.failed == 0
    assert {r["probe_id"] for r in records} == {p.id for p in battery.probes}
    assert all(r["answer_raw"] == '[{"player": "\\ud800", "note": "\ufffd"}]' for r in records)
    assert all(r["answer_parsed"] == [{"player": "\ufffd", "note": "\ufffd"}] for r in records)
    probe_calls = [c for c in _lines(tmp_path / "g" / "calls.jsonl") if c.get("purpose") == "probe"]
    assert len(probe_calls) == len(records) and all(c["replaced_chars"] == 2 for c in probe_calls)


class _BuggyProber:
    """Plays like a scripted agent; its probe ``a`` returns ``None`` (a bug: not a ChatResponse)."""

    def __init__(self, seat: int):
        self.inner = ScriptedAgent(seat, MAFIASCOPE7, 7)
        self.label = "buggy-prober"

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        return await self.inner.decide(decision, view)

    async def probe(
        self, question: str, view: PlayerView, json_schema: Any, max_tokens: int, probe_id: str
    ) -> ChatResponse | None:
        return None if probe_id == "a" else ChatResponse(text='{"fine": true}', model="buggy-prober")


def test_a_probe_task_that_raises_is_logged_recorded_and_counted(tmp_path: Path, caplog):
    battery = battery_from_dict(
        {
            "after_each_round": False,
            "probes": [{"id": "a", "question": "A {player}"}, {"id": "b", "question": "B after {prev_a}"}],
        }
    )
    agents = [_BuggyProber(s) for s in range(MAFIASCOPE7.n_seats)]
    runner = make_probe_observer(battery, agents, MAFIASCOPE7, 7, out=tmp_path, game_id="g")
    assert runner is not None
    with caplog.at_level(logging.WARNING, logger="mafialab.probes"):
        res = asyncio.run(play_game(MAFIASCOPE7, agents, 7, out=tmp_path, game_id="g", observers=[runner]))
    assert res.winner is not None
    records = _lines(tmp_path / "g" / "probes.jsonl")
    a = [r for r in records if r["probe_id"] == "a"]
    b = [r for r in records if r["probe_id"] == "b"]
    assert a and len(a) == len(b)  # b, chained on a, goes on without a's answer
    assert all(r["answer_raw"] == "" and r["error"].startswith("probe task failed: AttributeError") for r in a)
    assert all(r["error"] is None and r["answer_parsed"] == {"fine": True} for r in b)
    assert runner.failed == len(a)
    said = [r.getMessage() for r in caplog.records if "probe task failed" in r.getMessage()]
    assert len(said) == len(a)
    assert said[0].startswith(f"game g seat {a[0]['seat']} probe a: the probe task failed (AttributeError")
    ins = compute_report(load_games(tmp_path), DEFAULT, resamples=10).model_dump(mode="json")["instrument"]
    assert ins["pooled"]["probe_failures"] == {"a": len(a)}
    assert ins["games"][0]["probe_failures"] == {"a": len(a)}
    assert ins["pooled"]["lost"]["transport_error"] == len(a)
