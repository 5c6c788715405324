"""Small drivers for engine tests."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from mafialab.engine import Action, Decision, GameState
from mafialab.record import GAME_FILE
from mafialab.rules import RuleSet

Policy = Callable[[GameState, Decision], Action | None]


def random_action(rng: random.Random, d: Decision) -> Action:
    target = rng.choice(d.options) if d.wants_target else None
    text = f"seat {d.seat} says hi" if d.needs_text else None
    return Action(decision=d.id, seat=d.seat, target=target, text=text)


def drive(
    rules: RuleSet, seed: int, policy: Policy | None = None, rng_seed: int = 0, max_batches: int = 10_000
) -> GameState:
    """Play a game to the end; ``policy`` may force an action (else uniformly random)."""
    state = GameState(rules, seed)
    rng = random.Random(rng_seed)
    for _ in range(max_batches):
        if state.is_terminal:
            return state
        for d in state.pending():
            a = policy(state, d) if policy else None
            if a is None:
                a = random_action(rng, d)
            res = state.apply(a)
            assert res is None, res
    raise AssertionError("game did not terminate")


def write_game_dir(root: Path, records: list[dict]) -> Path:
    """Write ``records`` as ``root/g1/game.jsonl`` and return the game directory."""
    d = root / "g1"
    d.mkdir(parents=True)
    (d / GAME_FILE).write_text("".join(json.dumps(r) + "\n" for r in records))
    return d
