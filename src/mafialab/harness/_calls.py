"""Call accounting (``calls.jsonl``), the integrity gate and the preflight check."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mafialab.models import CallInfo, ChatMessage, ChatModel, ChatRequest
from mafialab.record import CallRecord, JsonlWriter, PriceTable

GATE_THRESHOLD = 0.7
"""Integrity gate: a game whose model-played decisions were answered by the model (first
try or retry) less often than this share is marked degraded."""

DECISION_PURPOSES = frozenset(
    {"speak", "mafia_chat", "vote", "nominate", "runoff_vote", "kill", "protect", "investigate"}
)
"""Purposes of game-decision calls (probe, judge and preflight calls do not count for the gate)."""


class PreflightError(RuntimeError):
    """A remote model did not answer the preflight call; the game was not started."""


@dataclass
class CallRecorder:
    """Receives :class:`CallInfo` from agents, writes :class:`CallRecord` lines, keeps totals.

    Args:
        game_id: Game id written into each record.
        writer: ``calls.jsonl`` writer, or ``None`` to keep records in memory only.
        prices: Price table for ``cost_usd``.

    Attributes:
        records: Every record, in order.
    """

    game_id: str
    writer: JsonlWriter | None = None
    prices: PriceTable = field(default_factory=PriceTable)
    records: list[CallRecord] = field(default_factory=list)

    def __call__(self, info: CallInfo) -> None:
        """Record one call."""
        u = info.usage
        rec = CallRecord(
            game_id=self.game_id,
            seat=info.seat,
            purpose=info.purpose,
            model=info.model,
            decision=info.decision,
            probe_id=info.probe_id,
            attempt=info.attempt,
            status=info.status,
            prompt_tokens=u.prompt_tokens,
            completion_tokens=u.completion_tokens,
            cached_tokens=u.cached_tokens,
            latency_ms=round(info.latency_s * 1000),
            error=info.error,
            cost_usd=self.prices.cost(info.model, u.prompt_tokens, u.completion_tokens, u.cached_tokens),
            context=info.context,
        )
        self.records.append(rec)
        if self.writer is not None:
            self.writer.write(rec)

    def gate(self, threshold: float = GATE_THRESHOLD) -> dict[str, Any]:
        """Integrity-gate figures over game-decision calls.

        Returns:
            ``{"model_decisions", "model_answered", "answered_share", "degraded", "calls",
            "cost_usd", "shortened"}``; ``answered_share`` is ``None`` when no decision went to a
            model (then the game is never degraded by this gate).
        """
        final: dict[int, str] = {}
        for r in self.records:
            if r.purpose in DECISION_PURPOSES and r.decision is not None and r.status != "unusable":
                final[r.decision] = r.status
        n = len(final)
        answered = sum(1 for s in final.values() if s in ("ok", "retried"))
        share = answered / n if n else None
        costs = [r.cost_usd for r in self.records if r.cost_usd is not None]
        return {
            "model_decisions": n,
            "model_answered": answered,
            "answered_share": share,
            "degraded": share is not None and share < threshold,
            "calls": len(self.records),
            "cost_usd": round(sum(costs), 6) if costs else None,
            "shortened": sum(1 for r in self.records if r.context),
        }


def agent_models(agents: Sequence[Any]) -> list[ChatModel]:
    """Distinct chat models behind ``agents`` (agents with a ``model`` attribute)."""
    seen: dict[int, ChatModel] = {}
    for a in agents:
        m = getattr(a, "model", None)
        if m is not None and hasattr(m, "chat"):
            seen.setdefault(id(m), m)
    return list(seen.values())


async def ping(model: ChatModel, timeout_s: float | None = None) -> str | None:
    """One tiny call to ``model`` ("Reply with the word OK.", at most 8 tokens).

    Args:
        model: The backend to check.
        timeout_s: Seconds to wait, or ``None`` for the backend's own timeout.

    Returns:
        ``None`` when the model answered, else the error text (a backend that raises
        instead of returning an error is caught and described).
    """
    req = ChatRequest(
        messages=[ChatMessage(role="user", content="Reply with the word OK.")],
        max_tokens=8,
        temperature=0.0,
        purpose="preflight",
    )
    try:
        resp = await asyncio.wait_for(model.chat(req), timeout_s)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return None if resp.ok else (resp.error or "no answer")


async def unreachable(models: Sequence[ChatModel]) -> list[tuple[str, str]]:
    """``(name, error)`` for each remote model (``remote = True``) of ``models`` that fails :func:`ping`."""
    remote = [m for m in models if getattr(m, "remote", False)]
    errors = await asyncio.gather(*(ping(m) for m in remote))
    return [(m.name, e) for m, e in zip(remote, errors, strict=True) if e is not None]


async def preflight(agents: Sequence[Any]) -> None:
    """One cheap call (:func:`ping`) to every remote model behind ``agents`` (``remote = True``).

    Raises:
        PreflightError: A model did not answer; the message names it and the error.
    """
    bad = await unreachable(agent_models(agents))
    if bad:
        name, err = bad[0]
        raise PreflightError(
            f"preflight: {name} did not answer a test call ({err}); not starting a game that would only "
            "play fallbacks. Check --base-url, the server and the API key variable."
        )
