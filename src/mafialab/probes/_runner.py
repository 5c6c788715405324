"""The non-invasive probe runner: a game observer that asks agents private questions."""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from mafialab._text import valid_utf8
from mafialab.engine import (
    Elimination,
    Event,
    GameEnd,
    GameState,
    InvestigationResult,
    NightAction,
    PlayerView,
    Speech,
    VoteTally,
    player_view,
)
from mafialab.harness import default_game_id, run_config
from mafialab.models import ChatResponse, ChoiceScores, scoring_refusal
from mafialab.probes._battery import (
    ProbeBattery,
    ProbeBatteryError,
    ProbeSpec,
    chain_text,
    probe_candidates,
    render_preamble,
    render_question,
    render_schema,
    resolve_battery,
)
from mafialab.probes._parse import parse_answer
from mafialab.record import PROBES_FILE, JsonlWriter, ProbeRecord
from mafialab.rules import RuleSet

log = logging.getLogger(__name__)

TriggerKind = Literal["message", "night_action", "round_end"]


@runtime_checkable
class ProbeableAgent(Protocol):
    """An agent that answers private probe questions.

    The runner calls :meth:`probe` on a copy of the agent's information state; an
    implementation must answer from ``view`` (and the agent's own, read-only memory) and must
    not write the question, the answer or anything derived from them into the agent's game
    context, its conversation history or any random stream its game decisions use.

    Attributes:
        label: The agent's public label (``scripted``, ``openai/gpt-4o-mini``).
    """

    label: str

    async def probe(
        self,
        question: str,
        view: PlayerView,
        json_schema: dict[str, Any] | None,
        max_tokens: int,
        probe_id: str,
        *,
        preamble: str = "",
    ) -> ChatResponse:
        """Answer one probe.

        An agent may leave out the ``preamble`` parameter: the runner then puts the
        battery's preamble, a blank line and the question into ``question``.

        Args:
            question: The rendered question (chained answers already spliced in).
            view: The player's view of the game at the trigger (built by
                :func:`mafialab.engine.player_view` on the events up to the trigger).
            json_schema: JSON schema of the answer (for constrained decoding), or ``None``.
            max_tokens: Answer cap in tokens.
            probe_id: The probe's id in the battery (for accounting and for agents that
                answer known probes without a model, such as scripted agents).
            preamble: The battery's rendered preamble (``""`` when it has none): text
                common to every probe call at this trigger, with no seat's private
                information; an LLM agent places it before the seat's private block (see
                :attr:`~mafialab.probes.ProbeBattery.preamble`).

        Returns:
            The answer; ``text`` is kept verbatim in the probe record, ``parsed`` (if set)
            is taken as the parsed answer, ``error`` marks a failed call. Should not raise;
            an exception is recorded as an error and the game goes on.
        """
        ...


@dataclass(frozen=True)
class Trigger:
    """A point in the game where agents are probed.

    Attributes:
        kind: ``message`` (a public speech or vote), ``night_action`` (an agent's own night
            action) or ``round_end`` (after the day's vote and elimination).
        round: Round of the trigger.
        msg_index: Public message index within the round, or -1 (night action, round end).
        actor: Seat that spoke or acted (``None`` at round end).
        upto: ``seq`` of the last event the probed agents' views include.
        phase: ``intro``, ``day_discuss``, ``day_vote``, ``night`` or ``round_end``
            (MafiaScope's phase words).
    """

    kind: TriggerKind
    round: int
    msg_index: int
    actor: int | None
    upto: int
    phase: str


def find_triggers(new: Sequence[Event], events: Sequence[Event], battery: ProbeBattery) -> list[Trigger]:
    """The triggers among ``new`` events, in event order.

    Args:
        new: Events of the last batch.
        events: Every event of the game so far (``new`` is a suffix of it).
        battery: Which trigger kinds are on.

    Returns:
        One :class:`Trigger` per public message (``after_each_message``; a mission game's
        public team votes too), per night action (``after_night_action``; an investigator's
        view then includes its result) and per final vote tally of a day, or mission result
        of a mission game, after which the game goes on (``after_each_round``; the view
        includes the elimination).
    """
    out: list[Trigger] = []
    for ev in new:
        if isinstance(ev, Speech) and battery.after_each_message:
            phase = "intro" if ev.phase == "intro" else "day_discuss"
            out.append(Trigger("message", ev.round, ev.index, ev.seat, ev.seq, phase))
        elif (
            ev.kind in ("vote", "team_vote") and ev.index is not None and ev.visibility.public  # type: ignore[union-attr]
            and battery.after_each_message
        ):  # fmt: skip
            out.append(Trigger("message", ev.round, ev.index, ev.seat, ev.seq, "day_vote"))  # type: ignore[union-attr]
        elif ev.kind == "mission_result" and battery.after_each_round:
            # a mission game's round ends with its mission (no elimination)
            after = events[ev.seq] if ev.seq < len(events) else None
            if after is None or after.kind not in ("game_end", "assassination"):
                out.append(Trigger("round_end", ev.round, -1, None, ev.seq, "round_end"))
        elif isinstance(ev, NightAction) and battery.night_actions:
            upto = ev.seq
            nxt = events[upto] if upto < len(events) else None
            if isinstance(nxt, InvestigationResult) and nxt.seat == ev.seat:
                upto = nxt.seq
            out.append(Trigger("night_action", ev.round, -1, ev.seat, upto, "night"))
        elif isinstance(ev, VoteTally) and ev.stage in ("vote", "runoff") and battery.after_each_round:
            upto = ev.seq
            nxt = events[upto] if upto < len(events) else None
            if isinstance(nxt, Elimination) and nxt.cause == "vote":
                upto = nxt.seq
            after = events[upto] if upto < len(events) else None
            if isinstance(after, GameEnd):
                continue  # the game is over: no round-end beliefs to ask for
            out.append(Trigger("round_end", ev.round, -1, None, upto, "round_end"))
    return out


def applies(probe: ProbeSpec, trigger: Trigger, seat: int) -> bool:
    """Whether ``probe`` runs for ``seat`` at ``trigger`` (see :attr:`ProbeSpec.when`)."""
    own = trigger.actor == seat
    if trigger.kind == "message":
        return probe.when == "always" or (probe.when == "own_turn" and own)
    if trigger.kind == "night_action":
        return own and probe.when in ("always", "own_turn", "night_action")
    return probe.when in ("always", "round_end")


def _record_trigger(trigger: Trigger, seat: int) -> Literal["always", "own_turn", "round_end", "night_action"]:
    if trigger.kind == "message":
        return "own_turn" if trigger.actor == seat else "always"
    return trigger.kind


GAME_FIRST_TICKS = 4
"""Event-loop turns a probe call yields before it starts building and sending its request.

The probes of a trigger are scheduled before the game's next decision, so their tasks come
first in the event loop's ready queue, and each would build its prompt and go through the
HTTP client (a few milliseconds of CPU each, thirty of them after every message) before the
game's next call is sent: the game, which is the critical path, would wait ~50 ms per step
(measured with ``benchmarks/throughput.py``). Yielding a few turns lets the game's call get
through the client's own suspension points (its connection-pool locks) and leave first; a
probe loses nothing measurable (a turn is microseconds)."""

PROBE_TASK_FAILED = "probe task failed"
"""How the ``error`` of the record of a probe task that raised begins (the reason follows)."""

DEFAULT_MAX_PENDING = 512
"""Probe calls a runner keeps scheduled but unanswered before the game waits (back-pressure)."""


@dataclass
class _SeatStep:
    """What one seat's probes at one trigger need, fixed when the trigger is seen."""

    trigger: Trigger
    seat: int
    view: PlayerView
    agent: Any
    values: dict[str, str]
    lists: dict[str, list[str]]
    role: str
    preamble: str


@dataclass
class _Answer:
    """One probe call's outcome: its record, and the ``{last_<id>}`` value after it."""

    record: ProbeRecord
    chain: str
    last: str | None


class ProbeRunner:
    """Game observer that probes every alive agent after each trigger, off the game's path.

    Pass it to :func:`mafialab.harness.play_game` in ``observers``. After every batch of
    decisions it finds the triggers among the new events (:func:`find_triggers`) and, for
    each, builds every alive probed seat's view of the events up to the trigger with the
    engine's visibility function and fixes a frozen copy of the agent's probe context
    (an agent's ``probe_snapshot(view)`` when it has one, e.g. a scripted agent's belief
    state at that point; else the agent itself, whose probe context is the view). The
    battery's preamble is rendered once per trigger (it is the same for every seat) and
    given to each call as ``preamble=`` (or put before the question for an agent whose
    ``probe`` takes no such keyword). The
    questions are then asked in the background while the game goes on: each probe call is
    an ``asyncio`` task that waits only for the answers it splices in (``{prev_<id>}``: the
    same step's earlier probe; ``{last_<id>}``: the seat's latest answer to ``<id>`` at an
    earlier step, so chains keep their order per seat), and each record is written when its
    answer arrives (``probes.jsonl`` is in arrival order; readers sort by
    :func:`~mafialab.record.probe_sort_key`). Probe calls are made with
    ``purpose="probe"``, which every backend's scheduler admits after waiting game calls.
    When more than ``max_pending`` probe calls are scheduled but unanswered, the game waits
    for answers before it goes on (back-pressure; memory stays bounded). The game's last
    batch (a ``game_end`` event) waits for every outstanding probe, so ``play_game``
    returns with all records written. Agents with ``probe_synchronously`` true (remote and
    human seats) are probed while the game waits: their answers come in before it goes on.
    The runner only reads the game state: it never applies actions, never calls ``decide``
    and never draws from the game's random streams.

    Args:
        battery: The probe battery.
        agents: One agent per seat; agents without a ``probe`` method are skipped (listed in
            ``skipped_seats``).
        game_id: Game id written into every record.
        writer: Where records go (``probes.jsonl``), or ``None`` to keep them in memory only.
        on_record: Called with each record after it is written (progress displays).
        max_concurrent: Most probe calls in flight at once (``None``: the backends' limits).
        max_pending: Most probe calls scheduled and unanswered before the game waits (>= 1).

    Attributes:
        records: Every record written, in arrival order (sort with
            :func:`~mafialab.record.probe_sort_key` for trigger, seat, battery order).
        calls: Probe calls made.
        failed: Calls that returned an error or raised, and probe tasks that failed (each
            recorded with ``error`` set).
        peak_pending: Most probe calls that were scheduled and unanswered at once.
        probed_seats: Seats whose agents answer probes.
        skipped_seats: Seats whose agents have no ``probe`` method (never probed).

    Raises:
        ValueError: ``max_pending`` < 1.
    """

    def __init__(
        self,
        battery: ProbeBattery,
        agents: Sequence[Any],
        *,
        game_id: str,
        writer: JsonlWriter | None = None,
        on_record: Callable[[ProbeRecord], None] | None = None,
        max_concurrent: int | None = None,
        max_pending: int = DEFAULT_MAX_PENDING,
    ):
        if max_pending < 1:
            raise ValueError(f"max_pending: must be >= 1, got {max_pending}")
        self.battery = battery
        self.agents = list(agents)
        self.game_id = game_id
        self.writer = writer
        self.on_record = on_record
        self.max_pending = max_pending
        self.records: list[ProbeRecord] = []
        self.calls = 0
        self.failed = 0
        self.peak_pending = 0
        # per seat, per probe id: the task of the seat's latest call of that probe (its
        # result carries the ``{last_<id>}`` value after it)
        self._last: dict[int, dict[str, asyncio.Task[_Answer]]] = {s: {} for s in range(len(self.agents))}
        self._tasks: set[asyncio.Task[_Answer]] = set()
        self._synchronous: set[asyncio.Task[_Answer]] = set()
        self._max_concurrent = max_concurrent
        self._sem: asyncio.Semaphore | None = None
        self.probed_seats = [s for s, a in enumerate(self.agents) if callable(getattr(a, "probe", None))]
        self.skipped_seats = [s for s in range(len(self.agents)) if s not in self.probed_seats]
        self.run_config = {"probes": battery.fingerprint()}
        """What this runner adds to the game's run configuration (:func:`mafialab.harness.run_config`)."""
        skipped = [f"{s} ({getattr(self.agents[s], 'label', '?')})" for s in self.skipped_seats]
        if skipped:
            log.info("probes: agents of seats %s cannot answer probes; they are not probed", ", ".join(skipped))
        self._refuse_unscorable()

    def _refuse_unscorable(self) -> None:
        """Refuse a battery with ``logprob`` probes when a probed seat cannot score given answers."""
        scored = [p.id for p in self.battery.probes if p.kind == "logprob"]
        if not scored:
            return
        for s in self.probed_seats:
            why = agent_scoring_refusal(self.agents[s])
            if why is not None:
                label = getattr(self.agents[s], "label", "?")
                raise ProbeBatteryError(
                    f"probes: battery {self.battery.name} has logprob probes ({', '.join(scored)}), but seat {s} "
                    f"({label}) cannot answer them: {why}. Use the embedded model, a server that scores given text "
                    "(/v1/completions with echo and logprobs: vLLM, SGLang, llama-cpp-python), or a battery "
                    "without logprob probes"
                )

    @property
    def pending(self) -> int:
        """Probe calls scheduled and not answered yet."""
        return len(self._tasks)

    async def on_events(self, events: Sequence[Event], state: GameState) -> None:
        """Schedule the probes of the triggers among ``events`` (a :class:`GameObserver` hook).

        Returns once they are scheduled (or, past ``max_pending``, once enough earlier ones
        are answered); after the ``game_end`` event, once every probe is answered.
        """
        for trigger in find_triggers(events, state.events, self.battery):
            tasks = self._schedule(trigger, state)
            held = [t for t in tasks if t in self._synchronous]
            if held:  # a person (or a remote seat) is never asked about a state the game has left
                await asyncio.gather(*held)
                self._synchronous.difference_update(held)
            await self._backpressure()
        if any(isinstance(ev, GameEnd) for ev in events):
            await self.finish()

    async def run_trigger(self, trigger: Trigger, state: GameState) -> list[ProbeRecord]:
        """Probe the seats concerned by ``trigger`` and wait for their answers.

        Returns:
            The records of this trigger, in seat and battery order (each is written when
            its answer arrives).
        """
        tasks = self._schedule(trigger, state)
        answers = await asyncio.gather(*tasks)
        return [a.record for a in answers]

    async def finish(self) -> None:
        """Wait for every scheduled probe, then close the records file (idempotent)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks))
        self.close()

    def cancel(self) -> None:
        """Cancel every unanswered probe (a stopped game); records written so far stay."""
        for t in list(self._tasks):
            t.cancel()
        self.close()

    async def _backpressure(self) -> None:
        while len(self._tasks) > self.max_pending:
            await asyncio.wait(list(self._tasks), return_when=asyncio.FIRST_COMPLETED)

    def _seats(self, trigger: Trigger, prefix: Sequence[Event], n_seats: int) -> list[int]:
        dead = {ev.seat for ev in prefix if isinstance(ev, Elimination)}
        if trigger.kind == "night_action":
            seats = [trigger.actor] if trigger.actor is not None else []
        else:
            seats = list(range(n_seats))
        seats = [s for s in seats if s not in dead and s in self.probed_seats]
        return [s for s in seats if any(applies(p, trigger, s) for p in self.battery.probes)]

    def _schedule(self, trigger: Trigger, state: GameState) -> list[asyncio.Task[_Answer]]:
        """Fix every probed seat's context at ``trigger`` and start its probe tasks."""
        prefix = list(state.events[: trigger.upto])  # a copy: the game appends to state.events
        rules: RuleSet = state.rules
        roles = [*dict.fromkeys(r.name for r in rules.roles), "Unknown"]
        out: list[asyncio.Task[_Answer]] = []
        preamble: str | None = None
        for seat in self._seats(trigger, prefix, state.n_seats):
            view = player_view(prefix, seat)
            agent = self.agents[seat]
            snapshot = getattr(agent, "probe_snapshot", None)
            if callable(snapshot):
                agent = snapshot(view)  # the agent's private state as of the trigger
            alive_names = [view.names[s] for s in view.alive]
            others = [n for n in alive_names if n != view.name]
            values = {
                "player": view.name,
                "players": ", ".join(alive_names),
                "others": ", ".join(others),
                "roles": "|".join(roles),
                "mafia_team": rules.lexicon.mafia_team,
            }
            if preamble is None:  # the same for every seat at a trigger (alive players, roles)
                preamble = render_preamble(self.battery, values)
            step = _SeatStep(
                trigger,
                seat,
                view,
                agent,
                values,
                {"$players": alive_names, "$others": others, "$roles": roles},
                state.roles[seat],
                preamble,
            )
            last = dict(self._last[seat])  # answers of earlier steps, fixed for this step
            this: dict[str, asyncio.Task[_Answer]] = {}
            for pos, probe in enumerate(self.battery.probes):
                if not applies(probe, trigger, seat):
                    continue
                fields = probe.placeholders()
                prev_deps = {k: t for k, t in this.items() if f"prev_{k}" in fields}
                last_deps = {k: t for k, t in last.items() if f"last_{k}" in fields}
                task = asyncio.ensure_future(self._ask(step, pos, probe, prev_deps, last_deps, last.get(probe.id)))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                if getattr(self.agents[seat], "probe_synchronously", False):
                    self._synchronous.add(task)
                this[probe.id] = task
                self._last[seat][probe.id] = task
                out.append(task)
        self.peak_pending = max(self.peak_pending, len(self._tasks))
        return out

    async def _ask(
        self,
        step: _SeatStep,
        pos: int,
        probe: ProbeSpec,
        prev_deps: dict[str, asyncio.Task[_Answer]],
        last_deps: dict[str, asyncio.Task[_Answer]],
        same_before: asyncio.Task[_Answer] | None,
    ) -> _Answer:
        """One probe call: wait for the answers it splices in, ask, record; a failure is recorded too.

        A probe task that raises (a question that cannot be rendered, a record that cannot be
        written …) is never dropped without a word: a warning names the game, seat, probe and
        reason, ``failed`` counts it, and an error record (``error``: ``probe task failed:
        …``, no answer) takes the answer's place in ``probes.jsonl`` (the report counts it in
        the instrument's ``probe_failures``). Probes chained on it go on without its answer.
        """
        try:
            return await self._answer(step, pos, probe, prev_deps, last_deps, same_before)
        except Exception as err:
            return await self._failure(step, pos, probe, same_before, f"{type(err).__name__}: {err}")

    async def _answer(
        self,
        step: _SeatStep,
        pos: int,
        probe: ProbeSpec,
        prev_deps: dict[str, asyncio.Task[_Answer]],
        last_deps: dict[str, asyncio.Task[_Answer]],
        same_before: asyncio.Task[_Answer] | None,
    ) -> _Answer:
        chained: dict[str, str] = {}
        for k, t in last_deps.items():
            value = (await t).last
            if value is not None:
                chained[f"last_{k}"] = value
        for k, t in prev_deps.items():
            chained[f"prev_{k}"] = (await t).chain
        view = step.view
        question = render_question(probe, step.values, chained)
        if probe.kind == "logprob":
            return await self._score(step, pos, probe, question, same_before)
        schema = render_schema(probe.json_schema, step.lists) if probe.json_schema is not None else None
        for _ in range(GAME_FIRST_TICKS):  # let the game's next call leave first (see the constant)
            await asyncio.sleep(0)
        t0 = time.perf_counter()
        resp = await self._call(step.agent, question, step.preamble, view, schema, probe)
        elapsed = time.perf_counter() - t0
        self.calls += 1
        if resp.error is not None:
            self.failed += 1
        text = resp.text or ""
        alive_names = [view.names[s] for s in view.alive]
        ans = parse_answer(
            text, schema, parsed=resp.parsed if resp.error is None else None, names=view.names, alive=alive_names
        )
        rec = self._new_record(
            step,
            pos,
            probe,
            question=_with_preamble(step.preamble, question),
            answer_raw=text,
            answer_parsed=ans.value if ans.ok else None,
            parse_ok=ans.ok,
            repaired=ans.repaired,
            schema_ok=ans.schema_ok,
            issues=ans.issues,
            model=resp.model or getattr(step.agent, "label", ""),
            latency_ms=round(1000 * (resp.latency_s or elapsed)),
            prompt_tokens=resp.usage.prompt_tokens,
            completion_tokens=resp.usage.completion_tokens,
            error=resp.error,
        )
        self._keep(rec)
        chain = chain_text(ans.value if ans.ok else None, text)
        if ans.ok or text.strip():
            last: str | None = chain
        else:  # a failed call keeps the earlier answer
            last = (await same_before).last if same_before is not None else None
        return _Answer(rec, chain, last)

    async def _score(
        self, step: _SeatStep, pos: int, probe: ProbeSpec, question: str, same_before: asyncio.Task[_Answer] | None
    ) -> _Answer:
        """A ``logprob`` probe: score its candidates, record the distribution (no text is generated)."""
        candidates = probe_candidates(probe, step.lists)
        for _ in range(GAME_FIRST_TICKS):
            await asyncio.sleep(0)
        t0 = time.perf_counter()
        agent = step.agent
        kw: dict[str, Any] = {"first_token": self.battery.first_token}
        if step.preamble:
            kw["preamble"] = step.preamble
        try:
            if self._max_concurrent is None:
                got = await agent.score_choices(question, step.view, candidates, probe.id, **kw)
            else:
                if self._sem is None:
                    self._sem = asyncio.Semaphore(self._max_concurrent)
                async with self._sem:
                    got = await agent.score_choices(question, step.view, candidates, probe.id, **kw)
        except Exception as err:  # a probe must never stop the game
            got = ChoiceScores(candidates=candidates, error=f"{type(err).__name__}: {err}")
        elapsed = time.perf_counter() - t0
        self.calls += 1
        dist = got.distribution() if got.error is None else None
        if dist is None:
            self.failed += 1
        top = candidates[max(range(len(dist)), key=dist.__getitem__)] if dist else None
        rec = self._new_record(
            step,
            pos,
            probe,
            question=_with_preamble(step.preamble, question),
            answer_raw="",
            answer_parsed=top,
            parse_ok=top is not None,
            model=got.model or getattr(agent, "label", ""),
            latency_ms=round(1000 * (got.latency_s or elapsed)),
            prompt_tokens=got.usage.prompt_tokens,
            error=got.error if dist is None else None,
            distribution=dict(zip(candidates, dist, strict=True)) if dist else None,
            logprobs=dict(zip(candidates, got.logprobs or [], strict=True)) if dist else None,
            scoring="first_token" if got.scoring == "first_token" else "sequence",
        )
        self._keep(rec)
        chain = chain_text(top, None)
        if top is not None:
            last: str | None = chain
        else:
            last = (await same_before).last if same_before is not None else None
        return _Answer(rec, chain, last)

    def _new_record(self, step: _SeatStep, pos: int, probe: ProbeSpec, **fields: Any) -> ProbeRecord:
        """The record of ``probe`` at ``step``: where and for whom it was asked, plus ``fields``."""
        trigger = step.trigger
        return ProbeRecord(
            game_id=self.game_id,
            round=trigger.round,
            msg_index=trigger.msg_index,
            seat=step.seat,
            player=step.view.name,
            role=step.role,
            probe_id=probe.id,
            position=pos,
            trigger=_record_trigger(trigger, step.seat),
            phase=trigger.phase,
            after_seq=trigger.upto,
            **fields,
        )

    def _keep(self, rec: ProbeRecord) -> None:
        """Write ``rec`` (when there is a writer), keep it and hand it to ``on_record``."""
        if self.writer is not None:
            self.writer.write(rec)
        self.records.append(rec)
        if self.on_record is not None:
            self.on_record(rec)

    async def _failure(
        self, step: _SeatStep, pos: int, probe: ProbeSpec, same_before: asyncio.Task[_Answer] | None, why: str
    ) -> _Answer:
        """Log, count and record a probe task that raised (see :meth:`_ask`)."""
        why, _ = valid_utf8(why)
        log.warning(
            "game %s seat %d probe %s: the probe task failed (%s); recorded as an error, without an answer",
            self.game_id, step.seat, probe.id, why,
        )  # fmt: skip
        self.failed += 1
        rec = self._new_record(
            step,
            pos,
            probe,
            question="",
            answer_raw="",
            model=getattr(step.agent, "label", ""),
            error=f"{PROBE_TASK_FAILED}: {why}",
        )
        try:
            if self.writer is not None:
                self.writer.write(rec)
        except Exception as err:  # (a full disk): said, never raised into the game
            log.warning(
                "game %s seat %d probe %s: its error record could not be written either (%s: %s)",
                self.game_id, step.seat, probe.id, type(err).__name__, err,
            )  # fmt: skip
        self.records.append(rec)
        if self.on_record is not None:
            self.on_record(rec)
        last = (await same_before).last if same_before is not None else None  # the earlier answer stays
        return _Answer(rec, "", last)

    async def _call(
        self, agent: Any, question: str, preamble: str, view: PlayerView, schema: Any, probe: ProbeSpec
    ) -> ChatResponse:
        kw: dict[str, str] = {}
        if preamble and _takes_preamble(agent):
            kw["preamble"] = preamble
        else:
            question = _with_preamble(preamble, question)
        try:
            if self._max_concurrent is None:
                return await agent.probe(question, view, schema, probe.max_tokens, probe.id, **kw)
            if self._sem is None:
                self._sem = asyncio.Semaphore(self._max_concurrent)
            async with self._sem:
                return await agent.probe(question, view, schema, probe.max_tokens, probe.id, **kw)
        except Exception as err:  # a probe must never stop the game
            log.warning(
                "game %s seat %d probe %s: the agent's probe raised %s: %s; recorded as an error",
                self.game_id, view.seat, probe.id, type(err).__name__, err,
            )  # fmt: skip
            return ChatResponse(error=f"{type(err).__name__}: {err}", error_kind="exception")

    def close(self) -> None:
        """Close the records file (further records reopen it)."""
        if self.writer is not None:
            self.writer.close()


_TAKES_PREAMBLE: dict[type, bool] = {}


def _with_preamble(preamble: str, question: str) -> str:
    """``question`` after the battery's ``preamble`` and a blank line; alone if ``preamble`` is ``""``.

    This is the question as recorded, and as sent to an agent whose ``probe`` has no
    ``preamble`` keyword.
    """
    return f"{preamble}\n\n{question}" if preamble else question


def _takes_preamble(agent: Any) -> bool:
    """Whether ``agent.probe`` accepts the ``preamble`` keyword (checked once per class)."""
    cls = type(agent)
    hit = _TAKES_PREAMBLE.get(cls)
    if hit is None:
        try:
            params = inspect.signature(agent.probe).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        hit = "preamble" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        _TAKES_PREAMBLE[cls] = hit
    return hit


def agent_scoring_refusal(agent: Any) -> str | None:
    """Why ``agent`` cannot answer ``logprob`` probes, or ``None`` when it can.

    It can when it has ``score_choices`` and the model behind it (its ``model``, if any)
    scores given answers (:func:`mafialab.models.scoring_refusal`).
    """
    if not callable(getattr(agent, "score_choices", None)):
        return "it has no log-probabilities to read (it answers probes in text only)"
    model = getattr(agent, "model", None)
    return None if model is None else scoring_refusal(model)


def make_probe_observer(
    battery: str | Path | ProbeBattery | None,
    agents: Sequence[Any],
    rules: RuleSet,
    seed: int,
    *,
    out: Path | None,
    game_id: str | None = None,
    on_record: Callable[[ProbeRecord], None] | None = None,
    max_concurrent: int | None = None,
    max_pending: int = DEFAULT_MAX_PENDING,
) -> ProbeRunner | None:
    """Build the probe observer for one game, writing ``<out>/<game_id>/probes.jsonl``.

    Args:
        battery: ``none``/``None``, a built-in name (``default``, ``suspicion``), a YAML
            path, or a loaded battery.
        agents: The game's agents, one per seat.
        rules: The rule set.
        seed: The game seed.
        out: Parent directory of game directories (as given to ``play_game``), or ``None``
            to keep records in memory only.
        game_id: Game id; default :func:`mafialab.harness.default_game_id` over the run
            configuration with this battery (:func:`mafialab.harness.run_config`), which is
            what ``play_game`` uses when it is given none and this runner as an observer.
        on_record: Called with each record written.
        max_concurrent: Most probe calls in flight at once.
        max_pending: Most probe calls scheduled and unanswered before the game waits.

    Returns:
        The runner, or ``None`` when ``battery`` is ``none`` or disabled.

    Raises:
        ProbeBatteryError: The battery could not be loaded (the message names the field).
    """
    bat = resolve_battery(battery)
    if bat is None:
        return None
    gid = game_id or default_game_id(
        rules, seed, [a.label for a in agents], {**run_config(agents), "probes": bat.fingerprint()}
    )
    writer = JsonlWriter(Path(out) / gid / PROBES_FILE) if out is not None else None
    return ProbeRunner(
        bat,
        agents,
        game_id=gid,
        writer=writer,
        on_record=on_record,
        max_concurrent=max_concurrent,
        max_pending=max_pending,
    )
