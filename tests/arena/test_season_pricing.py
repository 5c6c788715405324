"""A season prices every call with the season's own price table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafialab.models import ChatRequest, ChatResponse, Usage


class _PricedModel:
    """A local test backend answering the first legal choice and reporting token usage."""

    def __init__(self, name: str) -> None:
        self.name = f"qa3priced/{name}"
        self.context_window = 8192
        self.calls_network = True
        self.counts_tokens = False

    def count_tokens(self, text: str) -> int:
        return len(text)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        props = (request.json_schema or {}).get("properties", {})
        answer = {k: (v["enum"][0] if "enum" in v else "I pass.") for k, v in props.items()}
        return ChatResponse(
            text=json.dumps(answer),
            parsed=answer,
            usage=Usage(prompt_tokens=1000, completion_tokens=50, cached_tokens=400),
            model=self.name,
        )


async def test_season_calls_are_priced_with_season_prices(tmp_path: Path) -> None:
    from mafialab.arena import SeasonConfig, run_season
    from mafialab.models import register_backend

    register_backend("qa3priced", lambda model, **_: _PricedModel(model))
    cfg = SeasonConfig.model_validate(
        {
            "name": "priced",
            "rules": "werewolf7",
            "games": 1,
            "seed": 3,
            "roster": ["scripted", "qa3priced/m"],
            "prices": {"qa3priced/*": {"input": 2.0, "output": 8.0, "cached_input": 0.5}},
            "limits": {"preflight": False},
        }
    )
    out = tmp_path / "season"
    await run_season(cfg, out)
    lines = [json.loads(ln) for p in out.rglob("calls.jsonl") for ln in p.read_text().splitlines()]
    calls = [c for c in lines if c["kind"] == "call"]
    mine = [c for c in calls if c["model"] == "qa3priced/m"]
    assert mine, "the priced model played no decision"
    expected = (600 * 2.0 + 400 * 0.5 + 50 * 8.0) / 1e6  # uncached, cached and completion tokens
    for c in mine:
        assert c["cost_usd"] == pytest.approx(expected)
