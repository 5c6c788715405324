"""``--seat N=human``: a person plays a seat at the terminal (driven through a pseudo-terminal)."""

from __future__ import annotations

import json
import os
import sys
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
            i = child.expect([r"number 1-(\d+)", r"your words", r"game\(s\) of", pexpect.EOF])
            if i == 0:
                if answered == 0:  # a wrong entry is explained and asked again
                    child.sendline("99")
                    child.expect(r"not a number between 1 and")
                    child.expect(r"number 1-")
                child.sendline("1")
            elif i == 1:
                child.sendline("I trust nobody yet.")
            else:
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
