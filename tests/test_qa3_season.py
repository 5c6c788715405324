"""QA3 regressions for the season CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.models import ChatRequest, ChatResponse, Usage

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "arena_season.yaml"


def test_leaderboard_markdown_is_not_wrapped(tmp_path: Path) -> None:
    out = tmp_path / "season"
    runner = CliRunner()
    run = runner.invoke(app, ["season", "run", str(EXAMPLE), "--out", str(out)])
    assert run.exit_code == 0, run.output
    res = runner.invoke(app, ["season", "leaderboard", str(out), "--markdown"])
    assert res.exit_code == 0, res.output
    table_lines = [ln for ln in res.output.splitlines() if ln.startswith("|")]
    assert len(table_lines) >= 2 + 4 + 2 + 3  # leaderboard (head, rule, 4 entries), games (head, rule, 3)
    for ln in table_lines:
        assert ln.endswith("|"), ln  # a table row wrapped at the terminal width breaks the Markdown
    # every table row printed is exactly a row of the leaderboard.md written beside the index
    written = {ln for ln in (out / "leaderboard.md").read_text().splitlines() if ln.startswith("|")}
    assert set(table_lines) <= written


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
    calls = [json.loads(ln) for p in out.rglob("calls.jsonl") for ln in p.read_text().splitlines()]
    mine = [c for c in calls if c["model"] == "qa3priced/m"]
    assert mine, "the priced model played no decision"
    expected = (600 * 2.0 + 400 * 0.5 + 50 * 8.0) / 1e6  # uncached, cached and completion tokens
    for c in mine:
        assert c["cost_usd"] == pytest.approx(expected)


def test_resume_reruns_a_game_whose_log_is_gone(tmp_path: Path) -> None:
    out = tmp_path / "season"
    runner = CliRunner()
    assert runner.invoke(app, ["season", "run", str(EXAMPLE), "--out", str(out)]).exit_code == 0
    games = out / "games"
    before = {d.name: (d / "game.jsonl").read_text() for d in games.iterdir()}
    assert len(before) == 3
    lost = sorted(before)[1]
    shutil.rmtree(games / lost)
    res = runner.invoke(app, ["season", "resume", str(out)])
    assert res.exit_code == 0, res.output
    after = {d.name: (d / "game.jsonl").read_text() for d in games.iterdir()}
    assert sorted(after) == sorted(before)  # nothing lost, nothing duplicated
    for name, text in before.items():
        if name != lost:
            assert after[name] == text  # finished games untouched
    assert sum('"game_end"' in ln for ln in after[lost].splitlines()) == 1  # rerun from its own seed
    index = json.loads((out / "index.json").read_text())
    assert index["games_counted"] == 3
