"""Belief dynamics (volatility, top-suspect flips, returns), the retest floor and the quadrant
table: hand-computed fixtures, and MafiaScope's published values on the shared corpora."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.analysis import DEFAULT, MAFIASCOPE, GameData, compute_report, load_games, retest_floor, vote_quadrants
from mafialab.analysis._data import Probe
from mafialab.analysis._dynamics import belief_dynamics
from mafialab.cli import app
from mafialab.record import RetestRecord, import_mafiascope
from mafialab.rules import MAFIASCOPE7
from tests.conftest import MAFIASCOPE as SHARED_MAFIASCOPE
from tests.conftest import require_real


def _probe(n: int, player: str, rnd: int, msg: int, after: int, answer: Any, pid: str = "suspicion_ranking") -> Probe:
    return Probe(
        line=n,
        round=rnd,
        msg=msg,
        position=0,
        player=player,
        probe_id=pid,
        parsed=answer,
        parse_ok=True,
        raw=json.dumps(answer),
        ts=None,
        after_seq=after,
    )


def _ranking(**scores: Any) -> list[dict[str, Any]]:
    return [{"player": k, "score": v} for k, v in scores.items()]


def dynamics_game(game_id: str = "g") -> GameData:
    """A's series (model m1) and B's (model m2); C dies at seq 10. Values worked out below."""
    g = GameData(
        game_id=game_id,
        path=Path(game_id),
        rules=MAFIASCOPE7,
        source="mafialab",
        names=["A", "B", "C", "D"],
        role={"A": "Villager", "B": "Villager", "C": "Villager", "D": "Mafia"},
        mafia={"D"},
        deaths=[(None, 10, "C")],
        agents={"A": "m1", "B": "m2", "C": "m1", "D": "m2"},
    )
    g.probes = [
        _probe(1, "A", 0, 1, 1, _ranking(B=3, C=1, D=0)),  # B .75 C .25 D 0, top B
        _probe(2, "A", 0, 2, 2, _ranking(C=2, B=2, D=0)),  # C .5 B .5: tie -> list order, top C
        _probe(3, "A", 1, 1, 5, _ranking(B=1, C=0, D=-5)),  # B 1 (negative -> 0), top B: a return
        _probe(4, "A", 1, 2, 11, _ranking(D=1, B=1)),  # C dead; top D (new)
        _probe(5, "A", 2, 1, 12, _ranking(B=0, D=0)),  # all zero: skipped
        _probe(6, "A", 2, 2, 13, _ranking(B=1, C=5, D=3)),  # C dead -> B .25 D .75, top D: no flip
        _probe(7, "B", 1, 1, 5, _ranking(C=2, A=1, D=1)),  # top C
        _probe(8, "B", 1, 2, 11, _ranking(A=1, D=1)),  # C died: pair left out of the flip rate
        _probe(9, "B", 1, 3, 11, _ranking(A="x")),  # non-numeric score only: skipped
    ]
    return g


def test_dynamics_hand_computed() -> None:
    d = belief_dynamics(dynamics_game(), DEFAULT)
    # A: L1 .5 (1-2), 1.0 (2-3), 1.0 (3-4, common support {B, D}), .5 (4-6); B: 0 (common {A, D})
    vs, vp, flips, fp, returns = d[("all", "")]
    assert (vs, vp) == pytest.approx((3.0, 5))
    assert (flips, fp, returns) == (3, 4, 1)  # B->C, C->B (return), B->D; D->D no flip
    assert list(d[("model", "m1")]) == pytest.approx([3.0, 4, 3, 4, 1])
    assert list(d[("model", "m2")]) == pytest.approx([0.0, 1, 0, 0, 0])
    assert list(d[("round", "1")]) == pytest.approx([2.0, 3, 2, 2, 1])


def test_report_dynamics_block_and_null_intervals_with_one_game() -> None:
    one = compute_report([dynamics_game()], DEFAULT, resamples=50).model_dump(mode="json")["dynamics"]
    assert one["volatility"] == pytest.approx(0.6) and one["volatility_pairs"] == 5
    assert one["flip_rate"] == pytest.approx(0.75) and one["return_rate"] == pytest.approx(1 / 3)
    assert one["ci95"] == {"volatility": None, "flip_rate": None, "return_rate": None}
    assert one["by_model"]["m2"]["flip_rate"] is None and one["retest"] is None
    two = compute_report([dynamics_game("g1"), dynamics_game("g2")], DEFAULT, resamples=50).model_dump(mode="json")[
        "dynamics"
    ]
    assert two["ci95"]["volatility"] == pytest.approx([0.6, 0.6])  # identical games: a point interval


def _retest(point: int, player: str, rnd: int, repeat: int, answer: Any) -> RetestRecord:
    return RetestRecord(
        game_id="g",
        point=point,
        round=rnd,
        msg_index=1,
        after_seq=5,
        player=player,
        alive=["A", "B", "C", "D"],
        probe_id="suspicion_ranking",
        repeat=repeat,
        answer_parsed=answer,
        parse_ok=True,
    )


def test_retest_floor_hand_computed() -> None:
    recs = [
        _retest(0, "A", 1, 2, _ranking(B=3, C=1)),
        _retest(0, "A", 1, 0, _ranking(B=3, C=1)),  # repeats are ordered by number, not file order
        _retest(0, "A", 1, 1, _ranking(C=3, B=1)),
        _retest(1, "B", 2, 0, _ranking(A=1, D=0)),
        _retest(1, "B", 2, 1, _ranking(A=2, D=1)),
    ]
    floor = retest_floor(recs, {"1": 30, "2": 10})
    assert floor is not None
    assert (floor["contexts"], floor["pairs"], floor["flips"]) == (2, 3, 2)
    assert floor["by_round"] == {
        "1": {"pairs": 2, "flips": 2, "flip_rate": 1.0},
        "2": {"pairs": 1, "flips": 0, "flip_rate": 0.0},
    }
    assert floor["flip_rate_reweighted"] == pytest.approx(0.75)
    # L1: (.75,.25) vs (.25,.75) = 1.0 twice; (1, 0) vs (2/3, 1/3) = 2/3
    assert floor["volatility"] == pytest.approx((1 + 1 + 2 / 3) / 3)
    assert retest_floor([]) is None


def quadrant_game() -> GameData:
    g = GameData(
        game_id="q",
        path=Path("q"),
        rules=MAFIASCOPE7,
        source="mafialab",
        names=["A", "B", "C", "D", "E"],
        role={"A": "Villager", "B": "Villager", "C": "Doctor", "D": "Mafia", "E": "Villager"},
        mafia={"D"},
        votes={(1, n): (None, 15 + i) for i, n in enumerate("ABCDE")},
        tallies=[(1, None, 25, {"A": "D", "B": "C", "C": "D", "D": "A", "E": "A"})],
        agents={n: ("m1" if n in "AB" else "m2") for n in "ABCDE"},
    )
    ra = "role_assessment"
    g.probes = [
        _probe(1, "A", 1, 1, 14, [{"player": "D", "guessed_role": "Mafia"}], ra),  # right, votes D: correct_good
        _probe(2, "B", 1, 1, 14, [{"player": "D", "guessed_role": "mafia member"}], ra),  # right, votes C
        _probe(3, "C", 1, 1, 14, [{"player": "A", "guessed_role": "Mafia"}], ra),  # wrong, votes D: luck
        _probe(4, "C", 1, 2, 20, [{"player": "D", "guessed_role": "Mafia"}], ra),  # after its vote: unused
        _probe(5, "E", 1, 2, 20, [{"player": "D", "guessed_role": "Mafia"}], ra),  # after its vote: no quadrant
    ]
    return g


def test_vote_quadrants_hand_fixture() -> None:
    q = {v.voter: v for v in vote_quadrants(quadrant_game(), DEFAULT)}
    assert set(q) == {"A", "B", "C", "E"}  # the mafia voter D is not a unit
    assert q["A"].quadrant == "correct_good" and q["B"].quadrant == "policy_gap"
    assert q["C"].quadrant == "luck" and q["C"].committed == frozenset({"A"})
    assert q["E"].quadrant is None and q["E"].committed is None
    # the reference reads "labelled Mafia" as the exact string: B's "mafia member" commits nobody
    ref = {v.voter: v for v in vote_quadrants(quadrant_game(), MAFIASCOPE)}
    assert ref["B"].committed == frozenset() and ref["B"].quadrant == "perception_gap"
    table = compute_report([quadrant_game()], DEFAULT, resamples=20).model_dump(mode="json")["quadrants"]
    assert (table["votes"], table["assessed"]) == (4, 3)
    assert table["policy_gap"] == {"n": 1, "share": pytest.approx(1 / 3)}
    assert table["by_model"]["m1"]["correct_good"]["n"] == 1 and table["by_model"]["m2"]["luck"]["n"] == 1


# ── MafiaScope's published values on the shared corpora ───────────────────────


def _shared(sub: str) -> Path:
    return require_real(SHARED_MAFIASCOPE / sub)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for c in ("en_demo", "ru_clean"):
        dst = tmp_path_factory.mktemp(c)
        import_mafiascope(_shared(c), dst)
        out[c] = dst
    return out


# (volatility, pairs), (flip rate, pairs), (return rate, flips): README "Belief dynamics"
PUBLISHED = {
    "en_demo": ((0.3256, 635), (0.5475, 590), (0.6254, 323)),
    "ru_clean": ((0.3141, 239), (0.4783, 230), (0.5182, 110)),
}


@pytest.mark.parametrize("corpus", sorted(PUBLISHED))
def test_dynamics_reproduce_published_values(corpus: str, corpora: dict[str, Path]) -> None:
    dyn = compute_report(load_games(corpora[corpus]), "mafiascope", resamples=100).model_dump(mode="json")["dynamics"]
    (vol, vp), (fr, fp), (rr, fl) = PUBLISHED[corpus]
    assert round(dyn["volatility"], 4) == vol and dyn["volatility_pairs"] == vp
    assert round(dyn["flip_rate"], 4) == fr and dyn["flip_pairs"] == fp
    assert round(dyn["return_rate"], 4) == rr and dyn["flips"] == fl
    lo, hi = dyn["ci95"]["volatility"]
    assert lo < vol < hi


def test_quadrants_agree_with_the_released_points(corpora: dict[str, Path]) -> None:
    """Every released bifurcation point from an en_demo game gets the quadrant they gave it."""
    points = json.loads((_shared("bifurcation_guided") / "points.json").read_text())["points"]
    ours = {
        (g.game_id, v.round, v.voter): v for g in load_games(corpora["en_demo"]) for v in vote_quadrants(g, MAFIASCOPE)
    }
    games = {k[0] for k in ours}
    checked = 0
    for p in points:
        if p["game_id"] in games:
            v = ours[(p["game_id"], p["round"], p["voter"])]
            assert (v.quadrant, v.target, list(v.alive)) == (p["quadrant"], p["target"], sorted(p["alive"]))
            checked += 1
    assert checked == 8


def test_report_cli_prints_dynamics_and_quadrants(corpora: dict[str, Path], tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(corpora["ru_clean"]), "-m", "mafiascope", "--resamples", "50"])
    assert res.exit_code == 0, res.output
    assert "Belief dynamics" in res.stdout and "quadrant" in res.stdout
    rec = _retest(0, "Alex", 1, 0, _ranking(Bailey=1)).model_copy(update={"alive": ["Alex", "Bailey", "Casey"]})
    rec2 = rec.model_copy(update={"repeat": 1, "answer_parsed": _ranking(Casey=1)})
    (tmp_path / "retest.jsonl").write_text(rec.model_dump_json() + "\n" + rec2.model_dump_json() + "\n")
    res = CliRunner().invoke(
        app, ["report", str(corpora["ru_clean"]), "-f", "json", "--resamples", "20", "--retest", str(tmp_path)]
    )
    floor = json.loads(res.stdout)["dynamics"]["retest"]
    assert (floor["pairs"], floor["flips"], floor["flip_rate"]) == (1, 1, 1.0)
