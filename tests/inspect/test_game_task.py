"""``mafialab/game``: seeded games with the model under evaluation at chosen seats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, get_model

from mafialab.analysis import load_games, report
from mafialab.inspect import seat_figures
from mafialab.inspect._game import seat_outcomes
from mafialab.record import read_game
from mafialab.rules import winner_name
from tests.inspect.conftest import instance, with_usage


def legal_answers(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    """A mock player: a schema-valid answer to every decision and probe (first legal target)."""
    schema = config.response_schema.json_schema.model_dump(exclude_none=True) if config.response_schema else {}
    return with_usage(ModelOutput.from_content(model="mockllm", content=json.dumps(instance(schema))))


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    out = tmp_path_factory.mktemp("inspect-games")
    model = get_model("mockllm/model", custom_outputs=legal_answers, memoize=False)
    logs = inspect_eval(
        "mafialab/game",
        model=model,
        task_args={
            "rules": "werewolf7",
            "seats": "0,3",
            "others": "scripted",
            "probes": "suspicion",
            "games": 2,
            "seed": 5,
            "out": str(out),
        },
        log_dir=str(out / "logs"),
        display="none",
    )
    assert logs[0].status == "success", logs[0].error
    return read_eval_log(logs[0].location), out


def test_each_sample_is_a_logged_game_mafialab_reads(played: tuple[Any, Path]) -> None:
    log, out = played
    assert log.eval.task == "mafialab/game"
    assert [s.id for s in log.samples] == ["seed-5", "seed-6"]
    dirs = []
    for s in log.samples:
        path = Path(s.metadata["game_dir"])
        assert path.parent == out and (path / "game.jsonl").exists() and (path / "probes.jsonl").exists()
        g = read_game(path)
        assert g.header.seed == int(s.id.split("-")[1])
        # the model under evaluation played seats 0 and 3, scripted agents the rest
        agents = [seat.agent for seat in g.header.roster]
        assert agents[0] == agents[3] == "mockllm/model"
        assert {a for i, a in enumerate(agents) if i not in (0, 3)} == {"scripted"}
        dirs.append(path)
    rep = report(out)
    assert rep.games == 2 and rep.probe_records > 0


def test_scores_are_the_seats_figures(played: tuple[Any, Path]) -> None:
    log, out = played
    for s in log.samples:
        score = s.scores["game_scorer"]
        game = next(g for g in load_games(out) if str(g.path) == s.metadata["game_dir"])
        values, _ = seat_figures(game, [0, 3])
        assert score.value == values
        teams = ["mafia" if game.names[x] in game.mafia else "town" for x in (0, 3)]
        assert score.value["win"] == sum(t == game.winner for t in teams) / 2
        assert score.metadata["seats"] == [0, 3]
        # a seat's win is its team's: the explanation says what the seat itself did
        outcomes = seat_outcomes(read_game(Path(s.metadata["game_dir"])), [0, 3])
        assert score.explanation == "\n".join(o["explanation"] for o in outcomes)
        assert [o["decisions"] for o in score.metadata["seat_outcomes"]] == [o["decisions"] for o in outcomes]
        assert all(" with its team; " in line for line in score.explanation.splitlines())
        assert score.answer == f"winner: {winner_name(game.winner, game.rules)}"  # "Village", not "town"
        assert f"winner {winner_name(game.winner, game.rules)} after" in s.output.completion
        # the suspicion battery gives no role assessments: no first-order accuracy, no calibration
        assert "first_order_accuracy" not in score.value and "ece" not in score.value
    metrics = {k: v.value for sc in log.results.scores for k, v in sc.metrics.items()}
    wins = [s.scores["game_scorer"].value["win"] for s in log.samples]
    assert metrics["win"] == pytest.approx(sum(wins) / len(wins))
    assert "vote_coupling_top1" in metrics and 0.0 <= metrics["vote_coupling_top1"] <= 1.0


def test_vote_coupling_counts_only_the_models_seats(played: tuple[Any, Path]) -> None:
    log, out = played
    games = load_games(out)
    # the mock ranks players in the order offered and votes for the first legal target, so its
    # votes and rankings can be checked by hand: every vote of seats 0/3 with a ranking counted
    from mafialab.analysis import get_method
    from mafialab.analysis._metrics import vote_units

    hits = n = 0
    for g in games:
        mine = {g.names[0], g.names[3]}
        for u in vote_units(g, get_method("default")):
            if u.voter in mine and u.top1 is not None:
                n += 1
                hits += u.top1 == u.target
    metrics = {k: v.value for sc in log.results.scores for k, v in sc.metrics.items()}
    assert n > 0
    assert metrics["vote_coupling_top1"] == pytest.approx(hits / n)


def test_other_seats_can_be_a_second_model_by_role(tmp_path: Path) -> None:
    me = get_model("mockllm/model", custom_outputs=legal_answers, memoize=False)
    other = get_model("mockllm/other", custom_outputs=legal_answers, memoize=False)
    logs = inspect_eval(
        "mafialab/game",
        model=me,
        model_roles={"opponent": other},
        task_args={"seats": "2", "others": "role:opponent", "probes": "none", "out": str(tmp_path / "g")},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert logs[0].status == "success", logs[0].error
    s = read_eval_log(logs[0].location).samples[0]
    agents = [seat.agent for seat in read_game(Path(s.metadata["game_dir"])).header.roster]
    assert agents[2] == "mockllm/model" and set(agents[:2] + agents[3:]) == {"mockllm/other"}


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"seats": "0,9"}, "seats: 9 is out of range"),
        ({"seats": "a"}, "seats: 'a' is not a seat number"),
        ({"games": 0}, "games"),
        ({"others": "nonsense"}, "nonsense"),
    ],
)
def test_bad_arguments_are_refused_before_any_game(args: dict[str, Any], match: str, tmp_path: Path) -> None:
    from mafialab.inspect import game

    with pytest.raises(Exception, match=match):
        game(out=str(tmp_path), **args)
    assert not any(tmp_path.iterdir())
