"""`textarena:MODULE.NAME` seats: an agent written to TextArena's interface plays a secretmafia6 seat."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import ClassVar

import pytest

from mafialab.agents import AgentSpecError, make_agent
from mafialab.agents._textarena import TextArenaSeat, parse_target, render_observation
from mafialab.engine import player_view
from mafialab.harness import play_game
from mafialab.probes import make_probe_observer
from mafialab.record import read_game, read_records
from mafialab.rules import load_rules

SEAT = 2
SPEC = f"textarena:{__name__}.NamingAgent"


class NamingAgent:
    """A TextArena-interface agent: names the last other player who spoke, and votes for the player it named.

    Reads only its observation string (the whole history, as TextArena's LLMObservationWrapper
    gives it); night actions take the first valid target offered.
    """

    seen: ClassVar[list[str]] = []  # every observation of the class's agents, in order (for the test)

    def __call__(self, observation: str) -> str:
        NamingAgent.seen.append(observation)
        me = int(re.search(r"You are Player (\d+)", observation).group(1))  # type: ignore[union-attr]
        last = observation.rsplit("\n[GAME] ", 1)[-1]
        offered = (
            [int(x) for x in re.findall(r"\[(\d+)\]", last.split(":", 1)[-1])]
            if "Valid" in last or "choose" in last
            else []
        )
        if "Voting phase" in last:
            named = re.findall(r"\n\[Player " + str(me) + r"\] I suspect Player (\d+)", observation)
            pick = int(named[-1]) if named and int(named[-1]) in offered else offered[0]
            return f"I vote [{pick}], the player I named."
        if offered and ("Night" in last or "Valid targets" in last):
            return f"[{offered[0]}]"
        spoke = [int(p) for p in re.findall(r"\n\[Player (\d+)\] ", observation) if int(p) != me]
        suspect = spoke[-1] if spoke else (me + 1) % 6
        return f"I suspect Player {suspect}; they talk too much."


class ProbedNamingAgent(NamingAgent):
    """The same agent, exposing its model: its seat is probed with it."""

    mafialab_model = "mock/ta"


def _play(tmp_path: Path, spec: str, seed: int = 4) -> Path:
    rules = load_rules("secretmafia6")
    agents = [make_agent(spec if s == SEAT else "scripted", s, rules, seed) for s in range(rules.n_seats)]
    obs = make_probe_observer("default", agents, rules, seed, out=tmp_path, game_id="g")
    asyncio.run(play_game(rules, agents, seed, out=tmp_path, game_id="g", observers=[obs] if obs else []))
    return tmp_path / "g"


def test_a_textarena_agent_plays_a_secretmafia6_seat(tmp_path: Path) -> None:
    NamingAgent.seen = []
    game = read_game(_play(tmp_path, SPEC))
    assert game.header.rules_id.startswith("secretmafia6")
    assert game.header.roster[SEAT].agent == SPEC
    assert game.header.meta["agents"][str(SEAT)] == {
        "textarena": f"{__name__}.NamingAgent",
        "model": None,
        "probed": False,
    }
    assert any(e.kind == "game_end" for e in game.events)
    assert NamingAgent.seen and NamingAgent.seen[0].startswith(
        f"\n[GAME] Welcome to Secret Mafia! You are Player {SEAT}.\n"
    )
    own = [e for e in game.events if getattr(e, "seat", None) == SEAT and e.kind in ("speech", "vote", "night_action")]
    assert own and not any(e.fallback for e in own)  # every answer was read as a legal move
    speeches = [e for e in game.events if e.kind == "speech" and e.seat == SEAT]
    votes = [e for e in game.events if e.kind == "vote" and e.seat == SEAT]
    assert speeches and votes
    for v in votes:  # it votes for the player it named that day (when that player is still a candidate)
        named = [int(m) for s in speeches if s.round == v.round for m in re.findall(r"Player (\d+)", s.text)]
        alive = next(
            e.alive for e in game.events if e.kind == "phase_started" and e.round == v.round and e.phase == "day"
        )
        want = named[-1] if named and named[-1] in alive else None
        if want is not None:
            assert v.target == want, (v, named)
        assert v.statement == f"I vote [{v.target}], the player I named."
    # what the agent read: other seats' speeches, verbatim, as TextArena relays them
    other = next(e for e in game.events if e.kind == "speech" and e.seat != SEAT)
    assert any(f"\n[Player {other.seat}] {other.text}" in o for o in NamingAgent.seen)
    # no probe of the seat: it exposes no model (the others, scripted, are probed)
    probed = {r["seat"] for r in read_records(tmp_path / "g" / "probes.jsonl")}
    assert SEAT not in probed and probed


def test_an_agent_exposing_its_model_is_probed(tmp_path: Path) -> None:
    game = read_game(_play(tmp_path, f"textarena:{__name__}.ProbedNamingAgent"))
    assert game.header.meta["agents"][str(SEAT)]["probed"] is True
    mine = [r for r in read_records(tmp_path / "g" / "probes.jsonl") if r["seat"] == SEAT]
    assert mine and {r["model"] for r in mine} == {"mock/ta"}


def test_the_observation_is_textarena_s(tmp_path: Path) -> None:
    """The first observation of each role is TextArena's role message, then the night's (secretmafia6, seed 4)."""
    rules = load_rules("secretmafia6")
    game = read_game(_play(tmp_path, SPEC))
    for seat in range(rules.n_seats):
        first = next(e.seq for e in game.events if e.kind == "night_action")
        view = player_view([e for e in game.events if e.seq < first], seat)
        obs = render_observation(view, rules)
        assert obs.startswith(f"\n[GAME] Welcome to Secret Mafia! You are Player {seat}.\nYour role: {view.role}\n")
        assert "Players: Player 0, Player 1, Player 2, Player 3, Player 4, Player 5\n\n" in obs
        if view.role == "Mafia":
            mates = ", ".join(f"Player {p}" for p in sorted({seat, *view.teammates}))
            assert f"Your teammates are: {mates}.\n" in obs
            targets = ", ".join(f"[{t}]" for t in range(6) if t not in {seat, *view.teammates})
            assert obs.endswith(f"\n[GAME] Night has fallen. Mafia, agree on a victim.\nValid targets: {targets}")
        elif view.role == "Doctor":
            assert obs.endswith(
                "\n[GAME] Night phase - choose one player to protect: "
                + ", ".join(f"[{t}]" for t in range(6) if t != seat)
            )
        elif view.role == "Villager":
            assert obs.endswith("(Mafia wins).\n")


def test_actions_are_read_as_secretmafia_reads_them() -> None:
    assert parse_target("I vote [3]") == 3
    assert parse_target("[Player 4] is it") == 4
    assert parse_target("[player5]") == 5
    assert parse_target("Player 3") is None


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("textarena:nomodule", "expected textarena:MODULE.NAME"),
        ("textarena:no_such_module_x.Agent", "cannot import no_such_module_x"),
        (f"textarena:{__name__}.Missing", "has no Missing"),
        (f"textarena:{__name__}.SEAT", "is not a TextArena agent"),
    ],
)
def test_bad_specs_are_named(spec: str, why: str) -> None:
    with pytest.raises(AgentSpecError, match=re.escape(why)):
        make_agent(spec, 0, load_rules("secretmafia6"), 1)


def test_the_bridge_does_not_import_textarena() -> None:
    import sys

    seat = make_agent(SPEC, 0, load_rules("secretmafia6"), 1)
    assert isinstance(seat, TextArenaSeat)
    assert "textarena" not in sys.modules


DEALS = Path(__file__).resolve().parents[1] / "data" / "textarena" / "secretmafia6_deals.json"


def test_first_night_observations_match_textarena() -> None:
    """Each frozen first-night observation of TextArena 0.7.4 (scripts/check_textarena.sh) is rendered as it was."""
    import json

    from mafialab.engine import Action, GameState

    rules = load_rules("secretmafia6")
    compared = 0
    for game in json.loads(DEALS.read_text(encoding="utf-8"))["games"]:
        roles = [game["roles"][str(s)] for s in range(rules.n_seats)]
        acts = {(k, n, s): t for k, n, s, t in game["actions"]}
        state = GameState(rules, game["seed"], roles=roles)
        while not state.is_terminal:
            pending = state.pending()
            if pending[0].phase != "night":
                break
            for d in pending:
                ours = render_observation(player_view(state.events, d.seat), rules, d)
                want = game["night1"].get(str(d.seat))
                if want is not None and "\n[Player " not in ours:
                    assert ours == want, (game["seed"], d.seat)
                    compared += 1
                target = acts[(d.kind, d.round, d.seat)]
                assert state.apply(Action(decision=d.id, seat=d.seat, target=target)) is None
    assert compared == 47  # of the 60 frozen: the Mafia who names first differs between the engines in 13 deals
