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
from mafialab.testing._conformance_mission import check_mission_events


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

    Mission games are checked by their own invariants (``_conformance_mission``).
    """
    if rules.mission is not None:
        return check_mission_events(rules, events, roles)
    walk = _GameWalk(rules, roles)
    for ev in events:
        walk.see(ev)
    return walk.finish(events)


class _GameWalk:
    """What :func:`check_events` follows through one game's events, and the violations found so far."""

    def __init__(self, rules: RuleSet, roles: Sequence[str]) -> None:
        self.rules = rules
        self.roles = roles
        self.teams = [rules.role(r).team for r in roles]
        self.alive = [True] * len(roles)
        self.out: list[str] = []
        self.last_protect: int | None = None
        self.protect_this_night: int | None = None
        self.night_round = -1
        self.votes: dict[tuple[int, str], set[int]] = {}
        self.elim_by_vote: dict[int, int] = {}
        self.no_votes: dict[tuple[int, str], set[int]] = {}
        self.runoff_candidates: dict[int, list[int]] = {}
        self.end: GameEnd | None = None

    def see(self, ev: Event) -> None:
        """Check one event against the state so far, then take it into the state."""
        if isinstance(ev, Speech | MafiaChat | NightAction | Vote) and not self.alive[ev.seat]:
            self.out.append(f"event {ev.seq}: dead seat {ev.seat} acted ({ev.kind})")
        if isinstance(ev, NightAction | Vote | KillChosen) and ev.target is not None and not self.alive[ev.target]:
            self.out.append(f"event {ev.seq}: dead seat {ev.target} targeted ({ev.kind})")
        if isinstance(ev, PhaseStarted) and ev.phase == "night":
            if self.night_round >= 0:
                self.last_protect = self.protect_this_night
            self.protect_this_night, self.night_round = None, ev.round
        elif isinstance(ev, NightAction) and ev.ability == "protect":
            self._protect(ev)
        elif isinstance(ev, NightAction) and ev.ability == "kill" and self.teams[ev.target] == "mafia":
            self.out.append(f"event {ev.seq}: kill vote against own team")
        elif isinstance(ev, InvestigationResult):
            truth = self.teams[ev.target] if self.rules.night.investigate_result == "team" else self.roles[ev.target]
            if ev.result != truth:
                self.out.append(f"event {ev.seq}: investigation result {ev.result!r} != {truth!r}")
        elif isinstance(ev, Vote):
            self._vote(ev)
        elif isinstance(ev, VoteTally):
            self._tally(ev)
        elif isinstance(ev, Elimination):
            if not self.alive[ev.seat]:
                self.out.append(f"event {ev.seq}: seat {ev.seat} eliminated twice")
            self.alive[ev.seat] = False
            if ev.cause == "vote":
                self.elim_by_vote[ev.round] = self.elim_by_vote.get(ev.round, 0) + 1
        elif isinstance(ev, GameEnd):
            if self.end is not None:
                self.out.append(f"event {ev.seq}: second game_end")
            self.end = ev

    def _protect(self, ev: NightAction) -> None:
        """The rule set's protection constraints (self, self on consecutive nights, the same player again)."""
        n, me, t = self.rules.night, ev.seat, ev.target
        if t == me and not n.protect_self:
            self.out.append(f"event {ev.seq}: self-protection not allowed")
        if t == me and self.last_protect == me and not n.protect_self_consecutive:
            self.out.append(f"event {ev.seq}: self-protection on consecutive nights")
        if t != me and self.last_protect == t and not n.protect_repeat:
            self.out.append(f"event {ev.seq}: same player protected on consecutive nights")
        self.protect_this_night = t

    def _vote(self, ev: Vote) -> None:
        """One vote per seat per stage; an abstention is remembered for the tally."""
        key = (ev.round, ev.stage)
        if ev.seat in self.votes.setdefault(key, set()):
            self.out.append(f"event {ev.seq}: seat {ev.seat} voted twice in {key}")
        self.votes[key].add(ev.seat)
        if ev.target is None:
            self.no_votes.setdefault(key, set()).add(ev.seat)

    def _tally(self, ev: VoteTally) -> None:
        """Exactly the legal voters voted, and the tally names (or, when secret, only counts) their votes."""
        key = (ev.round, ev.stage)
        expected = {s for s, a in enumerate(self.alive) if a}
        if ev.stage == "runoff":
            expected -= set(self.runoff_candidates.get(ev.round, []))
        elif ev.stage == "nomination":
            self.runoff_candidates[ev.round] = list(ev.candidates)
        got = self.votes.get(key, set())
        if got != expected:
            self.out.append(f"round {ev.round} {ev.stage}: voters {sorted(got)} != legal voters {sorted(expected)}")
        cast = got - self.no_votes.get(key, set())
        hidden = ev.stage != "nomination" and self.rules.day.vote != "public_sequential"
        if hidden and not self.rules.day.tally_names_voters:
            if ev.votes:  # secret votes must stay secret: the public result names no voter
                self.out.append(f"round {ev.round} {ev.stage}: tally names voters {sorted(ev.votes)}")
            if sum(ev.tally.values()) != len(cast):
                self.out.append(
                    f"round {ev.round} {ev.stage}: tally counts {sum(ev.tally.values())} votes of {len(got)}"
                )
        elif set(ev.votes) != cast:
            self.out.append(
                f"round {ev.round} {ev.stage}: tally lists {sorted(ev.votes)}, votes came from {sorted(got)}"
            )

    def finish(self, events: Sequence[Event]) -> list[str]:
        """The violations, with the end-of-game checks (one game_end, last; eliminations per day; winner; cap)."""
        out, end, alive = self.out, self.end, self.alive
        if end is None or events[-1] is not end:
            out.append("game did not end with exactly one game_end event")
            return out
        if self.rules.day.vote == "nomination_runoff":
            for rnd, stage in self.votes:
                if stage == "runoff" and self.elim_by_vote.get(rnd, 0) != 1:
                    out.append(f"round {rnd}: {self.elim_by_vote.get(rnd, 0)} eliminations by vote (expected 1)")
        mafia = sum(1 for s, a in enumerate(alive) if a and self.teams[s] == "mafia")
        town = sum(1 for s, a in enumerate(alive) if a and self.teams[s] == "town")
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
        if end.rounds > self.rules.round_cap:
            out.append(f"played {end.rounds} rounds past the cap {self.rules.round_cap}")
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
