"""Fixtures of the Inspect-task tests: a small frozen benchmark and scripted answers for both paths."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="the Inspect AI extra is not installed: pip install 'mafialab[inspect]'")

from inspect_ai.model import ModelOutput, ModelUsage

from mafialab.models import ChatRequest
from tests.helpers import freeze_scripted_bench

LEVELS = ("-3", "-2", "-1", "0", "+1", "+2", "+3")


@pytest.fixture(autouse=True)
def _inspect_log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every eval of these tests logs under tmp (never ./logs of the checkout)."""
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "inspect-logs"))


@pytest.fixture(scope="package")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen benchmark of one native scripted werewolf7 game (rules annotator, 2 observers)."""
    return freeze_scripted_bench(tmp_path_factory.mktemp("inspect-bs"), games=1)


def scripted_answer(last_user_text: str, names: list[str]) -> str:
    """A deterministic answer to a rating question, from a hash of the last user turn.

    About one answer in six is not JSON (the same prompt gets the same answer, so those
    observations fail after their retries with cause ``non_json``); the rest are valid labels.
    """
    h = hashlib.sha256(last_user_text.encode()).digest()
    if h[20] % 6 == 0:
        return "I would rather not say."
    return json.dumps({n: LEVELS[h[i] % 7] for i, n in enumerate(names)})


def mafialab_answers(req: ChatRequest) -> str:
    """:func:`scripted_answer` for mafialab's mock backend."""
    assert req.json_schema is not None
    return scripted_answer(req.messages[-1].content, list(req.json_schema["properties"]))


def inspect_answers(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """:func:`scripted_answer` for Inspect's ``mockllm/model`` (usage set: no tokenizer download)."""
    names = list(config.response_schema.json_schema.properties)
    return with_usage(ModelOutput.from_content(model="mockllm", content=scripted_answer(input[-1].text, names)))


def with_usage(out: ModelOutput) -> ModelOutput:
    """``out`` with token usage filled in (mockllm would otherwise count tokens with tiktoken, which downloads)."""
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


def instance(schema: dict[str, Any]) -> Any:
    """A small value valid under ``schema`` (first enum value, lowest allowed number, ...)."""
    if "enum" in schema:
        return schema["enum"][0]
    t = schema.get("type")
    if t == "object":
        return {k: instance(v) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        item = schema.get("items") or {}
        names = (item.get("properties") or {}).get("player", {}).get("enum")
        if names:  # a ranking: every listed player once, scores falling
            return [
                {**instance(item), "player": n, "score": max(0, 90 - 10 * i)}
                if "score" in item.get("properties", {})
                else {**instance(item), "player": n}
                for i, n in enumerate(names)
            ]
        return [instance(item)]
    if t == "integer" or t == "number":
        return schema.get("minimum", 50)
    if t == "boolean":
        return False
    return "I have nothing to add."
