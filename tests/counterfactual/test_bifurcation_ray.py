"""``bifurcate run --ray``: resamples and forks as Ray tasks write the local run's directory, and resume so."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.cli._app import RAY_SEATS
from mafialab.counterfactual import plan_points
from mafialab.harness import RAY_HINT
from mafialab.record import FORKS_FILE, GAME_FILE, POINTS_FILE, SAMPLES_DIR, read_game, read_records, strip_clock
from mafialab.testing import OpenAIStub
from tests.helpers import play_probed_parent, seeded_responder

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def _dir(out: Path) -> dict[str, Any]:
    """Everything a bifurcation run wrote, in an order that does not depend on arrival."""
    samples = {
        f.name: sorted(read_records(f), key=lambda r: r["sample_idx"]) for f in sorted((out / SAMPLES_DIR).iterdir())
    }
    forks = sorted(read_records(out / FORKS_FILE), key=lambda r: (r["point_id"], r["variant_idx"]))
    games = {d.name: strip_clock(read_records(d / GAME_FILE)) for d in sorted((out / "forks").iterdir())}
    return {"samples": samples, "points": read_records(out / POINTS_FILE), "forks": forks, "games": games}


def test_ray_bifurcation_equals_the_local_run_and_resumes_the_same_way(
    tmp_path: Path, ray_local: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mafialab.counterfactual._bifurcate as bif_module
    import mafialab.counterfactual._fork as fork_module

    parent = play_probed_parent(tmp_path / "parents")
    point = plan_points(read_game(parent), "innocent-votes")[0]
    monkeypatch.setattr(bif_module, "SAMPLES_PER_TASK", 5)  # 12 samples in chunks of 5 (max_n): three tasks
    tasks: list[str] = []
    for module, kind in ((bif_module, "samples"), (fork_module, "fork")):

        def spy(fn: Any, *args: Any, real: Any = module.ray_run, kind: str = kind, **kwargs: Any) -> Any:
            tasks.append(kind)
            return real(fn, *args, **kwargs)

        monkeypatch.setattr(module, "ray_run", spy)
    with OpenAIStub(responder=seeded_responder).in_thread() as stub:
        spec = f"openai/stub?base_url={stub.base_url}&max_n=5"
        base = ["bifurcate", "run", str(parent), "--points", str(point.step.id), "--resamples", "12", "--keep", "4",
                "--sampler", spec, "-a", "scripted"]  # fmt: skip
        local = runner.invoke(app, [*base, "--out", str(tmp_path / "local")])
        assert local.exit_code == 0, local.output
        n_local = len(stub.requests)
        fanned = runner.invoke(app, [*base, "--out", str(tmp_path / "ray"), "--ray", "local"])
        assert fanned.exit_code == 0, fanned.output
        draws = next(r["messages"] for r in stub.requests if r.get("n", 1) > 1)  # the voter's frozen context

        def chunks(reqs: list[dict[str, Any]]) -> list[tuple[int, Any]]:
            return sorted((r.get("n", 1), r.get("seed")) for r in reqs if r["messages"] == draws)

        # the same draws: chunks of 5, 5 and 2 with the same seeds (the preflight is made once per process)
        assert chunks(stub.requests[:n_local]) == chunks(stub.requests[n_local:])
        assert [n for n, _ in chunks(stub.requests[:n_local])] == [2, 5, 5]
        assert sorted(tasks) == ["fork"] * 4 + ["samples"] * 3
        a, b = _dir(tmp_path / "local"), _dir(tmp_path / "ray")
        assert sum(len(v) for v in a["samples"].values()) == 12 and len(a["forks"]) == 4 == len(a["games"])
        assert a == b  # samples, point, outcomes and fork logs (clock fields aside)
        for res in (local, fanned):
            assert "1 point; 12 new samples, 4 new forks" in res.output

        # resume under Ray: nothing finished is redone; a fork lost by an interruption is played again
        out = tmp_path / "ray"
        lost = b["forks"][2]
        keep = [r for r in read_records(out / FORKS_FILE) if r["variant_idx"] != lost["variant_idx"]]
        (out / FORKS_FILE).write_text("".join(json.dumps(r) + "\n" for r in keep))
        shutil.rmtree(out / "forks" / lost["fork_id"])
        before = len(stub.requests)
        tasks.clear()
        again = runner.invoke(app, [*base, "--out", str(out), "--ray", "local"])
        assert again.exit_code == 0, again.output
        assert "0 new samples, 1 new fork " in again.output
        assert tasks == ["fork"] and len(stub.requests) == before  # no sample redrawn (scripted forks)
    after = _dir(out)
    assert after["games"] == a["games"] and after["samples"] == a["samples"]
    assert sorted(after["forks"], key=lambda r: r["variant_idx"]) == a["forks"]


def test_without_ray_bifurcate_run_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parent = play_probed_parent(tmp_path / "parents")
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    res = runner.invoke(
        app, ["bifurcate", "run", str(parent), "--points", "random:1", "--resamples", "2", "--keep", "1",
              "-a", "scripted", "--sampler", "scripted", "--ray", "auto", "--out", str(tmp_path / "x")],
    )  # fmt: skip
    assert res.exit_code != 0 and RAY_HINT in res.output
    assert not (tmp_path / "x").exists()
    for given in (["-a", "remote"], ["--sampler", "human:ann"]):  # seats only this process could serve
        res = runner.invoke(
            app, ["bifurcate", "run", str(parent), "--points", "random:1", *given, "--ray", "auto",
                  "--out", str(tmp_path / "y")],
        )  # fmt: skip
        assert res.exit_code == 2 and RAY_SEATS in res.output, given
    assert not (tmp_path / "y").exists()
