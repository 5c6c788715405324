"""Many seeded games of one table, a bounded number at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from mafialab._words import count
from mafialab.agents import Agent, make_agent
from mafialab.engine import GameState
from mafialab.harness._play import GameObserver, GameResult, play_game
from mafialab.record import PriceTable
from mafialab.rules import RuleSet

ObserverFactory = Callable[[int, Sequence[Agent]], Sequence[GameObserver]]
"""``factory(seed, agents) -> observers`` for one game (e.g. a probe runner)."""


async def play_games(
    rules: RuleSet,
    specs: Sequence[str],
    seeds: Sequence[int],
    *,
    out: Path | None = None,
    parallel: int = 1,
    prices: PriceTable | None = None,
    observers: ObserverFactory | None = None,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int, GameState], None] | None = None,
    on_done: Callable[[int, GameResult | None], None] | None = None,
    allow_degraded: bool = False,
) -> list[GameResult]:
    """Play one game per seed with the same agent specs, at most ``parallel`` at a time.

    Agents are built fresh for every game (``make_agent(specs[seat], seat, rules, seed)``).
    What ``mafialab play`` runs; the callbacks drive its progress display.

    Args:
        rules: Rule set.
        specs: One agent spec per seat (``len == rules.n_seats``).
        seeds: Game seeds, one game each.
        out: Parent directory of the game logs, or ``None`` for no logs.
        parallel: Games played at the same time (>= 1).
        prices: Price table for call costs.
        observers: Builds each game's observers from its seed and agents.
        on_start: Called with the seed when a game starts.
        on_batch: Called with the seed and state once before the first decision (the phase about
            to be played is then known) and after every batch of decisions.
        on_done: Called with the seed and result when a game ends (``None`` when it raised).
        allow_degraded: Play even when a remote server answers no preflight probe usably in
            any structured-output dialect (see :func:`play_game`).

    Returns:
        The results in the order of ``seeds``.

    Raises:
        ValueError: ``specs`` does not hold one spec per seat, or ``parallel < 1``.
        Any error of :func:`play_game` (e.g. ``PreflightError``); games already finished
        keep their logs.
    """
    if len(specs) != rules.n_seats:
        raise ValueError(f"specs: {count(len(specs), 'agent spec')} for {count(rules.n_seats, 'seat')}")
    if parallel < 1:
        raise ValueError(f"parallel: must be >= 1, got {parallel}")
    limit = asyncio.Semaphore(parallel)

    async def one(seed: int) -> GameResult:
        async with limit:
            agents = [make_agent(specs[s], s, rules, seed) for s in range(rules.n_seats)]
            obs = list(observers(seed, agents)) if observers is not None else []
            if on_start is not None:
                on_start(seed)
            res: GameResult | None = None
            try:
                res = await play_game(
                    rules,
                    agents,
                    seed,
                    out=out,
                    observers=obs,
                    prices=prices,
                    on_batch=None if on_batch is None else (lambda st: on_batch(seed, st)),
                    allow_degraded=allow_degraded,
                )
            finally:
                if on_done is not None:
                    on_done(seed, res)
            return res

    return list(await asyncio.gather(*(one(s) for s in seeds)))
