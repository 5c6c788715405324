"""A conformance checker for rule sets and engine runs (in the spirit of PettingZoo's api_test)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from mafialab.agents import make_agent
from mafialab.engine import Event, GameState
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
    votes: dict[tuple[int, str], set[int]] = {}
    elim_by_vote: dict[int, int] = {}
    runoff_candidates: dict[int, list[int]] = {}
    night_round = -1
    for ev in events:
        k = ev.kind
        actor = getattr(ev, "seat", None)
        if k in ("speech", "mafia_chat", "night_action", "vote") and actor is not None and not alive[actor]:
            out.append(f"event {ev.seq}: dead seat {actor} acted ({k})")
        target = getattr(ev, "target", None)
        if k in ("night_action", "vote", "kill_chosen") and target is not None and not alive[target]:
            out.append(f"event {ev.seq}: dead seat {target} targeted ({k})")
        if k == "phase_started" and ev.phase == "night":
            if night_round >= 0:
                last_protect = protect_this_night
            protect_this_night = None
            night_round = ev.round
        if k == "night_action" and ev.ability == "protect":  # type: ignore[union-attr]
            n = rules.night
            me, t = ev.seat, ev.target  # type: ignore[union-attr]
            if t == me and not n.protect_self:
                out.append(f"event {ev.seq}: self-protection not allowed")
            if t == me and last_protect == me and not n.protect_self_consecutive:
                out.append(f"event {ev.seq}: self-protection on consecutive nights")
            if t != me and last_protect == t and not n.protect_repeat:
                out.append(f"event {ev.seq}: same player protected on consecutive nights")
            protect_this_night = t
        if k == "night_action" and ev.ability == "kill" and teams[ev.target] == "mafia":  # type: ignore[union-attr]
            out.append(f"event {ev.seq}: kill vote against own team")
        if k == "investigation_result":
            t = ev.target  # type: ignore[union-attr]
            truth = teams[t] if rules.night.investigate_result == "team" else roles[t]
            if ev.result != truth:  # type: ignore[union-attr]
                out.append(f"event {ev.seq}: investigation result {ev.result!r} != {truth!r}")  # type: ignore[union-attr]
        if k == "vote":
            key = (ev.round, ev.stage)  # type: ignore[union-attr]
            if actor in votes.setdefault(key, set()):
                out.append(f"event {ev.seq}: seat {actor} voted twice in {key}")
            votes[key].add(actor)  # type: ignore[arg-type]
        if k == "vote_tally":
            key = (ev.round, ev.stage)  # type: ignore[union-attr]
            living = {s for s, a in enumerate(alive) if a}
            expected = living
            if ev.stage == "runoff":  # type: ignore[union-attr]
                expected = living - set(runoff_candidates.get(ev.round, []))
            if ev.stage == "nomination":  # type: ignore[union-attr]
                runoff_candidates[ev.round] = list(ev.candidates)  # type: ignore[union-attr]
            got = votes.get(key, set())
            if got != expected:
                out.append(f"round {ev.round} {ev.stage}: voters {sorted(got)} != legal voters {sorted(expected)}")  # type: ignore[union-attr]
            if set(ev.votes) != got:  # type: ignore[union-attr]
                out.append(
                    f"round {ev.round} {ev.stage}: tally lists {sorted(ev.votes)} but votes came from {sorted(got)}"
                )  # type: ignore[union-attr]
        if k == "elimination":
            s = ev.seat  # type: ignore[union-attr]
            if not alive[s]:
                out.append(f"event {ev.seq}: seat {s} eliminated twice")
            alive[s] = False
            if ev.cause == "vote":  # type: ignore[union-attr]
                elim_by_vote[ev.round] = elim_by_vote.get(ev.round, 0) + 1
    ends = [e for e in events if e.kind == "game_end"]
    if len(ends) != 1 or events[-1].kind != "game_end":
        out.append("game did not end with exactly one game_end event")
        return out
    end = ends[0]
    if rules.day.vote == "nomination_runoff":
        for rnd, stage in votes:
            if stage == "runoff" and elim_by_vote.get(rnd, 0) != 1:
                out.append(f"round {rnd}: {elim_by_vote.get(rnd, 0)} eliminations by vote (expected 1)")
    mafia = sum(1 for s, a in enumerate(alive) if a and teams[s] == "mafia")
    town = sum(1 for s, a in enumerate(alive) if a and teams[s] == "town")
    if end.alive != [s for s, a in enumerate(alive) if a]:  # type: ignore[union-attr]
        out.append("game_end alive set differs from the deaths")
    expected_winner = None
    if mafia == 0:
        expected_winner = "town"
    elif mafia >= town:
        expected_winner = "mafia"
    elif end.reason == "round_cap":  # type: ignore[union-attr]
        expected_winner = "mafia" if mafia > town else "town"
    if end.winner != expected_winner:  # type: ignore[union-attr]
        out.append(f"winner {end.winner} does not match final alive set (mafia {mafia}, town {town})")  # type: ignore[union-attr]
    if end.rounds > rules.round_cap:  # type: ignore[union-attr]
        out.append(f"played {end.rounds} rounds past the cap {rules.round_cap}")  # type: ignore[union-attr]
    return out


async def _play(rules: RuleSet, specs: Sequence[str], seed: int) -> GameState:
    from mafialab.harness._play import run_game

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
