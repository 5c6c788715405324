"""``fork run -n N --ray``: replicas as Ray tasks give the local run's branches (drawn answers included)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import mafialab.harness as harness
from mafialab.cli import app
from mafialab.cli._app import RAY_SEATS
from mafialab.counterfactual import fork_steps
from mafialab.harness import RAY_HINT
from mafialab.models import _cluster
from mafialab.record import GAME_FILE, PROBES_FILE, probe_sort_key, read_game, read_records, strip_clock
from mafialab.testing import OpenAIStub
from tests.helpers import seeded_responder

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def _parent(tmp_path: Path) -> Path:
    res = runner.invoke(
        app,
        ["play", "-r", "werewolf7", "-a", "scripted", "-s", "4", "--probes", "suspicion", "-o", str(tmp_path / "p")],
    )
    assert res.exit_code == 0, res.output
    return next(d for d in (tmp_path / "p").iterdir() if (d / GAME_FILE).is_file())


def _branches(out: Path) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    found = {}
    for d in sorted(out.iterdir()):
        probes = sorted(read_records(d / PROBES_FILE), key=probe_sort_key)
        for p in probes:
            p.pop("ts", None)
            p.pop("latency_ms", None)
        found[d.name] = (strip_clock(read_records(d / GAME_FILE)), probes)
    return found


def test_ray_replicas_equal_the_local_ones(tmp_path: Path, ray_local: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import mafialab.counterfactual._fork as fork_module

    parent = _parent(tmp_path)
    step = next(s for s in fork_steps(read_game(parent)) if s.kind == "vote")
    tasks: list[int] = []
    real = fork_module.ray_run

    async def spy(fn: Any, job: Any, *args: Any, **kwargs: Any) -> Any:
        tasks.append(job.replica)
        assert job.primed is not None  # the replica's fork answer was drawn on the driver
        return await real(fn, job, *args, **kwargs)

    monkeypatch.setattr(fork_module, "ray_run", spy)
    driver_calls: list[tuple[str, bool]] = []  # the driver's own calls, and whether the cluster's limits held them
    for module, name in ((harness, "preflight"), (fork_module, "_draw_ahead")):

        async def on_driver(*args: Any, real: Any = getattr(module, name), name: str = name, **kwargs: Any) -> Any:
            driver_calls.append((name, _cluster.active() is not None))
            return await real(*args, **kwargs)

        monkeypatch.setattr(module, name, on_driver)
    runs = {}
    with OpenAIStub(responder=seeded_responder).in_thread() as stub:
        spec = f"openai/stub?base_url={stub.base_url}&max_n=4"
        base = ["fork", "run", str(parent), "--at", str(step.id), "--resample", "-n", "6", "-a", "scripted",
                "--seat", f"{step.seat}={spec}", "--probes", "suspicion"]  # fmt: skip
        for name, extra in (("local", []), ("ray", ["--ray", "local"])):
            before = len(stub.requests)
            res = runner.invoke(app, [*base, *extra, "--out", str(tmp_path / name)])
            assert res.exit_code == 0, res.output
            fork_msgs = next(r for r in stub.requests[before:] if r.get("n", 1) > 1)["messages"]  # after preflight
            at_fork = [r.get("n", 1) for r in stub.requests[before:] if r["messages"] == fork_msgs]
            runs[name] = (res.output, sorted(at_fork))
    assert sorted(tasks) == list(range(6))  # every replica went through a Ray task
    assert driver_calls == [("preflight", False), ("_draw_ahead", False), ("preflight", True), ("_draw_ahead", True)]
    assert runs["local"][1] == runs["ray"][1] == [2, 4]  # one draw of the six answers (max_n 4), as locally
    a, b = _branches(tmp_path / "local"), _branches(tmp_path / "ray")
    assert len(a) == 6 and sorted(a) == sorted(b)
    for gid in a:
        assert a[gid][0] == b[gid][0], gid  # game.jsonl, clock fields aside
        assert a[gid][1] == b[gid][1] and a[gid][1], gid  # probes (the parent's prefix first), key order
    votes = {
        str(next(e for e in a[gid][0] if e.get("decision") == step.id and e["kind"] == "vote").get("target"))
        for gid in a
    }
    assert len(votes) > 1  # the replicas got different drawn answers
    table = [ln for ln in runs["local"][0].splitlines() if "~" in ln]
    assert table and table == [ln for ln in runs["ray"][0].splitlines() if "~" in ln]


def test_without_ray_fork_run_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parent = _parent(tmp_path)
    step = next(s for s in fork_steps(read_game(parent)) if s.kind == "vote")
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    res = runner.invoke(
        app, ["fork", "run", str(parent), "--at", str(step.id), "-n", "2", "--ray", "auto", "-o", str(tmp_path / "x")]
    )
    assert res.exit_code != 0 and RAY_HINT in res.output
    assert not (tmp_path / "x").exists()
    # a remote seat is served by this process's agent API, which no worker has: refused as `play` does
    res = runner.invoke(
        app, ["fork", "run", str(parent), "--at", str(step.id), "-n", "2", "--seat", "0=remote", "--ray", "auto",
              "-o", str(tmp_path / "y")],
    )  # fmt: skip
    assert res.exit_code == 2 and RAY_SEATS in res.output and RAY_HINT not in res.output
    assert not (tmp_path / "y").exists()
