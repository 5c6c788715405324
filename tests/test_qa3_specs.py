"""QA3 regressions: bad agent options in a model spec are refused up front, naming the option."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from mafialab.agents import make_llm_agent
from mafialab.cli import app
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
    with pytest.raises(ModelSpecError, match=r"options of openai/x .*timeout"):
        make_llm_agent(spec, 0, RULES, 1)


def test_cli_bad_max_tokens_no_traceback_no_orphan_log(tmp_path) -> None:
    out = tmp_path / "o"
    result = CliRunner().invoke(app, ["play", "--agents", "mock/x?max_tokens=abc", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "max_tokens" in result.output
    assert not isinstance(result.exception, TypeError)
    assert not list(out.rglob("game.jsonl"))


def test_mock_outputs_string_refused() -> None:
    # malformed JSON in the spec stays a string; iterating it would script one character per call
    with pytest.raises(ModelSpecError, match=r"^outputs: "):
        make_llm_agent("mock/x?outputs=[1,2", 0, RULES, 1)


def test_cli_mock_exhausted_is_a_clear_error(tmp_path) -> None:
    out = tmp_path / "o"
    spec = 'mock/x?outputs=[{"target":"Alex"}]'
    result = CliRunner().invoke(app, ["play", "--agents", spec, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "no scripted output left" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert list(out.rglob("game.jsonl"))  # what was recorded is kept
