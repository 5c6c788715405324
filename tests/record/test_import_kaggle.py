"""``import kaggle``: Kaggle Game Arena Werewolf replays as mafialab logs (fixtures of tests/data/kaggle).

The replays were written by ``scripts/check_kaggle.sh`` with kaggle-environments 1.33.2 and its
random agents (steps kept without their per-agent observations); the token usage and cost are
added here by hand in the harness's record format (``steps[i][seat].action.kwargs``: ``cost``,
``prompt_tokens``, ``completion_tokens``), since random agents record none.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mafialab.engine import player_view
from mafialab.harness import replay
from mafialab.harness._replay import replay_until_mismatch
from mafialab.record import CALLS_FILE, import_kaggle, iter_call_records, kaggle_rules, read_game
from mafialab.rules import BUILTIN

DATA = Path(__file__).resolve().parents[1] / "data" / "kaggle"
REPLAYS = DATA / "replays"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kaggle")
    rep = import_kaggle(REPLAYS, out)
    assert len(rep.imported) == len(rep.games) == len(list(REPLAYS.glob("*.json")))
    return out


def _logs(out: Path):
    return [read_game(d) for d in sorted(p for p in out.iterdir() if p.is_dir())]


def test_roster_ids_display_names_roles_and_result_come_from_the_replay(imported: Path) -> None:
    for path, log in zip(sorted(REPLAYS.glob("*.json")), _logs(imported), strict=True):
        src = json.loads(path.read_text(encoding="utf-8"))
        end = src["info"]["GAME_END"]
        h = log.header
        assert h.source == "kaggle" and h.rules.name.startswith("kaggle-werewolf")
        assert [s.name for s in h.roster] == [a["id"] for a in src["configuration"]["agents"]]
        assert [s.agent for s in h.roster] == [p["agent"]["display_name"] for p in end["all_players"]]
        assert [s.role for s in h.roster] == [end["all_players_and_role"][s.name] for s in h.roster]
        game_end = next(e for e in log.events if e.kind == "game_end")
        assert game_end.winner == ("town" if end["winner_team"] == "Villagers" else "mafia")
        assert sorted(h.roster[s].name for s in game_end.alive) == sorted(end["survivors_until_last_round_and_role"])
        assert h.meta["game_end"]["winner_team"] == end["winner_team"]


def test_every_event_keeps_its_visibility_and_reasoning_stays_private(imported: Path) -> None:
    for log in _logs(imported):
        kinds = {e.kind for e in log.events}
        assert {"night_action", "speech", "vote", "vote_tally", "elimination", "investigation_result"} <= kinds
        for e in log.events:
            if e.kind == "role_assigned":
                assert e.visibility.seats == (e.seat,) and not e.visibility.public
            if e.kind == "night_action" and e.ability == "kill":
                assert e.visibility.teams == ("mafia",) and not e.visibility.public
            if e.kind == "investigation_result":
                assert e.visibility.seats == (e.seat,)
        reasons = [e for e in log.events if e.kind == "imported" and e.source_kind.endswith("_reasoning")]
        assert reasons and all(e.visibility.seats == (e.seat,) and not e.visibility.public for e in reasons)
        speech = {e.text for e in log.events if e.kind == "speech"}
        assert not speech & {e.text for e in reasons}
        # a villager's view holds no kill vote and nobody else's reasoning
        town = next(s.seat for s in log.header.roster if s.team == "town")
        seen = player_view(log.events, town).events
        assert not any(e.kind == "night_action" and e.ability == "kill" for e in seen)
        assert all(e.seat == town for e in seen if e.kind == "imported" and e.source_kind.endswith("_reasoning"))


def test_unknown_record_kinds_are_kept_verbatim(imported: Path) -> None:
    log = _logs(imported)[0]
    kept = [e for e in log.events if e.kind == "imported" and e.note == "foreign_kind"]
    assert {"phase_divider", "vote_request", "phase_change"} <= {e.source_kind for e in kept}
    assert all("data_type" in e.record and "description" in e.record for e in kept)


def test_an_imported_game_replays_under_its_rule_set_to_the_recorded_end(imported: Path) -> None:
    for log in _logs(imported):
        state, done, stop = replay_until_mismatch(log)
        assert stop is None and state.winner == next(e for e in log.events if e.kind == "game_end").winner
        assert done and replay(log).is_terminal


def test_resume_skips_complete_games_and_redoes_a_missing_or_partial_one(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = import_kaggle(REPLAYS, out)
    victim = first.games[0].out
    assert victim is not None
    shutil.rmtree(victim)
    (out / f".{victim.name}.partial").mkdir()  # an import interrupted while writing
    again = import_kaggle(REPLAYS, out)
    skipped = [g for g in again.games if any(p.endswith("; skipped") for p in g.problems)]
    assert len(skipped) == len(first.games) - 1
    assert (victim / "game.jsonl").is_file() and not (out / f".{victim.name}.partial").exists()


def test_token_usage_and_cost_where_the_replay_records_them(tmp_path: Path) -> None:
    src = json.loads(sorted(REPLAYS.glob("*.json"))[0].read_text(encoding="utf-8"))
    n = 0
    for step in src["steps"]:
        for st in step:
            kw = (st.get("action") or {}).get("kwargs")
            if kw:
                kw.update(cost=0.0015, prompt_tokens=1200, completion_tokens=80, raw_completion='{"target": "x"}')
                n += 1
    src["id"] = "with-usage"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "g.json").write_text(json.dumps(src), encoding="utf-8")
    rep = import_kaggle(tmp_path / "in", tmp_path / "out")
    out = rep.games[0].out
    assert out is not None and (out / CALLS_FILE).is_file()
    calls = [r for _, r in iter_call_records(out) if r.get("kind") == "call"]
    assert calls and len(calls) <= n
    assert all(c["prompt_tokens"] == 1200 and c["completion_tokens"] == 80 and c["cost_usd"] == 0.0015 for c in calls)
    assert {c["purpose"] for c in calls} >= {"vote", "speak", "kill"}
    assert all(c["game_id"] == "with-usage" for c in calls)


def test_a_broken_replay_is_reported_and_the_others_imported(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    shutil.copy(sorted(REPLAYS.glob("*.json"))[0], tmp_path / "in" / "good.json")
    (tmp_path / "in" / "bad.json").write_text("{not json", encoding="utf-8")
    rep = import_kaggle(tmp_path / "in", tmp_path / "out")
    assert len(rep.imported) == 1 and any("not a readable JSON replay" in p for p in rep.problems)
    with pytest.raises(FileNotFoundError, match=r"no \.json replay"):
        import_kaggle(tmp_path / "out", tmp_path / "o2")


def test_kaggle_configurations_map_to_the_built_in_rule_sets() -> None:
    default_agents = [
        {"id": f"Player {i}", "role": r}
        for i, r in enumerate(["Werewolf", "Werewolf", "Seer", "Doctor", "Villager", "Villager", "Villager"], 1)
    ]
    k7 = kaggle_rules(
        {
            "agents": default_agents,
            "discussion_protocol": {"name": "RoundRobinDiscussion", "params": {"max_rounds": 1}},
            "day_voting_protocol": {
                "name": "SequentialVoting",
                "params": {"first_to_vote": "random", "tie_break": "random"},
            },
        }
    )
    assert k7.id == "kaggle-werewolf7-v1" and k7.seat_names[0] == "Player 1"
    names = ["Kai", "Jordan", "Charlie", "Taylor", "Alex", "Jamie", "Quinn", "Casey"]
    roles = ["Werewolf", "Werewolf", "Doctor", "Seer", "Villager", "Villager", "Villager", "Villager"]
    agents = [
        {"id": n, "role": r, "role_params": {"allow_self_save": True} if r == "Doctor" else {}}
        for n, r in zip(names, roles, strict=True)
    ]
    std = {
        "agents": agents,
        "discussion_protocol": {
            "name": "RoundRobinDiscussion",
            "params": {"max_rounds": 2, "first_to_speak": "random"},
        },
        "day_voting_protocol": {"name": "SequentialVoting", "params": {"first_to_vote": "random"}},
    }
    assert kaggle_rules(std).id == "kaggle-werewolf8-v1" == BUILTIN["kaggle-werewolf8"].id
    team = {**std, "day_exile_reveal_level": "team", "night_elimination_reveal_level": "team"}
    r = kaggle_rules(team)
    assert r.name.startswith("kaggle-werewolf-") and r.reveal_team_on_death and not r.reveal_role_on_death


def test_a_tie_kaggle_broke_otherwise_stops_the_replay_there(tmp_path: Path) -> None:
    # tie_replay.json: kaggle-werewolf7 seed 3 played by Kaggle's own random agents, unwrapped; its
    # day-1 vote is tied and Kaggle broke it with Python's global random (docs/import-kaggle.md,
    # allowed difference 1): the replay follows the game up to that vote and stops there, named
    rep = import_kaggle(DATA / "tie_replay.json", tmp_path)
    log = read_game(rep.games[0].out)
    tally = next(e for e in log.events if e.kind == "vote_tally" and e.tie)
    _state, done, stop = replay_until_mismatch(log)
    # the engine drew another of the tied players: the replay stops at the next decision, naming
    # the rebuilt and the recorded elimination of that vote
    assert done and stop is not None and stop.step == done[-1].decision.id + 1
    assert f"('elimination', {tally.round}, " in stop.reason and "differs from the recorded" in stop.reason
    assert (f"('elimination', {tally.round}, {tally.outcome}, 'vote')") in stop.reason
    assert all(d.decision.round <= tally.round for d in done)


def test_a_standard_8_player_replay_imports_under_kaggle_werewolf8(tmp_path: Path) -> None:
    # standard8_replay.json: scripts/check_kaggle.sh --unseen (seed 10003, 8 players, standard.yaml),
    # steps kept without observations. Kaggle dealt the Doctor (and its allow_self_save) to Quinn,
    # whose configuration slot lists a Villager without role parameters: the Doctor's parameters
    # travel with the dealt role, so the game is kaggle-werewolf8, not a kaggle-werewolf-<hash>.
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(DATA / "standard8_replay.json", src / "standard8_replay.json")
    replay_json = json.loads((src / "standard8_replay.json").read_text())
    slot = {a["id"]: a for a in replay_json["configuration"]["agents"]}
    assert slot["Quinn"]["role"] == "Villager" and slot["Charlie"]["role_params"] == {"allow_self_save": True}
    rep = import_kaggle(src, tmp_path / "out")
    assert [g.rules_id for g in rep.imported] == ["kaggle-werewolf8-v1"]
    (log,) = _logs(tmp_path / "out")
    assert log.header.rules_id == "kaggle-werewolf8-v1"
    assert log.header.rules.night.protect_self is True
    assert [s.name for s in log.header.roster if s.role == "Doctor"] == ["Quinn"]
    # The second night's wolf votes tie (Casey: Taylor, Charlie: Kai) and Kaggle's random tie
    # break took Kai: the replay rebuilds every step before it under kaggle-werewolf8, then stops.
    _, done, stop = replay_until_mismatch(log)
    assert done and stop is not None and stop.step == 28
    assert "('elimination', 2, 3, 'night')" in stop.reason and "('elimination', 2, 0, 'night')" in stop.reason
