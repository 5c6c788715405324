"""Seats played from outside the process: the agents, and the per-seat channels they wait on.

A :class:`RemoteAgent` plays a seat whose decisions are answered over the agent API
(:mod:`mafialab.remote._api`), by a program (``remote``) or by a person in a browser
(``human-web``). Each decision becomes a request on the seat's :class:`SeatChannel`: the
newly visible events (from the engine's one visibility function), the decision kind, the
legal options, the JSON schema of a valid answer and a deadline. An answer that is
malformed or illegal is refused with the reason and the request stays open; no answer by
the deadline gives the seat a seeded-random legal fallback, logged like a model's.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl

import jsonschema

from mafialab._text import valid_utf8_value
from mafialab.agents import FALLBACK_TEXT, Renderer, load_prompt_pack
from mafialab.engine import Action, Decision, PlayerView, stream
from mafialab.models import CallRecord, CallSink, ChatResponse
from mafialab.remote._questions import person_question
from mafialab.render import EventRenderer, load_event_templates
from mafialab.rules import RuleSet

SeatKind = Literal["remote", "human", "human-web"]
"""How a seat is played from outside: a program over HTTP, a person at the terminal, a
person in a browser."""

SEAT_KINDS: tuple[str, ...] = ("remote", "human", "human-web")
"""Agent specs (before ``:NAME`` / ``?options``) of seats played from outside."""

DEFAULT_REMOTE_TIMEOUT_S = 120.0
"""Seconds a remote or human seat has for each decision (``--remote-timeout``)."""

MAX_TEXT_CHARS_REMOTE = 1200
"""Longest text a remote seat may send (the engine's cap)."""


class SeatSpecError(ValueError):
    """A ``remote`` / ``human`` seat spec could not be read (the message names the option)."""


@dataclass(frozen=True)
class SeatSpec:
    """A parsed seat spec ``KIND[:NAME][?timeout=S&probe=1]``.

    Attributes:
        kind: ``remote``, ``human`` or ``human-web``.
        name: Optional public name (``remote:my-bot``), shown in the label.
        timeout_s: Seconds per decision (> 0).
        probe: Whether the seat answers probe questions (``--probe-remote``).
    """

    kind: SeatKind
    name: str | None = None
    timeout_s: float = DEFAULT_REMOTE_TIMEOUT_S
    probe: bool = False

    @property
    def label(self) -> str:
        """Public label: ``remote``, ``remote:NAME``, ``human-web`` ..."""
        return f"{self.kind}:{self.name}" if self.name else self.kind


def is_seat_spec(spec: str) -> bool:
    """Whether ``spec`` names a seat played from outside (``remote``, ``human:ann`` ...)."""
    head = spec.partition("?")[0].partition(":")[0]
    return head in SEAT_KINDS


def parse_seat_spec(spec: str) -> SeatSpec:
    """Read ``KIND[:NAME][?timeout=S&probe=1]``.

    Raises:
        SeatSpecError: Unknown kind, a bad name, timeout or option (the message names it).
    """
    head, _, query = spec.partition("?")
    kind, _, name = head.partition(":")
    if kind not in SEAT_KINDS:
        raise SeatSpecError(f"seat spec: {spec!r} is not remote, human or human-web")
    if name and (len(name) > 40 or not all(c.isalnum() or c in "-_." for c in name)):
        raise SeatSpecError(f"seat spec: name {name!r} must be 1-40 letters, digits, '-', '_' or '.'")
    timeout_s = DEFAULT_REMOTE_TIMEOUT_S
    probe = False
    pairs = parse_qsl(query, keep_blank_values=True)
    twice = next((k for i, (k, _) in enumerate(pairs) if k in {k2 for k2, _ in pairs[:i]}), None)
    if twice is not None:
        raise SeatSpecError(f"seat spec: option {twice!r} is given twice in {spec!r}; give it once")
    for key, value in pairs:
        if key == "timeout":
            try:
                timeout_s = float(value)
            except ValueError:
                raise SeatSpecError(f"timeout: expected seconds > 0, got {value!r} in {spec!r}") from None
            if not 0 < timeout_s < math.inf:
                raise SeatSpecError(f"timeout: expected seconds > 0, got {value!r} in {spec!r}")
        elif key == "probe":
            probe = value.lower() in ("1", "true", "yes")
        else:
            raise SeatSpecError(f"seat spec: unknown option {key!r} in {spec!r} (known: timeout, probe)")
    return SeatSpec(kind=kind, name=name or None, timeout_s=timeout_s, probe=probe)  # type: ignore[arg-type]


def answer_schema(decision: Decision, view: PlayerView) -> dict[str, Any]:
    """The JSON schema of a valid answer to ``decision`` (targets: an enum of legal names).

    The same shape as an LLM seat's (:func:`mafialab.agents.decision_schema`): targeted
    decisions take ``{"target": NAME}`` (plus ``"statement"`` when the decision needs text);
    free-text decisions ``{"text": ...}``. Under ``day.no_vote`` rules a vote may leave
    ``target`` out (the seat casts no vote).
    """
    props: dict[str, Any] = {}
    required: list[str] = []
    cap = min(decision.max_chars, MAX_TEXT_CHARS_REMOTE)
    if decision.wants_target:
        props["target"] = {"type": "string", "enum": [view.names[s] for s in decision.options]}
        if not decision.no_vote:
            required.append("target")
        if decision.needs_text:
            props["statement"] = {"type": "string", "minLength": 1, "maxLength": cap}
            required.append("statement")
    else:
        props["text"] = {"type": "string", "minLength": 1, "maxLength": cap}
        required.append("text")
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _schema_error(schema: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` breaks ``schema`` (the first error, naming its place), or ``None``."""
    try:  # schemas come from the engine or a validated battery: not re-checked on every answer
        validator = jsonschema.validators.validator_for(schema)(schema)
        err = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except jsonschema.exceptions.SchemaError:
        return None
    if err is None:
        return None
    where = "/".join(str(p) for p in err.absolute_path) or "answer"
    return f"{where}: {err.message}"[:300]


@dataclass
class SeatRequest:
    """One open request of a seat: a decision or a probe question.

    Attributes:
        id: ``d<decision id>`` or ``p<n>-<probe id>``.
        kind: ``decision`` or ``probe``.
        body: What the seat receives (JSON-ready).
        schema: JSON schema of a valid answer (``None``: any JSON value).
        deadline: Wall-clock time (Unix seconds) after which the answer is refused.
        opened: Monotonic time the request opened (latency).
        check: Turns a schema-valid answer into the value handed to the game, or a reason string.
        replaced_chars: Characters of the accepted answer that UTF-8 cannot encode, replaced
            with U+FFFD (:meth:`SeatChannel.answer`).
    """

    id: str
    kind: Literal["decision", "probe"]
    body: dict[str, Any]
    schema: dict[str, Any] | None
    deadline: float
    opened: float
    check: Callable[[Any], Any]
    future: asyncio.Future[Any] = field(repr=False, default_factory=lambda: asyncio.get_running_loop().create_future())
    replaced_chars: int = 0


@dataclass
class SeatChannel:
    """What one seat of one game shares between its agent and the HTTP API.

    Attributes:
        game_id: The game.
        seat: The seat.
        spec: The seat's spec.
        rules: The rule set (lexicon for rendering).
        view: The seat's latest view (from the engine's visibility function), or ``None``
            before the game's first event.
        pending: The open request, or ``None``.
        over: Whether the game has ended (or stopped).
        hits: Times of counted requests (rate limit).
    """

    game_id: str
    seat: int
    spec: SeatSpec
    rules: RuleSet
    view: PlayerView | None = None
    pending: SeatRequest | None = None
    over: bool = False
    hits: deque[float] = field(default_factory=deque)
    _cond: asyncio.Condition | None = None
    _lines: EventRenderer | None = None

    @property
    def cond(self) -> asyncio.Condition:
        """Notified when the view, the open request or ``over`` changes."""
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def update(self, view: PlayerView | None = None, *, over: bool | None = None) -> None:
        """Set the latest view and/or the game's end, and wake long-polls."""
        async with self.cond:
            if view is not None:
                self.view = view
            if over is not None:
                self.over = over
            self.cond.notify_all()

    async def ask(self, req: SeatRequest) -> tuple[Any, float] | None:
        """Open ``req`` and wait for a valid answer until its deadline.

        Returns:
            ``(checked answer, seconds taken)``, or ``None`` when the deadline passed.
        """
        async with self.cond:
            self.pending = req
            self.cond.notify_all()
        try:
            timeout = max(0.0, req.deadline - time.time())
            value = await asyncio.wait_for(asyncio.shield(req.future), timeout)
            return value, time.monotonic() - req.opened
        except TimeoutError:
            return None
        finally:
            async with self.cond:
                if self.pending is req:
                    self.pending = None
                if not req.future.done():
                    req.future.cancel()
                self.cond.notify_all()

    def answer(self, request_id: str, value: Any) -> tuple[int, str]:
        """Offer an answer to the open request; ``(HTTP status, reason)``.

        200 accepted; 409 no open request with that id (answered, expired, or another);
        422 the answer does not follow the schema or is not legal (the request stays open).
        Text from outside is made valid UTF-8 first: each character UTF-8 cannot encode (a
        lone surrogate such as U+D800, which JSON allows) becomes U+FFFD, counted in
        the request's ``replaced_chars`` (and so in the decision's call record).
        """
        request_id, _ = valid_utf8_value(request_id)  # quoted in the reason of a 409
        value, replaced = valid_utf8_value(value)
        req = self.pending
        if req is None or req.id != request_id or req.future.done():
            return 409, f"no open request {request_id!r}" + (f" (open: {req.id})" if req else "")
        if time.time() > req.deadline:
            return 409, f"request {request_id!r} is past its deadline"
        if req.schema is not None:
            err = _schema_error(req.schema, value)
            if err is not None:
                return 422, err
        checked = req.check(value)
        if isinstance(checked, str):
            return 422, checked
        req.replaced_chars = replaced
        req.future.set_result(checked)
        return 200, "accepted"

    def events_since(self, since: int) -> tuple[list[dict[str, Any]], list[str | None], int]:
        """Visible events from index ``since`` (JSON), their rendered lines, and the next index."""
        if self.view is None:
            return [], [], 0
        events = self.view.events[max(0, since) :]
        if self._lines is None or len(self._lines.names) != len(self.view.names):
            self._lines = EventRenderer(
                load_event_templates().prompt, self.rules.lexicon, self.view.names, self.view.seat
            )
        lines = []
        for ev in events:
            line = self._lines.render(ev)
            lines.append(line.text if line is not None else None)
        return [ev.model_dump(mode="json") for ev in events], lines, len(self.view.events)

    def info(self) -> dict[str, Any]:
        """The seat's identity (only its own role and team) and the game's state."""
        v = self.view
        return {
            "game_id": self.game_id,
            "seat": self.seat,
            "kind": self.spec.kind,
            "name": v.name if v else None,
            "role": v.role if v else None,
            "team": v.team if v else None,
            "teammates": [v.names[s] for s in v.teammates] if v else [],
            "players": list(v.names) if v else [],
            "alive": [v.names[s] for s in v.alive] if v else [],
            "rules_id": self.rules.id,
            "timeout_s": self.spec.timeout_s,
            "status": "over" if self.over else "playing",
        }


class RemoteAgent:
    """A seat answered over the agent API (a program, or a person in a browser).

    Built from a seat spec (``remote``, ``remote:NAME``, ``human-web``); it plays only once
    a :class:`~mafialab.remote.SeatServer` has attached a :class:`SeatChannel` to it
    (:meth:`SeatServer.open_game`). Every decision is reported as a
    :class:`~mafialab.models.CallRecord` (``model`` = the label, ``status`` ``ok`` or
    ``fallback``, ``latency_ms`` = the seat's answer time) so ``calls.jsonl`` records remote
    and human seats, their latencies and their fallbacks.

    Args:
        seat: The seat.
        rules: The rule set.
        seed: The game seed (the fallback stream ``remote-fallback:<seat>`` derives from it).
        spec: The seat spec.

    Attributes:
        channel: The attached channel, or ``None``.
        calls: Sink of call records (set by the harness).
    """

    def __init__(self, seat: int, rules: RuleSet, seed: int, spec: SeatSpec):
        self.seat = seat
        self.rules = rules
        self.seed = seed
        self.spec = spec
        self.label = spec.label
        self.channel: SeatChannel | None = None
        self.calls: CallSink | None = None
        self._rng = stream(seed, f"remote-fallback:{seat}")
        self._renderer = Renderer(load_prompt_pack("en"), rules)
        self._probes = 0

    def describe(self) -> dict[str, Any]:
        """Header entry: ``{"external": kind, "name", "timeout_s", "probed"}`` (never the token)."""
        return {"external": self.spec.kind, "name": self.spec.name, "timeout_s": self.spec.timeout_s, "probed": False}

    def set_call_sink(self, sink: CallSink | None) -> None:
        """Report every decision to ``sink`` (the harness's ``calls.jsonl`` writer)."""
        self.calls = sink

    def _record(self, purpose: str, status: Any, latency_s: float, error: str | None, **fields: Any) -> None:
        if self.calls is not None:
            self.calls(
                CallRecord(
                    seat=self.seat,
                    purpose=purpose,
                    model=self.label,
                    status=status,
                    latency_ms=round(latency_s * 1000),
                    error=error,
                    **fields,
                )
            )

    def _channel(self) -> SeatChannel:
        if self.channel is None:
            raise RuntimeError(
                f"seat {self.seat} ({self.label}) is not attached to a seat server (SeatServer.open_game)"
            )
        return self.channel

    def decision_body(self, decision: Decision, view: PlayerView, deadline: float) -> dict[str, Any]:
        """What the seat receives for ``decision`` (JSON-ready).

        ``prompt`` is the decision text a model would get (with its answer format, for a
        program that hands it to a model); ``question`` is the same decision worded for a
        person (:func:`~mafialab.remote._questions.person_question`), what the browser page
        of a ``human-web`` seat shows.
        """
        cap = min(decision.max_chars, MAX_TEXT_CHARS_REMOTE)
        return {
            "decision": {
                "id": decision.id,
                "kind": decision.kind,
                "round": decision.round,
                "phase": decision.phase,
                "discussion": decision.discussion,
                "needs_text": decision.needs_text,
                "max_chars": cap,
                "no_vote": decision.no_vote,
            },
            "options": [{"seat": s, "name": view.names[s]} for s in decision.options],
            "prompt": self._renderer.decision_prompt(decision, view, cap),
            "question": person_question(self._renderer, decision, view, cap),
            "deadline": deadline,
        }

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        """Open the decision on the seat's channel; the seat's answer, or a logged fallback at the deadline."""
        ch = self._channel()
        await ch.update(view)
        legal = {view.names[s]: s for s in decision.options}

        def check(value: Any) -> Action | str:
            target = None
            if decision.wants_target:
                name = value.get("target")
                if name is not None:
                    target = legal.get(name)
                    if target is None:
                        return f"target {name!r} is not a legal option"
            text = value.get("text") if not decision.wants_target else value.get("statement")
            if isinstance(text, str):
                text = text.strip() or None
                if decision.needs_text and text is None:
                    return "text is empty"
            return Action(decision=decision.id, seat=decision.seat, target=target, text=text)

        deadline = time.time() + self.spec.timeout_s
        req = SeatRequest(
            id=f"d{decision.id}",
            kind="decision",
            body=self.decision_body(decision, view, deadline),
            schema=answer_schema(decision, view),
            deadline=deadline,
            opened=time.monotonic(),
            check=check,
        )
        got = await ch.ask(req)
        if got is None:
            self._record(
                decision.kind,
                "fallback",
                self.spec.timeout_s,
                f"no answer within {self.spec.timeout_s:g} s",
                decision=decision.id,
            )
            return self._fallback(decision)
        action, took = got
        self._record(decision.kind, "ok", took, None, decision=decision.id, replaced_chars=req.replaced_chars)
        return action

    def _fallback(self, decision: Decision) -> Action:
        target = self._rng.choice(decision.options) if decision.wants_target else None
        text = FALLBACK_TEXT if decision.needs_text else None
        return Action(decision=decision.id, seat=decision.seat, target=target, text=text, fallback=True)


class ProbedRemoteAgent(RemoteAgent):
    """A :class:`RemoteAgent` that also answers probe questions (``--probe-remote``).

    Probes are asked synchronously, while the game waits at the probe point, so a person is
    never asked about a state the game has already left. The answer is recorded verbatim.

    Attributes:
        probe_synchronously: Always true: the probe runner waits for this seat's answers
            before the game goes on.
    """

    probe_synchronously = True

    def describe(self) -> dict[str, Any]:
        """Header entry (see :meth:`RemoteAgent.describe`), ``probed`` true."""
        return {**super().describe(), "probed": True}

    async def probe(
        self, question: str, view: PlayerView, json_schema: dict[str, Any] | None, max_tokens: int, probe_id: str
    ) -> ChatResponse:
        """Ask the seat ``question``; an error response when it does not answer by the deadline."""
        ch = self._channel()
        await ch.update(view)
        self._probes += 1
        deadline = time.time() + self.spec.timeout_s
        req = SeatRequest(
            id=f"p{self._probes}-{probe_id}",
            kind="probe",
            body={"probe": {"id": probe_id, "question": question}, "deadline": deadline},
            schema=json_schema,
            deadline=deadline,
            opened=time.monotonic(),
            check=lambda value: value,
        )
        got = await ch.ask(req)
        if got is None:
            err = f"no answer within {self.spec.timeout_s:g} s"
            self._record("probe", "error", self.spec.timeout_s, err, probe_id=probe_id)
            return ChatResponse(error=err, error_kind="transport", model=self.label)
        value, took = got
        self._record("probe", "ok", took, None, probe_id=probe_id, replaced_chars=req.replaced_chars)
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return ChatResponse(
            text=text,
            parsed=None if isinstance(value, str) else value,
            latency_s=took,
            model=self.label,
            replaced_chars=req.replaced_chars,
        )
