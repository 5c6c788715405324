"""Agent spec options: bad values name the field, good ones are kept."""

from __future__ import annotations

import pytest

from mafialab.agents import AgentSpecError, make_agent, make_llm_agent
from mafialab.models import ModelSpecError
from mafialab.rules import load_rules

RULES = load_rules("werewolf7")


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("max_tokens=abc", "max_tokens"),
        ("max_tokens=0", "max_tokens"),
        ("max_tokens=true", "max_tokens"),
        ("retries=-1", "retries"),
        ("retries=abc", "retries"),
        ("temperature=-1", "temperature"),
        ("temperature=hot", "temperature"),
        ("temperature=NaN", "temperature"),
        ("temperature=1e999", "temperature"),
        ("layout=zzz", "layout"),
        ("pack=3", "pack"),
    ],
)
def test_bad_agent_option_names_field(query: str, field: str) -> None:
    with pytest.raises(ModelSpecError, match=rf"^{field}: "):
        make_llm_agent(f"mock/x?{query}", 0, RULES, 1)


def test_good_agent_options_kept() -> None:
    agent = make_llm_agent("mock/x?max_tokens=12&temperature=0&retries=0&layout=seat_first", 0, RULES, 1)
    assert (agent.max_tokens, agent.temperature, agent.retries, agent.renderer.layout) == (12, 0.0, 0, "seat_first")


def test_bad_backend_option_names_spec() -> None:
    spec = "openai/x?timeout=abc&base_url=http://127.0.0.1:9/v1"
    with pytest.raises(ModelSpecError, match=r"openai/x: option timeout=.abc.: expected a number"):
        make_llm_agent(spec, 0, RULES, 1)


@pytest.mark.parametrize("spec", ["bus/", "openai/"])
def test_a_known_provider_without_a_model_name_says_so(spec: str) -> None:
    with pytest.raises(AgentSpecError, match=r"names no model after '(bus|openai)/'"):
        make_agent(spec, 0, RULES, 1)


def test_an_out_of_range_backend_option_names_the_options_plainly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with pytest.raises(ModelSpecError) as err:
        make_llm_agent("openai/x?max_concurrency=0&base_url=http://127.0.0.1:9/v1", 0, RULES, 1)
    assert str(err.value) == "openai/x: option max_concurrency=0: expected an integer >= 1"
