"""QA regressions: `play` never mixes a new game with stale log files of an earlier run."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafialab.agents import make_agent
from mafialab.harness import default_game_id, play_game, run_config
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE
from mafialab.rules import WEREWOLF7


@pytest.mark.parametrize("stale", [PROBES_FILE, CALLS_FILE, GAME_FILE])
async def test_play_refuses_a_game_dir_holding_a_stale_log_file(tmp_path: Path, stale: str) -> None:
    agents = [make_agent("scripted", s, WEREWOLF7, 0) for s in range(WEREWOLF7.n_seats)]
    game_dir = tmp_path / default_game_id(WEREWOLF7, 0, [a.label for a in agents], run_config(agents))
    game_dir.mkdir()
    (game_dir / stale).write_text('{"old": "record"}\n')
    with pytest.raises(ValueError, match=stale.replace(".", r"\.")):
        await play_game(WEREWOLF7, agents, 0, out=tmp_path)
    assert (game_dir / stale).read_text() == '{"old": "record"}\n'
    assert sorted(p.name for p in game_dir.iterdir()) == [stale]


async def test_play_into_a_fresh_dir_still_writes(tmp_path: Path) -> None:
    agents = [make_agent("scripted", s, WEREWOLF7, 0) for s in range(WEREWOLF7.n_seats)]
    res = await play_game(WEREWOLF7, agents, 0, out=tmp_path)
    assert (tmp_path / res.game_id / GAME_FILE).is_file()


async def _one_game(out: Path) -> Path:
    agents = [make_agent("scripted", s, WEREWOLF7, 3) for s in range(WEREWOLF7.n_seats)]
    res = await play_game(WEREWOLF7, agents, 3, out=out)
    return out / res.game_id


async def test_a_log_cut_short_replays_and_resumes(tmp_path: Path) -> None:
    from mafialab.harness import recorded_actions, replay, resume
    from mafialab.record import read_game

    game = await _one_game(tmp_path / "full")
    full = read_game(game)
    lines = (game / GAME_FILE).read_text().splitlines(keepends=True)
    # cut the log after the last action's line (the engine's events after it were never written),
    # leaving a torn half line at the end as a crash would
    last_action = max(i for i, line in enumerate(lines) if '"decision"' in line)
    cut = tmp_path / "cut" / game.name
    cut.mkdir(parents=True)
    (cut / GAME_FILE).write_text("".join(lines[: last_action + 1]) + lines[last_action + 1][:20])
    log = read_game(cut)
    assert len(log.events) < len(full.events)
    state = replay(log)  # used to raise StopIteration
    assert state.is_terminal and state.winner == full.winner
    step = recorded_actions(log.events)[-3].decision
    agents = [make_agent("scripted", s, WEREWOLF7, 3) for s in range(WEREWOLF7.n_seats)]
    resumed = await resume(log, step, agents)
    assert resumed.is_terminal


async def test_a_changed_event_is_still_a_mismatch(tmp_path: Path) -> None:
    import json

    from mafialab.harness import ReplayMismatch, replay
    from mafialab.record import read_game

    game = await _one_game(tmp_path)
    recs = [json.loads(line) for line in (game / GAME_FILE).read_text().splitlines()]
    elim = next(r for r in recs if r["kind"] == "elimination")
    elim["cause"] = "vote" if elim["cause"] == "night" else "night"
    (game / GAME_FILE).write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(ReplayMismatch, match=f"event {elim['seq']} differs"):
        replay(read_game(game))


def test_real_russian_games_rebuild_under_mafiascope7_v2(tmp_path: Path, mafiascope_real: Path) -> None:
    from mafialab.harness import replay
    from mafialab.record import import_mafiascope, read_game

    # standard MafiaScope games rebuild under mafiascope7-v2 (RU action lines included)
    rep = import_mafiascope(mafiascope_real / "ru_clean", tmp_path / "ru")
    assert rep.imported
    for gi in rep.imported:
        assert gi.out is not None
        g = read_game(gi.out)
        assert replay(g).winner == g.winner


def test_an_imported_game_without_action_lines_is_refused_at_its_step(tmp_path: Path, mafiascope_dir: Path) -> None:
    from mafialab.harness import ReplayMismatch, replay
    from mafialab.record import import_mafiascope, read_game

    # our fixture's doctor speaks freely ("I protect Gray") with no ACTION: line: refused, naming the step
    rep = import_mafiascope(mafiascope_dir / "ru_clean", tmp_path / "ru")
    gi = next(gi for gi in rep.imported if gi.out is not None and "000000000003" in str(gi.out))
    assert gi.out is not None
    with pytest.raises(ReplayMismatch, match=r"^step 7 \(round 1 night, Dana protect\): the recorded protect target"):
        replay(read_game(gi.out))


def test_an_imported_variant_is_refused_by_name(tmp_path: Path, mafiascope_dir: Path) -> None:
    import dataclasses

    from mafialab.harness import ReplayMismatch, replay
    from mafialab.record import import_mafiascope, read_game

    # a MafiaScope variant the engine has no rule set for (say a Sheriff variant without the
    # Werewolf skin) is refused, naming its rule set
    rep = import_mafiascope(mafiascope_dir / "game_family_showcase", tmp_path / "gf")
    skin = read_game(next(gi.out for gi in rep.imported if gi.rules_id == "mafiascope7-werewolf-v1"))
    rules = skin.header.rules.model_copy(update={"name": "mafiascope_sheriff"})
    variant = dataclasses.replace(skin, header=skin.header.model_copy(update={"rules": rules}))
    with pytest.raises(ReplayMismatch, match="imported from mafiascope with rule set mafiascope_sheriff-v1"):
        replay(variant)


def test_imported_werewolf_skins_replay_under_their_builtins(tmp_path: Path, mafiascope_dir: Path) -> None:
    from mafialab.harness import ReplayMismatch, replay, replay_rules, replay_until_mismatch
    from mafialab.record import import_mafiascope, read_game

    rep = import_mafiascope(mafiascope_dir / "game_family_showcase", tmp_path / "gf")
    by_rules = {gi.rules_id: read_game(gi.out) for gi in rep.imported if gi.out is not None}
    skin, seer = by_rules["mafiascope7-werewolf-v1"], by_rules["mafiascope7-werewolf-seer-v1"]
    assert replay_rules(skin).id == "mafiascope7-werewolf-v2"
    assert replay_rules(seer).id == "mafiascope7-werewolf-seer-v2"
    # the skin game replays to its recorded winner, its deaths in the recorded order
    state = replay(skin)
    assert state.winner == skin.winner == "town"
    deaths = [(e.round, e.seat, e.cause) for e in skin.events if e.kind == "elimination"]
    assert [(e.round, e.seat, e.cause) for e in state.events if e.kind == "elimination"] == deaths
    # the Seer's first check replays from the source's result record (its private channel) ...
    _, done, stop = replay_until_mismatch(seer)
    checks = [(r.decision.round, r.action.target) for r in done if r.decision.kind == "investigate"]
    recorded = [(e.round, e.target) for e in seer.events if e.kind == "investigation_result"]
    assert checks == recorded == [(1, recorded[0][1])]
    # ... and the replay stops, naming the step, at the second check, whose source turn came back empty
    assert stop is not None and "round 2 night, Dana investigate" in stop.reason and "empty_response" in stop.reason
    with pytest.raises(ReplayMismatch, match="Dana investigate"):
        replay(seer)


def test_real_showcase_skins_rebuild_under_their_builtins_to_their_first_failed_turn(
    tmp_path: Path, mafiascope_real: Path
) -> None:
    from mafialab.harness import replay_rules, replay_until_mismatch
    from mafialab.record import import_mafiascope, read_game

    # MafiaScope's own Werewolf-skin and Seer games: each maps onto its built-in and replays
    # until a turn the source logged empty (their intros), named in the stop
    rep = import_mafiascope(mafiascope_real / "game_family_showcase", tmp_path / "gf")
    rules = {gi.game_id[:8]: gi.rules_id for gi in rep.imported}
    assert rules == {
        "10a9ec09": "mafiascope7-werewolf-v1",
        "07c3255e": "mafiascope7-werewolf-seer-v1",
        "4a9a8dc9": "mafiascope-resistance-v1",
    }
    for gi in rep.imported:
        if gi.rules_id.startswith("mafiascope-resistance"):  # a mission game (tests/missions)
            continue
        g = read_game(gi.out)  # type: ignore[arg-type]
        assert replay_rules(g).name == g.header.rules.name
        assert {s.role for s in g.header.roster} <= {"Werewolf", "Guardian", "Seer", "Villager"}
        _, done, stop = replay_until_mismatch(g)
        assert done and stop is not None and "round 0 intro" in stop.reason and "empty_response" in stop.reason
