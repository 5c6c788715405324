"""An interrupted ``fork run`` / ``bifurcate run``: no half-written branch is ever read, a re-run
completes the batch (each branch whole), other options are refused by name, one line per point."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import mafialab.counterfactual._fork as fork_module
from mafialab.cli import app
from mafialab.counterfactual import (
    Resample,
    batch_id,
    fork_batch_id,
    fork_steps,
    one_batch,
    plan_points,
    run_bifurcation,
    run_fork,
)
from mafialab.record import (
    GAME_FILE,
    POINTS_FILE,
    PROBES_FILE,
    iter_game_dirs,
    read_bifurcation,
    read_game,
    read_records,
    strip_clock,
)
from mafialab.testing import OpenAIStub, schema_instance
from tests.helpers import play_probed_parent

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
N = 8


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A probed mafiascope7 game of scripted agents: every branch gets the parent's prefix probes."""
    return play_probed_parent(tmp_path_factory.mktemp("parents"))


def _step(parent: Path) -> int:
    return next(s.id for s in fork_steps(read_game(parent)) if s.kind == "vote" and s.round == 1)


def _crash_on_call(monkeypatch: pytest.MonkeyPatch, calls: int) -> None:
    """Make the ``calls``-th prefix-probe copy raise: the branch's game.jsonl is complete, its probes are not."""
    real = fork_module._copy_prefix_probes
    seen = [0]

    def copy(*args: Any) -> int:
        seen[0] += 1
        if seen[0] == calls:
            raise RuntimeError("killed between game.jsonl and probes.jsonl")
        return real(*args)

    monkeypatch.setattr(fork_module, "_copy_prefix_probes", copy)


def _whole(d: Path, parent: Path) -> bool:
    """A branch with all its files: a game that ended, and the parent's prefix probes first in probes.jsonl."""
    ended = any(e.kind == "game_end" for e in read_game(d, warn=False).events)
    if not ended or not (d / PROBES_FILE).is_file():
        return False
    head, first = read_records(d / PROBES_FILE)[0], read_records(parent / PROBES_FILE)[0]
    return (head["after_seq"], head["answer_raw"]) == (first["after_seq"], first["answer_raw"])


def _files(d: Path) -> dict[str, Any]:
    """A branch's records, clock fields and probe latencies left out."""
    return {
        p.name: [{k: v for k, v in r.items() if k != "latency_ms"} for r in strip_clock(read_records(p))]
        for p in sorted(d.iterdir())
    }


def test_a_crashed_fork_run_is_resumed_whole_and_other_options_are_refused(
    parent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step, out = _step(parent), tmp_path / "forks"
    args = ["fork", "run", str(parent), "--at", str(step), "-n", str(N), "--probes", "suspicion"]
    _crash_on_call(monkeypatch, 3)
    with pytest.raises(RuntimeError, match="killed"):
        asyncio.run(run_fork(parent, step, Resample(), n=N, probes="suspicion", out=out))
    monkeypatch.undo()
    # what the readers see of the interrupted run: only whole branches (the third is in .partial)
    seen = iter_game_dirs(out)
    assert len(seen) == 2 and all(_whole(d, parent) for d in seen), seen
    (staged,) = (out / ".partial").iterdir()  # the batch's staging folder
    assert (staged / seen[0].name.replace("-0", "-2")).is_dir()  # the half-written one
    assert one_batch(out).n == 2
    # the same command again: the two whole branches are kept, the rest played, each whole
    res = runner.invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert f"{N} branches (2 already in" in res.output
    dirs = iter_game_dirs(out)
    assert len(dirs) == N and all(_whole(d, parent) for d in dirs) and not (out / ".partial").exists()
    assert sorted(d.name for d in out.iterdir()) == sorted(d.name for d in dirs)
    # the branches equal those of a run that was never interrupted (clock fields aside)
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "clean")])
    assert res.exit_code == 0, res.output
    assert {d.name: _files(d) for d in dirs} == {d.name: _files(d) for d in iter_game_dirs(tmp_path / "clean")}
    # once more: nothing to play; with another option: refused, naming it
    res = runner.invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0 and f"{N} branches ({N} already in" in res.output, res.output
    res = runner.invoke(app, [*args[:-2], "--out", str(out)])  # --probes none this time
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: --out: {out}: holds fork batch "), res.output
    assert "with other parameters (probes); resume with the same command or choose another --out" in res.output
    assert len(iter_game_dirs(out)) == N


def test_a_killed_fork_run_process_is_resumed_whole(parent: Path, tmp_path: Path) -> None:
    """A real ``mafialab fork run -n 8`` killed with SIGKILL once its first branch is in place."""
    step, out = _step(parent), tmp_path / "forks"
    cmd = [sys.executable, "-m", "mafialab", "fork", "run", str(parent), "--at", str(step), "-n", str(N),
           "--probes", "suspicion", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(1200):  # at most about 60 s
            if proc.poll() is not None or any((d / GAME_FILE).is_file() for d in out.glob("parent~*")):
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert all(_whole(d, parent) for d in iter_game_dirs(out))  # whatever was cut short is not among them
    res = runner.invoke(app, [*cmd[3:-2], "--out", str(out)])
    assert res.exit_code == 0, res.output
    dirs = iter_game_dirs(out)
    assert len(dirs) == N and all(_whole(d, parent) for d in dirs)
    assert sorted(d.name for d in out.iterdir()) == sorted(d.name for d in dirs)


async def test_a_crashed_bifurcation_resumes_whole_with_one_line_per_point(
    parent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "bif"
    point = plan_points(read_game(parent), "innocent-votes")[0]
    answers = count()

    def distinct(body: dict[str, Any]) -> str:
        """Every resample a different answer (identical ones would be one variant)."""
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        text = f"resampled answer {next(answers)}"
        return json.dumps(schema_instance(schema, text)) if schema else text

    async with OpenAIStub(responder=distinct) as stub:
        kw: dict[str, Any] = {"resamples": 4, "keep": 3, "sampler": f"openai/stub?base_url={stub.base_url}",
                              "agents": "scripted", "check_remote": False, "parallel": 1}  # fmt: skip
        _crash_on_call(monkeypatch, 2)
        with pytest.raises(RuntimeError, match="killed"):
            await run_bifurcation(parent, str(point.step.id), out, **kw)
        monkeypatch.undo()
        assert all(_whole(d, parent) for d in iter_game_dirs(out / "forks"))
        again = await run_bifurcation(parent, str(point.step.id), out, **kw)
        assert not again.errors
        exp = read_bifurcation(out)
        assert sorted(f.variant_idx for f in exp.forks) == [0, 1, 2] and all(f.winner for f in exp.forks)
        dirs = iter_game_dirs(out / "forks")
        assert sorted(d.name for d in dirs) == sorted(str(f.fork_id) for f in exp.forks)
        assert all(_whole(d, parent) for d in dirs)
        # the point was described by both runs; the file holds it once
        assert [r["point_id"] for r in read_records(out / POINTS_FILE)] == [point.point_id]
        await run_bifurcation(parent, str(point.step.id), out, **kw)
        assert [r["point_id"] for r in read_records(out / POINTS_FILE)] == [point.point_id]


def test_forks_with_other_agents_are_other_batches(parent: Path, tmp_path: Path) -> None:
    plog, step, out = read_game(parent), _step(parent), tmp_path / "forks"
    same = fork_batch_id(plog, step, seed=0)
    assert same == batch_id(plog.game_id, step, Resample(), 0)  # the parent's roster: the id it always had
    assert fork_batch_id(plog, step, seed=0, agents="scripted") == same  # the roster's own spec: the same agents
    other = fork_batch_id(plog, step, seed=0, agents="random")
    assert other != same and other == fork_batch_id(
        plog, step, Resample(), seed=0, seats=dict.fromkeys(range(7), "random")
    )
    a = asyncio.run(run_fork(parent, step, n=2, out=out))
    b = asyncio.run(run_fork(parent, step, n=2, agents="random", out=out))  # same seed, same folder
    assert (a.batch, b.batch, a.resumed, b.resumed) == (same, other, 0, 0)
    assert len(iter_game_dirs(out)) == 4
    assert {read_game(d).header.roster[0].agent for d in iter_game_dirs(out)} == {"scripted", "random"}
