"""A speech that repeats the seat's own prompt (role line, private block, instructions) verbatim.

Small models sometimes answer a "say something" decision with their prompt. The agent removes
the repeated text (a repair, with its cause in calls.jsonl) or, when nothing of the seat's
own is left, treats the answer as unusable (retry, then a logged fallback). Either way no
other seat ever reads the private block.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.models import ChatRequest
from mafialab.rules import load_rules

RULES = load_rules("werewolf7")
SEAT = 2
OWN = "I have watched Bailey closely and I do not trust that vote."


def _target(req: ChatRequest) -> str:
    m = re.search(r"Choose one of: (.+?)[.,] ", req.messages[-1].content + " ")
    assert m, req.messages[-1].content
    return m.group(1).split(", ")[0]


def _lines(req: ChatRequest) -> tuple[str, str, str]:
    """(the seat's identity line, a rules line of the system prompt, the decision prompt)."""
    user = req.messages[1].content.splitlines()
    identity = next(ln for ln in user if ln.startswith("You are "))
    rules_line = req.messages[0].content.splitlines()[1]
    return identity, rules_line, req.messages[-1].content


def _responder(keep_own: bool):
    def answer(req: ChatRequest) -> Any:
        if req.purpose in ("speak", "mafia_chat"):
            identity, rules_line, prompt = _lines(req)
            echo = f"{identity}\n{rules_line} {prompt}"
            return {"text": f"{echo} {OWN}" if keep_own else echo}
        if req.purpose == "vote" and "statement" in req.messages[-1].content:
            identity, _, _ = _lines(req)
            return {"target": _target(req), "statement": f"{identity} {OWN}" if keep_own else identity}
        return {"target": _target(req)}

    return answer


def _play(tmp_path: Path, keep_own: bool, rules_id: str = "werewolf7") -> tuple[Any, list[dict], list[dict]]:
    rules = load_rules(rules_id)
    agents = [make_agent("scripted", s, rules, 3) for s in range(rules.n_seats)]
    agent = make_agent("mock/echo", SEAT, rules, 3)
    agent.model._fn = _responder(keep_own)  # type: ignore[attr-defined]
    agents[SEAT] = agent
    res = asyncio.run(play_game(rules, agents, 3, out=tmp_path, game_id="g"))
    events = [json.loads(x) for x in (tmp_path / "g" / "game.jsonl").read_text().splitlines()]
    calls = [json.loads(x) for x in (tmp_path / "g" / "calls.jsonl").read_text().splitlines()]
    return res, events, [c for c in calls if c.get("kind") == "call" and c["seat"] == SEAT]


def _texts_of_seat(events: list[dict]) -> list[str]:
    return [e.get("text") or e.get("statement") or "" for e in events if e.get("seat") == SEAT and e.get("text")]


def _private_words(res: Any) -> list[str]:
    view = res.state.view(SEAT)
    words = [f"Your role: {view.role}"]
    if view.teammates:
        words.append("Your fellow")
    return words


def test_a_speech_repeating_its_prompt_is_played_without_it_and_the_repair_is_logged(tmp_path: Path) -> None:
    res, events, calls = _play(tmp_path, keep_own=True)
    said = _texts_of_seat(events)
    assert said, "the seat never spoke"
    assert all(t == OWN for t in said), said
    for word in [*_private_words(res), "You are playing", "Do not repeat these instructions"]:
        assert not any(word in t for t in said)
    spoken = [c for c in calls if c["purpose"] in ("speak", "mafia_chat") and c["status"] == "ok"]
    assert spoken and all(c["repair"] and "private block" in c["repair"] for c in spoken)
    assert all(re.search(r"\b\d+ instruction lines?\b", c["repair"]) for c in spoken)
    assert all("Your role" not in (c["repair"] or "") for c in calls)  # the log names kinds, not the words
    # the other seats' views (what their prompts are built from) never hold the private block
    for s in range(len(res.state.names)):
        if s == SEAT:
            continue
        seen = json.dumps([getattr(e, "text", None) for e in res.state.view(s).events])
        assert all(w not in seen for w in _private_words(res))


def test_a_speech_that_is_only_its_prompt_falls_back_with_the_cause(tmp_path: Path) -> None:
    res, events, calls = _play(tmp_path, keep_own=False)
    said = _texts_of_seat(events)
    assert said and not any(w in t for t in said for w in _private_words(res))
    fallbacks = [c for c in calls if c["status"] == "fallback" and c["purpose"] == "speak"]
    assert fallbacks
    assert all("repeated the prompt verbatim" in c["error"] and "nothing of its own" in c["error"] for c in fallbacks)
    speeches = [e for e in events if e.get("kind") == "speech" and e.get("seat") == SEAT]
    assert speeches and all(e.get("fallback") for e in speeches)


def test_a_speech_that_quotes_the_public_transcript_is_left_alone(tmp_path: Path) -> None:
    rules = load_rules("werewolf7")
    agent = make_agent("mock/x", SEAT, rules, 3)
    quote = "Bailey said the exact words I would have said about the night."
    from mafialab.engine import GameState

    state = GameState(rules, 3)
    while not state.is_terminal:
        batch = [d for d in state.pending() if d.seat == SEAT and d.kind == "speak"]
        if batch:
            break
        for d in state.pending():
            state.apply(state.random_action(d))
    view = state.view(SEAT)
    messages, _ = agent.decision_messages(batch[0], view)  # type: ignore[attr-defined]
    guard = agent.echo_guard(view, messages)  # type: ignore[attr-defined]
    assert guard.private and guard.instructions
    assert guard.clean(quote) == (quote, None)
    public = [ln.text for ln in agent.renderer.rendered_lines(view) if not ln.private]  # type: ignore[attr-defined]
    long_public = [p for p in public if len(p) >= 20]
    assert long_public and guard.clean(long_public[0])[1] is None


def test_an_echo_in_other_letter_case_is_removed_too() -> None:
    from mafialab.agents._llm import EchoGuard
    from mafialab.models import ChatMessage

    identity = "You are Finley. Your role: Werewolf (team Werewolves)."
    msgs = [ChatMessage(role="system", content="Rules:\n- Always answer with one JSON object."),
            ChatMessage(role="user", content=f"Transcript so far:\n(nothing yet)\n\nPrivate to you (Finley):\n{identity}")]  # fmt: skip
    guard = EchoGuard.of(msgs, public=["(nothing yet)"], private=[identity])
    left, cause = guard.clean("you are finley. your role: werewolf (team werewolves). I trust Gray and nobody else.")
    assert left == "I trust Gray and nobody else." and cause is not None and "private block" in cause
    assert "werewolf" not in left.lower()
