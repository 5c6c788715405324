"""Long drivers freeze their start-up heap out of the collector's full passes, through one helper."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import mafialab.cli._beliefshift as beliefshift_cli
import mafialab.cli._fork as fork_cli
import mafialab.cli._season as season_cli
import mafialab.counterfactual as counterfactual
from mafialab.arena import SeasonError
from mafialab.beliefshift import ResultsMismatch
from mafialab.cli import app
from mafialab.harness import _heap
from mafialab.judge import JudgeError
from mafialab.record import read_game
from tests.helpers import play_probed_parent

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})

FRESH = """
import gc, sys
from mafialab.harness import freeze_startup_heap
before = gc.get_freeze_count()
first = freeze_startup_heap()
after = gc.get_freeze_count()
print(before, first, after > 1000, freeze_startup_heap(), gc.get_freeze_count() == after, "openai" in sys.modules)
"""


def test_the_helper_freezes_once_with_the_model_client_imported() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["0", "True", "True", "False", "True", "True"]


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What happened, in order: ``freeze`` (the helper froze the heap) and ``run`` (the command's work began)."""
    seen: list[str] = []
    monkeypatch.setattr(_heap, "_FROZEN", False)  # as in a fresh process
    monkeypatch.setattr(gc, "freeze", lambda: seen.append("freeze"))
    return seen


def _stop(seen: list[str], error: Exception) -> Any:
    async def work(*args: Any, **kwargs: Any) -> Any:
        seen.append("run")
        raise error

    return work


def test_play_freezes_once_its_agents_are_built(events: list[str], tmp_path: Path) -> None:
    res = runner.invoke(app, ["play", "-r", "werewolf7", "-a", "scripted", "--games", "2", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert events == ["freeze"]  # once, for both games


def test_season_run_freezes_before_its_games(
    events: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "season.yaml"
    roster = [{"agent": "scripted", "name": f"s-{i}"} for i in range(8)]
    f.write_text(yaml.safe_dump({"name": "heap", "rules": "werewolf7", "games": 1, "seed": 3, "roster": roster}))
    monkeypatch.setattr(season_cli, "run_season", _stop(events, SeasonError("stopped here")))
    res = runner.invoke(app, ["season", "run", str(f), "--out", str(tmp_path / "s")])
    assert res.exit_code != 0 and "stopped here" in res.output
    assert events == ["freeze", "run"]


def test_beliefshift_run_freezes_before_it_elicits(
    events: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(beliefshift_cli, "read_bench", lambda path: (None, []))
    monkeypatch.setattr(beliefshift_cli, "run_bench", _stop(events, ResultsMismatch("stopped here")))
    (tmp_path / "b.jsonl").write_text("")  # read_bench is stubbed; the CLI checks the path exists first
    res = runner.invoke(
        app, ["beliefshift", "run", str(tmp_path / "b.jsonl"), "-m", "mock/m", "--out", str(tmp_path / "r.jsonl")]
    )
    assert res.exit_code != 0 and "stopped here" in res.output
    assert events == ["freeze", "run"]


def test_fork_and_bifurcate_run_freeze_before_their_work(
    events: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = play_probed_parent(tmp_path / "parents")
    point = counterfactual.plan_points(read_game(parent), "innocent-votes")[0]
    monkeypatch.setattr(fork_cli, "run_fork", _stop(events, ValueError("stopped here")))
    res = runner.invoke(
        app,
        [
            "fork",
            "run",
            str(parent),
            "--at",
            str(point.step.id),
            "-n",
            "2",
            "-a",
            "scripted",
            "-o",
            str(tmp_path / "f"),
        ],
    )
    assert res.exit_code != 0 and "stopped here" in res.output
    assert events == ["freeze", "run"]
    events.clear()
    monkeypatch.setattr(_heap, "_FROZEN", False)
    monkeypatch.setattr(counterfactual, "run_bifurcation", _stop(events, ValueError("stopped here")))
    res = runner.invoke(
        app,
        ["bifurcate", "run", str(parent), "--points", str(point.step.id), "-a", "scripted", "--sampler", "scripted",
         "--out", str(tmp_path / "b")],
    )  # fmt: skip
    assert res.exit_code != 0 and "stopped here" in res.output
    assert events == ["freeze", "run"]


def test_the_other_long_drivers_freeze_before_their_work(
    events: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mafialab.cli._judge as judge_cli
    import mafialab.probes as probes

    parent = play_probed_parent(tmp_path / "parents")
    commands: list[tuple[Any, str, Exception, list[str]]] = [
        (fork_cli, "sweep", ValueError("stopped here"), ["fork", "sweep", str(parent), "-n", "1", "-o", str(tmp_path / "w")]),
        (probes, "run_retest", ValueError("stopped here"), ["retest", str(parent), "-o", str(tmp_path / "r")]),
        (beliefshift_cli, "annotate_games", ValueError("stopped here"),
         ["beliefshift", "annotate", str(parent), "--out", str(tmp_path / "a.jsonl")]),
        (judge_cli, "judge_with_ensemble", JudgeError("stopped here"), ["judge", str(parent), "-j", "mock/j"]),
    ]  # fmt: skip
    for module, name, error, argv in commands:
        events.clear()
        monkeypatch.setattr(_heap, "_FROZEN", False)
        monkeypatch.setattr(module, name, _stop(events, error))
        res = runner.invoke(app, argv)
        assert "stopped here" in res.output or isinstance(res.exception, type(error)), res.output
        assert events == ["freeze", "run"], argv
