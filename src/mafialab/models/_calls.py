"""What an agent reports about each model call (turned into ``calls.jsonl`` records by the harness)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mafialab.models._protocol import Usage

CallStatus = Literal["ok", "retried", "unusable", "fallback", "error"]
"""``ok``: usable answer at the first attempt; ``retried``: usable at the retry;
``unusable``: failed or unusable, and retried; ``fallback``: failed or unusable at the last
attempt, so the decision fell back to a seeded-random legal action; ``error``: a failed
call that is not a game decision (probe, preflight)."""


@dataclass(frozen=True)
class CallInfo:
    """One model call as an agent saw it.

    Attributes:
        seat: Seat of the agent (``-1`` when none).
        purpose: ``speak``, ``vote``, ``nominate``, ``runoff_vote``, ``kill``, ``protect``,
            ``investigate``, ``mafia_chat``, ``probe``, ``preflight`` …
        model: Model string.
        status: See :data:`CallStatus`.
        attempt: 1 for the first try, 2 for the retry.
        usage: Token usage reported by the backend.
        latency_s: Seconds.
        error: Transport error or why the answer was unusable (never the API key).
        decision: Decision id for game decisions.
        probe_id: Probe id for probe calls.
        context: What was done to fit the context window (``{}`` when nothing).
    """

    seat: int
    purpose: str
    model: str
    status: CallStatus
    attempt: int = 1
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    error: str | None = None
    decision: int | None = None
    probe_id: str | None = None
    context: dict[str, Any] = field(default_factory=dict)


CallSink = Callable[[CallInfo], None]
"""Receives every :class:`CallInfo` (the harness writes them to ``calls.jsonl``)."""
