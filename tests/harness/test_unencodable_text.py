"""A lone surrogate ("\\ud800", valid JSON) in an answer never ends a game: it is logged as U+FFFD and counted."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from mafialab.agents import ScriptedAgent
from mafialab.engine import Action, Decision, PlayerView
from mafialab.harness import play_game
from mafialab.models import ChatRequest
from mafialab.record import read_game
from mafialab.rules import MAFIASCOPE7
from tests.llm_helpers import legal_answer, llm_agents

LONE = "\ud800"


def _with_lone_surrogate(form: str):
    """Legal answers whose speech and vote statement hold a lone surrogate.

    ``escaped``: a dict the mock writes as JSON text (``"\\ud800"``, as a server's JSON answer
    holds it); ``raw``: the character itself in the answer text (as an HTTP client decodes it).
    """

    def answer(req: ChatRequest) -> Any:
        out = legal_answer(req)
        if not isinstance(out, dict):
            return out
        for key in ("text", "statement"):
            if key in out:
                out[key] = f"{out[key]} {LONE} end"
        return out if form == "escaped" else json.dumps(out, ensure_ascii=False)

    return answer


def _lines(path: Path) -> list[dict[str, Any]]:
    """Every record of a JSONL file, read as strict UTF-8; none holds a lone surrogate."""
    out = [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]
    for r in out:
        json.dumps(r, ensure_ascii=False).encode("utf-8")  # raises on a "\ud800" escape read back
    return out


@pytest.mark.parametrize("form", ["escaped", "raw"])
def test_a_lone_surrogate_in_speech_and_vote_reasons_is_logged_as_fffd_and_counted(tmp_path: Path, form: str):
    agents, _ = llm_agents(MAFIASCOPE7, 3, _with_lone_surrogate(form))
    res = asyncio.run(play_game(MAFIASCOPE7, agents, 3, out=tmp_path, game_id="g"))
    assert res.winner is not None and res.fallbacks == 0
    game = read_game(tmp_path / "g")
    assert game.events[-1].kind == "game_end" and game.problems == []
    events = _lines(tmp_path / "g" / "game.jsonl")
    speeches = [e for e in events if e["kind"] == "speech"]
    statements = [e["statement"] for e in events if e["kind"] == "vote" and e.get("statement")]
    assert speeches and statements
    assert all(t.endswith(" \ufffd end") for t in [e["text"] for e in speeches] + statements)
    calls = [c for c in _lines(tmp_path / "g" / "calls.jsonl") if c["kind"] == "call"]
    texts = [c for c in calls if c["purpose"] in ("speak", "vote", "mafia_chat")]
    assert texts and all(c["replaced_chars"] == 1 and c["status"] == "ok" for c in texts)
    assert all(c["replaced_chars"] == 0 for c in calls if c["purpose"] in ("kill", "protect"))


class _Unloggable(ScriptedAgent):
    """A scripted agent whose speeches hold a lone surrogate (no entry point cleans an agent's own text)."""

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        action = await super().decide(decision, view)
        if action.text is not None and decision.kind == "speak":
            action = action.model_copy(update={"text": action.text + LONE})
        return action


def test_an_agents_text_that_cannot_be_logged_becomes_a_logged_fallback(tmp_path: Path, caplog):
    agents = [ScriptedAgent(s, MAFIASCOPE7, 5) for s in range(MAFIASCOPE7.n_seats)]
    agents[2] = _Unloggable(2, MAFIASCOPE7, 5)
    with caplog.at_level(logging.WARNING, logger="mafialab.harness"):
        res = asyncio.run(play_game(MAFIASCOPE7, agents, 5, out=tmp_path, game_id="g"))
    assert res.winner is not None
    events = _lines(tmp_path / "g" / "game.jsonl")
    assert events[-2]["kind"] == "game_end" or events[-1]["kind"] == "game_end"
    mine = [e for e in events if e["kind"] == "speech" and e["seat"] == 2]
    assert mine and all(e["fallback"] for e in mine)
    assert res.fallbacks == len(mine)
    said = [r.getMessage() for r in caplog.records if "UTF-8 cannot encode" in r.getMessage()]
    assert len(said) == len(mine) and "seat 2" in said[0]
