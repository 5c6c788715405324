"""``mafialab/game`` says why a seat's ``win`` is what it is: its team won, not its play."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.inspect._game import seat_outcomes
from mafialab.record import read_game


def test_a_seat_killed_on_night_1_won_with_its_team_and_made_no_decision(tmp_path: Path) -> None:
    # werewolf7 starts with a night; scripted seeds until the first victim is a Villager (no night action)
    for seed in range(1, 30):
        res = CliRunner().invoke(
            app, ["play", "--rules", "werewolf7", "--agents", "scripted", "--seed", str(seed), "--out", str(tmp_path / str(seed))]
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        glog = read_game(next((tmp_path / str(seed)).iterdir()))
        first = next(e for e in glog.events if e.kind == "elimination")
        victim = next(s for s in glog.header.roster if s.seat == first.seat)
        if first.cause == "night" and first.round == 1 and victim.role == "Villager" and glog.winner == "town":
            break
    else:
        raise AssertionError("no seed in 1..29 gives a Villager killed on night 1 in a Village win")
    survivor = next(s.seat for s in glog.header.roster if s.team == "town" and s.seat != victim.seat)
    dead, other = seat_outcomes(glog, [victim.seat, survivor])
    assert dead["won"] is True and dead["decisions"] == 0
    assert dead["eliminated"] == {"round": 1, "cause": "night"}
    assert dead["explanation"] == f"{victim.name} (Villager): won with its team; eliminated night 1, made no decision"
    spoke = sum(1 for e in glog.events if getattr(e, "decision", None) is not None and e.seat == survivor)
    assert other["decisions"] == spoke > 0 and other["won"] is True
    assert f"made {spoke} decision" in other["explanation"]
