"""Hostile model output: games whose every answer is adversarial end cleanly, lose nothing, leak nothing.

A small run of ``benchmarks/fuzz.py`` (the benchmark plays thousands of games).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import pytest

from mafialab.judge import UnusableVerdict
from mafialab.judge._judge import _parse as parse_verdict
from mafialab.models import ChatResponse, parse_json, parse_json_lenient
from mafialab.rules import BUILTIN

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
