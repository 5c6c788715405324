"""Hostile model output: games whose every answer is adversarial end cleanly, lose nothing, leak nothing.

A small run of ``benchmarks/fuzz.py`` (the benchmark plays thousands of games)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from mafialab.agents import ScriptedAgent
from mafialab.engine import Action, Decision, PlayerView
from mafialab.harness import play_game
from mafialab.judge import UnusableVerdict
from mafialab.judge._judge import _parse as parse_verdict
from mafialab.models import ChatRequest, ChatResponse, parse_json, parse_json_lenient
from mafialab.record import read_game
from mafialab.rules import BUILTIN, MAFIASCOPE7
from tests.llm_helpers import legal_answer, llm_agents

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fuzz

NASTY = [
    "{" + '"target": {' * 100_000,  # deeper than the JSON decoder's recursion limit
    "[" * 50_000 + "]" * 50_000,
    '{"target": ' + "9" * 5000 + "}",  # more digits than int() accepts
    '{"target": 1e999, "text": NaN}',
    "\ufeff{\x00}",
    "{" * 3 + "}" * 7,
]


@pytest.mark.parametrize("text", NASTY, ids=range(len(NASTY)))
def test_parsers_of_model_text_never_raise(text: str):
    value, _ = parse_json(text)  # agents' answers
    assert value is None or isinstance(value, (dict, list, str, int, float))
    parse_json_lenient(text)  # probe answers (the one lenient parser)
    with contextlib.suppress(UnusableVerdict):
        parse_verdict(ChatResponse(text=text))  # judge answers


@pytest.mark.parametrize("rules", list(BUILTIN.values()), ids=lambda r: r.name)
def test_hostile_games_end_cleanly_and_keep_every_record(rules, tmp_path: Path):
    for seed in (1, 2):
        check, rec = asyncio.run(fuzz.play_one(rules, seed, tmp_path, "suspicion"))
        assert check.crashed is None, check.crashed
        assert check.problems == []
        assert check.decisions > 10 and check.probes > 0 and check.fallbacks > 0
        assert check.kinds["fallback"] == check.fallbacks and check.kinds["unusable"] > 0
        statuses = [
            c["status"]
            for c in map(json.loads, (tmp_path / check.game_id / "calls.jsonl").read_text().splitlines())
            if c["kind"] == "call"
        ]
        assert len(statuses) == check.calls == rec.n


def test_the_leak_check_catches_a_leak(tmp_path: Path):
    rules = BUILTIN["mafiascope7"]  # has a mafia chat
    check, rec = asyncio.run(fuzz.play_one(rules, 3, tmp_path, "suspicion"))
    assert check.problems == []
    log_ = fuzz.read_game(tmp_path / check.game_id)
    town = next(s.seat for s in log_.header.roster if s.team == "town")
    mafioso = next(s.seat for s in log_.header.roster if s.team == "mafia")
    marker = f"<MCHAT-{mafioso}-99999>"
    rec.seen.append((town, "vote", f"...{marker}..."))  # a town seat's prompt holding mafia chat
    rec.seen.append((town, "speak", "<PROBE-0-1>"))  # a probe answer in a decision prompt
    again = fuzz.check_game(tmp_path / check.game_id, rec, fuzz.GameCheck(check.game_id, check.rules_id))
    assert any(f"{marker} in a vote request of seat {town}" in p for p in again.problems)
    assert any("probe answer of seat 0 in a speak request" in p for p in again.problems)


def test_the_benchmark_resumes_from_its_checkpoint_and_keeps_the_counts(tmp_path: Path):
    ck = tmp_path / "fuzz.jsonl"
    first = fuzz.run(1, 5, "suspicion", checkpoint=ck)
    assert first["games"] == first["played_now"] == 1 and first["crashes"] == first["games_with_problems"] == 0
    with ck.open("a") as fh:
        fh.write('{"i": 1, "game_id": "torn')  # a run killed while writing: the torn line is played again
    again = fuzz.run(2, 5, "suspicion", checkpoint=ck)
    assert again["played_now"] == 1 and again["games"] == 2
    assert again["decisions"] > first["decisions"] and again["torn_or_lost"] == again["leaks"] == 0
    assert again["fallbacks"] == sum(again["fallbacks_by_cause"].values()) > 0
    rows = [json.loads(x) for x in ck.read_text().splitlines() if x.endswith("}")]
    assert sorted(r["i"] for r in rows) == [0, 1] and all(r["cpu_s"] > 0 for r in rows)
    assert fuzz.run(2, 5, "suspicion", checkpoint=ck)["played_now"] == 0


# A lone surrogate ("\ud800", valid JSON) in an answer never ends a game: it is logged as U+FFFD and counted.


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
