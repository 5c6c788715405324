"""Stated vs logprob readouts (issue 36): one definition in analysis, rendered by report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mafialab.analysis import report
from mafialab.analysis._readouts import BINS, readouts_block
from mafialab.cli import app
from mafialab.record import GAME_FILE, PROBES_FILE, read_game, read_records
from mafialab.rules import WEREWOLF7
from tests.probes.test_logprob_probes import _mock_game

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import asyncio

    out = tmp_path_factory.mktemp("readouts")
    for seed in (1, 2, 3):
        asyncio.run(_mock_game(WEREWOLF7, seed, out, "logprob-suspicion"))
    return out


def _expected(out: Path) -> dict[str, list[tuple[bool, float]]]:
    """Both readouts recomputed from probes.jsonl without the analysis code: (hit, confidence) per answer."""
    got: dict[str, list[tuple[bool, float]]] = {"stated": [], "logprob": []}
    for game in sorted(p.parent for p in out.rglob(GAME_FILE)):
        log = read_game(game)
        mafia = {s.name for s in log.header.roster if s.team == "mafia"}
        for r in read_records(game / PROBES_FILE):
            if r["player"] in mafia:
                continue
            if r.get("distribution"):
                d = r["distribution"]
                top = max(d, key=d.get)
                got["logprob"].append((top in mafia, d[top]))
            elif isinstance(r.get("answer_parsed"), dict):
                a = r["answer_parsed"]
                got["stated"].append((a["player"] in mafia, a["confidence"] / 100))
    return got


def test_report_puts_the_two_readouts_side_by_side(corpus: Path) -> None:
    rep = report(corpus, resamples=50)
    ro = rep.readouts
    assert ro is not None
    want = _expected(corpus)
    for name in ("stated", "logprob"):
        side = getattr(ro, name)
        hits = [h for h, _ in want[name]]
        confs = [c for _, c in want[name]]
        assert side.n == len(want[name]) > 0
        assert side.accuracy == pytest.approx(sum(hits) / len(hits))
        assert side.mean_confidence == pytest.approx(sum(confs) / len(confs))
        assert side.brier == pytest.approx(sum((c - h) ** 2 for h, c in want[name]) / len(hits))
        assert sum(b.n for b in side.bins) == side.n and len(side.bins) == BINS
        assert 0 <= (side.ece or 0) <= 1 and side.ci95.accuracy is not None  # three games: intervals
    assert ro.pairs == min(ro.stated.n, ro.logprob.n) and ro.agreement is not None
    assert ro.dynamics.retest_floor == 0.0 and ro.dynamics.steps > 0
    assert ro.logprob.vote_n > 0


def test_report_text_and_json_show_the_readouts(corpus: Path) -> None:
    res = runner.invoke(app, ["report", str(corpus), "--resamples", "50"])
    assert res.exit_code == 0, res.output
    assert "Top suspect: stated vs log-probability readout" in res.output
    assert "Reliability, side by side" in res.output and "retest floor 0.0000" in res.output
    res = runner.invoke(app, ["report", str(corpus), "--resamples", "50", "--format", "json"])
    data = json.loads(res.output)
    assert set(data["readouts"]) == {"stated", "logprob", "pairs", "agreement", "agreement_ci95", "dynamics"}


def test_no_logprob_answer_means_no_readouts_section() -> None:
    assert readouts_block(np.zeros((0, 10)), lambda x, s: None) is None
