"""A planted skill shows on the side boards: a scripted agent that cheats as Town.

The cheater is a test fixture: as Town every vote it casts (vote, nomination, runoff vote)
names a true Mafia player, which it knows from the deal (the living Mafia player with the
most votes so far in that vote, the lowest seat on a tie, so its one informed vote joins the
others on a Mafia player where it can); otherwise, and always as Mafia, it plays as the plain
scripted agent it wraps, with the same seat and seed.

**Design: duplicate deals with a plain twin.** 120 games of ``mafiascope7`` (7 seats, 2 Mafia;
public plurality votes, a tie eliminates nobody, roles revealed on death), no model. They are
60 seeded deals, each played twice with the same seat order: once with the cheater in one seat
(drawn per deal) and once with its plain twin (``scripted``, the agent the cheater wraps) in
that seat, the two games next to each other in rating order and the cheater's first in every
other deal (the first of a pair meets opponents rated one game earlier: with the cheater always
first, its Mafia ``mu`` ran ahead of its twin's on equal records); the other six seats hold the
six random entries, seat order shuffled per deal. So:

- every game seats seven distinct entries (no self-play) and the cheater and the twin never
  share a game: each plays 60 games, about 43 as Town, and a random entry's Town games hold
  the cheater as a teammate in only a third of them (a shared game lifts both ratings);
- the twin's game is the cheater's game with only the cheater's votes taken back, so the Town
  board compares the informed vote with its exact counterfactual; as Mafia the two play the
  same moves in the same games, so their Mafia records are equal game for game.

Why not the earlier design (``secretmafia6``; the cheater, 6 scripted and 6 random entries, six
drawn per game): the cheater played ~55 games, ~37 as Town, and shared a Town team with its
competitors often; scripted Town players vote together for one suspect (their ties go to the
lowest seat), so one more vote beside them changes nothing (Town won 0.50 of all-scripted
``secretmafia6`` games without it, 0.48 with it), while beside random voters one informed vote
lifts Town's win rate from 0.10 to 0.31 in ``mafiascope7`` (600 games; plain scripted there:
0.14). Measured over seeds 1-16 (throwaway script, not in the repository): the earlier design
put the cheater first on the Town board in 8 of 16 seasons, with its interval clear of the
second in none; this one puts it first in 16 of 16.

**Not met: an interval clear of the second in most seasons.** With this design the cheater's
Town ``mu`` interval is clear of the second's in 8 of seasons 1-16 at 120 games (5 of seasons
1-8; margin ``mu_low`` of the cheater − ``mu_high`` of the second: median −0.4, range −8.7 to
+7.1; season 1 is one of the clear ones: cheater 27.5 [20.5, 34.1], second the twin 7.3 [−0.3,
15.1]), 10 of 16 at 180 games, 13 of 16 at 240 and 16 of 16 at 480. In seven of the eight
misses the second is the plain twin: the cheater's 95 % interval is about ±8 ``mu`` on ~43 Town
games, the twin's as wide on as many, and the informed vote is worth about 16 ``mu`` between
them (Town win rate 0.33 against 0.12, means over the 16 seasons). Every other design measured
did worse at 120 games: other rule sets with the twin design (cheater first in every pair;
``kaggle-werewolf8`` 7 of 16, ``arena12`` 6, ``mafiascope7-v2`` 6,
``mafiascope7-werewolf-seer`` 4, ``secretmafia6`` 0, ``werewolf7`` 0), line-ups of distinct
entries drawn from rosters of 7 to 17 entries over five rule sets (0 of 8 each: the cheater
plays more but shares more Town teams; in small rosters it also comes first on the Mafia board,
because its Mafia games face a Town without it), the cheater in every game (0 of 8), and the
cheater always naming the lowest-seat Mafia player (0 of 16 with the twin design). The rating
definitions and the bootstrap were checked against their documentation (no defect found). So
the acceptance assertion stays a strict xfail; it asks for the criterion in at least 7 of
seasons 1-8, so that it cannot pass on one lucky season.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from mafialab.agents import make_agent
from mafialab.analysis import GameOutcome, Ratings, SeatOutcome, rate_games
from mafialab.engine import Action, Decision, PlayerView, Vote, deal_roles
from mafialab.harness import play_game
from mafialab.rules import RuleSet, load_rules

GAMES = 120
RULES = "mafiascope7"
RANDOMS = [f"random-{i}" for i in range(6)]
ROSTER = ["cheater", "scripted", *RANDOMS]
STAGES = {"vote": "vote", "nominate": "nomination", "runoff_vote": "runoff"}


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
        if self.town and decision.kind in STAGES:
            targets = [s for s in self.mafia if s in decision.options]
            if targets:
                stage = STAGES[decision.kind]
                votes = Counter(e.target for e in view.events if isinstance(e, Vote) and e.stage == stage
                                and e.round == decision.round)  # fmt: skip
                return act.model_copy(update={"target": max(targets, key=lambda s: (votes[s], -s))})
        return act


async def _season(seed: int) -> list[GameOutcome]:
    """60 deals, each played by the cheater and by its plain twin in the same seat (module docstring)."""
    rules = load_rules(RULES)
    assert rules.n_seats == 1 + len(RANDOMS)
    out = []
    for deal in range(GAMES // 2):
        game_seed = seed * 10_000 + deal
        order = ["cheater", *RANDOMS]
        random.Random(game_seed).shuffle(order)
        roles = deal_roles(rules, game_seed)
        pair = ("cheater", "scripted") if deal % 2 == 0 else ("scripted", "cheater")  # neither always first
        for k, focal in enumerate(pair):
            names = [focal if n == "cheater" else n for n in order]
            agents = [
                Cheater(s, rules, game_seed) if n == "cheater" else make_agent(n.split("-")[0], s, rules, game_seed)
                for s, n in enumerate(names)
            ]
            result = await play_game(rules, agents, game_seed, check_remote=False)
            seats = [
                SeatOutcome(agent=n, role=roles[s], team=rules.role(roles[s]).team,
                            won=rules.role(roles[s]).team == result.winner)
                for s, n in enumerate(names)
            ]  # fmt: skip
            out.append(GameOutcome(game_id=f"g{2 * deal + k:03d}", order=2 * deal + k, seats=tuple(seats)))
    return out


def _rate(seed: int) -> Ratings:
    return rate_games(asyncio.run(_season(seed)), boards=("side",), seed=seed)


@pytest.fixture(scope="module")
def ratings() -> Ratings:
    return _rate(1)


def _board(r: Ratings, side: str) -> list:
    return [row for row in r.boards["side"] if row.group == side]


def _row(board: list, agent: str):  # type: ignore[no-untyped-def]
    return next(row for row in board if row.agent == agent)


def test_cheater_first_on_town_board(ratings: Ratings) -> None:
    town = _board(ratings, "town")
    assert town[0].agent == "cheater"
    cheater, twin = _row(town, "cheater"), _row(town, "scripted")
    assert cheater.games == twin.games  # the same deals: the cheater is Town exactly where its twin is
    assert cheater.win_rate > twin.win_rate  # the informed vote wins games its twin loses


def test_cheater_not_first_on_mafia_board(ratings: Ratings) -> None:
    """No planted skill as Mafia: the cheater's Mafia record is its twin's, and it is not first.

    The telling check is the twin: as Mafia the cheater plays its twin's moves in the same
    games, so wins and games are equal and its ``mu`` lies in the twin's interval (16 of 16
    seasons). "Not first" holds in 16 of 16 seasons at 120 games, partly because the random
    entries play every game and their Mafia ratings have moved further from the start; at 480
    games, where the cheater and its twin (equal, and the best Mafia players here) lead the
    board, the cheater is first by ``mu`` or Elo in 5 of 16.
    """
    assert ratings.games_rated == GAMES and ratings.self_play_games == 0
    mafia = _board(ratings, "mafia")
    assert sorted(r.agent for r in mafia) == sorted(ROSTER)
    assert mafia[0].agent != "cheater"  # best OpenSkill mu as Mafia
    assert max(mafia, key=lambda r: r.elo).agent != "cheater"
    cheater, twin = _row(mafia, "cheater"), _row(mafia, "scripted")
    assert (cheater.games, cheater.wins) == (twin.games, twin.wins)  # as Mafia it is its plain twin
    assert cheater.mu_low is not None and twin.mu_low is not None and twin.mu_high is not None
    assert twin.mu_low <= cheater.mu <= twin.mu_high


def _clear_first(r: Ratings) -> bool:
    town = _board(r, "town")
    return town[0].agent == "cheater" and town[0].mu_overlaps_next is False


MEASURED = (
    "not met at 120 games: with duplicate deals and a plain twin (module docstring) the cheater is "
    "first on the Town board in 16 of seasons 1-16 but its interval is clear of the second's in 8 "
    "(5 of seasons 1-8; median margin -0.4 mu, range -8.7 to +7.1; 13 of 16 at 240 games, 16 of 16 at "
    "480); in 7 of the 8 misses the plain twin is second: ~43 Town games each give intervals of about "
    "±8 mu, and the informed vote is worth about 16 mu"
)


@pytest.mark.xfail(strict=True, reason=MEASURED)
def test_cheater_first_on_town_board_with_interval_clear_of_the_second(ratings: Ratings) -> None:
    """The criterion must hold robustly: in at least 7 of 8 independent seasons (seeds 1-8)."""
    clear = [_clear_first(ratings), *(_clear_first(_rate(seed)) for seed in range(2, 9))]
    assert sum(clear) >= 7, clear
