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

from mafialab.agents import FALLBACK_TEXT, Renderer, load_prompt_pack
from mafialab.engine import Action, Decision, PlayerView, stream
from mafialab.models import CallRecord, CallSink, ChatResponse
from mafialab.remote._seats import MAX_TEXT_CHARS_REMOTE, SeatSpec
from mafialab.render import EventRenderer, load_event_templates
from mafialab.rules import RuleSet

REMINDERS_S = (60, 30, 10)
"""Seconds left at which the countdown is printed again."""


class _LineReader:
    """Reads lines of ``stream`` in a daemon thread into an asyncio queue (input never blocks the game)."""

    def __init__(self, source: TextIO, loop: asyncio.AbstractEventLoop):
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = loop
        self._thread = threading.Thread(target=self._run, args=(source,), name="mafialab-human-input", daemon=True)
        self._thread.start()

    def _run(self, source: TextIO) -> None:
        while True:
            line = source.readline()
            self._loop.call_soon_threadsafe(self.queue.put_nowait, line if line else None)
            if not line:
                return

    def drain(self) -> None:
        """Forget lines typed before the current question."""
        while not self.queue.empty():
            if self.queue.get_nowait() is None:  # end of input stays visible
                self.queue.put_nowait(None)
                return


class HumanTerminalAgent:
    """A seat played by a person at this terminal (``--seat N=human``).

    Each decision prints what the seat saw since its last decision (only its own view,
    rendered by the shared event templates), the decision, the legal options numbered from
    1, and the seconds left; the person types a number and/or text. A wrong entry is
    explained and asked again until the deadline. Ctrl-C while the seat is asked (or the
    end of input) hands the seat to its fallback for the rest of the game; the game and its
    log go on. Decisions are reported as call records (``model`` = the label, status ``ok``
    or ``fallback``, the person's answer time in ``latency_ms``).

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
        self.abandoned = False
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
            if line is None:
                self.abandoned = True
            return None if line is None else line.rstrip("\n")

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        """Ask the person; a logged fallback when time runs out, on Ctrl-C or at the end of input."""
        t0 = time.monotonic()
        if self.abandoned:
            return self._fallback(decision, "the person left the seat (Ctrl-C or end of input)", 0.0)
        loop = asyncio.get_running_loop()
        if self._reader is None:
            self._reader = _LineReader(self._stdin or sys.stdin, loop)
        self._reader.drain()
        self._show_events(view)
        cap = min(decision.max_chars, MAX_TEXT_CHARS_REMOTE)
        self._print("")
        self._print(">>> " + self._renderer.decision_prompt(decision, view, cap))
        for i, s in enumerate(decision.options, 1):
            self._print(f"    {i}. {view.names[s]}")
        deadline = t0 + self.spec.timeout_s
        self._print(f"    ({self.spec.timeout_s:g} s to answer; Ctrl-C leaves the seat to the computer)")
        reader = self._reader

        def on_sigint() -> None:  # ends the wait for a line like the end of input does
            reader.queue.put_nowait(None)

        with _sigint(loop, on_sigint):
            action = await self._ask(decision, view, deadline, cap)
        took = time.monotonic() - t0
        if action is None:
            why = (
                "the person left the seat (Ctrl-C or end of input)"
                if self.abandoned
                else f"no answer within {self.spec.timeout_s:g} s"
            )
            self._print(f"  -> {why}; the computer plays this decision")
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
        if self.abandoned:
            return ChatResponse(error="the person left the seat", error_kind="transport", model=self.label)
        loop = asyncio.get_running_loop()
        if self._reader is None:
            self._reader = _LineReader(self._stdin or sys.stdin, loop)
        self._reader.drain()
        self._show_events(view)
        self._print("")
        self._print(f">>> private question ({probe_id}; nobody else sees it or your answer):")
        self._print(question.rstrip())
        if json_schema is not None:
            self._print("    answer as JSON following: " + json.dumps(json_schema, ensure_ascii=False))
        self._print(f"    ({self.spec.timeout_s:g} s; one line)")
        reader = self._reader
        with _sigint(loop, lambda: reader.queue.put_nowait(None)):
            line = await self._line(t0 + self.spec.timeout_s)
        took = time.monotonic() - t0
        status: Any = "ok"
        error = None
        if line is None or not line.strip():
            status, error = "error", "no answer" if line is not None else "no answer (time, Ctrl-C or end of input)"
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
            parsed: Any = json.loads(text)
        except ValueError:
            parsed = None
        return ChatResponse(text=text, parsed=parsed, latency_s=took, model=self.label)
