"""The record of one model call (a line of ``calls.jsonl``), as agents report it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from mafialab._words import count
from mafialab.models._protocol import ChatMessage, ChatResponse

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
        repair: What the agent removed from a usable answer before playing it, and why
            (e.g. prompt text a speech repeated verbatim), or ``None``.
        cost_usd: Cost from the price table (set by the harness), ``None`` when the model has
            no price.
        context: What was done to fit the context window (``{}``: nothing), see
            ``docs/models.md``.
        replaced_chars: Characters of the answer that UTF-8 cannot encode (lone surrogates
            such as U+D800) and were replaced with U+FFFD before it was read
            (:attr:`~mafialab.models.ChatResponse.replaced_chars`; 0 in logs written before
            the field).
        copied_words: For a decision answered with a text (a speech, a vote statement, team
            chat): the longest run of consecutive words the text takes from the seat's own
            prompt outside the public transcript (:func:`mafialab._quality.copied_words`; 0:
            none of 8 words or more); ``None``: no text, or logs written before the field.
        off_roster: Names in the answer that are no seat of the game (a decision's target:
            0 or 1; :func:`mafialab._quality.off_roster`; 0 in logs written before the field).
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
    repair: str | None = None
    cost_usd: float | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    replaced_chars: int = Field(default=0, ge=0)
    copied_words: int | None = Field(default=None, ge=0)
    off_roster: int = Field(default=0, ge=0)
    ts: float | None = None

    _prompt: str | None = PrivateAttr(default=None)

    def with_prompt(self, messages: Sequence[ChatMessage]) -> CallRecord:
        """Attach the call's prompt (:func:`prompt_text` of ``messages``) for prefix accounting.

        The prompt is kept in memory only (never written to ``calls.jsonl``); the harness
        uses it for the shared-prefix share of :class:`CallSummary`. Returns ``self``.
        """
        self._prompt = prompt_text(messages)
        return self

    @property
    def prompt(self) -> str | None:
        """The attached prompt text, or ``None``."""
        return self._prompt

    @classmethod
    def of_response(cls, resp: ChatResponse, **fields: Any) -> CallRecord:
        """A record of ``resp``: its token usage and latency, plus ``fields`` (seat, purpose …)."""
        u = resp.usage
        return cls(
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            cached_tokens=u.cached_tokens,
            latency_ms=round(resp.latency_s * 1000),
            replaced_chars=resp.replaced_chars,
            **fields,
        )


def prompt_text(messages: Sequence[ChatMessage]) -> str:
    """A prompt as one string, the way a server's prefix cache sees it.

    Each message's role, a newline, its content and a blank line, in order.
    """
    return "".join(f"{m.role}\n{m.content}\n\n" for m in messages)


class CallSummary(BaseModel):
    """The closing record of a game's ``calls.jsonl``: prefix reuse over all its calls.

    Attributes:
        kind: Always ``"call_summary"``.
        game_id: Game id.
        calls: Model calls recorded (game decisions, probes, every attempt); the records of
            a seat a person plays (``human``, ``human-web``: the person's decisions) are in
            the file but not counted here.
        prompt_chars: Σ prompt characters over the calls whose prompt is known
            (:func:`prompt_text`).
        shared_prefix_chars: Σ over those calls of the longest common prefix, in characters,
            with any earlier call of the game (earlier = recorded before it).
        shared_prefix_share: ``shared_prefix_chars / prompt_chars`` (0-1), ``None`` when no
            prompt is known. The best a prefix cache could reuse within one game.
        prompt_tokens: Σ prompt tokens over the calls whose server reported cached tokens.
        cached_tokens: Σ cached prompt tokens the server reported (``None``: no call reported).
        cached_share: ``cached_tokens / prompt_tokens`` over those calls (0-1), or ``None``.
        calls_with_cache: Calls whose answer reported ``cached_tokens``.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["call_summary"] = "call_summary"
    game_id: str = ""
    calls: int = Field(default=0, ge=0)
    prompt_chars: int = Field(default=0, ge=0)
    shared_prefix_chars: int = Field(default=0, ge=0)
    shared_prefix_share: float | None = Field(default=None, ge=0.0, le=1.0)
    prompt_tokens: int = Field(default=0, ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)
    cached_share: float | None = Field(default=None, ge=0.0)
    calls_with_cache: int = Field(default=0, ge=0)
    ts: float | None = None

    def line(self) -> str:
        """One line for a terminal: the shared-prefix share and the server's cached tokens."""
        parts = []
        if self.shared_prefix_share is not None:
            parts.append(f"shared prefix {100 * self.shared_prefix_share:.1f} % of {self.prompt_chars:,} prompt chars")
        if self.cached_tokens is not None and self.cached_share is not None:
            parts.append(
                f"server cached {self.cached_tokens:,} of {self.prompt_tokens:,} prompt tokens "
                f"({100 * self.cached_share:.1f} %)"
            )
        else:
            parts.append("server reported no cached tokens")
        return f"{count(self.calls, 'call')}: " + "; ".join(parts)


def merge_summaries(summaries: Sequence[CallSummary]) -> CallSummary:
    """One :class:`CallSummary` over several games' (sums; shares recomputed; ``game_id`` "")."""
    prompt_chars = sum(x.prompt_chars for x in summaries)
    shared = sum(x.shared_prefix_chars for x in summaries)
    with_cache = [x for x in summaries if x.cached_tokens is not None]
    prompt_tokens = sum(x.prompt_tokens for x in with_cache)
    cached = sum(x.cached_tokens or 0 for x in with_cache) if with_cache else None
    return CallSummary(
        calls=sum(x.calls for x in summaries),
        prompt_chars=prompt_chars,
        shared_prefix_chars=shared,
        shared_prefix_share=shared / prompt_chars if prompt_chars else None,
        prompt_tokens=prompt_tokens,
        cached_tokens=cached,
        cached_share=cached / prompt_tokens if cached is not None and prompt_tokens else None,
        calls_with_cache=sum(x.calls_with_cache for x in summaries),
    )


CallSink = Callable[[CallRecord], None]
"""Receives every :class:`CallRecord` (the harness writes them to ``calls.jsonl``)."""
