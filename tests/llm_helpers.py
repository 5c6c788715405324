"""Mock-model helpers for LLM-agent tests."""

from __future__ import annotations

import random
from typing import Any

from mafialab.agents import LLMAgent
from mafialab.models import ChatRequest, MockModel
from mafialab.rules import RuleSet


def legal_answer(req: ChatRequest) -> dict[str, Any] | str:
    """A valid answer for the request's schema; speeches are unique markers MSG-<seat>-<decision>."""
    if req.json_schema is None:
        return "free text"
    props = req.json_schema["properties"]
    if "target" in props:
        names = props["target"]["enum"]
        rng = random.Random(f"{req.meta.get('seat')}-{req.meta.get('decision')}")
        out: dict[str, Any] = {"target": rng.choice(names)}
        if "statement" in props:
            out["statement"] = f"STMT-{req.meta['seat']}-{req.meta['decision']}"
        return out
    return {"text": f"<MSG-{req.meta['seat']}-{req.meta['decision']}>"}


def llm_agents(rules: RuleSet, seed: int, outputs: Any = legal_answer, **kw: Any) -> tuple[list[LLMAgent], MockModel]:
    model = MockModel(outputs, **kw)
    return [LLMAgent(s, rules, seed, model) for s in range(rules.n_seats)], model


def answer_with_beliefs(req: ChatRequest) -> Any:
    """:func:`legal_answer`, and a probe's ranking answered with its first allowed player (score 60)."""
    if req.purpose == "probe":
        schema = req.json_schema or {}
        names = schema.get("items", {}).get("properties", {}).get("player", {}).get("enum", ["?"])
        return [{"player": names[0], "score": 60}]
    return legal_answer(req)


def stand_in_embedded(monkeypatch: Any) -> None:
    """Play ``local/<name>`` (the embedded models) with a mock answering :func:`answer_with_beliefs`.

    The mock reports the embedded model's name (``local/smollm2``), so a game records the seats
    as the embedded model's; llama.cpp is not loaded (fast tests of what the embedded model's
    line-up gets, e.g. ``play``'s default battery).

    The test gets an empty pool of shared backends, dropped when it ends: the mock is never
    handed to a later test in the process (it would play that test's real ``local/smollm2``
    seats), and an embedded model an earlier test loaded never stands in for the mock.
    """
    from mafialab.models import DEFAULT_POOL, _protocol

    monkeypatch.setitem(
        _protocol._BACKENDS, "local", lambda model, **_: MockModel(answer_with_beliefs, name=f"local/{model}")
    )
    monkeypatch.setattr(DEFAULT_POOL, "_models", {})
