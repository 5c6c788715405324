"""A human seat at the terminal: the seat's view as text, numbered options, a countdown."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import threading
import time
from typing import Any, TextIO

from mafialab._json import loads_finite
from mafialab._text import valid_utf8
from mafialab.agents import FALLBACK_TEXT, Renderer, load_prompt_pack
from mafialab.engine import Action, Decision, PlayerView, stream
from mafialab.models import CallRecord, CallSink, ChatResponse
from mafialab.remote._questions import person_question
from mafialab.remote._seats import MAX_TEXT_CHARS_REMOTE, SeatSpec
from mafialab.render import EventRenderer, load_event_templates
from mafialab.rules import RuleSet

REMINDERS_S = (60, 30, 10)
"""Seconds left at which the countdown is printed again."""

HUMAN_EOF = "human_eof"
"""Fallback cause: the seat's input reached its end (closed, or a file or pipe read to the end)."""

HUMAN_INTERRUPT = "human_interrupt"
"""Fallback cause: the person pressed Ctrl-C while the seat was asked (left the seat)."""

HUMAN_TIMEOUT = "human_timeout"
"""Fallback cause: no answer before the seat's deadline (``--remote-timeout``)."""

_CAUSE_TEXT = {
    HUMAN_EOF: "end of input: the seat's input is closed or read to its end; the computer plays the seat from here on",
    HUMAN_INTERRUPT: "the person left the seat (Ctrl-C); the computer plays the seat from here on",
}


class _End(str):
    """A queue item that ends the wait for a line: its value is the cause (:data:`HUMAN_EOF` ...)."""


class _LineReader:
    """Reads lines of ``stream`` in a daemon thread into an asyncio queue (input never blocks the game).

    The queue holds each line typed, then :data:`HUMAN_EOF` once the input ends: at its end,
    and also when there is no input at all (``stdin`` closed: ``None``) or reading fails
    (a closed file, a read error), so a seat is never left waiting for a line that cannot
    come. Ctrl-C puts :data:`HUMAN_INTERRUPT`.
    """

    def __init__(self, source: TextIO | None, loop: asyncio.AbstractEventLoop):
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self._loop = loop
        self._thread = threading.Thread(target=self._run, args=(source,), name="mafialab-human-input", daemon=True)
        self._thread.start()

    def _run(self, source: TextIO | None) -> None:
        while True:
            try:
                line = source.readline() if source is not None else ""
            except (OSError, ValueError):  # a closed or unreadable input ends it like end of file
                line = ""
            line, _ = valid_utf8(line)  # bytes read under surrogateescape (a C locale) would not log
            self._loop.call_soon_threadsafe(self.queue.put_nowait, line if line else _End(HUMAN_EOF))
            if not line:
                return

    def drain(self) -> None:
        """Forget lines typed before the current question (the end of input stays)."""
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if isinstance(item, _End):
                self.queue.put_nowait(item)
                return


class HumanTerminalAgent:
    """A seat played by a person at this terminal (``--seat N=human``).

    Each decision prints what the seat saw since its last decision (only its own view,
    rendered by the shared event templates), the decision, the legal options numbered from
    1, and the seconds left; the person types a number and/or text. A wrong entry is
    explained and asked again until the deadline. The question is worded for a person
    (:func:`~mafialab.remote._questions.person_question`), never the model-facing decision
    text with its answer format. Ctrl-C while the seat is asked, or the end of the input
    (stdin closed, or a file or pipe read to its end), hands the seat to its fallback for the
    rest of the game without asking again; the game and its log go on. Each decision is
    reported as a record of ``calls.jsonl`` (``model`` = the label, status ``ok`` or
    ``fallback``, the person's answer time in ``latency_ms``; a fallback's ``error`` starts
    with its cause: :data:`HUMAN_EOF`, :data:`HUMAN_INTERRUPT` or :data:`HUMAN_TIMEOUT`). The
    header records the seat as ``external: human``, so readers count these records as a
    person's decisions, not model calls (:func:`mafialab.record.person_seats`).

    Args:
        seat: The seat.
        rules: The rule set.
        seed: The game seed (fallback stream ``remote-fallback:<seat>``).
        spec: The seat spec (``timeout_s`` per decision).
        stdin: Where answers are read (default ``sys.stdin``).
        stdout: Where the seat's view is printed (default ``sys.stdout``).
    """

    def __init__(
        self,
        seat: int,
        rules: RuleSet,
        seed: int,
        spec: SeatSpec,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
    ):
        self.seat = seat
        self.rules = rules
        self.spec = spec
        self.label = spec.label
        self.calls: CallSink | None = None
        self.left: str | None = None
        self._stdin = stdin
        self._out = stdout
        self._rng = stream(seed, f"remote-fallback:{seat}")
        self._renderer = Renderer(load_prompt_pack("en"), rules)
        self._lines: EventRenderer | None = None
        self._shown = 0
        self._reader: _LineReader | None = None

    def describe(self) -> dict[str, Any]:
        """Header entry: ``{"external": "human", "name", "timeout_s", "probed": False}``."""
        return {"external": "human", "name": self.spec.name, "timeout_s": self.spec.timeout_s, "probed": False}

    def set_call_sink(self, sink: CallSink | None) -> None:
        """Report every decision to ``sink``."""
        self.calls = sink

    def _print(self, text: str = "") -> None:
        out = self._out or sys.stdout
        out.write(text + "\n")
        out.flush()

    def _show_events(self, view: PlayerView) -> None:
        if self._lines is None:
            self._lines = EventRenderer(load_event_templates().prompt, self.rules.lexicon, view.names, view.seat)
            mates = ", ".join(view.names[s] for s in view.teammates)
            self._print(f"\n=== You are {view.name}, seat {view.seat}: {view.role} ({view.team})")
            if mates:
                self._print(f"    your team: {mates}")
        for ev in view.events[self._shown :]:
            line = self._lines.render(ev)
            if line is not None:
                self._print(("  [private] " if line.private else "  ") + line.text)
        self._shown = len(view.events)

    def _record(self, decision: Decision, status: Any, took: float, error: str | None) -> None:
        if self.calls is not None:
            self.calls(
                CallRecord(
                    seat=self.seat,
                    purpose=decision.kind,
                    model=self.label,
                    status=status,
                    latency_ms=round(took * 1000),
                    error=error,
                    decision=decision.id,
                )
            )

    def _fallback(self, decision: Decision, why: str, took: float) -> Action:
        self._record(decision, "fallback", took, why)
        target = self._rng.choice(decision.options) if decision.wants_target else None
        text = FALLBACK_TEXT if decision.needs_text else None
        return Action(decision=decision.id, seat=decision.seat, target=target, text=text, fallback=True)

    @property
    def abandoned(self) -> bool:
        """Whether the person left the seat (Ctrl-C or end of input; the cause is :attr:`left`)."""
        return self.left is not None

    async def _line(self, deadline: float) -> str | None:
        """The next line typed before ``deadline`` (``None``: time is up, Ctrl-C or end of input)."""
        assert self._reader is not None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            nxt = min((r for r in REMINDERS_S if r < left), default=0)
            try:
                line = await asyncio.wait_for(self._reader.queue.get(), left - nxt)
            except TimeoutError:
                if nxt:
                    self._print(f"  ({nxt} s left)")
                continue
            if isinstance(line, _End):
                self.left = str(line)
                return None
            return line.rstrip("\n")

    def _input(self) -> TextIO | None:
        return self._stdin if self._stdin is not None else sys.stdin

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        """Ask the person; a logged fallback when time runs out, on Ctrl-C or at the end of input."""
        t0 = time.monotonic()
        if self.left is not None:  # not asked again: the cause is logged with every later decision
            return self._fallback(decision, f"{self.left}: {_CAUSE_TEXT[self.left]}", 0.0)
        loop = asyncio.get_running_loop()
        if self._reader is None:
            self._reader = _LineReader(self._input(), loop)
        self._reader.drain()
        self._show_events(view)
        cap = min(decision.max_chars, MAX_TEXT_CHARS_REMOTE)
        self._print("")
        self._print(">>> " + person_question(self._renderer, decision, view, cap))
        for i, s in enumerate(decision.options, 1):
            self._print(f"    {i}. {view.names[s]}")
        deadline = t0 + self.spec.timeout_s
        self._print(f"    ({self.spec.timeout_s:g} s to answer; Ctrl-C leaves the seat to the computer)")
        reader = self._reader

        def on_sigint() -> None:  # ends the wait for a line like the end of input does
            reader.queue.put_nowait(_End(HUMAN_INTERRUPT))

        with _sigint(loop, on_sigint):
            action = await self._ask(decision, view, deadline, cap)
        took = time.monotonic() - t0
        if action is None:
            if self.left is not None:
                why = f"{self.left}: {_CAUSE_TEXT[self.left]}"
                self._print(f"  -> {_CAUSE_TEXT[self.left]}")
            else:
                why = f"{HUMAN_TIMEOUT}: no answer within {self.spec.timeout_s:g} s"
                self._print(f"  -> no answer within {self.spec.timeout_s:g} s; the computer plays this decision")
            return self._fallback(decision, why, took)
        self._record(decision, "ok", took, None)
        return action

    async def _ask(self, decision: Decision, view: PlayerView, deadline: float, cap: int) -> Action | None:
        target: int | None = None
        if decision.wants_target:
            n = len(decision.options)
            extra = " (empty: no vote)" if decision.no_vote else ""
            while True:
                self._print(f"  number 1-{n}{extra}:")
                line = await self._line(deadline)
                if line is None:
                    return None
                line = line.strip()
                if not line and decision.no_vote:
                    break
                if line.isdigit() and 1 <= int(line) <= n:
                    target = decision.options[int(line) - 1]
                    break
                self._print(f"  '{line[:20]}' is not a number between 1 and {n}")
        text: str | None = None
        if decision.needs_text:
            while True:
                self._print(f"  your words (one line, at most {cap} characters):")
                line = await self._line(deadline)
                if line is None:
                    return None
                if line.strip():
                    text = line.strip()[:cap]
                    break
                self._print("  please type something")
        return Action(decision=decision.id, seat=decision.seat, target=target, text=text)


@contextlib.contextmanager
def _sigint(loop: asyncio.AbstractEventLoop, handler: Any) -> Any:
    """Route Ctrl-C to ``handler`` while a person is asked (main thread only; else no change)."""
    installed = False
    if threading.current_thread() is threading.main_thread():
        try:
            loop.add_signal_handler(signal.SIGINT, handler)
            installed = True
        except (NotImplementedError, RuntimeError, ValueError):
            installed = False
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


class ProbedHumanTerminalAgent(HumanTerminalAgent):
    """A terminal seat that also answers probe questions (``--probe-remote``).

    The question is printed while the game waits (so it is about the state the person
    sees); one typed line is the answer: read as JSON when it parses, else kept as text.
    An empty line, time running out, Ctrl-C or the end of input give an error record and
    the game goes on.

    Attributes:
        probe_synchronously: Always true: the probe runner waits for the answer.
    """

    probe_synchronously = True

    def describe(self) -> dict[str, Any]:
        """Header entry (see :meth:`HumanTerminalAgent.describe`), ``probed`` true."""
        return {**super().describe(), "probed": True}

    async def probe(
        self, question: str, view: PlayerView, json_schema: dict[str, Any] | None, max_tokens: int, probe_id: str
    ) -> ChatResponse:
        """Print ``question`` and read one line as the answer (JSON when it parses)."""
        t0 = time.monotonic()
        if self.left is not None:
            gone = f"{self.left}: the person left the seat"
            return ChatResponse(error=gone, error_kind="transport", model=self.label)
        loop = asyncio.get_running_loop()
        if self._reader is None:
            self._reader = _LineReader(self._input(), loop)
        self._reader.drain()
        self._show_events(view)
        self._print("")
        self._print(f">>> private question ({probe_id}; nobody else sees it or your answer):")
        self._print(question.rstrip())
        if json_schema is not None:
            self._print("    answer as JSON following: " + json.dumps(json_schema, ensure_ascii=False))
        self._print(f"    ({self.spec.timeout_s:g} s; one line)")
        reader = self._reader
        with _sigint(loop, lambda: reader.queue.put_nowait(_End(HUMAN_INTERRUPT))):
            line = await self._line(t0 + self.spec.timeout_s)
        took = time.monotonic() - t0
        status: Any = "ok"
        error = None
        if line is None or not line.strip():
            status = "error"
            if line is not None:
                error = "no answer"
            elif self.left is not None:
                error = f"{self.left}: {_CAUSE_TEXT[self.left]}"
            else:
                error = f"{HUMAN_TIMEOUT}: no answer within {self.spec.timeout_s:g} s"
        if self.calls is not None:
            self.calls(
                CallRecord(
                    seat=self.seat,
                    purpose="probe",
                    model=self.label,
                    status=status,
                    latency_ms=round(took * 1000),
                    error=error,
                    probe_id=probe_id,
                )
            )
        if error is not None or line is None:
            return ChatResponse(error=error, error_kind="empty", latency_s=took, model=self.label)
        text = line.strip()
        try:
            parsed: Any = loads_finite(text)
        except (ValueError, RecursionError):
            parsed = None
        return ChatResponse(text=text, parsed=parsed, latency_s=took, model=self.label)
