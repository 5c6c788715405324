"""Replaying a recorded game without agents, and resuming it from a step with live agents."""

from __future__ import annotations

from collections.abc import Sequence

from mafialab.agents import Agent
from mafialab.engine import Action, Event, GameState
from mafialab.record import GameLog

_ACTION_KINDS = ("speech", "mafia_chat", "night_action", "vote")


class ReplayMismatch(RuntimeError):
    """The log's events differ from what the engine produces from its recorded actions."""


def recorded_actions(events: Sequence[Event]) -> list[Action]:
    """The agents' answers recorded in ``events``, ordered by decision id."""
    acts = []
    for ev in events:
        if ev.kind in _ACTION_KINDS:
            d = ev.decision  # type: ignore[union-attr]
            target = getattr(ev, "target", None)
            text = getattr(ev, "text", None) if ev.kind in ("speech", "mafia_chat") else getattr(ev, "statement", None)
            acts.append(Action(decision=d, seat=ev.seat, target=target, text=text, fallback=ev.fallback))  # type: ignore[union-attr]
    return sorted(acts, key=lambda a: a.decision)


def replay(log: GameLog, upto: int | None = None, check: bool = True) -> GameState:
    """Rebuild the engine state from a log by re-applying its recorded actions; no agent is called.

    Args:
        log: The game log.
        upto: Apply only actions of decisions with id < ``upto`` (a step to fork from);
            ``None`` replays everything.
        check: Verify that the rebuilt events equal the logged ones (clock fields aside). A
            log cut short (a crash, Ctrl-C) is a prefix of the rebuilt events and passes.

    Raises:
        ReplayMismatch: If the log was imported from another tool, an action is rejected,
            or the events differ.
    """
    h = log.header
    if h.source != "mafialab":
        raise ReplayMismatch(f"{log.path}: imported from {h.source}; only games played by mafialab replay")
    labels = None
    state = GameState(h.rules, h.seed, labels=labels)
    seating = next((e for e in log.events if e.kind == "seating"), None)
    if seating is not None and seating.labels:  # type: ignore[union-attr]
        state = GameState(h.rules, h.seed, labels=seating.labels)  # type: ignore[union-attr]
    for a in recorded_actions(log.events):
        if upto is not None and a.decision >= upto:
            break
        if state.is_terminal:
            raise ReplayMismatch(f"action for decision {a.decision} after the game ended")
        res = state.apply(a)
        if res is not None:
            raise ReplayMismatch(f"decision {a.decision}: {res.reason}")
    if check:
        n = len(state.events)
        mine = [e.model_dump(exclude={"ts"}) for e in state.events]
        theirs = [e.model_dump(exclude={"ts"}) for e in log.events[:n]]
        if mine != theirs:
            i = next((i for i, (x, y) in enumerate(zip(mine, theirs, strict=False)) if x != y), None)
            # i is None: the log is a prefix of the rebuilt events, i.e. it was cut short (a crash
            # or Ctrl-C before the engine's own events after the last action were written)
            if i is not None:
                raise ReplayMismatch(f"event {i + 1} differs from the log")
    return state


async def resume(log: GameLog, step: int, agents: Sequence[Agent]) -> GameState:
    """Replay ``log`` up to decision ``step`` and play on with live ``agents``.

    Returns:
        The final state (not written anywhere; the caller logs it as a fork).
    """
    from mafialab.harness._play import run_game

    state = replay(log, upto=step)
    await run_game(state, agents, written=len(state.events))
    return state
