"""Replaying a recorded game without agents, and resuming it from a step with live agents.

Native logs replay by re-applying their recorded actions by decision id. Imported Kaggle games
replay under their ``kaggle-werewolf*`` rule set, each decision answered from that seat's
recorded action of that round (a tie Kaggle broke otherwise than the engine's seeded draw
stops the replay there). A branch (a fork,
see :mod:`mafialab.counterfactual`) replays its prefix from the parent's seed, switches the
engine's streams to its continuation seed at the fork step, then applies the rest. Imported
MafiaScope games have no seed and no decision ids: they rebuild from their recorded deal
(roles and seat names of the roster) under ``mafiascope7-v2`` (MafiaScope's vote rule), each
decision answered from the recorded turn of that seat in that round; a turn that cannot be
read (a failed source turn, an unreadable night action) or an outcome the engine does not
reproduce stops the rebuild with a :class:`ReplayMismatch` naming the step.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mafialab.agents import Agent
from mafialab.engine import Action, Decision, Event, GameState
from mafialab.record import GameLog
from mafialab.rules import BUILTIN_VERSIONS, RuleSet

_ACTION_KINDS = (
    "speech",
    "mafia_chat",
    "night_action",
    "vote",
    "team_pick",
    "team_vote",
    "mission_card",
    "assassination",
)
# MafiaScope's night action lines, English and Russian prompts (seat names are Latin in both)
_KILL = re.compile(r"(?:ACTION|ДЕЙСТВИЕ):\s*\**\s*(?:Kill|Убить)\s+\**\s*([A-Za-z][A-Za-z-]*)", re.IGNORECASE)
_PROTECT = re.compile(r"(?:ACTION|ДЕЙСТВИЕ):\s*\**\s*(?:Protect|Защитить)\s+\**\s*([A-Za-z][A-Za-z-]*)", re.IGNORECASE)


class ReplayMismatch(RuntimeError):
    """The log's events differ from what the engine produces from its recorded actions."""


@dataclass(frozen=True)
class ReplayedDecision:
    """One decision answered during a replay, with the recorded answer.

    Attributes:
        decision: The engine's decision (id, seat, kind, round, phase, options).
        action: The recorded answer applied.
        source_index: Imported games only: the source's per-round public message counter
            of the recorded turn (MafiaScope ``msg_seq``), else ``None``.
    """

    decision: Decision
    action: Action
    source_index: int | None = None


def recorded_actions(events: Sequence[Event]) -> list[Action]:
    """The agents' answers recorded in ``events``, ordered by decision id."""
    acts = []
    for ev in events:
        if ev.kind in _ACTION_KINDS:
            d = ev.decision  # type: ignore[union-attr]
            target = getattr(ev, "target", None)
            text = getattr(ev, "text", None) if ev.kind in ("speech", "mafia_chat") else getattr(ev, "statement", None)
            choice = getattr(ev, "choice", None)
            acts.append(Action(decision=d, seat=ev.seat, target=target, text=text, fallback=ev.fallback, choice=choice))  # type: ignore[union-attr]
    return sorted(acts, key=lambda a: a.decision)


_MISSION_ACTIONS = {
    "team_pick": "propose",
    "team_vote": "team_vote",
    "mission_card": "mission",
    "assassination": "assassinate",
}
"""Mission-game events that record an answer, and the decision kind each answers."""

_MAFIASCOPE_REPLAY = ("mafiascope7", "mafiascope7-werewolf", "mafiascope7-werewolf-seer")
"""Built-in rule sets an imported MafiaScope game replays under, each at version 2 (MafiaScope's vote rule)."""


def replay_rules(log: GameLog) -> RuleSet:
    """The rule set a log replays under: its own, or version 2 of its built-in for an imported MafiaScope game.

    An imported game of ``mafiascope7``, ``mafiascope7-werewolf`` or ``mafiascope7-werewolf-seer``
    replays under ``<name>-v2`` (MafiaScope's vote rule and text lengths) with its seat names; an
    imported Resistance game under ``mafiascope-resistance``.

    Raises:
        ReplayMismatch: An imported game whose rule set is none of those (a Sheriff variant
            without the Werewolf skin, the Resistance variant) or that comes from an unknown importer.
    """
    h = log.header
    if h.source == "mafialab":
        return h.rules
    if h.source == "mafiascope" and h.rules.name in _MAFIASCOPE_REPLAY:
        return BUILTIN_VERSIONS[f"{h.rules.name}-v2"].model_copy(update={"seat_names": h.rules.seat_names})
    if h.source == "kaggle":  # a kaggle-werewolf* rule set (record.kaggle_rules), stored whole in the header
        return h.rules
    if h.source == "mafiascope" and h.rules.id == "mafiascope-resistance-v1":  # MafiaScope's Resistance module
        return BUILTIN_VERSIONS[h.rules.id].model_copy(update={"seat_names": h.rules.seat_names})
    raise ReplayMismatch(
        f"{log.path}: imported from {h.source} with rule set {h.rules.id}; only games played by mafialab "
        f"and MafiaScope games of the built-in rule sets ({', '.join(_MAFIASCOPE_REPLAY)}) replay"
    )


def initial_state(log: GameLog, rules: RuleSet | None = None) -> GameState:
    """A fresh engine state with the log's deal: its seed, roster roles, seat names and labels."""
    h = log.header
    seating = next((e for e in log.events if e.kind == "seating"), None)
    labels = seating.labels if seating is not None and seating.labels else None  # type: ignore[union-attr]
    roster = sorted(h.roster, key=lambda s: s.seat)
    return GameState(
        rules or replay_rules(log),
        h.seed,
        labels=labels,
        roles=[s.role for s in roster],
        names=[s.name for s in roster],
    )


def _describe(state: GameState, d: Decision) -> str:
    return f"step {d.id} (round {d.round} {d.phase}, {state.names[d.seat]} {d.kind})"


def _imported_answers(log: GameLog, state: GameState) -> Callable[[Decision], tuple[Action, int | None]]:
    """An answer function for an imported MafiaScope game: each decision from the recorded turn."""
    names = {n: i for i, n in enumerate(state.names)}
    turns: dict[tuple[str, int, int], deque[tuple[Any, ...]]] = {}
    victims: dict[int, int] = {}
    checked: dict[tuple[int, int], int] = {}  # (round, seer seat) -> the seat the source says it checked
    failed: dict[tuple[str, int, int], str] = {}

    def put(kind: str, rnd: int, seat: int, item: tuple[Any, ...]) -> None:
        turns.setdefault((kind, rnd, seat), deque()).append(item)

    for ev in log.events:
        if ev.kind == "speech":
            put("speak", ev.round, ev.seat, (ev.text, ev.index))
        elif ev.kind == "vote":
            put("vote", ev.round, ev.seat, (ev.target, ev.statement, ev.index))
        elif ev.kind == "mafia_chat":
            put("kill", ev.round, ev.seat, (ev.text, ev.index))
        elif ev.kind == "kill_chosen" and ev.target is not None:
            victims[ev.round] = ev.target
        elif ev.kind == "investigation_result":
            checked[(ev.round, ev.seat)] = ev.target
        elif ev.kind in _MISSION_ACTIONS:  # mission games: the recorded pick, vote, card or assassination
            put(_MISSION_ACTIONS[ev.kind], ev.round, ev.seat, (ev, getattr(ev, "index", None)))  # type: ignore[union-attr,arg-type]
        elif ev.kind == "imported" and ev.seat is not None:
            rec = ev.record or {}
            idx = rec.get("msg_seq") if isinstance(rec.get("msg_seq"), int) else None
            kind = {
                "day_vote": "vote",
                "intro": "speak",
                "day_discuss": "speak",
                "night_mafia": "kill",
                "night_doctor": "protect",
                "night_sheriff": "investigate",
            }.get(ev.source_kind)
            if kind is None:
                continue
            if ev.note in ("transport_error", "empty_response"):
                failed[(kind, ev.round, ev.seat)] = ev.note
                put(kind, ev.round, ev.seat, ("__failed__", ev.note))
            elif kind == "vote":  # a vote naming no valid target: no vote
                put("vote", ev.round, ev.seat, (None, ev.text, idx))
            elif kind in ("protect", "investigate"):
                put(kind, ev.round, ev.seat, (ev.text, idx))

    def answer(d: Decision) -> tuple[Action, int | None]:
        key = {
            **{k: k for k in _MISSION_ACTIONS.values()},
            "speak": "speak",
            "vote": "vote",
            "kill": "kill",
            "protect": "protect",
            "investigate": "investigate",
        }.get(d.kind)
        q = turns.get((key, d.round, d.seat)) if key is not None else None
        if not q:
            raise ReplayMismatch(f"{_describe(state, d)}: no recorded turn in the imported game")
        item = q.popleft()
        if item[0] == "__failed__":
            raise ReplayMismatch(f"{_describe(state, d)}: the source turn failed ({item[1]}); it cannot be replayed")
        if d.kind == "speak":
            return Action(decision=d.id, seat=d.seat, text=item[0]), item[1]
        if d.kind in _MISSION_ACTIONS.values():
            ev, idx = item
            text = (ev.statement or "(no statement)") if d.needs_text else None
            target, choice = getattr(ev, "target", None), getattr(ev, "choice", None)
            a = Action(decision=d.id, seat=d.seat, target=target, choice=choice, text=text, fallback=ev.fallback)
            return a, idx
        if d.kind == "vote":
            target, statement, idx = item
            if target is not None and target not in d.options:
                target = None  # a dead player or the voter: no vote under mafiascope7-v2
            return Action(decision=d.id, seat=d.seat, target=target, text=statement or "(no statement)"), idx
        text, idx = item
        if d.kind == "investigate":  # the source's result record names the checked player
            target = checked.get((d.round, d.seat))
            if target is None or target not in d.options:
                raise ReplayMismatch(f"{_describe(state, d)}: the recorded investigate target cannot be read")
            return Action(decision=d.id, seat=d.seat, target=target), idx
        pattern = _KILL if d.kind == "kill" else _PROTECT
        found = [names[m] for m in pattern.findall(text or "") if m in names]
        target = found[-1] if found and found[-1] in d.options else None
        if target is None and d.kind == "kill" and victims.get(d.round) in d.options:
            target = victims[d.round]  # the team's recorded victim when this member named none
        if target is None:
            raise ReplayMismatch(f"{_describe(state, d)}: the recorded {d.kind} target cannot be read")
        return Action(decision=d.id, seat=d.seat, target=target), idx

    return answer


def _kaggle_answers(log: GameLog, state: GameState) -> Callable[[Decision], tuple[Action, int | None]]:
    """An answer function for an imported Kaggle game: each decision from that seat's recorded action.

    Actions are keyed by (kind, round, seat) and taken in recorded order, so a speaking or voting
    order drawn differently from Kaggle's still finds each seat's own turns.
    """
    turns: dict[tuple[str, int, int], deque[tuple[Any, ...]]] = {}
    for ev in log.events:
        item: tuple[str, tuple[Any, ...]] | None = None
        if ev.kind == "speech":
            item = ("speak", (None, ev.text, ev.index))
        elif ev.kind == "vote":
            item = ("vote", (ev.target, ev.statement, ev.index))
        elif ev.kind == "night_action":
            item = (ev.ability, (ev.target, None, None))
        elif ev.kind == "bid":
            item = ("bid", (ev.amount, None, None))
        if item is not None:
            seat: int = ev.seat  # type: ignore[union-attr,assignment]
            turns.setdefault((item[0], ev.round, seat), deque()).append(item[1])

    def answer(d: Decision) -> tuple[Action, int | None]:
        q = turns.get((d.kind, d.round, d.seat))
        if not q:
            raise ReplayMismatch(f"{_describe(state, d)}: no recorded turn in the imported game")
        target, text, idx = q.popleft()
        return Action(decision=d.id, seat=d.seat, target=target, text=text), idx

    return answer


def _outcomes(events: Sequence[Event]) -> list[tuple[Any, ...]]:
    # deaths in order, then the winner (an importer may write a last unannounced death after the end)
    out: list[tuple[Any, ...]] = [
        ("elimination", ev.round, ev.seat, ev.cause)  # type: ignore[union-attr]
        for ev in events
        if ev.kind == "elimination"
    ]
    # mission games: every team vote's and mission's result
    out += [
        (ev.kind, ev.round, getattr(ev, "approved", None), getattr(ev, "succeeded", None))
        for ev in events
        if ev.kind in ("team_vote_tally", "mission_result")
    ]
    out += [("game_end", ev.winner) for ev in events if ev.kind == "game_end"]  # type: ignore[union-attr]
    return out


@dataclass(frozen=True)
class ReplayStop:
    """Where and why a replay stops following its log (see :func:`replay_until_mismatch`).

    Attributes:
        step: The first decision id that cannot be forked at (replaying the decisions before
            it does not reproduce the log); ``None`` when it stops after the last decision.
        reason: One line: the step (round, phase, seat, kind) and the cause, naming the
            ``file:line`` of an unreadable record of the log when one explains it.
    """

    step: int | None
    reason: str


def _problem_note(log: GameLog) -> str:
    if not log.problems:
        return ""
    more = f" and {len(log.problems) - 1} more" if len(log.problems) > 1 else ""
    return f"; the log skipped an unreadable record: {log.problems[0]}{more}"


def _gap_message(log: GameLog, state: GameState, gap: int) -> str:
    """``event N differs from the log (KIND rebuilt[, KIND there])`` and the unreadable record behind it, if any."""
    theirs = "" if log.problems else f", {log.events[gap].kind} there"
    return f"event {gap + 1} differs from the log ({state.events[gap].kind} rebuilt{theirs}){_problem_note(log)}"


def _event_gap(log: GameLog, state: GameState, checked: int) -> tuple[int | None, int]:
    """The first rebuilt event (0-based) from ``checked`` on that differs from the log, and the new count checked."""
    n = min(len(state.events), len(log.events))  # a log cut short is a prefix of the rebuilt events
    for i in range(checked, n):
        if state.events[i].model_dump(exclude={"ts"}) != log.events[i].model_dump(exclude={"ts"}):
            return i, checked
    return None, n


def _run_replay(
    log: GameLog, upto: int | None, check: bool, partial: bool
) -> tuple[GameState, list[ReplayedDecision], ReplayStop | None]:
    h = log.header
    rules = replay_rules(log)
    parent = getattr(h, "parent", None)
    if parent is not None and parent.prefix == "absent":
        raise ReplayMismatch(
            f"{log.path}: an imported branch without its prefix (the source logged none); it cannot replay"
        )
    state = initial_state(log, rules)
    done: list[ReplayedDecision] = []
    answer: Callable[[Decision], tuple[Action, int | None]]
    if h.source == "mafialab":
        by_id = {a.decision: a for a in recorded_actions(log.events)}
        cont = parent.step if parent is not None else None

        def native(d: Decision) -> tuple[Action, int | None]:
            a = by_id.get(d.id)
            if a is None:
                raise ReplayMismatch(f"{_describe(state, d)}: no recorded action")
            return a, None

        answer = native
    else:
        cont = None
        answer = _kaggle_answers(log, state) if h.source == "kaggle" else _imported_answers(log, state)
    recorded = _outcomes(log.events)
    checked = 0

    def follows(d: Decision) -> str | None:
        """Partial replays: why the state before ``d`` no longer follows the log, or ``None``."""
        nonlocal checked
        if h.source == "mafialab":
            gap, checked = _event_gap(log, state, checked)
            return None if gap is None else f"{_describe(state, d)}: {_gap_message(log, state, gap)}"
        mine = _outcomes(state.events)
        if mine != recorded[: len(mine)]:
            rec_out = recorded[len(mine) - 1] if len(recorded) >= len(mine) else "end"
            return f"{_describe(state, d)}: the engine's outcome {mine[-1]} differs from the recorded {rec_out}"
        return None

    while not state.is_terminal:
        batch = sorted(state.pending(), key=lambda d: d.id)
        if not batch:
            break
        stop = False
        for d in batch:
            if upto is not None and d.id >= upto:
                stop = True
                break
            if cont is not None and d.id >= cont and state.continuation_seed is None:
                state.reseed(parent.continuation_seed)  # type: ignore[union-attr]
            if h.source == "mafialab" and d.id not in by_id:
                stop = True  # a log cut short
                break
            if partial:
                why = follows(d)
                if why is not None:
                    return state, done, ReplayStop(d.id, why)
                try:
                    a, idx = answer(d)
                except ReplayMismatch as err:
                    return state, done, ReplayStop(d.id, str(err))
                res = state.apply(a)
                if res is not None:
                    return state, done, ReplayStop(d.id, f"{_describe(state, d)}: {res.reason}")
                done.append(ReplayedDecision(d, a, idx))
                continue
            a, idx = answer(d)
            res = state.apply(a)
            if res is not None:
                raise ReplayMismatch(f"{_describe(state, d)}: {res.reason}")
            done.append(ReplayedDecision(d, a, idx))
            if h.source != "mafialab" and check:
                mine = _outcomes(state.events)
                if mine != recorded[: len(mine)]:
                    raise ReplayMismatch(
                        f"{_describe(state, d)}: the engine's outcome {mine[-1]} differs from the recorded "
                        f"{recorded[len(mine) - 1] if len(recorded) >= len(mine) else 'end'}"
                    )
        if stop:
            break
    if check and h.source == "mafialab" and not partial:
        # a gap at None: the log is a prefix of the rebuilt events, i.e. it was cut short (a crash
        # or Ctrl-C before the engine's own events after the last action were written)
        gap, _ = _event_gap(log, state, 0)
        if gap is not None:
            where = f"{_describe(state, done[-1].decision)}: " if done else "before the first decision: "
            raise ReplayMismatch(f"{log.path}: {where}{_gap_message(log, state, gap)}")
    if cont is not None and upto is not None and upto >= cont and state.continuation_seed is None:
        state.reseed(parent.continuation_seed)  # type: ignore[union-attr]
    return state, done, None


def replay_decisions(
    log: GameLog, upto: int | None = None, check: bool = True
) -> tuple[GameState, list[ReplayedDecision]]:
    """Rebuild the engine state from a log and list every decision answered on the way.

    Args:
        log: A native log, a branch with its prefix, or an imported MafiaScope game.
        upto: Stop before decision id ``upto`` (the fork step); ``None`` replays everything.
        check: Native logs: the rebuilt events must equal the logged ones (clock fields
            aside; a log cut short passes). Imported logs: the rebuilt eliminations and winner
            must equal the recorded ones.

    Returns:
        ``(state, decisions)``.

    Raises:
        ReplayMismatch: The log cannot be rebuilt; the message names the first step that
            cannot be reproduced (and the ``file:line`` of an unreadable record of the log
            when one explains it).
    """
    state, done, _ = _run_replay(log, upto, check, partial=False)
    return state, done


def replay_until_mismatch(log: GameLog) -> tuple[GameState, list[ReplayedDecision], ReplayStop | None]:
    """Replay ``log`` as far as it follows the recorded game: the decisions a fork may start at.

    Before each decision the rebuilt game is checked against the log (native logs: every
    event, clock fields aside; imported MafiaScope games: eliminations and winner). The
    replay stops at the first decision whose recorded answer cannot be read or applied, or
    before which the rebuilt game already differs (e.g. an event lost to an unreadable line).

    Returns:
        ``(state, decisions, stop)``: the decisions answered before the stop, and ``None``
        or the :class:`ReplayStop` naming that decision and the cause.

    Raises:
        ReplayMismatch: The log does not replay at all (an imported rule set other than
            ``mafiascope7``, an imported branch without its prefix).
    """
    return _run_replay(log, None, True, partial=True)


def replay(log: GameLog, upto: int | None = None, check: bool = True) -> GameState:
    """Rebuild the engine state from a log by re-applying its recorded actions; no agent is called.

    Args:
        log: The game log: a game played by mafialab, a branch, or an imported MafiaScope
            game whose recorded actions replay under ``mafiascope7-v2``.
        upto: Apply only actions of decisions with id < ``upto`` (a step to fork from);
            ``None`` replays everything.
        check: Verify the rebuild (see :func:`replay_decisions`).

    Raises:
        ReplayMismatch: If the log was imported from a game the engine cannot rebuild, an
            action is rejected, or the events differ (the message names the step).
    """
    return replay_decisions(log, upto=upto, check=check)[0]


async def resume(log: GameLog, step: int, agents: Sequence[Agent]) -> GameState:
    """Replay ``log`` up to decision ``step`` and play on with live ``agents``.

    Returns:
        The final state (not written anywhere; the caller logs it as a fork).
    """
    from mafialab.harness._play import run_game

    state = replay(log, upto=step)
    await run_game(state, agents, written=len(state.events))
    return state
