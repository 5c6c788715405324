"""Prompts state every rule the engine enforces; werewolf7-v2 keeps secret votes secret."""

from __future__ import annotations

import asyncio

import pytest

from mafialab.agents import LLMAgent
from mafialab.agents._prompts import BUILTIN_PACKS, Renderer, load_prompt_pack
from mafialab.engine import PUBLIC, GameState, Vote, VoteTally, visible_events
from mafialab.harness import play_game
from mafialab.models import MockModel
from mafialab.rules import ARENA12, BUILTIN_VERSIONS, WEREWOLF7, WEREWOLF7_V2, RuleSet, load_rules, rule_fields
from mafialab.testing import check_events
from tests.llm_helpers import llm_agents


def _seat_with(rules: RuleSet, role: str, seed: int = 1) -> tuple[GameState, int]:
    st = GameState(rules, seed)
    return st, next(s for s in range(rules.n_seats) if st.roles[s] == role)


def _prompt_of(rules: RuleSet, pack: str, role: str) -> str:
    st, seat = _seat_with(rules, role)
    r = Renderer(load_prompt_pack(pack), rules)
    msgs, _, _ = r.context(st.view(seat))
    return "\n".join(m.content for m in msgs)


@pytest.mark.parametrize("pack", BUILTIN_PACKS)
@pytest.mark.parametrize("rules", list(BUILTIN_VERSIONS.values()), ids=lambda r: r.id)
def test_every_rule_field_is_stated_to_every_role_it_concerns(rules, pack):
    p = load_prompt_pack(pack)
    missing, unstated = [], []
    for path, value, roles in rule_fields(rules):
        if not roles:  # e.g. a protect rule in a rule set without a protector
            continue
        texts = p.rule_text.get(path)
        key = str(value).lower() if isinstance(value, bool) else str(value)
        if not texts or not (texts.get(key) or texts.get("*")):
            missing.append(f"{path}={key}")  # a new rule field (or value) without prompt text
            continue
        stated = Renderer(p, rules).rule_statements()[path]
        assert stated and "{" not in stated, (path, stated)
        for role in roles:
            if stated not in _prompt_of(rules, pack, role):
                unstated.append((path, role))
    assert not missing, f"prompt pack {pack} has no rules text for {missing}"
    assert not unstated


def test_arena12_angel_is_told_it_may_not_protect_itself_two_nights_running():
    text = _prompt_of(ARENA12, "en", "Angel")
    assert "The Angel may not protect themselves two nights running." in text
    assert "The Angel may protect themselves." in text


def test_a_rule_field_without_prompt_text_is_caught():
    # a pack that lost one sentence states every rule but that one
    p = load_prompt_pack("en")
    short = p.model_copy(update={"rule_text": {k: v for k, v in p.rule_text.items() if k != "night.protect_self"}})
    assert "night.protect_self" not in Renderer(short, ARENA12).rule_statements()
    paths = {path for path, _, roles in rule_fields(ARENA12) if roles}
    assert paths - set(Renderer(short, ARENA12).rule_statements()) == {"night.protect_self"}


# ------------------------------------------------------------------ werewolf7 vote visibility
def test_werewolf7_versions_differ_only_in_vote_visibility():
    assert load_rules("werewolf7") is WEREWOLF7 and load_rules("werewolf7-v2") is WEREWOLF7_V2
    assert WEREWOLF7.day.tally_names_voters and not WEREWOLF7_V2.day.tally_names_voters
    a, b = WEREWOLF7.model_dump(), WEREWOLF7_V2.model_dump()
    assert "tally_names_voters" not in a["day"]  # v1 serialises as before the field existed
    a["day"]["tally_names_voters"] = True
    diff = {k for k in a if a[k] != b[k]}
    assert diff == {"version", "description", "day"}
    assert {k for k in a["day"] if a["day"][k] != b["day"][k]} == {"tally_names_voters"}


@pytest.mark.parametrize("rules", [WEREWOLF7, WEREWOLF7_V2], ids=lambda r: r.id)
def test_secret_votes_reach_only_their_voter_unless_the_tally_names_voters(rules, tmp_path):
    agents, _ = llm_agents(rules, 5)
    res = asyncio.run(play_game(rules, agents, 5, out=tmp_path))
    events = res.state.events
    assert not check_events(rules, events, res.state.roles)
    tallies = [e for e in events if isinstance(e, VoteTally) and e.stage == "vote"]
    votes = [e for e in events if isinstance(e, Vote) and e.stage == "vote"]
    assert tallies and votes
    for t in tallies:
        cast = {v.seat: v.target for v in votes if v.round == t.round}
        assert sum(t.tally.values()) == len(cast)
        assert t.votes == (cast if rules.day.tally_names_voters else {})
    for seat in range(rules.n_seats):
        seen = visible_events(events, seat)
        others = [e for e in seen if isinstance(e, Vote) and e.seat != seat]
        assert not others  # a secret vote event reaches its voter alone
        known = {(t.round, v) for t in seen if isinstance(t, VoteTally) for v in t.votes}
        assert bool(known) == rules.day.tally_names_voters


async def test_v2_prompt_shows_counts_not_voters():
    st, seat = _seat_with(WEREWOLF7_V2, "Villager", seed=5)
    agent = LLMAgent(seat, WEREWOLF7_V2, 5, MockModel([]))
    tally = VoteTally(
        seq=99, round=1, phase="day", visibility=PUBLIC, stage="vote", votes={}, tally={1: 4, 2: 2}, outcome=1
    )
    from mafialab.render import EventRenderer

    line = EventRenderer(agent.pack.events.prompt, WEREWOLF7_V2.lexicon, st.names, seat).render(tally)
    text = line.text if line is not None else ""
    assert text == f"[GAME] Votes: {st.names[1]} 4, {st.names[2]} 2."
    assert "->" not in text
