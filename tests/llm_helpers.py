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
