"""Bifurcation report: hand-computed values on a small fixture, the MafiaScope import, and
the published guided-experiment figures reproduced from the released data."""

from __future__ import annotations

import csv
import io
import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.analysis import report_bifurcation
from mafialab.analysis._bifurcation import BLOCK_FIELDS, POINT_FIELDS
from mafialab.cli import app
from mafialab.record import (
    FORKS_FILE,
    POINTS_FILE,
    import_mafiascope,
    read_bifurcation,
    read_game,
)
from tests.conftest import MAFIASCOPE, require_real

GUIDED = MAFIASCOPE / "bifurcation_guided"


def _roles(alive: list[str], mafia: list[str]) -> dict[str, str]:
    return {n: ("Mafia" if n in mafia else "Villager") for n in alive}


def _fork_log(fid: str, parent: str, players: list[str], mafia: list[str], winner: str) -> str:
    setup = {
        "game_id": fid,
        "kind": "setup",
        "round": 1,
        "players": [
            {"name": n, "role": "Mafia" if n in mafia else "Villager", "model": "m", "backend": "b"} for n in players
        ],
        "forked_from": parent,
        "fork_point": [1, 5],
        "ts": 1.0,
    }
    over = {"game_id": fid, "kind": "game_over", "round": 2, "winner": winner, "ts": 2.0}
    return json.dumps(setup) + "\n" + json.dumps(over) + "\n"


def make_experiment(root: Path) -> Path:
    """Three points in two parent games, every figure computable by hand (see the tests)."""
    a = ["Ann", "Bo", "Cy", "Di", "Ed"]  # g1: mafia Cy, Di
    b = ["Fay", "Gus", "Hal", "Ivy", "Jo"]  # g2: mafia Hal, Ivy
    points = [
        {"point_id": "p1", "game_id": "g1", "round": 1, "voter": "Ann", "target": "Bo", "winner": "Mafia",
         "quadrant": "policy_gap", "fork": [1, 5], "alive": a, "roles_alive": _roles(a, ["Cy", "Di"])},
        {"point_id": "p2", "game_id": "g2", "round": 1, "voter": "Fay", "target": "Gus", "winner": "Mafia",
         "quadrant": "perception_gap", "fork": [1, 4], "alive": b, "roles_alive": _roles(b, ["Hal", "Ivy"])},
        {"point_id": "p3", "game_id": "g2", "round": 2, "voter": "Jo", "target": "Fay", "winner": "Mafia",
         "quadrant": "policy_gap", "fork": [2, 3], "alive": b, "roles_alive": _roles(b, ["Hal", "Ivy"])},
    ]  # fmt: skip
    forks = [  # (point, variant, source, vote target, winner)
        ("p1", 0, "factual", "Bo", "Mafia"),
        ("p1", 1, "sampled", "Cy", "Villagers"),
        ("p1", 2, "sampled", None, "Mafia"),
        ("p1", 3, "sampled", "Di", "Villagers"),
        ("p2", 0, "factual", "Gus", "Mafia"),
        ("p2", 1, "sampled", "Hal", "Mafia"),
        ("p2", 2, "sampled", "Jo", "Villagers"),
        ("p2", 3, "sampled", "Gus", "Mafia"),
        ("p3", 0, "factual", "Fay", "Mafia"),
        ("p3", 1, "sampled", "Jo", "Mafia"),  # the voter itself: no valid vote
    ]
    root.mkdir(parents=True, exist_ok=True)
    (root / "points.json").write_text(json.dumps({"seed": 7, "per_quadrant": 2, "points": points}))
    lines = []
    for pid, idx, src, tgt, win in forks:
        fid = f"{pid}-v{idx}"
        lines.append({"point_id": pid, "variant_idx": idx, "source": src, "vote_target": tgt,
                      "fork_game_id": fid, "winner": win, "rounds": 2})  # fmt: skip
        p = next(x for x in points if x["point_id"] == pid)
        mafia = [n for n, r in p["roles_alive"].items() if r == "Mafia"]
        (root / "forks" / fid).mkdir(parents=True)
        (root / "forks" / fid / "game.jsonl").write_text(_fork_log(fid, p["game_id"], p["alive"], mafia, win))
    (root / "fork_results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    summary = {
        "title": "hand fixture",
        "sampling": {"n_samples": 10, "n_selected": 4, "temperature": 1.2},
        "points": [
            {"point_id": "p1", "target_dist_samples": {"Bo": 6, "Cy": 3, "None": 1}},
            {"point_id": "p2", "target_dist_samples": {"Gus": 2, "Hal": 8}},
        ],
    }
    (root / "summary.json").write_text(json.dumps(summary))
    return root


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    return make_experiment(tmp_path / "bif")


def test_hand_computed_blocks(experiment: Path) -> None:
    rep = report_bifurcation(experiment, resamples=200)
    pol, per, pooled = rep["by_quadrant"]["policy_gap"], rep["by_quadrant"]["perception_gap"], rep["pooled"]
    assert list(rep["by_quadrant"]) == ["policy_gap", "perception_gap"]
    # policy gap: p1 (4 forks, 2 flips, both on mafia votes) + p3 (2 forks, no flip)
    assert (pol["points"], pol["forks"], pol["flips"]) == (2, 6, 2)
    assert pol["flip_share"] == pytest.approx(2 / 6)
    assert pol["mean_point_flip_share"] == pytest.approx((2 / 4 + 0) / 2)
    assert pol["town_win_when_vote_mafia"] == {"hits": 2, "n": 2, "rate": 1.0}
    assert pol["town_win_otherwise"] == {"hits": 0, "n": 4, "rate": 0.0}
    assert pol["fisher_p"] == pytest.approx(1 / 15)  # only [[2,0],[0,4]] is as extreme: 1/C(6,2)
    assert pol["flips_on_mafia_vote"] == 2
    assert pol["modal_concentration_mean"] == pytest.approx(0.6)  # p3 has no sample counts
    assert pol["factual_is_modal_points"] == 1
    # perception gap: p2 only, one parent game -> no interval
    assert (per["forks"], per["flips"], per["flip_share"]) == (4, 1, 0.25)
    assert per["town_win_when_vote_mafia"] == {"hits": 0, "n": 1, "rate": 0.0}
    assert per["town_win_otherwise"]["hits"] == 1 and per["town_win_otherwise"]["n"] == 3
    assert per["fisher_p"] == pytest.approx(1.0)
    assert per["modal_concentration_mean"] == pytest.approx(0.8) and per["factual_is_modal_points"] == 0
    assert all(v is None for v in per["ci95"].values())
    # pooled: 2x2 [[2,1],[1,6]] -> p = (21 + 1) / C(10,3)
    assert (pooled["points"], pooled["forks"], pooled["flips"]) == (3, 10, 3)
    assert pooled["mean_point_flip_share"] == pytest.approx((0.5 + 0.25 + 0) / 3)
    assert pooled["fisher_p"] == pytest.approx(22 / 120)
    lo, hi = pooled["ci95"]["flip_share"]
    assert 0 <= lo <= 0.3 <= hi <= 1
    assert rep["factual_forks"] == {"flips": 0, "n": 3}


def test_point_rows(experiment: Path) -> None:
    rows = {r["point_id"]: r for r in report_bifurcation(experiment, resamples=50)["points"]}
    assert all(list(r) == list(POINT_FIELDS) for r in rows.values())
    p1 = rows["p1"]
    assert p1["target_counts"] == {"Bo": 6, "Cy": 3, "(no vote)": 1}
    assert p1["modal_concentration"] == pytest.approx(0.6) and p1["factual_is_modal"] is True
    assert (p1["forks"], p1["flips"], p1["flip_share"]) == (4, 2, 0.5)
    assert rows["p2"]["factual_is_modal"] is False
    assert rows["p3"]["target_counts"] is None and rows["p3"]["modal_concentration"] is None


def test_unfinished_fork_is_left_out_and_counted(experiment: Path) -> None:
    path = experiment / "fork_results.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["winner"] = None
    (experiment / "forks" / row["fork_game_id"] / "game.jsonl").write_text(
        (experiment / "forks" / row["fork_game_id"] / "game.jsonl").read_text().splitlines()[0] + "\n"
    )
    path.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    rep = report_bifurcation(experiment, resamples=50)
    assert rep["unfinished_forks"] == 1
    assert rep["by_quadrant"]["policy_gap"]["forks"] == 5 and rep["by_quadrant"]["policy_gap"]["flips"] == 1


def test_no_interval_from_one_parent_game_with_finished_forks(experiment: Path) -> None:
    """Two parent games, but every fork of g1 unfinished: one game holds data, so no interval (MIN_CLUSTERS)."""
    path = experiment / "fork_results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        if row["point_id"] == "p1":
            row["winner"] = None
            log = experiment / "forks" / row["fork_game_id"] / "game.jsonl"
            log.write_text(log.read_text().splitlines()[0] + "\n")  # the setup only: never finished
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = report_bifurcation(experiment, resamples=50)
    assert rep["unfinished_forks"] == 4
    assert rep["pooled"]["forks"] == 6  # g2's p2 and p3
    assert all(v is None for v in rep["pooled"]["ci95"].values())
    assert all(v is None for v in rep["by_quadrant"]["policy_gap"]["ci95"].values())


def test_import_writes_native_directory_with_forks_as_games(experiment: Path, tmp_path: Path) -> None:
    out = tmp_path / "imported"
    rep = import_mafiascope(experiment, out)
    assert rep.bifurcation == out and (rep.points, rep.forks) == (3, 10)
    assert len(rep.imported) == 10 and not rep.problems
    assert len((out / POINTS_FILE).read_text().splitlines()) == 3
    assert len((out / FORKS_FILE).read_text().splitlines()) == 10
    assert read_game(out / "forks" / "p1-v1").winner == "town"
    native = read_bifurcation(out)
    assert native.header.source == "mafiascope" and native.header.parameters["resamples"] == 10
    direct, imported = report_bifurcation(experiment, seed=3), report_bifurcation(out, seed=3)
    assert direct["by_quadrant"] == imported["by_quadrant"] and direct["points"] == imported["points"]


def test_points_without_summary_have_no_lock_in(experiment: Path) -> None:
    (experiment / "summary.json").unlink()
    rep = report_bifurcation(experiment, resamples=50)
    assert rep["pooled"]["modal_concentration_mean"] is None and rep["pooled"]["factual_is_modal_points"] is None
    assert rep["pooled"]["flips"] == 3  # outcomes still read from fork_results.jsonl


def test_bad_inputs_name_file_and_field(experiment: Path, tmp_path: Path) -> None:
    (experiment / "points.json").write_text('{"points": 3}')
    with pytest.raises(ValueError, match=r"points\.json.*'points'"):
        read_bifurcation(experiment)
    with pytest.raises(FileNotFoundError, match="not a bifurcation directory"):
        read_bifurcation(tmp_path)
    res = CliRunner().invoke(app, ["bifurcate", "report", str(tmp_path)])
    assert res.exit_code == 2 and "not a bifurcation directory" in " ".join(res.stderr.split())


def test_newer_bifurcation_schema_is_refused(experiment: Path, tmp_path: Path) -> None:
    out = tmp_path / "native"
    import_mafiascope(experiment, out)
    header = json.loads((out / "bifurcation.json").read_text())
    (out / "bifurcation.json").write_text(json.dumps({**header, "schema_version": 99}))
    with pytest.raises(ValueError, match="schema_version 99 is newer"):
        read_bifurcation(out)


def test_torn_line_is_reported_and_skipped(experiment: Path) -> None:
    with (experiment / "fork_results.jsonl").open("a") as fh:
        fh.write('{"point_id": "p1", "variant_i')
    exp = read_bifurcation(experiment)
    assert len(exp.forks) == 10 and len(exp.problems) == 1 and "fork_results.jsonl:11" in exp.problems[0]


def test_cli_json_and_csv(experiment: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["bifurcate", "report", str(experiment), "-f", "json", "--resamples", "50"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    for block in [*rep["by_quadrant"].values(), rep["pooled"]]:
        assert list(block) == [*BLOCK_FIELDS, "ci95"]
    res = runner.invoke(app, ["bifurcate", "report", str(experiment), "-f", "csv", "--resamples", "50"])
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["block"] for r in rows] == ["policy_gap", "perception_gap", "pooled"]
    assert float(rows[0]["fisher_p"]) == pytest.approx(1 / 15) and rows[2]["forks"] == "10"
    res = runner.invoke(app, ["bifurcate", "report", str(experiment)])
    assert res.exit_code == 0 and "policy_gap" in res.stdout and "1/3" in res.stdout


# ── the released guided experiment ─────────────────────────────────────────────


def _guided() -> Path:
    return require_real(GUIDED)


# published table (MafiaScope §6): points, forks, flip share, P(V win | mafioso),
# P(V win | otherwise), modal concentration, factual = modal; Fisher p for the policy gap
REFERENCE: dict[str, dict[str, Any]] = {
    "policy_gap": {"points": 8, "forks": 160, "flip": 0.056, "vm": (7, 46), "ot": (2, 114), "modal": 0.684, "fm": 4},
    "perception_gap": {"points": 8, "forks": 160, "flip": 0.063, "vm": (1, 19), "ot": (9, 141), "modal": 0.872, "fm": 8},
}  # fmt: skip


def half_up(x: float, digits: int = 3) -> float:
    """``x`` rounded as the published table rounds (half up: 0.0625 -> 0.063)."""
    return float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def test_guided_reference_figures() -> None:
    rep = report_bifurcation(_guided(), resamples=200)
    assert not rep["problems"]
    for q, ref in REFERENCE.items():
        b = rep["by_quadrant"][q]
        assert (b["points"], b["forks"]) == (ref["points"], ref["forks"])
        assert half_up(b["flip_share"]) == half_up(b["mean_point_flip_share"]) == ref["flip"]
        assert (b["town_win_when_vote_mafia"]["hits"], b["town_win_when_vote_mafia"]["n"]) == ref["vm"]
        assert (b["town_win_otherwise"]["hits"], b["town_win_otherwise"]["n"]) == ref["ot"]
        assert half_up(b["modal_concentration_mean"]) == ref["modal"]
        assert b["factual_is_modal_points"] == ref["fm"]
    assert round(rep["by_quadrant"]["policy_gap"]["fisher_p"], 4) == 0.0025
    assert rep["factual_forks"] == {"flips": 0, "n": 16}
    # selected variants are more diverse than random draws: 0.929 vs 0.951, 0.933 vs 0.957
    div = rep["diversity"]
    assert (half_up(div["policy_gap"]["mean_cos_selected"]), half_up(div["policy_gap"]["mean_cos_random"])) == (
        0.929,
        0.951,
    )
    assert (half_up(div["perception_gap"]["mean_cos_selected"]), half_up(div["perception_gap"]["mean_cos_random"])) == (
        0.933,
        0.957,
    )
    # the 495-sample point divides by its real total
    p = next(r for r in rep["points"] if sum(r["target_counts"].values()) == 495)
    assert p["modal_concentration"] == pytest.approx(max(p["target_counts"].values()) / 495)


def test_guided_import_round_trip(tmp_path: Path) -> None:
    src = _guided()
    rep = import_mafiascope(src, tmp_path / "guided")
    assert (rep.points, rep.forks, len(rep.imported)) == (16, 320, 320)
    a, b = report_bifurcation(src, resamples=100), report_bifurcation(tmp_path / "guided", resamples=100)
    assert a["by_quadrant"] == b["by_quadrant"] and a["pooled"] == b["pooled"]
    # the forks' own logs agree with the results file on every winner
    exp = read_bifurcation(tmp_path / "guided")
    for f in exp.forks:
        assert read_game(tmp_path / "guided" / "forks" / str(f.fork_id)).winner == f.winner
