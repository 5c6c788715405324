"""A planted skill shows on the side boards: a scripted agent that cheats as Town.

The cheater is a test fixture: as Town it always votes (nominates, votes in a runoff) a true
Mafia player, which it knows from the deal; otherwise it plays as the plain scripted agent it
wraps. It plays against plain scripted and random agents; 120 games of a fast rule set, no model.
"""

from __future__ import annotations

import asyncio
import random

import pytest

from mafialab.agents import make_agent
from mafialab.analysis import GameOutcome, Ratings, SeatOutcome, rate_games
from mafialab.engine import Action, Decision, PlayerView, deal_roles
from mafialab.harness import play_game
from mafialab.rules import RuleSet, load_rules

GAMES = 120
RULES = "secretmafia6"
ROSTER = ["cheater", *(f"scripted-{i}" for i in range(6)), *(f"random-{i}" for i in range(6))]
VOTES = ("vote", "nominate", "runoff_vote")


class Cheater:
    """Scripted play, except that as Town every vote names a true Mafia player."""

    label = "cheater"

    def __init__(self, seat: int, rules: RuleSet, seed: int) -> None:
        self.inner = make_agent("scripted", seat, rules, seed)
        roles = deal_roles(rules, seed)
        self.town = rules.role(roles[seat]).team == "town"
        self.mafia = [s for s, r in enumerate(roles) if rules.role(r).team == "mafia"]

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        act = await self.inner.decide(decision, view)
        if self.town and decision.kind in VOTES:
            targets = [s for s in self.mafia if s in decision.options]
            if targets:
                return act.model_copy(update={"target": targets[0]})
        return act


async def _season(seed: int) -> list[GameOutcome]:
    """120 games; each seats 7 of the 13 entries drawn at random (every entry plays about the same
    number of games, the cheater no more than the others), in a random order of seats."""
    rules = load_rules(RULES)
    rnd = random.Random(seed)
    out = []
    for g in range(GAMES):
        game_seed = seed * 10_000 + g
        names = rnd.sample(ROSTER, rules.n_seats)
        agents = [
            Cheater(s, rules, game_seed) if n == "cheater" else make_agent(n.split("-")[0], s, rules, game_seed)
            for s, n in enumerate(names)
        ]
        result = await play_game(rules, agents, game_seed, check_remote=False)
        roles = deal_roles(rules, game_seed)
        seats = [
            SeatOutcome(agent=n, role=roles[s], team=rules.role(roles[s]).team,
                        won=rules.role(roles[s]).team == result.winner)
            for s, n in enumerate(names)
        ]  # fmt: skip
        out.append(GameOutcome(game_id=f"g{g:03d}", order=g, seats=tuple(seats)))
    return out


@pytest.fixture(scope="module")
def ratings() -> Ratings:
    return rate_games(asyncio.run(_season(1)), boards=("side",), seed=1)


def _board(r: Ratings, side: str) -> list:
    return [row for row in r.boards["side"] if row.group == side]


def test_cheater_not_first_on_mafia_board(ratings: Ratings) -> None:
    assert ratings.games_rated == GAMES and ratings.self_play_games == 0
    mafia = _board(ratings, "mafia")
    assert len(mafia) == len(ROSTER)
    assert mafia[0].agent != "cheater"  # best OpenSkill mu as Mafia
    assert max(mafia, key=lambda r: r.elo).agent != "cheater"


MEASURED = (
    "not met at 120 games (measured, secretmafia6, line-ups of 6 drawn from the 13 entries): "
    "seed 1: Town board #1 scripted-1 mu 18.8 [9.5, 26.2], #2 scripted-4 18.4 [9.5, 25.3], cheater "
    "31 Town games, won 23 %; over seeds 1-8 the cheater is first on the Town board in 3 of 8 and "
    "its interval overlaps the second's in all 8 (95 % intervals about ±8 mu wide); at 480 games "
    "(seeds 1-2) it is first but still overlaps (19.2 [12.3, 25.6] vs 18.1 [11.7, 23.9]). One "
    "informed vote among six raised the Town's win rate from 13 % to 26 % beside random players and "
    "not at all beside scripted ones (300 games each), and online ratings "
    "(Elo K=32, OpenSkill with tau) keep a noise floor that more games do not remove"
)


@pytest.mark.xfail(strict=True, reason=MEASURED)
def test_cheater_first_on_town_board_with_interval_clear_of_the_second(ratings: Ratings) -> None:
    town = _board(ratings, "town")
    assert town[0].agent == "cheater"
    assert town[0].mu_overlaps_next is False  # its interval is clear of the second's
