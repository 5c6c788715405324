"""Running the bifurcation experiment on the fork library: points, selection, resume, report,
and a small offline run on the embedded model (smoke)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mafialab.analysis import report_bifurcation
from mafialab.analysis._bifurcation import BLOCK_FIELDS, POINT_FIELDS
from mafialab.cli import app
from mafialab.counterfactual import (
    Sample,
    farthest_point,
    make_embedder,
    plan_points,
    run_bifurcation,
    select_variants,
)
from mafialab.models import backend_names
from mafialab.record import FORKS_FILE, NO_VOTE, POINTS_FILE, read_bifurcation, read_game
from mafialab.testing import OpenAIStub
from tests.helpers import play_probed_parent, seeded_responder, stub_bifurcation


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A probed mafiascope7 game played by scripted agents (seed 3)."""
    return play_probed_parent(tmp_path_factory.mktemp("parents"))


def test_plan_points(parent: Path) -> None:
    log = read_game(parent)
    mafia = {s.name for s in log.header.roster if s.team == "mafia"}
    every = plan_points(log, "innocent-votes")
    assert every and all(p.step.kind == "vote" and p.step.name not in mafia for p in every)
    assert {p.quadrant for p in every} <= {"correct_good", "policy_gap", "perception_gap", "luck", None}
    assert all(p.factual_target in p.alive and p.step.name in p.alive for p in every)
    drawn = plan_points(log, "random:2", seed=5)
    assert len(drawn) == 2 and {p.quadrant for p in drawn} == {"random"}
    assert [p.point_id for p in drawn] == [p.point_id for p in plan_points(log, "random:2", seed=5)]
    gaps = plan_points(log, "innocent-votes", per_quadrant=1, seed=1)
    assert len(gaps) <= 2 and all(p.quadrant in ("policy_gap", "perception_gap") for p in gaps)
    one = plan_points(log, str(every[0].step.id))
    assert [p.point_id for p in one] == [every[0].point_id]
    # a step named twice (or by its id and its round:phase:index) is one point, forked once
    a, b = every[0].step, every[1].step
    twice = plan_points(log, f"{a.id},{b.id},{a.id},{a.round}:{a.phase}:{a.index}")
    assert [p.point_id for p in twice] == [every[0].point_id, every[1].point_id]
    with pytest.raises(ValueError, match="--points: random:N"):
        plan_points(log, "random:x")
    with pytest.raises(ValueError, match="not a day vote"):
        plan_points(log, "1")


def test_farthest_point_is_max_min() -> None:
    # unit vectors at angles 0, 10, 90, 100, 180 degrees
    ang = np.radians([0, 10, 90, 100, 180])
    emb = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    assert farthest_point(emb, [0], [1, 2, 3, 4], 2) == [4, 2]  # 180 first, then 90 (ties: earlier)
    assert farthest_point(emb, [], [1, 2, 3], 2) == [1, 3]  # no selection: the first candidate starts


def test_select_variants_factual_coverage_then_farthest() -> None:
    ang = np.radians([0, 5, 10, 15, 170, 90])  # row 0 = factual
    emb = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    samples = [
        Sample(0, "a", "Bo"),  # row 1: factual target again, not coverage
        Sample(1, "b", "Cy"),  # row 2: new target
        Sample(2, "c", None),  # row 3: no valid vote, a target of its own
        Sample(3, "d", "Cy"),  # row 4
        Sample(4, "e", "Bo"),  # row 5
    ]
    kept = select_variants(emb, "Bo", samples, keep=5)
    assert kept == [(0, "factual"), (2, "target_coverage"), (3, "target_coverage"), (4, "farthest"), (5, "farthest")]
    assert select_variants(emb, "Bo", samples, keep=2) == [(0, "factual"), (2, "target_coverage")]


async def test_tfidf_embedder_rows_are_unit() -> None:
    emb = await make_embedder("tfidf").embed(["I vote Casey", "I vote Casey now", "", "Dana is lying"])
    assert np.allclose(np.linalg.norm(emb[[0, 1, 3]], axis=1), 1.0) and not emb[2].any()
    assert emb[0] @ emb[1] > emb[0] @ emb[3]
    with pytest.raises(ValueError, match="unknown embedder"):
        make_embedder("word2vec")
    with pytest.raises(ValueError, match="unknown option 'dims'"):
        make_embedder("openai/e5?base_url=http://x/v1&dims=3")


async def test_run_resume_and_report(parent: Path, tmp_path: Path) -> None:
    out = tmp_path / "bif"
    log = read_game(parent)
    point = plan_points(log, "innocent-votes")[0]
    async with OpenAIStub(responder=seeded_responder) as stub:
        kw = stub_bifurcation(stub, resamples=12, keep=4)
        res = await run_bifurcation(log, str(point.step.id), out, **kw)
        assert (res.samples, res.forks) == (12, 4) and not res.errors
        calls = len(stub.requests)
        assert calls == 1 and stub.requests[0]["n"] == 12  # the server's n: one request for the 12 resamples
        exp = read_bifurcation(out)
        (p,) = exp.points
        assert sum(p.target_counts.values()) == 12 and p.decision == point.step.id
        forks = sorted(exp.forks, key=lambda f: f.variant_idx)
        assert [f.variant_idx for f in forks] == [0, 1, 2, 3]
        assert forks[0].source == "factual" and forks[0].vote_target == point.factual_target
        assert forks[0].text == point.factual_text
        assert all(f.winner in ("town", "mafia") and (out / "forks" / str(f.fork_id)).is_dir() for f in forks)
        covered = {f.vote_target for f in forks if f.stage == "target_coverage"}
        assert point.factual_target not in covered
        # resume: nothing is redone
        again = await run_bifurcation(log, str(point.step.id), out, **kw)
        assert (again.samples, again.forks) == (0, 0) and len(stub.requests) == calls
        # a lost outcome line: the finished fork on disk is read back, not replayed
        lines = (out / FORKS_FILE).read_text().splitlines()
        (out / FORKS_FILE).write_text("\n".join(lines[:-1]) + "\n")
        third = await run_bifurcation(log, str(point.step.id), out, **kw)
        assert third.forks == 0 and len(read_bifurcation(out).forks) == 4
        with pytest.raises(ValueError, match="other parameters \\(keep\\)"):
            await run_bifurcation(log, str(point.step.id), out, **{**kw, "keep": 5})
    rep = report_bifurcation(out, resamples=50)
    (row,) = rep["points"]
    assert list(row) == list(POINT_FIELDS) and row["forks"] == 4
    assert row["modal_concentration"] == pytest.approx(max(p.target_counts.values()) / 12)
    assert list(rep["pooled"]) == [*BLOCK_FIELDS, "ci95"]


async def test_resamples_use_the_servers_n_and_resume_by_chunk(parent: Path, tmp_path: Path) -> None:
    out = tmp_path / "bif"
    log = read_game(parent)
    point = plan_points(log, "innocent-votes")[0]
    async with OpenAIStub(responder=seeded_responder) as stub:
        kw = stub_bifurcation(stub, resamples=12, keep=2, sampler_options="&max_n=5")
        res = await run_bifurcation(log, str(point.step.id), out, **kw)
        assert res.samples == 12 and not res.errors
        assert sorted(b.get("n", 1) for b in stub.requests) == [2, 5, 5]  # ceil(12 / 5) requests, concurrent
        spath = out / "samples" / f"{point.point_id}.jsonl"
        rows = [json.loads(x) for x in spath.read_text().splitlines()]
        assert sorted(r["sample_idx"] for r in rows) == list(range(12)) and not any(r["fallback"] for r in rows)
        assert len({(r["target"], r["text"]) for r in rows}) > 1  # the n answers differ
        # an interrupted run: only the first chunk was written; the rest is drawn again, by chunk
        first = [r for r in rows if r["sample_idx"] < 5]
        spath.write_text("".join(json.dumps(r) + "\n" for r in first))
        (out / FORKS_FILE).unlink()
        (out / POINTS_FILE).unlink()
        shutil.rmtree(out / "forks")
        stub.requests.clear()
        again = await run_bifurcation(log, str(point.step.id), out, **kw)
        assert again.samples == 7 and sorted(b.get("n", 1) for b in stub.requests) == [2, 5]
        kept = {r["sample_idx"]: r for r in (json.loads(x) for x in spath.read_text().splitlines())}
        assert sorted(kept) == list(range(12)) and all(kept[r["sample_idx"]] == r for r in first)
        stub.requests.clear()
        third = await run_bifurcation(log, str(point.step.id), out, **kw)
        assert (third.samples, third.forks, len(stub.requests)) == (0, 0, 0)


async def test_resamples_on_a_server_that_ignores_n(parent: Path, tmp_path: Path) -> None:
    log = read_game(parent)
    point = plan_points(log, "innocent-votes")[0]
    async with OpenAIStub(responder=seeded_responder, max_n=1) as stub:  # llama.cpp: n ignored
        kw = stub_bifurcation(stub, resamples=6, keep=1, sampler_options="&max_n=4")
        res = await run_bifurcation(log, str(point.step.id), tmp_path / "bif", **kw)
    assert res.samples == 6 and len(stub.requests) == 6 and stub.choices_sent == 6
    (p,) = read_bifurcation(tmp_path / "bif").points
    assert sum(p.target_counts.values()) == 6


def test_cli_run_dry_run_and_report(parent: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(
        app, ["bifurcate", "run", str(parent), "--points", "random:2", "--dry-run", "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    assert "2 points: 1000 resample calls, 40 forks" in res.stdout
    res = runner.invoke(app, ["bifurcate", "run", str(parent), "--points", "12345", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "no forkable step" in res.stderr
    for bad, why in (("bogus", "expected a decision id"), ("12345", "no forkable step '12345'")):
        res = runner.invoke(
            app, ["bifurcate", "run", str(parent), "--points", bad, "--dry-run", "--out", str(tmp_path / "y")]
        )
        assert res.exit_code == 2 and f"error: --points: {why}" in res.stderr  # the option given, not --at


@pytest.mark.slow
@pytest.mark.smoke
@pytest.mark.xdist_group("embedded")
async def test_small_bifurcation_on_the_embedded_model(parent: Path, tmp_path: Path) -> None:
    """12 resamples of one vote by the embedded model, 4 kept, scripted continuation, offline."""
    assert "local" in backend_names(), "the embedded `local` backend is not registered"
    out = tmp_path / "bif"
    log = read_game(parent)
    point = plan_points(log, "innocent-votes")[0]
    res = await run_bifurcation(
        log, str(point.step.id), out, resamples=12, keep=4, sampler="local/smollm2?max_tokens=96", agents="scripted",
        parallel=2,
    )  # fmt: skip
    assert res.samples == 12 and res.forks + len(res.errors) >= 1
    rep = report_bifurcation(out, resamples=50)
    (row,) = rep["points"]
    assert list(row) == list(POINT_FIELDS)
    counts = read_bifurcation(out).points[0].target_counts or {}
    fallbacks = read_bifurcation(out).points[0].extra["fallback_samples"]
    assert sum(counts.values()) + fallbacks == 12 and NO_VOTE not in counts  # mafiascope7-v1: no no-vote
    for block in [*rep["by_quadrant"].values(), rep["pooled"]]:
        assert list(block) == [*BLOCK_FIELDS, "ci95"] and block["forks"] == row["forks"] >= 1
    assert (out / POINTS_FILE).is_file() and (out / FORKS_FILE).is_file()
