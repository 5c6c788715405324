"""Conformance checks for rule sets, engine runs and agents (in the spirit of PettingZoo's ``api_test``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mafialab.agents import Agent, make_agent
from mafialab.engine import (
    Action,
    Decision,
    Elimination,
    Event,
    GameEnd,
    GameState,
    InvestigationResult,
    KillChosen,
    MafiaChat,
    NightAction,
    PhaseStarted,
    PlayerView,
    Speech,
    Vote,
    VoteTally,
    check_action,
)
from mafialab.harness import run_game
from mafialab.rules import RuleSet


@dataclass
class ConformanceReport:
    """Result of :func:`check_rules`.

    Attributes:
        rules_id: Versioned rule-set id.
        games: Games played.
        violations: ``"seed N: what"`` for every broken invariant (empty when conformant).
    """

    rules_id: str
    games: int
    violations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether no invariant was broken."""
        return not self.violations


def check_events(rules: RuleSet, events: Sequence[Event], roles: Sequence[str]) -> list[str]:
    """Check the invariants of one finished game's events.

    Invariants: dead players never act and are never targeted or eliminated again; exactly
    the legal voters vote in every vote stage; protection constraints hold; the night kill
    targets a living town player; investigation results are true; with the
    ``nomination_runoff`` procedure every day that votes eliminates exactly one player; the
    game ends, and its winner matches the final alive set.

    Args:
        rules: The rule set played.
        events: All events of the game, in order.
        roles: True role per seat.

    Returns:
        Violations in words (empty when all hold).
    """
    out: list[str] = []
    teams = [rules.role(r).team for r in roles]
    alive = [True] * len(roles)
    last_protect: int | None = None
    protect_this_night: int | None = None
    night_round = -1
    votes: dict[tuple[int, str], set[int]] = {}
    elim_by_vote: dict[int, int] = {}
    no_votes: dict[tuple[int, str], set[int]] = {}
    runoff_candidates: dict[int, list[int]] = {}
    end: GameEnd | None = None
    for ev in events:
        if isinstance(ev, Speech | MafiaChat | NightAction | Vote) and not alive[ev.seat]:
            out.append(f"event {ev.seq}: dead seat {ev.seat} acted ({ev.kind})")
        if isinstance(ev, NightAction | Vote | KillChosen) and ev.target is not None and not alive[ev.target]:
            out.append(f"event {ev.seq}: dead seat {ev.target} targeted ({ev.kind})")
        if isinstance(ev, PhaseStarted) and ev.phase == "night":
            if night_round >= 0:
                last_protect = protect_this_night
            protect_this_night, night_round = None, ev.round
        elif isinstance(ev, NightAction) and ev.ability == "protect":
            n, me, t = rules.night, ev.seat, ev.target
            if t == me and not n.protect_self:
                out.append(f"event {ev.seq}: self-protection not allowed")
            if t == me and last_protect == me and not n.protect_self_consecutive:
                out.append(f"event {ev.seq}: self-protection on consecutive nights")
            if t != me and last_protect == t and not n.protect_repeat:
                out.append(f"event {ev.seq}: same player protected on consecutive nights")
            protect_this_night = t
        elif isinstance(ev, NightAction) and ev.ability == "kill" and teams[ev.target] == "mafia":
            out.append(f"event {ev.seq}: kill vote against own team")
        elif isinstance(ev, InvestigationResult):
            truth = teams[ev.target] if rules.night.investigate_result == "team" else roles[ev.target]
            if ev.result != truth:
                out.append(f"event {ev.seq}: investigation result {ev.result!r} != {truth!r}")
        elif isinstance(ev, Vote):
            key = (ev.round, ev.stage)
            if ev.seat in votes.setdefault(key, set()):
                out.append(f"event {ev.seq}: seat {ev.seat} voted twice in {key}")
            votes[key].add(ev.seat)
            if ev.target is None:
                no_votes.setdefault(key, set()).add(ev.seat)
        elif isinstance(ev, VoteTally):
            key = (ev.round, ev.stage)
            expected = {s for s, a in enumerate(alive) if a}
            if ev.stage == "runoff":
                expected -= set(runoff_candidates.get(ev.round, []))
            elif ev.stage == "nomination":
                runoff_candidates[ev.round] = list(ev.candidates)
            got = votes.get(key, set())
            if got != expected:
                out.append(f"round {ev.round} {ev.stage}: voters {sorted(got)} != legal voters {sorted(expected)}")
            hidden = ev.stage != "nomination" and rules.day.vote != "public_sequential"
            if hidden and not rules.day.tally_names_voters:
                if ev.votes:  # secret votes must stay secret: the public result names no voter
                    out.append(f"round {ev.round} {ev.stage}: tally names voters {sorted(ev.votes)}")
                if sum(ev.tally.values()) != len(got - no_votes.get(key, set())):
                    out.append(
                        f"round {ev.round} {ev.stage}: tally counts {sum(ev.tally.values())} votes of {len(got)}"
                    )
            elif set(ev.votes) != got - no_votes.get(key, set()):
                out.append(
                    f"round {ev.round} {ev.stage}: tally lists {sorted(ev.votes)}, votes came from {sorted(got)}"
                )
        elif isinstance(ev, Elimination):
            if not alive[ev.seat]:
                out.append(f"event {ev.seq}: seat {ev.seat} eliminated twice")
            alive[ev.seat] = False
            if ev.cause == "vote":
                elim_by_vote[ev.round] = elim_by_vote.get(ev.round, 0) + 1
        elif isinstance(ev, GameEnd):
            if end is not None:
                out.append(f"event {ev.seq}: second game_end")
            end = ev
    if end is None or events[-1] is not end:
        out.append("game did not end with exactly one game_end event")
        return out
    if rules.day.vote == "nomination_runoff":
        for rnd, stage in votes:
            if stage == "runoff" and elim_by_vote.get(rnd, 0) != 1:
                out.append(f"round {rnd}: {elim_by_vote.get(rnd, 0)} eliminations by vote (expected 1)")
    mafia = sum(1 for s, a in enumerate(alive) if a and teams[s] == "mafia")
    town = sum(1 for s, a in enumerate(alive) if a and teams[s] == "town")
    if end.alive != [s for s, a in enumerate(alive) if a]:
        out.append("game_end alive set differs from the deaths")
    expected_winner = None
    if mafia == 0:
        expected_winner = "town"
    elif mafia >= town:
        expected_winner = "mafia"
    elif end.reason == "round_cap":
        expected_winner = "town"
    if end.winner != expected_winner:
        out.append(f"winner {end.winner} does not match final alive set (mafia {mafia}, town {town})")
    if end.rounds > rules.round_cap:
        out.append(f"played {end.rounds} rounds past the cap {rules.round_cap}")
    return out


async def _play(rules: RuleSet, specs: Sequence[str], seed: int) -> GameState:
    state = GameState(rules, seed)
    agents = [make_agent(specs[s % len(specs)], s, rules, seed) for s in range(rules.n_seats)]
    await run_game(state, agents)
    return state


def check_rules(rules: RuleSet, seeds: Sequence[int], agents: Sequence[str] = ("random",)) -> ConformanceReport:
    """Play ``rules`` once per seed with the given agent specs and check every invariant.

    Args:
        rules: Rule set to check.
        seeds: Seeds to play.
        agents: Agent specs assigned to seats round-robin (``("random",)``, ``("scripted", "random")``).

    Returns:
        A :class:`ConformanceReport`; ``report.ok`` is true when nothing was violated.
    """
    report = ConformanceReport(rules_id=rules.id, games=0)
    for seed in seeds:
        state = asyncio.run(_play(rules, agents, seed))
        report.games += 1
        report.violations.extend(f"seed {seed}: {v}" for v in check_events(rules, state.events, state.roles))
    return report


AgentMaker = Callable[[int, RuleSet, int], Agent]
"""``make(seat, rules, seed) -> Agent``: builds the agent under test for one seat of one game."""


class _Checked:
    """Wraps an agent and records every answer the engine would reject."""

    def __init__(self, inner: Agent, seed: int, problems: list[str]) -> None:
        self.inner = inner
        self.label = inner.label
        self.seed = seed
        self.problems = problems

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        if view.seat != decision.seat:
            self.problems.append(f"seed {self.seed}: seat {decision.seat} was shown seat {view.seat}'s view")
        answer = await self.inner.decide(decision, view)
        if not isinstance(answer, Action):
            self.problems.append(
                f"seed {self.seed}: seat {decision.seat} decision {decision.id} ({decision.kind}): "
                f"returned {type(answer).__name__}, not an Action"
            )
        else:
            why = check_action(decision, answer)
            if why is not None:
                self.problems.append(
                    f"seed {self.seed}: seat {decision.seat} decision {decision.id} ({decision.kind}): {why}"
                )
        return answer


def check_agent(
    make: AgentMaker, rules: RuleSet, seeds: Sequence[int], *, others: str | None = None
) -> ConformanceReport:
    """Play games with your agent and check that every answer it gives is legal.

    With ``others=None`` the agent under test plays every seat; with an agent spec (e.g.
    ``"scripted"``) it plays one seat, rotating over seats with the seed
    (``seat = seed % n_seats``), and the spec plays the rest. Each game is also checked
    with :func:`check_events`.

    Args:
        make: ``make(seat, rules, seed) -> Agent`` for the agent under test.
        rules: Rule set to play.
        seeds: Game seeds, one game each.
        others: Agent spec for the other seats, or ``None``.

    Returns:
        A :class:`ConformanceReport`; each violation names the seed, seat, decision and the
        engine's reason (an illegal answer is replaced by a fallback in a real game, so it
        would not crash one, but it is a bug in the agent).
    """
    report = ConformanceReport(rules_id=rules.id, games=0)
    for seed in seeds:
        own = range(rules.n_seats) if others is None else [seed % rules.n_seats]
        agents: list[Agent] = [
            _Checked(make(s, rules, seed), seed, report.violations)
            if s in own
            else make_agent(others or "", s, rules, seed)
            for s in range(rules.n_seats)
        ]
        state = GameState(rules, seed)
        asyncio.run(run_game(state, agents))
        report.games += 1
        report.violations.extend(f"seed {seed}: {v}" for v in check_events(rules, state.events, state.roles))
    return report
