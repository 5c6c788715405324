"""Where the forkable steps of a game stop: an unreproducible imported turn, a log with a lost event, no decisions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.counterfactual import fork_steps, resolve_step
from mafialab.record import GAME_FILE, read_game
from tests.counterfactual.test_forks import _fixture_game

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def _damaged_import(tmp_path: Path) -> tuple[Path, int]:
    """An imported game whose first doctor turn names no seat; returns it and that turn's decision id."""
    imported = _fixture_game(tmp_path)
    first = next(s for s in fork_steps(read_game(imported)) if s.kind == "protect")
    lines = (imported / GAME_FILE).read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec.get("kind") == "imported" and rec.get("source_kind") == "night_doctor":
            rec["text"] = "I am not saying."
            lines[i] = json.dumps(rec)
            break
    (imported / GAME_FILE).write_text("\n".join(lines) + "\n")
    return imported, first.id


def test_imported_game_forks_up_to_its_first_unreproducible_step(tmp_path: Path) -> None:
    imported, bad = _damaged_import(tmp_path)
    steps = fork_steps(read_game(imported))
    assert [s.id for s in steps] == list(range(bad))
    assert steps.stop is not None and steps.stop.step == bad
    assert steps.stop.reason.startswith(f"step {bad} (round 1 night, ")
    assert "the recorded protect target cannot be read" in steps.stop.reason
    assert resolve_step(steps, str(bad - 1)).id == bad - 1
    for at in (str(bad), str(bad + 3)):
        with pytest.raises(ValueError, match=rf"^--at: step {at} cannot be forked: the replay stops at step {bad} "):
            resolve_step(steps, at)


def test_fork_cli_on_an_imported_game_lists_and_forks_before_the_stop(tmp_path: Path) -> None:
    imported, bad = _damaged_import(tmp_path)
    res = runner.invoke(app, ["fork", "steps", str(imported), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert [s["id"] for s in json.loads(res.stdout)] == list(range(bad))
    stop = [ln for ln in res.stderr.splitlines() if "the list stops" in ln]
    assert len(stop) == 1 and f"step {bad} (round 1 night," in stop[0] and "protect target cannot be read" in stop[0]
    ok = runner.invoke(
        app, ["fork", "run", str(imported), "--at", str(bad - 1), "--agents", "scripted", "--out", str(tmp_path / "a")]
    )
    assert ok.exit_code == 0, ok.output
    assert len(list((tmp_path / "a").iterdir())) == 1
    refused = runner.invoke(app, ["fork", "run", str(imported), "--at", str(bad), "--out", str(tmp_path / "b")])
    assert refused.exit_code == 2
    assert f"--at: step {bad} cannot be forked" in refused.output and "protect target cannot be read" in refused.output


def _played(tmp_path: Path) -> Path:
    res = runner.invoke(
        app, ["play", "--rules", "mafiascope7-v2", "--agents", "scripted", "--seed", "4", "--out", str(tmp_path / "r")]
    )
    assert res.exit_code == 0, res.output
    return next((tmp_path / "r").iterdir())


def test_a_lost_role_record_stops_the_steps_and_fork_run_names_its_line(tmp_path: Path) -> None:
    g = _played(tmp_path)
    lines = (g / GAME_FILE).read_text().splitlines()
    n = next(i for i, ln in enumerate(lines) if json.loads(ln)["kind"] == "role_assigned")
    rec = json.loads(lines[n])
    rec["seat"] = 99
    lines[n] = json.dumps(rec)
    (g / GAME_FILE).write_text("\n".join(lines) + "\n")
    res = runner.invoke(app, ["fork", "steps", str(g), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == []  # the lost record is in the deal: the replay never follows the game
    res = runner.invoke(app, ["fork", "run", str(g), "--at", "2", "--dry-run", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2
    err = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(err) == 1
    assert err[0].startswith("error: --at: step 2 cannot be forked: the replay stops at step 0 ")
    assert f"{g / GAME_FILE}:{n + 1}: invalid role_assigned record" in err[0] and "seat 99" in err[0]


def test_steps_of_a_game_stopped_before_any_decision_say_so(tmp_path: Path) -> None:
    g = _played(tmp_path)
    lines = (g / GAME_FILE).read_text().splitlines()
    first = next(i for i, ln in enumerate(lines) if json.loads(ln)["kind"] == "speech")
    (g / GAME_FILE).write_text("\n".join(lines[:first]) + "\n")  # Ctrl-C before the first answer
    res = runner.invoke(app, ["fork", "steps", str(g)])
    assert res.exit_code == 0, res.output
    assert res.stderr.strip() == f"{g}: the game has no decisions to fork at (it ended or was stopped before the first)"
