"""The game loop: engine + agents + log, with independent decisions asked concurrently."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from mafialab import __version__
from mafialab._text import valid_utf8
from mafialab._words import count
from mafialab.agents import Agent
from mafialab.engine import Action, Event, GameState, Invalid
from mafialab.harness._calls import GATE_THRESHOLD, CallRecorder, dialects_in_use, preflight
from mafialab.record import (
    CALLS_FILE,
    GAME_FILE,
    PROBES_FILE,
    VERDICTS_FILE,
    CallSummary,
    GameHeader,
    GameStatus,
    JsonlWriter,
    ParentInfo,
    PriceTable,
    SeatInfo,
    person_seats,
)
from mafialab.rules import RuleSet, Team

log = logging.getLogger(__name__)


class GameObserver(Protocol):
    """Called after each batch of decisions with the events it produced (e.g. probes).

    An observer may also have ``async finish()`` (awaited when the game is over, e.g. to
    wait for work it started in the background) and ``cancel()`` (called when the game
    stops with an exception); :func:`run_game` calls them when present.
    """

    async def on_events(self, events: Sequence[Event], state: GameState) -> None:
        """React to new events; must not change the state (may return before its work is done)."""
        ...


@dataclass
class GameResult:
    """Summary of a finished (or stopped) game.

    Attributes:
        game_id: Game id.
        seed: Game seed.
        rules_id: Versioned rule-set id.
        winner: Winning team id or ``None`` if unfinished.
        rounds: Last round reached.
        eliminations: ``(round, seat name, cause)`` per death, in order.
        decisions: Player decisions answered.
        fallbacks: Decisions settled by a fallback (invalid or failed answer).
        path: Game directory, if written.
        state: The final engine state.
        degraded: Whether the integrity gate marked the game degraded.
        gate: Integrity-gate figures (:meth:`CallRecorder.gate`).
        calls: Every record of ``calls.jsonl``: model calls, and the decisions of the seats
            in ``person_seats``.
        call_summary: Prefix reuse over the model calls (the closing record of
            ``calls.jsonl``), or ``None`` when the game was not played to its end.
        person_seats: Seats a person played (``human``, ``human-web``): their records in
            ``calls`` are the person's decisions, not model calls (:meth:`model_calls`).
    """

    game_id: str
    seed: int
    rules_id: str
    winner: Team | None
    rounds: int
    eliminations: list[tuple[int, str, Literal["night", "vote"]]]
    decisions: int
    fallbacks: int
    path: Path | None
    state: GameState = field(repr=False)
    degraded: bool = False
    gate: dict[str, Any] = field(default_factory=dict)
    calls: list[Any] = field(default_factory=list, repr=False)
    call_summary: CallSummary | None = field(default=None, repr=False)
    person_seats: frozenset[int] = frozenset()

    def model_calls(self) -> list[Any]:
        """The records of :attr:`calls` that are model calls (not a person's decisions)."""
        return [c for c in self.calls if c.seat not in self.person_seats]

    def person_decisions(self) -> list[Any]:
        """The game-decision records of the seats a person played (one per decision; probe answers left out)."""
        return [c for c in self.calls if c.seat in self.person_seats and c.decision is not None]


def run_config(agents: Sequence[Any], observers: Sequence[Any] = ()) -> dict[str, Any]:
    """The run configuration a game id is derived from, beside rule set, seed and labels.

    ``settings`` holds each seat's recorded agent settings (``describe()``: model, prompt
    pack, sampling caps; ``None`` for agents without it); every observer with a
    ``run_config`` mapping (the probe runner: ``{"probes": "<battery>:<8 hex>"}``) adds its
    entries. Two recordings that differ in any of these get different game ids.

    Args:
        agents: One agent per seat.
        observers: The game's observers.

    Returns:
        A JSON-serialisable dict (``settings`` list, plus observer entries).
    """
    cfg: dict[str, Any] = {
        "settings": [a.describe() if callable(getattr(a, "describe", None)) else None for a in agents]
    }
    for obs in observers:
        extra = getattr(obs, "run_config", None)
        if isinstance(extra, Mapping):
            cfg.update(extra)
    return cfg


def default_game_id(
    rules: RuleSet, seed: int, agent_labels: Sequence[str], config: Mapping[str, Any] | None = None
) -> str:
    """Deterministic game id: ``<rules name>-s<seed>-<8 hex>``.

    The hex is sha256 over the rule-set id, the seed, the agents' labels and the run
    configuration (:func:`run_config`: agent settings, probe battery), so the same seed and
    line-up played with and without probes (or with another battery) get different ids,
    and a game id names one recorded game.

    Args:
        rules: Rule set.
        seed: Game seed.
        agent_labels: One label per seat.
        config: Run configuration (:func:`run_config`); ``None`` hashes as an empty one.
    """
    payload = json.dumps(
        {"rules": rules.id, "seed": seed, "agents": list(agent_labels), "config": dict(config or {})},
        sort_keys=True,
        default=str,
    )
    h = hashlib.sha256(payload.encode()).hexdigest()[:8]
    return f"{rules.name}-s{seed}-{h}"


def make_header(
    state: GameState,
    game_id: str,
    agent_labels: Sequence[str],
    meta: dict[str, Any] | None = None,
    personas: Sequence[dict[str, Any] | None] | None = None,
) -> GameHeader:
    """The ``game_start`` record for ``state``."""
    roster = [
        SeatInfo(
            seat=s,
            name=state.names[s],
            role=state.roles[s],
            team=state.teams[s],
            agent=agent_labels[s],
            persona=personas[s] if personas else None,
        )
        for s in range(state.n_seats)
    ]
    return GameHeader(
        game_id=game_id,
        rules_id=state.rules.id,
        rules=state.rules,
        seed=state.seed,
        roster=roster,
        software=f"mafialab {__version__}",
        meta=meta or {},
    )


async def run_game(
    state: GameState,
    agents: Sequence[Agent],
    *,
    writer: JsonlWriter | None = None,
    observers: Sequence[GameObserver] = (),
    on_batch: Callable[[GameState], Awaitable[None] | None] | None = None,
    written: int = 0,
) -> tuple[int, int]:
    """Drive ``state`` to the end with ``agents`` (one per seat).

    Decisions pending together are asked concurrently. An answer the engine rejects is
    replaced by a seeded-random legal fallback (``fallback`` stream) and logged; events are
    written as they happen.

    Args:
        state: The game state to drive.
        agents: One agent per seat.
        writer: Log writer for events, or ``None``.
        observers: Called with every batch of new events (the first call also gets the
            events the state emitted before its first decision); their ``finish`` is
            awaited at the end, their ``cancel`` called if the game raises.
        on_batch: Progress display: called with the state once before the first decision
            (its events then show the phase about to be played) and after every batch.
        written: Number of ``state.events`` already written/observed (e.g. when resuming).

    Returns:
        ``(decisions, fallbacks)`` counted over this call.
    """
    decisions = fallbacks = 0

    async def flush() -> None:
        nonlocal written
        new = state.events[written:]
        written = len(state.events)
        if writer is not None:
            for ev in new:
                writer.write(ev)
        for obs in observers:
            await obs.on_events(new, state)

    async def progress() -> None:
        if on_batch is not None:
            r = on_batch(state)
            if r is not None:
                await r

    try:
        await flush()
        await progress()  # the phase of the first decisions is already known (e.g. night 1)
        while not state.is_terminal:
            batch = state.pending()
            answers = await asyncio.gather(*(agents[d.seat].decide(d, state.view(d.seat)) for d in batch))
            for d, a in zip(batch, answers, strict=True):
                decisions += 1
                res = _unloggable(a) or state.apply(a)
                if res is not None or a.fallback:
                    if res is not None:
                        log.warning("seat %d decision %d (%s): %s; falling back", d.seat, d.id, d.kind, res.reason)
                        fb = state.random_action(d)
                        bad = state.apply(fb)
                        assert bad is None, bad
                    fallbacks += 1
            await flush()
            await progress()
        for obs in observers:  # background work of observers (probes) ends with the game
            finish = getattr(obs, "finish", None)
            if finish is not None:
                await finish()
    except BaseException:
        for obs in observers:
            cancel = getattr(obs, "cancel", None)
            if cancel is not None:
                cancel()
        raise
    return decisions, fallbacks


def _unloggable(answer: Any) -> Invalid | None:
    """Why ``answer`` cannot be played: not an :class:`Action`, or text that could not be logged.

    The last line of defence behind the entry points (model, bus and remote answers are made
    valid UTF-8 as they arrive): an agent's text holding a character UTF-8 cannot encode (a
    lone surrogate) is refused like an illegal move, so the decision becomes a logged fallback
    and the game goes on; it never enters the state, the log or another seat's prompt.
    """
    if not isinstance(answer, Action):
        return Invalid(reason=f"not an Action: {type(answer).__name__}")
    if answer.text is not None:
        _, bad = valid_utf8(answer.text)
        if bad:
            return Invalid(reason=f"text holds {count(bad, 'character')} UTF-8 cannot encode, so it cannot be logged")
    return None


def _fresh_game_dir(out: Path | None, game_id: str) -> Path | None:
    """``out/<game_id>``, or ``None`` without ``out``; refused when it already holds a log file.

    Raises:
        ValueError: ``game.jsonl``, ``probes.jsonl``, ``calls.jsonl`` or ``verdicts.jsonl`` is there.
    """
    if out is None:
        return None
    path = Path(out) / game_id
    for name in (GAME_FILE, PROBES_FILE, CALLS_FILE, VERDICTS_FILE):
        # a stale probes/calls file would otherwise be appended to and mixed with this game
        if (path / name).exists():
            raise ValueError(f"out: {path / name} already exists; choose another --out or seed")
    return path


def _set_call_sinks(agents: Sequence[Agent], sink: Any) -> None:
    """Give every agent that reports its model calls (``set_call_sink``) ``sink`` (``None``: none)."""
    for a in agents:
        setter = getattr(a, "set_call_sink", None)
        if setter is not None:
            setter(sink)


def _header_meta(
    meta: dict[str, Any] | None, described: dict[str, Any], observers: Sequence[GameObserver], dialects: Any
) -> dict[str, Any] | None:
    """The header's extra fields: ``meta``, the agents' descriptions, the observers' run config, the dialects."""
    if described:
        meta = {**(meta or {}), "agents": described}
    for obs in observers:  # e.g. the probe battery, so a report can group games by it
        extra = getattr(obs, "run_config", None)
        if isinstance(extra, Mapping) and extra:
            meta = {**(meta or {}), **dict(extra)}
    if dialects:  # the structured-output dialect of each OpenAI-compatible backend, as the game starts
        meta = {**(meta or {}), "structured_output": dialects}
    return meta


def _agent_personas(agents: Sequence[Agent]) -> list[dict[str, Any] | None] | None:
    """The agents' own personas (``persona`` attribute) for the roster, or ``None`` when none has one."""
    found = [getattr(a, "persona", None) for a in agents]
    if all(p is None for p in found):
        return None
    return [p.model_dump(exclude_none=True) if p is not None else None for p in found]


def _game_status(seq: int, gate: dict[str, Any], threshold: float, decisions: int, fallbacks: int) -> GameStatus:
    """The closing ``game_status`` record: the integrity gate's verdict and counts."""
    share = gate["answered_share"]
    if share is None:
        share = (decisions - fallbacks) / decisions if decisions else 1.0
    return GameStatus(
        seq=seq,
        degraded=gate["degraded"],
        answered_share=share,
        decisions=decisions,
        fallbacks=fallbacks,
        detail={**gate, "gate_threshold": threshold},
    )


async def play_game(
    rules: RuleSet,
    agents: Sequence[Agent],
    seed: int,
    *,
    out: Path | None = None,
    game_id: str | None = None,
    labels: Sequence[str | None] | None = None,
    observers: Sequence[GameObserver] = (),
    meta: dict[str, Any] | None = None,
    personas: Sequence[dict[str, Any] | None] | None = None,
    on_batch: Callable[[GameState], Awaitable[None] | None] | None = None,
    prices: PriceTable | None = None,
    check_remote: bool = True,
    gate_threshold: float = GATE_THRESHOLD,
    allow_degraded: bool = False,
    state: GameState | None = None,
    prefix: Sequence[Event] = (),
    parent: ParentInfo | None = None,
) -> GameResult:
    """Play one game and (if ``out`` is given) log it to ``out/<game_id>/game.jsonl``.

    Agents with a ``set_call_sink`` method (LLM agents) report every model call; the calls
    go to ``out/<game_id>/calls.jsonl``, closed by a :class:`~mafialab.models.CallSummary`
    (shared-prefix share, server-cached tokens). Integrity gate: when the model answered (first try
    or retry) less than ``gate_threshold`` of the decisions played by models, a
    ``game_status`` record with ``degraded=True`` closes the log. Before the game, every
    remote model is preflighted (:func:`~mafialab.harness.preflight`: its structured-output
    dialect is chosen there).

    Args:
        rules: Rule set.
        agents: One agent per seat (``len == rules.n_seats``).
        seed: Game seed.
        out: Parent directory for the game directory, or ``None`` for no log.
        game_id: Directory name; default :func:`default_game_id` of the rule set, seed,
            labels and :func:`run_config` (agent settings, the observers' probe battery).
        labels: Public per-seat labels for the seating event (e.g. models in an arena).
        observers: Called after every batch with its new events.
        meta: Extra header fields.
        personas: Optional persona per seat, recorded in the roster.
        on_batch: Progress display, as for :func:`run_game` (once before the first decision, then after
            every batch).
        prices: Price table for the calls' ``cost_usd`` (default: embedded and mock free).
        check_remote: Preflight remote models before starting (default on).
        gate_threshold: Integrity-gate threshold (share of model decisions answered, 0-1).
        allow_degraded: Play even when a remote server answers no preflight probe usably
            in any structured-output dialect.
        state: Play on from this state instead of a fresh deal (a fork's continuation); its
            first ``len(prefix)`` events are the prefix.
        prefix: Events of ``state`` already played (written to the log as they are, e.g.
            with the parent's clock fields; observers do not see them).
        parent: The ``parent`` block of a branch's header.

    Raises:
        ValueError: Wrong number of agents, or the game directory already holds a log file
            (``game.jsonl``, ``probes.jsonl``, ``calls.jsonl`` or ``verdicts.jsonl``).
        PreflightError: A remote model did not answer the preflight call, or answered no
            dialect probe usably (unless ``allow_degraded``); nothing written.
    """
    if len(agents) != rules.n_seats:
        raise ValueError(f"agents: {count(len(agents), 'agent')} for {count(rules.n_seats, 'seat')} of {rules.name}")
    agent_labels = [a.label for a in agents]
    game_id = game_id or default_game_id(rules, seed, agent_labels, run_config(agents, observers))
    if state is None:
        state = GameState(rules, seed, labels=labels)
    writer = None
    path = _fresh_game_dir(out, game_id)
    if check_remote:
        await preflight(agents, allow_degraded=allow_degraded)
    calls_writer = JsonlWriter(path / CALLS_FILE) if path is not None else None
    described = {str(i): a.describe() for i, a in enumerate(agents) if hasattr(a, "describe")}
    persons = person_seats(described)  # as the header records them (``meta.agents``)
    recorder = CallRecorder(game_id, calls_writer, prices or PriceTable(), person_seats=persons)
    _set_call_sinks(agents, recorder)
    dialects = dialects_in_use(agents)
    meta = _header_meta(meta, described, observers, dialects)
    if personas is None:
        personas = _agent_personas(agents)
    if path is not None:
        writer = JsonlWriter(path / GAME_FILE)
        header = make_header(state, game_id, agent_labels, meta, personas)
        if parent is not None:
            header = header.model_copy(update={"parent": parent})
        writer.write(header)
        for ev in prefix:
            writer.write(ev)
    try:
        decisions, fallbacks = await run_game(
            state, agents, writer=writer, observers=observers, on_batch=on_batch, written=len(prefix)
        )
        summary = recorder.summary()
        if calls_writer is not None and recorder.records:
            calls_writer.write(summary)  # the closing record: prefix reuse over the game's calls
        gate = recorder.gate(gate_threshold)
        if dialects:  # as the game ends (a dialect error may have switched it)
            gate["structured_output"] = dialects_in_use(agents)
        if writer is not None and (fallbacks or gate["model_decisions"]):
            writer.write(_game_status(len(state.events) + 1, gate, gate_threshold, decisions, fallbacks))
    finally:
        _set_call_sinks(agents, None)
        if writer is not None:
            writer.close()
        if calls_writer is not None:
            calls_writer.close()
    res = summarize(state, game_id, decisions, fallbacks, path)
    res.degraded = bool(gate["degraded"])
    res.gate = gate
    res.calls = list(recorder.records)
    res.call_summary = summary
    res.person_seats = persons
    return res


def summarize(state: GameState, game_id: str, decisions: int, fallbacks: int, path: Path | None) -> GameResult:
    """Build a :class:`GameResult` from a state."""
    elims = [(e.round, state.names[e.seat], e.cause) for e in state.events if e.kind == "elimination"]
    return GameResult(
        game_id=game_id,
        seed=state.seed,
        rules_id=state.rules.id,
        winner=state.winner,
        rounds=state.round,
        eliminations=elims,
        decisions=decisions,
        fallbacks=fallbacks,
        path=path,
        state=state,
    )
