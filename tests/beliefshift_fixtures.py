"""Shared builders for the belief-shift tests: native games, hand-made result records."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mafialab.agents import make_agent
from mafialab.beliefshift._schema import PlayerRef, Rating, ResultRecord
from mafialab.harness import play_game
from mafialab.rules import WEREWOLF7, RuleSet

WEREWOLF7_CHAT: RuleSet = WEREWOLF7.model_copy(
    update={"name": "werewolf7chat", "night": WEREWOLF7.night.model_copy(update={"mafia_chat": True})}
)
"""werewolf7 with a private wolf chat at night, so leak tests have something to leak."""


def play_native(out: Path, seeds: range, rules: RuleSet = WEREWOLF7_CHAT) -> Path:
    """Play scripted games (one per seed) under ``out``; return ``out``."""

    async def go() -> None:
        for seed in seeds:
            agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
            await play_game(rules, agents, seed, out=out)

    asyncio.run(go())
    return out


def player(seat: int, team: str, name: str | None = None) -> PlayerRef:
    role = "Werewolf" if team == "mafia" else "Villager"
    return PlayerRef(seat=seat, name=name or f"P{seat}", role=role, team=team)  # type: ignore[arg-type]


def result(
    label: str,
    n: int,
    accuser_team: str,
    target_team: str,
    category: str,
    prior: tuple[int, int] | None,
    shift: tuple[int, int] | None,
    *,
    cause: str | None = None,
    protocol: str = "anchored",
) -> ResultRecord:
    """A hand-made result record (``n`` makes the item id unique)."""
    ok = cause is None
    return ResultRecord(
        bench_id="hand",
        item_id=f"g:r1:m{n}:t1",
        message_id=f"g:r1:m{n}",
        game_id="g",
        model=label,
        label=label,
        protocol=protocol,  # type: ignore[arg-type]
        category=category,  # type: ignore[arg-type]
        accuser=player(0, accuser_team),
        target=player(1, target_team),
        observer=player(2, "town"),
        ok=ok,
        cause=cause,  # type: ignore[arg-type]
        prior=Rating(accuser=prior[0], target=prior[1]) if prior else None,
        shift=Rating(accuser=shift[0], target=shift[1]) if shift else None,
    )
