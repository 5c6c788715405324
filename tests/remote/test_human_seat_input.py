"""A human seat: a person's question (no model instructions), the end of input, and no model calls."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mafialab.agents import load_prompt_pack, make_agent
from mafialab.analysis import game_data
from mafialab.engine import Decision, GameState
from mafialab.harness import play_game
from mafialab.record import CALLS_FILE, read_game, read_records
from mafialab.remote import HumanTerminalAgent, RemoteAgent
from mafialab.rules import ARENA12, MAFIASCOPE7, WEREWOLF7

ROOT = Path(__file__).resolve().parents[2]
HUMAN = 3
MODEL_WORDS = ("JSON", '{"', "Do not repeat these instructions")


def _decisions() -> list[tuple[Decision, object]]:
    """One decision of every kind (and the intro and vote-statement variants), with a view."""
    st = GameState(ARENA12, 0)
    view = st.view(0)
    opts = (1, 2, 3)
    kinds = [
        Decision(id=1, seat=0, kind="speak", round=1, phase="day", discussion=1, needs_text=True, max_chars=300),
        Decision(id=2, seat=0, kind="speak", round=1, phase="intro", needs_text=True, max_chars=300),
        Decision(id=3, seat=0, kind="mafia_chat", round=1, phase="night", needs_text=True, max_chars=300),
        Decision(id=4, seat=0, kind="vote", round=1, phase="day", options=opts),
        Decision(id=5, seat=0, kind="vote", round=1, phase="day", options=opts, needs_text=True, max_chars=300),
        Decision(id=6, seat=0, kind="nominate", round=1, phase="day", options=opts),
        Decision(id=7, seat=0, kind="runoff_vote", round=1, phase="day", options=opts),
        Decision(id=8, seat=0, kind="kill", round=1, phase="night", options=opts),
        Decision(id=9, seat=0, kind="protect", round=1, phase="night", options=opts),
        Decision(id=10, seat=0, kind="investigate", round=1, phase="night", options=opts),
    ]
    return [(d, view) for d in kinds]


def test_every_decision_of_the_pack_has_a_question_for_a_person() -> None:
    from mafialab.remote._questions import person_questions

    assert set(load_prompt_pack("en").decisions) <= set(person_questions())


@pytest.mark.parametrize("rules", [WEREWOLF7, MAFIASCOPE7, ARENA12], ids=lambda r: r.name)
def test_a_person_is_asked_in_words_and_a_program_still_gets_the_model_text(rules) -> None:
    from mafialab.remote import parse_seat_spec

    web = RemoteAgent(0, rules, 0, parse_seat_spec("human-web"))
    for d, view in _decisions():
        body = web.decision_body(d, view, 0.0)
        question = body["question"]
        assert question and not any(w in question for w in MODEL_WORDS), (d.kind, question)
        assert "JSON" in body["prompt"]  # a program (remote seat) may hand the model text to its model
    kill = next(d for d, _ in _decisions() if d.kind == "kill")
    assert rules.lexicon.kill in web.decision_body(kill, _decisions()[0][1], 0.0)["question"]


def _human(stdin: io.TextIOBase | None, out: io.StringIO, timeout: float = 120.0) -> HumanTerminalAgent:
    agent = make_agent(f"human?timeout={timeout:g}", HUMAN, MAFIASCOPE7, 3)
    assert isinstance(agent, HumanTerminalAgent)
    agent._stdin = stdin  # type: ignore[attr-defined]
    agent._out = out  # type: ignore[attr-defined]
    return agent


async def _play(tmp_path: Path, agent: HumanTerminalAgent):
    agents = [make_agent("scripted", s, MAFIASCOPE7, 3) for s in range(MAFIASCOPE7.n_seats)]
    agents[HUMAN] = agent
    return await play_game(MAFIASCOPE7, agents, 3, out=tmp_path)


async def test_at_end_of_input_the_seat_stops_asking_and_logs_human_eof(tmp_path: Path) -> None:
    out = io.StringIO()
    res = await _play(tmp_path, _human(io.StringIO(""), out))  # a pipe or file read to its end
    shown = out.getvalue()
    assert shown.count(">>> ") == 1  # asked once; never again after the end of input
    assert not any(w in shown for w in MODEL_WORDS)
    assert "end of input" in shown
    mine = [c for c in res.calls if c.seat == HUMAN]
    assert len(mine) >= 2 and all(c.status == "fallback" and c.error.startswith("human_eof: ") for c in mine)
    # a person's decisions are no model calls: not counted, and no degraded game for them
    assert res.person_seats == frozenset({HUMAN}) and res.model_calls() == []
    assert len(res.person_decisions()) == len(mine)
    assert res.gate["model_decisions"] == 0 and res.gate["calls"] == 0 and not res.degraded
    assert (res.gate["person_decisions"], res.gate["person_answered"]) == (len(mine), 0)
    lines = read_records(res.path / CALLS_FILE)
    assert [r["calls"] for r in lines if r["kind"] == "call_summary"] == [0]
    from mafialab.record import person_seats

    log = read_game(res.path)
    assert person_seats(log.header.meta.get("agents")) == {HUMAN}
    assert log.status is not None and not log.status.degraded
    assert game_data(log).calls == []  # the report's instrument counts no game call for them


@pytest.mark.parametrize("how", ["none", "closed"])
async def test_a_closed_stdin_ends_the_input_at_once_instead_of_waiting_out_each_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "none":  # what Python gives a process started with fd 0 closed
        monkeypatch.setattr(sys, "stdin", None)
        stdin = None
    else:
        stdin = io.StringIO("")
        stdin.close()  # reading raises ValueError
    res = await _play(tmp_path, _human(stdin, io.StringIO(), timeout=600))
    mine = [c for c in res.calls if c.seat == HUMAN]
    assert mine and all(c.error.startswith("human_eof: ") for c in mine)
    assert max(c.latency_ms for c in mine) < 60_000  # was: every decision waited out its 600 s


async def test_a_person_who_answers_is_counted_as_a_person_not_a_model(tmp_path: Path) -> None:
    answers = io.StringIO("\n".join(["I trust nobody yet."] + ["1"] * 40 + ["still here"] * 20) + "\n")
    res = await _play(tmp_path, _human(answers, io.StringIO()))
    mine = res.person_decisions()
    assert mine and any(c.status == "ok" for c in mine)
    assert res.gate["person_answered"] == sum(1 for c in mine if c.status == "ok")
    assert res.model_calls() == [] and res.gate["model_decisions"] == 0


def test_play_with_stdin_closed_says_human_decisions_not_model_calls(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "200"}
    args = [sys.executable, "-m", "mafialab", "play", "--rules", "mafiascope7", "--agents", "scripted"]
    args += ["--seed", "3", "--seat", f"{HUMAN}=human", "--remote-timeout", "600", "--out", str(tmp_path)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, preexec_fn=lambda: os.close(0))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "model call" not in text and "DEGRADED" not in text
    assert "human_eof: end of input" in text
    assert "at human seats: 0 answered by the person" in text
    assert "JSON" not in text
    (game,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    calls = [json.loads(x) for x in (game / CALLS_FILE).read_text().splitlines()]
    assert all(c["error"].startswith("human_eof: ") for c in calls if c["kind"] == "call")


def test_person_seats_are_the_human_and_human_web_seats_of_a_header() -> None:
    from mafialab.record import person_seats

    agents = {"1": {"external": "human-web"}, "2": {"external": "remote"}, "4": {"external": "human"}, "x": {}}
    assert person_seats(agents) == {1, 4}  # a remote program's decisions stay calls
    assert person_seats(None) == frozenset() and person_seats({"3": {"model": "mock/x"}}) == frozenset()


async def test_a_fork_estimate_counts_no_model_call_for_a_persons_decisions(tmp_path: Path) -> None:
    from mafialab.counterfactual import estimate_fork, fork_steps

    res = await _play(tmp_path, _human(io.StringIO(""), io.StringIO()))
    first = fork_steps(read_game(res.path))[0]
    est = estimate_fork(res.path, first.id)
    assert est.calls == 0 and "recorded no model calls" in est.basis  # was: the person's decisions
