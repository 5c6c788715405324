"""``--dry-run`` of ``fork`` and ``bifurcate run`` say why a selection is empty and how long the run takes.

The time is the calls times the mean latency measured in the parent's ``calls.jsonl``, and
the line names that basis. An unprobed game's ``--points innocent-votes --per-quadrant N``
used to say "0 points" without saying it needs probe answers; and no estimate gave a time.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.counterfactual import call_timing, estimate_fork, fork_steps
from mafialab.counterfactual._bifurcate import estimate_bifurcation, why_no_points
from mafialab.harness import play_game
from mafialab.record import CALLS_FILE, read_game
from mafialab.rules import MAFIASCOPE7_V2
from tests.helpers import play_probed_parent
from tests.llm_helpers import llm_agents

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


@pytest.fixture(scope="module")
def timed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An unprobed game played by a mock model, each call recorded as taking 1.5 s."""
    agents, _ = llm_agents(MAFIASCOPE7_V2, 5)
    res = asyncio.run(play_game(MAFIASCOPE7_V2, agents, 5, out=tmp_path_factory.mktemp("runs")))
    assert res.path is not None
    path = res.path / CALLS_FILE
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    path.write_text(
        "".join(json.dumps({**r, "latency_ms": 1500} if r.get("kind") == "call" else r) + "\n" for r in recs)
    )
    return res.path


def _first_vote(game: Path) -> int:
    return next(s.id for s in fork_steps(read_game(game)) if s.kind == "vote")


def test_fork_estimate_times_the_calls_at_the_measured_latency(timed: Path) -> None:
    n_calls = sum(1 for x in (timed / CALLS_FILE).read_text().splitlines() if json.loads(x).get("kind") == "call")
    timing = call_timing(read_game(timed))
    assert (timing.seconds_per_call, timing.calls) == (1.5, n_calls)
    assert timing.basis == f"mean 1.50 s of {n_calls} calls in the parent's calls.jsonl"
    est = estimate_fork(timed, _first_vote(timed), n=4)
    assert est.calls > 0 and est.seconds == pytest.approx(est.calls * 1.5)
    assert est.time_basis == timing.basis
    scripted = estimate_fork(timed, _first_vote(timed), n=4, agents="scripted")
    assert scripted.seconds == 0 and scripted.time_basis == "scripted agents make no model calls"
    other = estimate_fork(timed, _first_vote(timed), n=4, agents="openai/gpt-4o?base_url=http://127.0.0.1:9/v1")
    assert other.seconds is None and "holds no call of openai/gpt-4o" in other.time_basis


def test_fork_dry_run_prints_time_and_its_basis(timed: Path, tmp_path: Path) -> None:
    step = _first_vote(timed)
    res = runner.invoke(
        app, ["fork", "run", str(timed), "--at", str(step), "-n", "4", "--dry-run", "-o", str(tmp_path / "f")]
    )
    assert res.exit_code == 0, res.output
    est = estimate_fork(timed, step, n=4)
    minutes = round(est.calls * 1.5 / 60)
    assert f"time about {minutes} min (calls one after another)" in res.stdout
    assert "time: mean 1.50 s of " in res.stdout and "calls.jsonl" in res.stdout


def test_bifurcate_dry_run_times_resamples_at_the_voters_latency(timed: Path, tmp_path: Path) -> None:
    step = _first_vote(timed)
    est = estimate_bifurcation(timed, str(step), resamples=100, keep=3)
    assert est.resample_calls == 100 and est.resample_timing is not None and est.fork_timing is not None
    assert est.resample_timing.seconds_per_call == 1.5 and "of seat " in est.resample_timing.basis
    assert est.seconds == pytest.approx(100 * 1.5 + est.fork_calls * 1.5)
    res = runner.invoke(
        app,
        [
            "bifurcate",
            "run",
            str(timed),
            "--points",
            str(step),
            "-K",
            "100",
            "-M",
            "3",
            "--dry-run",
            "-o",
            str(tmp_path / "b"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "1 point: 100 resample calls, 3 forks or fewer" in res.stdout
    assert "time about " in res.stdout and "Time basis: resamples: mean 1.50 s of " in res.stdout


def test_forks_are_bounded_by_the_resamples_plus_the_factual_one(timed: Path, tmp_path: Path) -> None:
    """-K 5 -M 600 said "600 forks or fewer": a point keeps the factual answer and at most one variant per resample."""
    step = _first_vote(timed)
    est = estimate_bifurcation(timed, str(step), resamples=5, keep=600)
    assert (est.points, est.resample_calls, est.forks) == (1, 5, 6)
    per_fork = estimate_fork(timed, step, n=6)
    assert est.fork_calls == pytest.approx(per_fork.calls)
    assert est.seconds == pytest.approx((5 + per_fork.calls) * 1.5)
    assert estimate_bifurcation(timed, str(step), resamples=50, keep=3).forks == 3  # keep bounds it when smaller
    res = runner.invoke(
        app,
        ["bifurcate", "run", str(timed), "--points", str(step), "-K", "5", "-M", "600", "--dry-run",
         "-o", str(tmp_path / "b")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert f"1 point: 5 resample calls, 6 forks or fewer of about {round(per_fork.calls)} calls" in res.stdout


def test_an_empty_selection_says_why(timed: Path, tmp_path: Path) -> None:
    why = "whose quadrants need probe answers (probes.jsonl)"
    for extra in (["--dry-run"], []):
        res = runner.invoke(
            app,
            [
                "bifurcate",
                "run",
                str(timed),
                "--points",
                "innocent-votes",
                "--per-quadrant",
                "2",
                *extra,
                "-o",
                str(tmp_path / "e"),
            ],
        )
        assert why in res.output and "record games with --probes" in res.output, res.output
        assert res.exit_code == (0 if extra else 2)
    # a probed game: the words name the quadrants its innocent votes fall in
    probed = read_game(play_probed_parent(tmp_path / "probed"))
    words = why_no_points(probed, "innocent-votes", per_quadrant=1)
    assert words.startswith("none of the ") and "is a policy or perception gap (" in words
    named = words.split(" gap (", 1)[1].split(")", 1)[0].split(", ")
    unassessed = words.split("; ", 1)[1].split()[0] if "unassessed" in words else "0"
    innocent = int(words.split()[3])
    assert sum(int(part.split(" ", 1)[0]) for part in named) + int(unassessed) == innocent
    assert "None" not in words


def test_suspicion_only_probes_say_the_votes_are_unassessed(tmp_path: Path) -> None:
    """A game probed with suspicion rankings only said "(None 8)": a Python None in the words."""
    from mafialab.agents import make_agent
    from mafialab.probes import make_probe_observer
    from mafialab.rules import load_rules

    rules = load_rules("mafiascope7")
    agents = [make_agent("scripted", s, rules, 3) for s in range(rules.n_seats)]
    obs = make_probe_observer("suspicion", agents, rules, 3, out=tmp_path, game_id="g")
    assert obs is not None
    asyncio.run(play_game(rules, agents, 3, out=tmp_path, game_id="g", observers=[obs]))
    plog = read_game(tmp_path / "g")
    mafia = {s.name for s in plog.header.roster if s.team == "mafia"}
    innocent = sum(1 for s in fork_steps(plog) if s.kind == "vote" and s.name not in mafia)
    assert innocent > 0
    want = (
        f"none of the {innocent} innocent votes of g is a policy or perception gap: {innocent} unassessed: "
        "quadrants need role_assessment answers (record with --probes default)"
    )
    assert why_no_points(plog, "innocent-votes", per_quadrant=2) == want
    res = runner.invoke(
        app,
        ["bifurcate", "run", str(tmp_path / "g"), "--points", "innocent-votes", "--per-quadrant", "2",
         "--dry-run", "-o", str(tmp_path / "b")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == f"0 points: {want}"
