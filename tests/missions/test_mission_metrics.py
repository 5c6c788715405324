"""The instrument on mission games: probes at messages and mission ends; F1-F4 apply; the rest says why not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mafialab.agents import make_agent
from mafialab.analysis import compute_report, load_games
from mafialab.analysis._metrics import get_method, vote_coupling
from mafialab.harness import play_game
from mafialab.probes import make_probe_observer
from mafialab.record import PROBES_FILE, read_game, read_records
from mafialab.rules import BUILTIN


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mission")
    rules = BUILTIN["resistance5"]
    for seed in (0, 1):
        agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
        runner = make_probe_observer("mission", agents, rules, seed, out=out)
        asyncio.run(play_game(rules, agents, seed, out=out, observers=[runner]))
    return out


def test_probes_fire_after_each_message_and_at_each_missions_end(probed: Path) -> None:
    game = sorted(probed.iterdir())[0]
    log = read_game(game)
    probes = list(read_records(game / PROBES_FILE))
    speeches = [e for e in log.events if e.kind == "speech"]
    # one battery per seat after each public message, keyed by its round and index
    after_msgs = {(p["round"], p["msg_index"]) for p in probes if p["msg_index"] >= 0}
    assert after_msgs == {(e.round, e.index) for e in speeches}
    assert {p["probe_id"] for p in probes} == {"role_assessment", "suspicion_ranking", "social_map", "planned_action"}
    assert all(p["parse_ok"] and p.get("schema_ok", True) for p in probes)
    planned = [p["answer_parsed"]["action"] for p in probes if p["probe_id"] == "planned_action"]
    assert planned and set(planned) <= {"approve", "reject"}
    ends = {p["round"] for p in probes if p["msg_index"] == -1}
    results = [e for e in log.events if e.kind == "mission_result"]
    assert ends == {e.round for e in results[:-1]}  # every mission but the last (the game is over then)


def test_metrics_apply_and_elimination_ones_say_not_applicable(probed: Path) -> None:
    games = load_games(probed)
    assert {g.family for g in games} == {"mission"} and all(g.team_votes for g in games)
    f4 = vote_coupling(games[0], get_method("default"))
    n = sum(v[1] for (_, m), v in f4.items() if m == "top1")
    assert n == len([tv for tv in games[0].team_votes])  # every counted team vote has a prior ranking
    rep = compute_report(games, resamples=20)
    assert rep.games == 2 and not rep.skipped
    assert rep.first_order and rep.calibration.n > 0 and rep.second_order.all.pairs > 0
    assert rep.vote_coupling.innocents.top1.n > 0 and rep.vote_coupling.innocents.top1.chance == 0.5
    assert rep.not_applicable == {
        "quadrants": "not applicable to this rule set (a mission game has no elimination vote)",
        "vote_coupling_baselines": "not applicable to this rule set (a mission game has no elimination vote)",
    }
    assert "not_applicable" in rep.model_dump(mode="json")
