"""``mafialab play`` shows the instrument: a game of embedded models alone is probed by default
(the ``light`` battery), any other line-up is not unless asked, and the summary says what was
recorded, which metrics it gives and what the embedded model is for."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from mafialab.agents import make_agent
from mafialab.analysis import DEFAULT, coverage_at, game_data
from mafialab.analysis._coverage import ranking_pairs
from mafialab.cli import app
from mafialab.cli._play import EMBEDDED_BATTERY, default_probes, recorded_lines
from mafialab.models import DEFAULT_POOL, EMBEDDED_NOTE, MockModel, is_embedded_model
from mafialab.probes import load_battery
from mafialab.record import GAME_FILE, PROBES_FILE, ProbeRecord, read_game, read_records
from mafialab.rules import WEREWOLF7
from tests.llm_helpers import stand_in_embedded

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


def _play(out: Path, *args: str) -> tuple[str, Path]:
    res = runner.invoke(app, ["play", "--seed", "2", "--out", str(out), *args])
    assert res.exit_code == 0, res.output
    (game,) = sorted(p.parent for p in out.rglob(GAME_FILE))
    return res.output, game


def test_an_embedded_line_up_is_probed_with_the_light_battery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in_embedded(monkeypatch)
    output, game = _play(tmp_path / "runs")  # no --agents, no --probes: the README's main job
    recs = [ProbeRecord.model_validate(r) for r in read_records(game / PROBES_FILE)]
    assert recs and {r.probe_id for r in recs} == {"suspicion_ranking"}
    assert {r.trigger for r in recs} == {"round_end"}  # never after a public message or a night action
    assert {r.model for r in recs} == {"local/smollm2"}
    assert read_game(game).header.meta["probes"] == load_battery("light").fingerprint()
    lines = output.splitlines()
    (rec,) = [ln for ln in lines if ln.startswith("recorded: ")]
    assert (
        f"and {len(recs)} probe answers, {len(recs)} usable (probes.jsonl): the light battery, suspicion_ranking" in rec
    )
    assert "asked because every seat is an embedded model; --probes none turns it off" in rec
    (metrics,) = [ln for ln in lines if ln.startswith("metrics from them: ")]
    assert "F4 vote coupling (top-1 suspect)" in metrics and "belief dynamics" in metrics
    assert "not from them: F1 first-order accuracy and recall" in metrics and "--probes default asks them" in metrics
    assert f"local/smollm2: {EMBEDDED_NOTE}" in lines


def test_probes_none_turns_the_default_battery_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stand_in_embedded(monkeypatch)
    output, game = _play(tmp_path / "runs", "--probes", "none")
    assert not (game / PROBES_FILE).exists()
    assert "probes" not in read_game(game).header.meta
    assert "no belief probes (record them with --probes suspicion, default or a battery YAML" in output
    assert f"local/smollm2: {EMBEDDED_NOTE}" in output.splitlines()


@pytest.mark.parametrize("args", [["-a", "scripted"], ["--seat", "3=scripted"]], ids=["scripted", "mixed"])
def test_other_line_ups_are_not_probed_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    stand_in_embedded(monkeypatch)
    output, game = _play(tmp_path / "runs", *args)
    assert not (game / PROBES_FILE).exists()
    assert any(ln.startswith("recorded: ") and "no belief probes" in ln for ln in output.splitlines())
    assert (EMBEDDED_NOTE in output) == ("--seat" in args)  # the note goes with a seat the embedded model played


def test_which_line_ups_get_the_default_battery() -> None:
    assert EMBEDDED_BATTERY == "light"
    assert default_probes(["local/smollm2"] * 7) == "light"
    assert default_probes(["local/smollm2?max_tokens=48", "local/gemma3-270m"]) == "light"
    assert default_probes(["local/smollm2", "scripted"]) == "none"
    assert default_probes(["local/my-model.gguf"]) == "none"  # a user's own GGUF is no shipped test model
    assert default_probes(["openai/gpt-4o-mini"]) == "none"
    assert default_probes([]) == "none"
    assert is_embedded_model("local/smollm2") and not is_embedded_model("mock/local/smollm2")


def test_help_says_how_probes_are_chosen_and_turned_off() -> None:
    res = CliRunner(env={"COLUMNS": "400"}).invoke(app, ["play", "--help"])
    text = " ".join(res.output.split())
    assert "Not given: light" in text and "--probes none turns probes off" in text


def test_the_summary_lists_only_metrics_with_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One ranking per seat (the game ended before a second round end): no belief dynamics, and it says why."""
    stand_in_embedded(monkeypatch)
    output, game = _play(tmp_path / "runs")
    recs = [ProbeRecord.model_validate(r) for r in read_records(game / PROBES_FILE)]
    assert recs and len({r.player for r in recs}) == len(recs)  # one ranking per seat, as in the trial
    assert ranking_pairs(game_data(read_game(game)), DEFAULT) == 0
    cov = coverage_at([game])
    assert cov["metrics"]["dynamics"]["computed"] is False and cov["metrics"]["dynamics"]["missing"] == []
    assert cov["metrics"]["vote_coupling.top1"]["computed"] is True
    result = SimpleNamespace(path=game, decisions=3)
    out = recorded_lines([result], ["local/smollm2"] * 7, load_battery("light"), by_default=True)  # type: ignore[list-item]
    (metrics,) = [ln for ln in out if ln.startswith("metrics from them: ")]
    assert metrics in output.splitlines()  # what play printed
    got = metrics.split(" (mafialab report)")[0]
    assert "F4 vote coupling (top-1 suspect)" in got and "belief dynamics" not in got
    assert metrics.endswith("; belief dynamics: needs two rankings by one seat; none here")


def test_the_stand_in_lives_only_in_its_test(monkeypatch: pytest.MonkeyPatch) -> None:
    # the mock used to stay in the process's pool of shared backends: the embedded model's own
    # tests (tests/models/test_embedded.py) then played it whenever they ran after this file
    # in one process (a pytest-xdist worker), and recorded calls of 0 tokens
    with monkeypatch.context() as m:
        stand_in_embedded(m)
        assert isinstance(make_agent("local/smollm2", 0, WEREWOLF7, 0).model, MockModel)
    left = [m for m in DEFAULT_POOL._models.values() if isinstance(m, MockModel) and m.name.startswith("local/")]
    assert not left  # (other tests' mock/... backends stay pooled, as in any process)
