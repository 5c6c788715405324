"""Probes run beside the game: the game does not wait for them, answers come from frozen contexts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mafialab.agents import ScriptedAgent
from mafialab.engine import Decision, PlayerView
from mafialab.harness import play_game
from mafialab.models import ChatResponse
from mafialab.probes import _runner, make_probe_observer
from mafialab.probes._runner import GAME_FIRST_TICKS
from mafialab.record import PROBES_FILE, probe_sort_key, read_records
from mafialab.rules import MAFIASCOPE7, WEREWOLF7
from tests.llm_helpers import legal_answer, llm_agents


class GatedAgent(ScriptedAgent):
    """A scripted player whose probe answers wait for a gate (a slow probe backend)."""

    def __init__(self, seat: int, gate: asyncio.Event, counter: dict[str, int]):
        super().__init__(seat, WEREWOLF7, 3)
        self.gate = gate
        self.counter = counter

    async def decide(self, decision: Decision, view: PlayerView):  # type: ignore[no-untyped-def]
        self.counter["decisions"] += 1
        return await super().decide(decision, view)

    async def probe(  # type: ignore[override]
        self, question: str, view: PlayerView, json_schema: Any, max_tokens: int, probe_id: str
    ) -> ChatResponse:
        await self.gate.wait()
        return await super().probe(question, view, json_schema, max_tokens, probe_id)


def _answers(path: Path) -> list[tuple[Any, ...]]:
    recs = sorted((r for r in read_records(path / PROBES_FILE) if r.get("kind") == "probe"), key=probe_sort_key)
    return [(r["after_seq"], r["seat"], r["probe_id"], r["question"], r["answer_raw"]) for r in recs]


async def _play(out: Path, *, open_after: int | None, max_pending: int = 512) -> tuple[Path, dict[str, Any]]:
    gate = asyncio.Event()
    if open_after is None:
        gate.set()
    counter = {"decisions": 0}
    agents = [GatedAgent(s, gate, counter) for s in range(7)]
    runner = make_probe_observer("default", agents, WEREWOLF7, 3, out=out, max_pending=max_pending)
    assert runner is not None
    seen: dict[str, Any] = {}

    def on_batch(state: Any) -> None:
        if open_after is not None and counter["decisions"] >= open_after and not gate.is_set():
            seen["records_when_opened"] = len(runner.records)
            seen["pending_when_opened"] = runner.pending
            gate.set()

    res = await play_game(WEREWOLF7, agents, 3, out=out, observers=[runner], on_batch=on_batch)
    seen["peak_pending"] = runner.peak_pending
    seen["pending_at_end"] = runner.pending
    assert res.path is not None
    return res.path, seen


async def test_game_goes_on_while_probes_wait_and_answers_are_those_of_the_trigger(tmp_path: Path) -> None:
    base, _ = await _play(tmp_path / "sync", open_after=None)
    late, seen = await _play(tmp_path / "late", open_after=20)
    # twenty decisions were played while not one probe had been answered
    assert seen["records_when_opened"] == 0 and seen["pending_when_opened"] > 20
    assert seen["pending_at_end"] == 0  # the game's end waits for every answer
    # answered long after their triggers, from frozen copies: the same questions and answers
    assert _answers(late) == _answers(base) and len(_answers(base)) > 50
    assert (late / "game.jsonl").read_text().count("\n") == (base / "game.jsonl").read_text().count("\n")


async def test_back_pressure_holds_the_game_when_probes_fall_behind(tmp_path: Path) -> None:
    gate = asyncio.Event()
    counter = {"decisions": 0}
    agents = [GatedAgent(s, gate, counter) for s in range(7)]
    runner = make_probe_observer("default", agents, WEREWOLF7, 3, out=tmp_path, max_pending=10)
    assert runner is not None
    game = asyncio.create_task(play_game(WEREWOLF7, agents, 3, out=tmp_path, observers=[runner]))
    await asyncio.sleep(0.3)
    held = counter["decisions"]
    assert not game.done() and runner.records == []
    await asyncio.sleep(0.2)
    assert counter["decisions"] == held  # the game waits for the probes
    # it stopped at the first trigger past the bound (one trigger schedules at most 7 seats x 5 probes)
    assert 10 < runner.pending <= 10 + 7 * 5
    gate.set()
    res = await asyncio.wait_for(game, 60)
    assert res.winner is not None and runner.pending == 0
    assert runner.peak_pending <= 10 + 7 * 5


@pytest.mark.parametrize("ticks", [0, GAME_FIRST_TICKS])
async def test_the_game_s_next_call_leaves_before_the_probes_of_the_last_message(
    ticks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the probes of a speech are scheduled before the next decision; yielding a few loop
    # turns first, they let the game's call (the critical path) reach the backend first
    monkeypatch.setattr(_runner, "GAME_FIRST_TICKS", ticks)
    agents, model = llm_agents(MAFIASCOPE7, 0, lambda r: "[]" if r.purpose == "probe" else legal_answer(r))
    runner = make_probe_observer("suspicion", agents, MAFIASCOPE7, 0, out=None)
    await play_game(MAFIASCOPE7, agents, 0, observers=[runner] if runner else [])
    purposes = [r.purpose for r in model.requests]
    speaks = [i for i, p in enumerate(purposes) if p == "speak"]
    first_probe = purposes.index("probe")
    if ticks:
        assert speaks[:2] == [0, 1] and first_probe > 1
    else:  # without yielding, the seven probes of the first speech go before the second speech
        assert speaks[:2] == [0, first_probe + 7]
