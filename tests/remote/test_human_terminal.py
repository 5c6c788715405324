"""``--seat N=human``: a person plays a seat at the terminal (driven through a pseudo-terminal)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from mafialab.record import iter_game_dirs

pexpect = pytest.importorskip("pexpect", reason="pexpect is not installed: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parents[2]


def _spawn(out: Path, timeout: str = "60"):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "200"}
    args = ["-m", "mafialab", "play", "--rules", "mafiascope7", "--agents", "scripted", "--seed", "3"]
    args += ["--seat", "3=human", "--remote-timeout", timeout, "--out", str(out)]
    return pexpect.spawn(sys.executable, args, env=env, encoding="utf-8", timeout=90, dimensions=(50, 200))


def _calls(out: Path) -> tuple[Path, list[dict]]:
    (game,) = iter_game_dirs(out)
    return game, [c for c in map(json.loads, (game / "calls.jsonl").read_text().splitlines()) if c["kind"] == "call"]


def test_a_person_plays_a_whole_game_at_the_terminal(tmp_path: Path) -> None:
    child = _spawn(tmp_path)
    answered = 0
    try:
        while True:
            i = child.expect([r"number 1-(\d+)", r"your words", r"\b1 game of ", pexpect.EOF])
            assert i != 3, f"the game ended without play's summary line: {child.before!r}"
            if i == 0:
                if answered == 0:  # a wrong entry is explained and asked again
                    child.sendline("99")
                    child.expect(r"not a number between 1 and")
                    child.expect(r"number 1-")
                child.sendline("1")
            elif i == 1:
                child.sendline("I trust nobody yet.")
            else:  # play's summary: "1 game of <rule set>: ..."
                break
            answered += 1
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert answered >= 2
    game, calls = _calls(tmp_path)
    mine = [c for c in calls if c["seat"] == 3]
    assert mine and all(c["model"] == "human" and c["status"] == "ok" for c in mine)
    events = [json.loads(x) for x in (game / "game.jsonl").read_text().splitlines()]
    said = [e for e in events if e.get("seat") == 3 and e.get("kind") == "speech"]
    assert said and said[0]["text"] == "I trust nobody yet." and not said[0].get("fallback")
    assert any(e.get("kind") == "game_end" for e in events)
    assert events[0]["meta"]["agents"]["3"]["external"] == "human"


def test_ctrl_c_leaves_the_seat_to_its_fallback_and_keeps_the_log(tmp_path: Path) -> None:
    child = _spawn(tmp_path)
    try:
        child.expect([r"number 1-", r"your words"])
        child.sendintr()
        child.expect(r"left the seat")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    game, calls = _calls(tmp_path)
    mine = [c for c in calls if c["seat"] == 3]
    assert mine and all(c["status"] == "fallback" and "left the seat" in c["error"] for c in mine)
    events = [json.loads(x) for x in (game / "game.jsonl").read_text().splitlines()]
    assert any(e.get("kind") == "game_end" for e in events)


async def test_a_probed_terminal_seat_answers_one_line_as_json(tmp_path: Path) -> None:
    import asyncio
    import io

    from mafialab.agents import make_agent
    from mafialab.engine import GameState
    from mafialab.remote import HumanTerminalAgent, ProbedHumanTerminalAgent
    from mafialab.rules import load_rules

    rules = load_rules("mafiascope7")
    assert not hasattr(make_agent("human", 1, rules, 0), "probe")
    agent = make_agent("human?probe=1&timeout=5", 1, rules, 0)
    assert isinstance(agent, ProbedHumanTerminalAgent) and isinstance(agent, HumanTerminalAgent)
    assert agent.probe_synchronously and agent.describe()["probed"] is True
    read_end, write_end = os.pipe()
    out = io.StringIO()
    agent._stdin = os.fdopen(read_end, "r")  # type: ignore[attr-defined]
    agent._out = out  # type: ignore[attr-defined]
    records: list = []
    agent.set_call_sink(records.append)
    state = GameState(rules, 0)
    with os.fdopen(write_end, "w") as w:
        w.write('{"suspect": "Alex"}\n')
        w.write("typed too early: dropped\n")  # lines typed before a question are forgotten
        w.flush()
        r1 = await agent.probe("Who do you suspect?", state.view(1), {"type": "object"}, 50, "who")
        # the input thread queues the early line in its own time (slow on a loaded machine): the
        # second question must find it typed already, as a person's early line always is
        waited = time.monotonic() + 10
        while agent._reader.queue.qsize() < 1 and time.monotonic() < waited:  # type: ignore[attr-defined]
            await asyncio.sleep(0.01)
        assert agent._reader.queue.qsize() == 1  # type: ignore[attr-defined]
        second = asyncio.ensure_future(agent.probe("And why?", state.view(1), None, 50, "why"))
        await asyncio.sleep(0.2)
        w.write("just words\n")
        w.flush()
        r2 = await asyncio.wait_for(second, 10)
    assert (r1.text, r1.parsed) == ('{"suspect": "Alex"}', {"suspect": "Alex"})
    assert (r2.text, r2.parsed) == ("just words", None)
    assert "Who do you suspect?" in out.getvalue() and "private question" in out.getvalue()
    assert [(r.purpose, r.status, r.probe_id) for r in records] == [("probe", "ok", "who"), ("probe", "ok", "why")]
