"""Test-retest on frozen contexts: repeats of a battery, the floor, and the report beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import retest_floor
from mafialab.cli import app
from mafialab.probes import probe_points, run_retest
from mafialab.record import RETEST_FILE, read_game, read_retests
from mafialab.testing import OpenAIStub
from tests.helpers import play_probed_parent, seeded_responder


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A probed mafiascope7 game played by scripted agents (seed 3)."""
    return play_probed_parent(tmp_path_factory.mktemp("parents"))


def test_probe_points_are_the_probed_positions(parent: Path) -> None:
    pts = probe_points(read_game(parent))
    assert pts and [p.after_seq for p in pts] == sorted({p.after_seq for p in pts})
    assert {p.kind for p in pts} <= {"message", "round_end"}


async def test_scripted_repeats_agree_and_the_report_prints_the_floor(parent: Path, tmp_path: Path) -> None:
    out = tmp_path / "scripted"
    n = await run_retest(parent, out, points=2, repeats=3, battery="suspicion", agents="scripted")
    recs = read_retests([out / RETEST_FILE])
    assert n == len(recs) > 0 and {r.repeat for r in recs} == {0, 1, 2} and len({r.point for r in recs}) == 2
    floor = retest_floor(recs)
    assert floor is not None and floor["pairs"] == 2 * floor["contexts"]  # 3 repeats: 2 pairs each
    assert floor["flip_rate"] == 0.0  # scripted agents answer the same context the same way
    res = CliRunner().invoke(app, ["report", str(parent), "-f", "json", "--resamples", "20", "--retest", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["dynamics"]["retest"]["flip_rate"] == 0.0


async def test_model_repeats_use_their_own_seeds(parent: Path, tmp_path: Path) -> None:
    async with OpenAIStub(responder=seeded_responder) as stub:
        spec = f"openai/stub?base_url={stub.base_url}"
        await run_retest(parent, tmp_path / "stub", points=1, repeats=4, battery="suspicion", agents=spec)
        seeds = {b.get("seed") for b in stub.requests if b.get("seed") is not None}
    recs = read_retests([tmp_path / "stub" / RETEST_FILE])
    assert {r.repeat for r in recs} == {0, 1, 2, 3}
    assert len(seeds) >= 4  # every repeat asks with its own seed


async def test_too_few_repeats_are_refused(parent: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--repeats"):
        await run_retest(parent, tmp_path / "bad", repeats=1)


def test_cli_refuses_an_unknown_battery(parent: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["retest", str(parent), "--battery", "nope", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "nope" in res.stderr


def test_cli_names_a_game_without_probes_as_the_game_argument(tmp_path: Path) -> None:
    # checked before any work; the message used to start with the path, not with GAME:
    res = CliRunner().invoke(app, ["play", "--agents", "scripted", "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    game = next((tmp_path / "r").iterdir())
    res = CliRunner().invoke(app, ["retest", str(game), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2
    assert " ".join(res.stderr.split()) == (
        f"error: GAME: {game}: no probes.jsonl; retest needs a probed game (mafialab play --probes)"
    )
    assert not (tmp_path / "x" / "retest.jsonl").exists()
