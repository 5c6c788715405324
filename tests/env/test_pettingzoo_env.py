"""mafialab.env: PettingZoo's own checks, rewards, seeds, logs like `play`, and no leaks in observations."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from typer.testing import CliRunner

from mafialab.agents import RandomAgent, Renderer, load_prompt_pack
from mafialab.cli import app
from mafialab.engine import can_see, deal_roles, player_view
from mafialab.env import KINDS, Rewards, env, parallel_env
from mafialab.harness import play_game
from mafialab.record import GAME_FILE, read_game
from mafialab.render import EventRenderer
from mafialab.rules import load_rules
from mafialab.viewer import build_site

RULES = ("werewolf7", "mafiascope7", "arena12")


def _random_episode(e: Any, seed: int, text: Any = None) -> dict[str, float]:
    """Play one AEC game with masked random actions; the rewards each seat collected."""
    e.reset(seed=seed)
    for i, a in enumerate(e.possible_agents):
        e.action_space(a).seed(seed + i)
    total = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        _obs, _reward, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            continue
        act = e.action_space(agent).sample(info["action_mask"])
        if text is not None:
            act["text"] = text(agent, e)
        e.step(act)
        for a, r in e.rewards.items():
            total[a] += r
    return total


# ---------------------------------------------------------------------- PettingZoo's own tests
@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_api_test(rules: str) -> None:
    api_test(env(rules, seed=0), num_cycles=1000)


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_seed_test(rules: str) -> None:
    seed_test(lambda: env(rules), num_cycles=100)


@pytest.mark.parametrize("rules", RULES)
def test_pettingzoo_parallel_api_and_seed_test(rules: str) -> None:
    parallel_api_test(parallel_env(rules, seed=0), num_cycles=1000)
    parallel_seed_test(lambda: parallel_env(rules), num_cycles=100)


# ---------------------------------------------------------------------- rewards and seeds
@pytest.mark.parametrize("rules", RULES)
def test_random_episode_gives_the_winning_team_plus_one(rules: str) -> None:
    e = env(rules)
    total = _random_episode(e, seed=4)
    st = e.episode.state
    assert st.is_terminal and st.winner in ("town", "mafia")
    assert e.agents == []  # every seat terminated and stepped out
    for s, a in enumerate(e.possible_agents):
        assert total[a] == (1.0 if st.teams[s] == st.winner else -1.0), (a, st.teams[s], st.winner)
    assert e.episode.fallbacks == 0  # masked choices and non-empty text are always legal


def test_rewards_are_configurable_and_an_illegal_action_is_a_logged_fallback(tmp_path: Path) -> None:
    e = env("werewolf7", out=tmp_path, rewards=Rewards(win=2.0, loss=0.5, invalid=-0.25))
    e.reset(seed=2)
    total = dict.fromkeys(e.possible_agents, 0.0)
    illegal = 0
    for agent in e.agent_iter():
        _obs, _r, term, _t, info = e.last()
        if term:
            e.step(None)
            continue
        mask = info["action_mask"]["choice"]
        offered_not = np.flatnonzero(mask[:-1] == 0)  # seats the decision does not offer
        if illegal < 3 and mask[-1] == 0 and len(offered_not):
            bad = int(offered_not[0])
            e.step({"choice": bad, "text": "x"})
            illegal += 1
            assert "not a legal option" in e.infos[agent]["fallback"]
        else:
            e.step(e.action_space(agent).sample(info["action_mask"]))
        for a, r in e.rewards.items():
            total[a] += r
    st = e.episode.state
    assert illegal == 3 and e.episode.fallbacks == 3
    final = {a: 2.0 if st.teams[s] == st.winner else 0.5 for s, a in enumerate(e.possible_agents)}
    assert sum(total.values()) == pytest.approx(sum(final.values()) - 3 * 0.25)
    log = read_game(e.game_dir)
    assert log.status is not None and log.status.fallbacks == 3 and log.status.decisions == e.episode.decisions
    assert sum(1 for ev in log.events if getattr(ev, "fallback", False)) == 3


def test_seeds_are_the_engines() -> None:
    e = env("werewolf7", seed=11)
    e.reset()
    assert e.episode.state.seed == 11
    e.reset()
    assert e.episode.state.seed == 12  # the next game, as `play --games` numbers them
    e.reset(seed=5)
    first = e.observe(e.agent_selection)
    assert e.episode.state.roles == deal_roles(load_rules("werewolf7"), 5)
    e.reset(seed=5)
    again = e.observe(e.agent_selection)
    assert first["text"] == again["text"] and first["role"] == again["role"]


# ---------------------------------------------------------------------- spaces
def test_spaces_and_observation_structure() -> None:
    e = env("arena12", seed=1)
    e.reset()
    rules = load_rules("arena12")
    act = e.action_space("seat_0")
    assert act["choice"].n == rules.n_seats + 1
    text = act["text"]
    assert text.max_length == rules.day.text_chars
    assert text.contains("Je soupçonne Ω — 我怀疑她 ✓\nok") and not text.contains("a\x00b")
    assert not text.contains("\u200b") and not text.contains("\ud800")  # format and surrogate code points
    assert len(text.character_set) > 100_000
    text.seed(3)
    s = text.sample()
    assert 1 <= len(s) <= text.max_length and text.contains(s)
    agent = e.agent_selection
    obs = e.observe(agent)
    assert e.observation_space(agent).contains(obs)
    d = e.episode.decision(int(agent.split("_")[1]))
    assert d is not None and KINDS[int(obs["decision"]["kind"]) - 1] == d.kind
    assert obs["choice_mask"].tolist() == [1 if i in d.options else 0 for i in range(rules.n_seats + 1)]
    waiting = next(a for a in e.possible_agents if e.episode.decision(int(a.split("_")[1])) is None)
    w = e.observe(waiting)
    assert w["decision"]["kind"] == 0 and w["choice_mask"].sum() == 0


def test_speech_observation_is_the_llm_prompt_and_mask_says_nobody() -> None:
    e = env("werewolf7", seed=3)
    e.reset()
    while e.episode.decision(int(e.agent_selection.split("_")[1])).kind != "speak":
        e.step(e.action_space(e.agent_selection).sample(e.infos[e.agent_selection]["action_mask"]))
    agent = e.agent_selection
    seat = int(agent.split("_")[1])
    st = e.episode.state
    d = e.episode.decision(seat)
    r = Renderer(load_prompt_pack("en"), st.rules)
    view = player_view(st.events, seat)
    msgs, _, _ = r.context(view)
    expected = "\n\n".join([*(m.content for m in msgs), r.decision_prompt(d, view, d.max_chars)])
    obs = e.observe(agent)
    assert obs["text"] == expected
    assert obs["choice_mask"].tolist() == [0] * 7 + [1] and obs["decision"]["needs_text"] == 1
    e.step({"choice": 7, "text": "I trust Avery." + "!" * 5000})  # cut to the rule set's length
    speech = next(ev for ev in reversed(e.episode.state.events) if ev.kind == "speech")
    assert speech.text.startswith("I trust Avery.") and len(speech.text) == st.rules.day.text_chars


def test_render_gives_the_transcript() -> None:
    e = env("werewolf7", render_mode="ansi")
    _random_episode(e, seed=6)
    text = e.render()
    assert isinstance(text, str)
    names = e.episode.state.names
    assert text.splitlines() == e.episode.transcript_lines() and any(n in text for n in names)
    assert text.splitlines()[-1] != ""


# ---------------------------------------------------------------------- logs like `play`
def test_random_episode_logs_open_in_report_and_viewer(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    e = env("werewolf7", out=runs, agent_labels=[f"policy-{s}" for s in range(7)])
    _random_episode(e, seed=8)
    game = e.game_dir
    assert game is not None and (game / GAME_FILE).is_file()
    log = read_game(game)
    assert log.header.seed == 8 and log.header.meta["env"] == "pettingzoo"
    assert log.winner == e.episode.state.winner
    assert [s.agent for s in log.header.roster] == [f"policy-{s}" for s in range(7)]
    res = CliRunner().invoke(app, ["report", str(runs), "-f", "json", "--resamples", "20", "--no-cache"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["games"] == 1
    summary = build_site(runs, tmp_path / "site")
    assert summary.games == [log.game_id] and summary.skipped == []
    assert (tmp_path / "site" / "index.html").is_file()
    # a second episode of the same seed goes to its own directory; nothing is overwritten
    e.reset(seed=8)
    assert e.game_dir != game and e.game_dir.name.endswith("-2")


@pytest.mark.parametrize("rules_name", RULES)
def test_env_records_the_same_events_as_play(rules_name: str, tmp_path: Path) -> None:
    """The same agents' answers through the env and through `play` give the same game log."""
    rules = load_rules(rules_name)
    seed = 5
    played = asyncio.run(
        play_game(rules, [RandomAgent(s, seed) for s in range(rules.n_seats)], seed, out=tmp_path / "play")
    )
    agents = [RandomAgent(s, seed) for s in range(rules.n_seats)]
    e = env(rules, out=tmp_path / "env", agent_labels=["random"] * rules.n_seats)
    e.reset(seed=seed)
    n = rules.n_seats
    for agent in e.agent_iter():
        if e.terminations[agent]:
            e.step(None)
            continue
        seat = int(agent.split("_")[1])
        d = e.episode.decision(seat)
        a = asyncio.run(agents[seat].decide(d, e.episode.state.view(seat)))
        e.step({"choice": n if a.target is None else a.target, "text": a.text or ""})
    ours, theirs = read_game(e.game_dir), read_game(played.path)

    def strip(log: Any) -> list[dict]:
        return [ev.model_dump(exclude={"ts"}) for ev in log.events]

    assert strip(ours) == strip(theirs)
    assert ours.header.roster == theirs.header.roster and ours.header.rules_id == theirs.header.rules_id


# ---------------------------------------------------------------------- leaks
def _marker(agent: str, e: Any) -> str:
    seat = int(agent.split("_")[1])
    d = e.episode.decision(seat)
    return f"<MSG-{seat}-{d.id}-{d.kind}>"


@pytest.mark.parametrize("rules_name", [*RULES, "werewolf7-v2"])
def test_observations_hold_only_the_seats_own_view(rules_name: str) -> None:
    """Every observation of every seat, at every step: nothing another seat alone could see."""
    rules = load_rules(rules_name)
    e = env(rules)
    e.reset(seed=1)
    for i, a in enumerate(e.possible_agents):
        e.action_space(a).seed(i)
    pack = load_prompt_pack("en")
    renderers = [Renderer(pack, rules) for _ in range(rules.n_seats)]
    checked = 0
    for agent in e.agent_iter():
        st = e.episode.state
        # each event as a seat that may see it reads it (the prompt style, that seat as the reader)
        readers = [EventRenderer(pack.events.prompt, rules.lexicon, st.names, o) for o in range(rules.n_seats)]
        for s, a in enumerate(e.possible_agents):
            obs = e.observe(a)
            text = obs["text"]
            team = st.teams[s]
            own = set(renderers[s].transcript_lines(player_view(st.events, s)))
            for ev in st.events:
                if can_see(ev, s, team):
                    continue
                assert not (ev.kind in ("speech", "mafia_chat") and ev.text in text), (rules_name, s, ev)
                for o in range(rules.n_seats):
                    if o != s and can_see(ev, o, st.teams[o]):
                        line = readers[o].render(ev)
                        if line is not None and line.text not in own:
                            assert line.text not in text, (rules_name, s, o, line.text)
            for o in range(rules.n_seats):
                if o != s:
                    assert f"You are {st.names[o]}." not in text
            assert rules.roles[int(obs["role"])].name == st.roles[s]  # its own role, no one else's
            assert obs["alive"].tolist() == [int(st.alive[x]) for x in range(rules.n_seats)]
            checked += 1
        _obs, _r, term, _t, info = e.last()
        if term:
            e.step(None)
            continue
        act = e.action_space(agent).sample(info["action_mask"])
        act["text"] = _marker(agent, e)
        e.step(act)
    chats = [ev for ev in e.episode.state.events if ev.kind == "mafia_chat"]
    assert checked > 50 and (chats or not rules.night.mafia_chat)


def test_bad_arguments_name_the_field() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        env("werewolf7", render_mode="rgb_array")
    with pytest.raises(ValueError, match="agent_labels"):
        env("werewolf7", agent_labels=["a"])
    with pytest.raises(ValueError, match="seed"):
        env("werewolf7", seed="3")  # type: ignore[arg-type]
    from mafialab.rules import RuleSetError

    with pytest.raises(RuleSetError, match="rules"):
        env("no-such-rules")


def test_parallel_steps_answer_a_batch_and_match_the_aec_form(tmp_path: Path) -> None:
    """One parallel step answers the engine's whole batch; the same answers give the same game as AEC."""
    rules = load_rules("werewolf7")
    seed, n = 9, rules.n_seats
    p = parallel_env(rules, out=tmp_path / "par", agent_labels=["random"] * n)
    obs, _infos = p.reset(seed=seed)
    agents = [RandomAgent(s, seed) for s in range(n)]
    total = dict.fromkeys(p.possible_agents, 0.0)
    first = True
    while p.agents:
        st = p.episode.state
        batch = st.pending()
        assert {int(a.split("_")[1]) for a in p.agents if obs[a]["decision"]["kind"] != 0} == {d.seat for d in batch}
        actions = {}
        for d in batch:
            a = asyncio.run(agents[d.seat].decide(d, st.view(d.seat)))
            actions[f"seat_{d.seat}"] = {"choice": n if a.target is None else a.target, "text": a.text or ""}
        before = len(st.actions)
        obs, rewards, _terms, _truncs, _infos = p.step(actions)
        assert len(p.episode.state.actions) - before == len(batch)  # the whole batch in one step
        if first:  # night 1: a kill vote, the Seer's and the Doctor's actions together
            assert sorted(d.kind for d in batch) == ["investigate", "kill", "protect"]
            first = False
        for a, r in rewards.items():
            total[a] += r
    st = p.episode.state
    assert all(total[f"seat_{s}"] == (1.0 if st.teams[s] == st.winner else -1.0) for s in range(n))
    played = asyncio.run(play_game(rules, [RandomAgent(s, seed) for s in range(n)], seed, out=tmp_path / "play"))
    ours, theirs = read_game(p.episode.path), read_game(played.path)
    assert [ev.model_dump(exclude={"ts"}) for ev in ours.events] == [
        ev.model_dump(exclude={"ts"}) for ev in theirs.events
    ]


@pytest.mark.parametrize("name", ["resistance5", "avalon5", "mafiascope-resistance"])
def test_mission_rule_sets_are_refused_with_a_clear_error(name: str) -> None:
    from mafialab.env import env as make_env
    from mafialab.env import parallel_env

    for make in (make_env, parallel_env):
        with pytest.raises(ValueError, match=rf"rules: {name}-v1 is a mission game .* `mafialab play`"):
            make(name)
