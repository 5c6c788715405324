"""Call accounting (``calls.jsonl``), the integrity gate and the preflight check."""

from __future__ import annotations

import asyncio
import bisect
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mafialab.models import CallRecord, CallSummary, ChatMessage, ChatModel, ChatRequest, DialectChoice
from mafialab.record import JsonlWriter, PriceTable

log = logging.getLogger(__name__)

PREFLIGHT_MAX_TOKENS = 32
"""Generation cap of a preflight probe when no agent gives one (a prompt pack's default for a vote)."""

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
    """Receives :class:`CallRecord` from agents, adds game id and cost, writes ``calls.jsonl``, keeps totals.

    Args:
        game_id: Game id written into each record.
        writer: ``calls.jsonl`` writer, or ``None`` to keep records in memory only.
        prices: Price table for ``cost_usd``.

    Attributes:
        records: Every record, in order.
        prompt_chars: Σ characters of the prompts seen (records with a prompt attached,
            :meth:`~mafialab.models.CallRecord.with_prompt`).
        shared_prefix_chars: Σ over those prompts of the longest common prefix with any
            earlier prompt of the game.
    """

    game_id: str
    writer: JsonlWriter | None = None
    prices: PriceTable = field(default_factory=PriceTable)
    records: list[CallRecord] = field(default_factory=list)
    prompt_chars: int = 0
    shared_prefix_chars: int = 0
    _prompts: list[str] = field(default_factory=list, repr=False)

    def __call__(self, info: CallRecord) -> None:
        """Record one call (an agent's record, with this game's id and the call's cost added)."""
        cost = self.prices.cost(info.model, info.prompt_tokens, info.completion_tokens, info.cached_tokens)
        rec = info.model_copy(update={"game_id": self.game_id, "cost_usd": cost})
        self.records.append(rec)
        if info.prompt is not None:
            self._account(info.prompt)
        if self.writer is not None:
            self.writer.write(rec)

    def _account(self, prompt: str) -> None:
        """Add ``prompt`` to the shared-prefix tally.

        The longest common prefix of ``prompt`` with any string of a set is the longer of its
        common prefixes with its two neighbours in sorted order, so a sorted list does it.
        """
        i = bisect.bisect_left(self._prompts, prompt)
        best = 0
        for j in (i - 1, i):
            if 0 <= j < len(self._prompts):
                best = max(best, _common_prefix(prompt, self._prompts[j]))
        self._prompts.insert(i, prompt)
        self.prompt_chars += len(prompt)
        self.shared_prefix_chars += best

    def summary(self) -> CallSummary:
        """The closing :class:`~mafialab.models.CallSummary` of the calls recorded so far."""
        cached = [r for r in self.records if r.cached_tokens is not None]
        prompt_tokens = sum(r.prompt_tokens for r in cached)
        cached_tokens = sum(r.cached_tokens or 0 for r in cached) if cached else None
        return CallSummary(
            game_id=self.game_id,
            calls=len(self.records),
            prompt_chars=self.prompt_chars,
            shared_prefix_chars=self.shared_prefix_chars,
            shared_prefix_share=self.shared_prefix_chars / self.prompt_chars if self.prompt_chars else None,
            prompt_tokens=prompt_tokens,
            cached_tokens=cached_tokens,
            cached_share=(cached_tokens / prompt_tokens) if cached_tokens is not None and prompt_tokens else None,
            calls_with_cache=len(cached),
        )

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


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (binary search on slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def agent_models(agents: Sequence[Any]) -> list[ChatModel]:
    """Distinct chat models behind ``agents`` (agents with a ``model`` attribute)."""
    seen: dict[int, ChatModel] = {}
    for a in agents:
        m = getattr(a, "model", None)
        if m is not None and hasattr(m, "chat"):
            seen.setdefault(id(m), m)
    return list(seen.values())


async def ping(model: ChatModel, timeout_s: float | None = None, max_tokens: int = PREFLIGHT_MAX_TOKENS) -> str | None:
    """One tiny call to ``model``; for a backend with dialects, its dialect probe.

    A backend with a ``negotiate(max_tokens)`` method (the ``openai`` backend) chooses its
    structured-output dialect here (:meth:`~mafialab.models._openai.OpenAIModel.negotiate`);
    any other gets "Reply with the word OK." (at most 8 tokens).

    Args:
        model: The backend to check.
        timeout_s: Seconds to wait, or ``None`` for the backend's own timeout.
        max_tokens: Generation cap of a dialect probe.

    Returns:
        ``None`` when the model gave a usable answer, else the error text (a backend that
        raises instead of returning an error is caught and described).
    """
    negotiate = getattr(model, "negotiate", None)
    try:
        if negotiate is not None:
            choice: DialectChoice = await asyncio.wait_for(negotiate(max_tokens), timeout_s)
            return None if choice.usable else choice.line()
        req = ChatRequest(
            messages=[ChatMessage(role="user", content="Reply with the word OK.")],
            max_tokens=8,
            temperature=0.0,
            purpose="preflight",
        )
        resp = await asyncio.wait_for(model.chat(req), timeout_s)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return None if resp.ok else (resp.error or "no answer")


async def unreachable(models: Sequence[ChatModel]) -> list[tuple[str, str]]:
    """``(name, error)`` for each model of ``models`` that calls over the network and fails :func:`ping`."""
    remote = [m for m in models if m.calls_network]
    errors = await asyncio.gather(*(ping(m) for m in remote))
    return [(m.name, e) for m, e in zip(remote, errors, strict=True) if e is not None]


def run_max_tokens(agents: Sequence[Any], model: ChatModel) -> int:
    """The smallest generation cap of a targeted decision among ``agents`` played by ``model``.

    An agent's ``max_tokens`` when set, else its prompt pack's cap for a target
    (``pack.max_tokens["target"]``), else :data:`PREFLIGHT_MAX_TOKENS`.
    """
    caps = []
    for a in agents:
        if getattr(a, "model", None) is model:
            cap = getattr(a, "max_tokens", None)
            if cap is None:
                pack = getattr(a, "pack", None)
                cap = getattr(pack, "max_tokens", {}).get("target") if pack is not None else None
            caps.append(int(cap) if cap else PREFLIGHT_MAX_TOKENS)
    return min(caps) if caps else PREFLIGHT_MAX_TOKENS


def unscripted_mocks(agents: Sequence[Any]) -> list[str]:
    """Names of the models behind ``agents`` that declare ``scripted = False``.

    Only a bare ``mock/NAME`` backend does (:class:`~mafialab.models.MockModel` built with no
    ``outputs``): it answers ``"{}"`` to every call, so every game decision it plays is a
    fallback. Known without a call: nothing is spent.
    """
    return [m.name for m in agent_models(agents) if getattr(m, "scripted", True) is False]


async def preflight(agents: Sequence[Any], *, allow_degraded: bool = False) -> list[DialectChoice]:
    """Check the models behind ``agents`` before a game: refuse one whose every answer would fall back.

    Remote backends (``calls_network``): a backend with dialects (``negotiate``) is probed
    with a two-name vote at the run's cap (:func:`run_max_tokens`) in each structured-output
    dialect until one answers schema-valid JSON (done once per backend: later games reuse
    the choice); any other remote backend gets one cheap call (:func:`ping`).

    Unscripted mocks (:func:`unscripted_mocks`, a bare ``mock/NAME``): every answer is
    ``"{}"``, unusable for every decision, so they are refused like a server that answers
    no probe usably. A mock given ``outputs`` (a test's script, or a hostile generator for
    fuzzing) is never called here, so no scripted answer is spent; its fallbacks show in
    the integrity gate as any model's do.

    Args:
        agents: The seats' agents.
        allow_degraded: Play even when a reachable server gives no usable answer in any
            dialect (it keeps the first dialect it accepted; expect fallbacks), or a seat is
            an unscripted mock (a fallback-only game on purpose); a warning is logged.

    Returns:
        The dialect choice of every backend with dialects.

    Raises:
        PreflightError: A model did not answer, or (unless ``allow_degraded``) answered no
            probe usably or is an unscripted mock; the one-line message names the model and
            what was tried.
    """
    for name in unscripted_mocks(agents):
        why = (
            f"preflight: {name} has no scripted outputs, so it answers {{}} to every decision and "
            "every one would fall back"
        )
        if not allow_degraded:
            raise PreflightError(
                f"{why}; not starting (script it: {name}?outputs=[...]; or override: --allow-degraded)"
            )
        log.warning("%s; playing anyway (allow_degraded)", why)
    models = [m for m in agent_models(agents) if m.calls_network]
    plain = [m for m in models if getattr(m, "negotiate", None) is None]
    bad = await unreachable(plain)
    if bad:
        name, err = bad[0]
        raise PreflightError(
            f"preflight: {name} did not answer a test call ({err}); not starting a game that would only "
            "play fallbacks. Check --base-url, the server and the API key variable."
        )
    dialectal = [m for m in models if getattr(m, "negotiate", None) is not None]
    choices: list[DialectChoice] = list(
        await asyncio.gather(*(m.negotiate(run_max_tokens(agents, m)) for m in dialectal))  # type: ignore[attr-defined]
    )
    for c in choices:
        if not c.reachable:
            raise PreflightError(
                f"preflight: {c.line()}; not starting a game that would only play fallbacks. "
                "Check --base-url, the server and the API key variable."
            )
        if not c.usable:
            if not allow_degraded:
                raise PreflightError(f"preflight: {c.line()}; not starting (override: --allow-degraded)")
            log.warning("preflight: %s; playing anyway (allow_degraded)", c.line())
    return choices


def dialects_in_use(agents: Sequence[Any]) -> dict[str, str]:
    """``{model string: structured-output dialect}`` of the backends behind ``agents`` that have one."""
    return {
        m.name: str(m.dialect)  # type: ignore[attr-defined]
        for m in agent_models(agents)
        if isinstance(getattr(m, "dialect", None), str)
    }
