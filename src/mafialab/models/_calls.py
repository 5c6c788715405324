"""The record of one model call (a line of ``calls.jsonl``), as agents report it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mafialab.models._protocol import ChatResponse

CallStatus = Literal["ok", "retried", "unusable", "fallback", "error"]
"""``ok``: usable answer at the first attempt; ``retried``: usable at the retry;
``unusable``: failed or unusable, and retried; ``fallback``: failed or unusable at the last
attempt, so the decision fell back to a seeded-random legal action; ``error``: a failed
call that is not a game decision (probe, preflight)."""


class CallRecord(BaseModel):
    """One model call, a line of ``calls.jsonl`` beside ``game.jsonl``.

    Agents report each call as a record without ``game_id`` and ``cost_usd``; the harness
    fills both in and writes the line.

    Attributes:
        kind: Always ``"call"``.
        game_id: Game id (``""`` until the harness, which knows the game, records it).
        seat: Seat of the calling agent (-1 when none).
        purpose: ``speak``, ``vote``, ``nominate``, ``runoff_vote``, ``kill``, ``protect``,
            ``investigate``, ``mafia_chat`` (game decisions), ``probe``, ``judge``,
            ``preflight`` …
        model: Model string that answered.
        decision: Decision id for game decisions, else ``None``.
        probe_id: Probe id for probe calls, else ``None``.
        attempt: 1 for the first try, 2 for the retry.
        status: See :data:`CallStatus`.
        prompt_tokens: Prompt tokens.
        completion_tokens: Completion tokens.
        cached_tokens: Prompt tokens served from a prefix cache, where reported (llama.cpp:
            tokens reused from the previous prompt; OpenAI-compatible servers:
            ``prompt_tokens_details.cached_tokens``).
        latency_ms: Wall-clock milliseconds of the call.
        error: Transport error or why the answer was unusable (never an API key).
        cost_usd: Cost from the price table (set by the harness), ``None`` when the model has
            no price.
        context: What was done to fit the context window (``{}``: nothing), see
            ``docs/models.md``.
        ts: Clock field.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["call"] = "call"
    game_id: str = ""
    seat: int = Field(ge=-1)
    purpose: str
    model: str
    decision: int | None = None
    probe_id: str | None = None
    attempt: int = Field(default=1, ge=1)
    status: CallStatus
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cached_tokens: int | None = None
    latency_ms: int = Field(default=0, ge=0)
    error: str | None = None
    cost_usd: float | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    ts: float | None = None

    @classmethod
    def of_response(cls, resp: ChatResponse, **fields: Any) -> CallRecord:
        """A record of ``resp``: its token usage and latency, plus ``fields`` (seat, purpose …)."""
        u = resp.usage
        return cls(
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            cached_tokens=u.cached_tokens,
            latency_ms=round(resp.latency_s * 1000),
            **fields,
        )


CallSink = Callable[[CallRecord], None]
"""Receives every :class:`CallRecord` (the harness writes them to ``calls.jsonl``)."""
