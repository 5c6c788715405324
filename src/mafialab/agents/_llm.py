"""LLM agents: prompt packs in, JSON-schema-constrained actions out, never a lost vote."""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from mafialab._quality import copied_words, off_roster
from mafialab._words import count
from mafialab.agents._prompts import (
    Layout,
    Persona,
    PromptPack,
    Renderer,
    decision_schema,
    load_prompt_pack,
    option_labels,
)
from mafialab.engine import Action, Decision, PlayerView, derive_seed, resolve_name, stream
from mafialab.models import (
    DEFAULT_POOL,
    CallRecord,
    CallSink,
    ChatMessage,
    ChatModel,
    ChatRequest,
    ChatResponse,
    ChoiceScores,
    MockExhausted,
    ModelPool,
    ModelSpecError,
    backend_names,
    complete_n,
    parse_json,
    parse_model_spec,
    scoring_refusal,
)
from mafialab.rules import RuleSet

log = logging.getLogger(__name__)

ECHO_MIN_CHARS = 20
"""Shortest prompt line or sentence the echo guard looks for in a speech (shorter ones, such
as a name, are ordinary words)."""
ECHO_MIN_LEFT = 12
"""Characters a speech must keep after the echo guard removed prompt text, else it is unusable."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class EchoGuard:
    """Prompt text a seat must not say out loud verbatim: its private block and the instructions.

    Built from the messages of one call. The public transcript is left out (quoting what
    was said in public is fair play); every other line of the prompt, and every sentence of
    it, of at least :data:`ECHO_MIN_CHARS` characters is a fragment.

    Attributes:
        private: Fragments of the seat's private block (identity, role, teammates, private
            events), longest first.
        instructions: Fragments of the rules, role lines, headers and decision prompts,
            longest first.
        source: The prompt's text without the public transcript's lines: what
            :meth:`copied` measures a text against.
    """

    private: tuple[str, ...]
    instructions: tuple[str, ...]
    source: str = ""

    @classmethod
    def of(cls, messages: list[ChatMessage], public: list[str], private: list[str]) -> EchoGuard:
        """The guard of a call whose ``messages`` hold the ``public`` and ``private`` lines given."""
        public_text = "\n".join(" ".join(p.split()) for p in public)

        def pieces(lines: list[str]) -> set[str]:
            out: set[str] = set()
            for line in lines:
                line = " ".join(line.split())
                for piece in [line, *_SENTENCE_END.split(line)]:
                    piece = piece.strip().removeprefix("- ").strip()
                    if len(piece) >= ECHO_MIN_CHARS and piece not in public_text:
                        out.add(piece)
            return out

        own = pieces(private)
        prompt_lines = [" ".join(ln.split()) for m in messages for ln in m.content.splitlines()]
        rest = pieces(prompt_lines) - own
        said = [p for p in (" ".join(x.split()) for x in public) if p]
        source = "\n".join(ln for ln in prompt_lines if ln and ln not in public_text and not any(p in ln for p in said))
        return cls(tuple(sorted(own, key=len, reverse=True)), tuple(sorted(rest, key=len, reverse=True)), source)

    def copied(self, text: str) -> int:
        """:func:`mafialab._quality.copied_words` of ``text`` against the prompt outside the public transcript."""
        return copied_words(text, self.source)

    def clean(self, text: str) -> tuple[str, str | None]:
        """``text`` without any fragment it repeats verbatim (letter case aside), and the cause.

        Returns:
            ``(text, cause)``: ``cause`` names how many fragments of each kind were removed
            (never their words, so the log does not copy private text either).
        """
        norm = " ".join(text.split())
        folded = norm.lower()
        counts = {"private": 0, "instructions": 0}
        for kind, frags in (("private", self.private), ("instructions", self.instructions)):
            for f in frags:
                if f.lower() in folded:  # verbatim up to letter case ("team werewolves")
                    norm = re.sub(re.escape(f), " ", norm, flags=re.IGNORECASE)
                    folded = norm.lower()
                    counts[kind] += 1
        if not any(counts.values()):
            return text, None
        parts = [f"{count(n, 'line')} of its private block" if k == "private" else count(n, "instruction line")
                 for k, n in counts.items() if n]  # fmt: skip
        left = " ".join(norm.split()).strip(" \"'`:;,-")
        return left, "the answer repeated the prompt verbatim (" + " and ".join(parts) + ")"


FALLBACK_TEXT = "(no comment)"
"""Text of a fallback speech (the same as the engine's fallback)."""

CONTEXT_MARGIN = 32
"""Tokens kept free besides ``max_tokens`` when fitting a prompt into the window."""

AGENT_OPTIONS = ("pack", "layout", "max_tokens", "temperature", "retries")
"""Options of a model spec that the agent keeps; the others go to the backend."""


class LLMAgent:
    """A seat played by a chat model.

    Each decision: the seat's view (only what the engine lets it see) is rendered with the
    prompt pack; the answer is constrained by :func:`decision_schema` (targets are an enum of
    legal seat names, text has a length cap). An answer that fails (transport error, empty,
    not JSON, illegal target) is retried once; if the retry fails too, the agent returns a
    seeded-random legal action with ``fallback=True`` drawn from its own stream
    ``llm-fallback:<seat>``. Every call is reported to :attr:`calls` (the harness writes
    ``calls.jsonl``). A transport error string is never played as a move.

    Args:
        seat: The seat played.
        rules: The rule set.
        seed: The game seed.
        model: The chat model (shared between seats when from a :class:`ModelPool`).
        pack: The prompt pack (default: built-in English).
        layout: Overrides the pack's layout (``shared_first`` / ``seat_first``).
        persona: Optional persona (table name, Big-Five traits).
        max_tokens: Generation cap for every decision (default: the pack's per-kind caps).
        temperature: Sampling temperature (default: the backend's).
        retries: Retries after a failed or unusable answer (default 1).
        label: Public label (default: the model's name).

    Attributes:
        calls: Sink for :class:`~mafialab.models.CallRecord` records (set by the harness), or ``None``.
    """

    def __init__(
        self,
        seat: int,
        rules: RuleSet,
        seed: int,
        model: ChatModel,
        *,
        pack: PromptPack | None = None,
        layout: Layout | None = None,
        persona: Persona | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        retries: int = 1,
        label: str | None = None,
    ):
        self.seat = seat
        self.rules = rules
        self.seed = seed
        self.model = model
        self.pack = pack or load_prompt_pack("en")
        self.persona = persona
        self.renderer = Renderer(self.pack, rules, layout=layout, persona=persona)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.retries = max(0, int(retries))
        self.label = label or model.name
        self.calls: CallSink | None = None
        self._fallback_rng = stream(seed, f"llm-fallback:{seat}")
        # full contexts of the last few views (the probes of one step share one view object)
        self._contexts: OrderedDict[tuple[int, str], tuple[PlayerView, list[ChatMessage]]] = OrderedDict()

    def describe(self) -> dict[str, Any]:
        """Settings worth recording in the game header (no secrets): model, pack, layout, caps."""
        return {
            "model": self.model.name,
            "pack": self.pack.id,
            "layout": self.renderer.layout,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "retries": self.retries,
        }

    def set_call_sink(self, sink: CallSink | None) -> None:
        """Report every model call to ``sink`` (the harness's ``calls.jsonl`` writer)."""
        self.calls = sink

    # ------------------------------------------------------------------ prompts
    def _max_tokens(self, decision: Decision | None) -> int:
        if self.max_tokens is not None:
            return self.max_tokens
        if decision is None:
            return self.pack.max_tokens.get("text", 160)
        short = (decision.wants_target or bool(decision.choices)) and not decision.needs_text
        return self.pack.max_tokens.get("target" if short else "text", 160)

    def _text_cap(self, decision: Decision) -> int:
        return min(decision.max_chars, self.pack.max_text_chars)

    def _count(self, messages: list[ChatMessage]) -> int:
        text = "\n".join(m.content for m in messages)
        return int(self.model.count_tokens(text)) + 8 * len(messages)

    def build_messages(
        self, view: PlayerView, tail: list[ChatMessage], max_tokens: int, shared: str = ""
    ) -> tuple[list[ChatMessage], dict[str, Any]]:
        """Context of ``view`` plus ``tail``, shortened to fit the model's window.

        ``shared`` is text common to every seat at this point (a probe battery's preamble),
        placed before the seat's private block (see :meth:`Renderer.context`).

        Returns:
            ``(messages, context record)``; the record is ``{}`` unless shortening was needed.
        """
        window = self.model.context_window
        ctx = self._full_context(view, shared)
        msgs = ctx + tail
        if window is None:
            return msgs, {}
        budget = window - max_tokens - CONTEXT_MARGIN
        est = self._count(msgs)
        if est <= budget:
            return msgs, {}
        record: dict[str, Any] = {}
        for step in (1, 2, 3, 4):
            ctx, cut, dropped = self.renderer.context(view, step, shared)
            msgs = ctx + tail
            est = self._count(msgs)
            record = {"shortened": step, "lines_cut": cut, "lines_dropped": dropped, "est_tokens": est}
            if est <= budget:
                break
        else:
            record["over_budget"] = True
        log.info("seat %d: context shortened to fit %d tokens: %s", self.seat, window, record)
        return msgs, record

    def _full_context(self, view: PlayerView, shared: str = "") -> list[ChatMessage]:
        """The unshortened context of ``view``, rendered once per view object.

        The probe runner gives every probe of one seat and step the same frozen view, so
        they share one rendering; a few recent views are kept (identity, not equality: a view
        is never mutated after it is built).
        """
        key = (id(view), shared)
        hit = self._contexts.get(key)
        if hit is not None and hit[0] is view:
            return hit[1]
        ctx, _, _ = self.renderer.context(view, 0, shared)
        self._contexts[key] = (view, ctx)
        while len(self._contexts) > 32:
            self._contexts.popitem(last=False)
        return ctx

    def decision_messages(self, decision: Decision, view: PlayerView) -> tuple[list[ChatMessage], dict[str, Any]]:
        """The messages of a decision call (context, then the decision prompt last)."""
        prompt = self.renderer.decision_prompt(decision, view, self._text_cap(decision))
        return self.build_messages(view, [ChatMessage(role="user", content=prompt)], self._max_tokens(decision))

    # ------------------------------------------------------------------ decisions
    def _interpret(
        self, decision: Decision, view: PlayerView, resp: ChatResponse, guard: EchoGuard | None = None
    ) -> tuple[Action, str | None] | str:
        """``(action in resp, repair)``, or why ``resp`` is unusable.

        With ``guard``, prompt text the answer's speech or statement repeats verbatim is
        removed before the text is cut to its cap (``repair`` names what was removed, else
        ``None``); a text with too little left is unusable, with that cause.
        """
        if not resp.ok:
            return f"call failed: {resp.error}"
        value = resp.parsed
        if value is None:
            value, _ = parse_json(resp.text)
        if not isinstance(value, dict) and decision.wants_target and not decision.needs_text and resp.text.strip():
            # a prompt-only answer ("VOTE: **Finley**"): read the name as a person would
            value = {"target": resp.text}
        if not isinstance(value, dict) and decision.choices and resp.text.strip():
            value = {"choice": resp.text, "statement": resp.text}  # "VOTE: Approve" and a reason
        if not isinstance(value, dict):
            return "answer is not a JSON object" if resp.text.strip() else "empty answer"
        if decision.choices:
            return self._interpret_choice(decision, value, guard)
        cap = self._text_cap(decision)
        target: int | None = None
        text: str | None = None
        repair: str | None = None
        if decision.wants_target:
            raw = value.get("target")
            named = isinstance(raw, str) and bool(raw.strip())
            if not named and not decision.no_vote:
                return "missing target"
            legal = dict(zip(option_labels(decision, view), decision.options, strict=True))
            match = resolve_name(raw, list(legal)) if named else None
            if match is not None and match.name is not None:
                if match.how not in ("exact", "normalised"):
                    log.info(
                        "seat %d decision %d: target %r read as %s (%s)",
                        self.seat,
                        decision.id,
                        raw,
                        match.name,
                        match.how,
                    )
                target = legal[match.name]
            # under rules with day.no_vote, a vote naming nobody, a dead player or the voter
            # casts no vote (MafiaScope's engine); it is not retried or replaced by a fallback
            if target is None and not decision.no_vote:
                return f"target is not a legal option ({match.cause if match else 'missing'})"
            if decision.needs_text:
                got = self._text_of(value, "statement", "missing statement", guard, cap)
                if isinstance(got, str):
                    return got
                text, repair = got
        else:
            got = self._text_of(value, "text", "missing or empty text", guard, cap)
            if isinstance(got, str):
                return got
            text, repair = got
        return Action(decision=decision.id, seat=decision.seat, target=target, text=text), repair

    def _interpret_choice(
        self, decision: Decision, value: dict[str, Any], guard: EchoGuard | None
    ) -> tuple[Action, str | None] | str:
        """A choice decision's answer (mission games): one of the choices, read case-blind.

        An answer naming one choice word (``"VOTE: Approve"``) counts as that choice; one that
        names none is a blank vote where the rules count it (``no_vote``), else unusable.
        """
        raw = value.get("choice")
        said = str(raw).strip().casefold() if isinstance(raw, str) else ""
        found = [c for c in decision.choices if c == said] or [
            c for c in decision.choices if re.search(rf"\b{re.escape(c)}", said)
        ]
        choice = found[0] if len(found) == 1 else None
        if choice is None and not decision.no_vote:
            return f"choice is not one of {', '.join(decision.choices)}"
        text: str | None = None
        repair: str | None = None
        if decision.needs_text:
            got = self._text_of(value, "statement", "missing statement", guard, self._text_cap(decision))
            if isinstance(got, str):
                return got
            text, repair = got
        return Action(decision=decision.id, seat=decision.seat, text=text, choice=choice), repair

    def _text_of(
        self, value: dict[str, Any], key: str, missing: str, guard: EchoGuard | None, cap: int
    ) -> tuple[str, str | None] | str:
        """``(value[key] guarded and cut to cap, repair)``, or why it is unusable (``missing``: none given)."""
        given = value.get(key)
        if not isinstance(given, str) or not given.strip():
            return missing
        kept, repair = self._guarded(given, guard)
        if kept is None:
            return str(repair)
        return kept[:cap], repair

    def _guarded(self, text: str, guard: EchoGuard | None) -> tuple[str | None, str | None]:
        """``(text stripped without prompt text it repeats, cause)``.

        ``cause`` is ``None`` when nothing was removed; with text ``None`` too little was left
        and ``cause`` says why the text is unusable; otherwise it is the repair to record.
        """
        left, cause = guard.clean(text) if guard is not None else (text, None)
        if cause is None:
            return text.strip(), None
        log.info("seat %d: %s", self.seat, cause)
        if len(left) < ECHO_MIN_LEFT:
            return None, f"{cause}, with nothing of its own"
        return left, f"{cause}; removed"

    def echo_guard(self, view: PlayerView, messages: list[ChatMessage]) -> EchoGuard:
        """The :class:`EchoGuard` of a decision call of this seat (``messages`` as sent)."""
        lines = self.renderer.rendered_lines(view)
        private = [ln.text for ln in lines if ln.private]
        own = [self.renderer.private_heading(view), self.renderer.identity(view), *private]
        return EchoGuard.of(messages, [ln.text for ln in lines if not ln.private], own)

    def _fallback(self, decision: Decision) -> Action:
        rng = self._fallback_rng
        target = rng.choice(decision.options) if decision.wants_target else None
        text = FALLBACK_TEXT if decision.needs_text else None
        choice = rng.choice(decision.choices) if decision.choices else None
        return Action(decision=decision.id, seat=decision.seat, target=target, text=text, fallback=True, choice=choice)

    def _report(self, info: CallRecord) -> None:
        if self.calls is not None:
            self.calls(info)

    async def _call(self, request: ChatRequest) -> ChatResponse:
        try:
            return await self.model.chat(request)
        except MockExhausted:
            raise  # a test scripted too few outputs: fail loudly
        except Exception as err:  # a backend bug must not lose the decision
            log.warning("seat %d: %s raised %s", self.seat, self.model.name, err)
            return ChatResponse(error=f"{type(err).__name__}: {err}", error_kind="transport", model=self.model.name)

    def _request(
        self, decision: Decision, messages: list[ChatMessage], schema: Any, attempt: int, sample: int | None
    ) -> ChatRequest:
        key = f"llm:{self.seat}:{decision.id}:{attempt}" + ("" if sample is None else f":{sample}")
        return ChatRequest(
            messages=messages,
            json_schema=schema,
            max_tokens=self._max_tokens(decision),
            temperature=self.temperature,
            seed=derive_seed(self.seed, key) % (2**31),
            purpose=decision.kind,
            meta={"seat": self.seat, "decision": decision.id, "attempt": attempt},
        )

    def first_request(self, decision: Decision, view: PlayerView) -> ChatRequest:
        """The request of the first attempt at ``decision`` (what :meth:`decide` sends first).

        Lets a caller draw that call's answers ahead, several per request (fork replicas
        resampling one frozen context); nothing is sent or reported.
        """
        messages, _ = self.decision_messages(decision, view)
        return self._request(decision, messages, decision_schema(decision, view, self._text_cap(decision)), 1, None)

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        """Ask the model; retry once on failure or unusable output; then fall back."""
        messages, ctx = self.decision_messages(decision, view)
        schema = decision_schema(decision, view, self._text_cap(decision))
        resp = await self._call(self._request(decision, messages, schema, 1, None))
        return await self._settle(decision, view, messages, schema, ctx, resp, None)

    async def decide_n(self, decision: Decision, view: PlayerView, n: int) -> list[Action]:
        """``n`` independent answers to one decision from one frozen context (resamples).

        The first attempt of every sample is one :func:`~mafialab.models.complete_n` call
        (one request with the server's ``n`` where the backend supports it, concurrent calls
        otherwise); each sample whose answer is unusable is then retried and falls back on
        its own, exactly as :meth:`decide` does, with retry seeds that name the sample. Each
        attempt is reported to the call sink like a decision's.

        Args:
            decision: The pending decision.
            view: The seat's view.
            n: Samples wanted (>= 1).

        Returns:
            ``n`` actions in sample order (``fallback`` set where no usable answer came).

        Raises:
            ValueError: ``n`` < 1.
        """
        if n < 1:
            raise ValueError(f"n: at least 1 sample, got {n}")
        messages, ctx = self.decision_messages(decision, view)
        schema = decision_schema(decision, view, self._text_cap(decision))
        try:
            resps = await complete_n(self.model, self._request(decision, messages, schema, 1, None), n)
        except MockExhausted:
            raise
        except Exception as err:  # a backend bug must not lose the decisions
            log.warning("seat %d: %s raised %s", self.seat, self.model.name, err)
            failed = ChatResponse(error=f"{type(err).__name__}: {err}", error_kind="transport", model=self.model.name)
            resps = [failed] * n
        return list(
            await asyncio.gather(
                *(self._settle(decision, view, messages, schema, ctx, r, i) for i, r in enumerate(resps))
            )
        )

    async def _settle(
        self,
        decision: Decision,
        view: PlayerView,
        messages: list[ChatMessage],
        schema: Any,
        ctx: dict[str, Any],
        resp: ChatResponse,
        sample: int | None,
    ) -> Action:
        """Read the first attempt's ``resp``; retry once on failure or unusable output; then fall back."""
        attempts = 1 + self.retries
        guard = self.echo_guard(view, messages) if decision.needs_text else None
        for attempt in range(1, attempts + 1):
            if attempt > 1:
                resp = await self._call(self._request(decision, messages, schema, attempt, sample))
            if resp.ok and resp.parsed is None and resp.text.strip():
                # read leniently here, the way _interpret would: a "\\ud800" escape parses into a
                # lone surrogate, replaced (and counted in the call record) by with_parsed
                resp = resp.with_parsed(parse_json(resp.text)[0])
            result = self._interpret(decision, view, resp, guard)
            last = attempt == attempts
            if not isinstance(result, str):
                action, repair = result
                status = "ok" if attempt == 1 else "retried"
                info = self._info(decision.kind, status, attempt, resp, None, decision.id, ctx)
                info.repair = repair
                self._report(_marked(info, decision, view, resp, guard).with_prompt(messages))
                return action
            status = "fallback" if last else "unusable"
            info = self._info(decision.kind, status, attempt, resp, result, decision.id, ctx, messages=messages)
            self._report(_marked(info, decision, view, resp, guard))
            log.info("seat %d decision %d attempt %d: %s", self.seat, decision.id, attempt, result)
            if not last:
                retry = self.renderer._fmt(self.pack.retry, reason=_reason_word(result))
                messages = [*messages, ChatMessage(role="user", content=retry)]
                if guard is not None:  # the retry instruction must not be said out loud either
                    guard = self.echo_guard(view, messages)
        return self._fallback(decision)

    def _info(
        self,
        purpose: str,
        status: Any,
        attempt: int,
        resp: ChatResponse,
        error: str | None,
        decision: int | None,
        ctx: dict[str, Any],
        probe_id: str | None = None,
        messages: list[ChatMessage] | None = None,
    ) -> CallRecord:
        rec = CallRecord.of_response(
            resp,
            seat=self.seat,
            purpose=purpose,
            model=resp.model or self.model.name,
            status=status,
            attempt=attempt,
            error=error,
            decision=decision,
            probe_id=probe_id,
            context=ctx,
        )
        return rec.with_prompt(messages) if messages is not None else rec  # prefix accounting

    # ------------------------------------------------------------------ probes
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
        """Ask the agent's model a private question in the agent's own game context.

        Builds the same context messages a decision would use for ``view`` (a fresh copy;
        nothing is written back into the agent), with the battery's ``preamble`` between
        the public transcript and the seat's private block (the same text for every seat at
        one trigger, so their calls share the prompt up to there), appends ``question`` as
        the last user message and calls the model with ``purpose="probe"``. The call is reported with
        purpose ``probe`` (status ``ok`` or ``error``), never as a game decision, and does
        not draw from the agent's fallback stream.

        Args:
            question: The rendered probe question.
            view: The seat's view at the probe point (from the engine).
            json_schema: Schema of the answer, or ``None`` for free text.
            max_tokens: Generation cap.
            probe_id: Probe id (for accounting).
            preamble: The battery's rendered preamble, or ``""``.

        Returns:
            The model's response (``error`` set when the call failed).
        """
        messages, ctx = self.build_messages(view, [ChatMessage(role="user", content=question)], max_tokens, preamble)
        req = ChatRequest(
            messages=messages,
            json_schema=json_schema,
            max_tokens=max_tokens,
            temperature=self.temperature,
            seed=derive_seed(self.seed, f"probe:{self.seat}:{probe_id}:{len(view.events)}") % (2**31),
            purpose="probe",
            meta={"seat": self.seat, "probe_id": probe_id},
        )
        resp = await self._call(req)
        status = "ok" if resp.ok else "error"
        self._report(
            self._info("probe", status, 1, resp, resp.error, None, ctx, probe_id=probe_id).with_prompt(messages)
        )
        return resp

    async def score_choices(
        self,
        question: str,
        view: PlayerView,
        candidates: list[str],
        probe_id: str,
        *,
        preamble: str = "",
        first_token: bool = False,
    ) -> ChoiceScores:
        """Read a ``logprob`` probe: the model's log-probability of each candidate as the answer.

        The messages are those :meth:`probe` would send (a fresh copy of the context of
        ``view``, the preamble, ``question`` last); nothing is generated and nothing is
        written back into the agent. The call is reported with purpose ``probe``.

        Args:
            question: The rendered question.
            view: The seat's view at the probe point.
            candidates: The answers to score.
            probe_id: Probe id (for accounting).
            preamble: The battery's rendered preamble, or ``""``.
            first_token: Score each candidate's first token only.

        Returns:
            The scores (``error`` set when the model cannot score or the call failed).
        """
        messages, ctx = self.build_messages(view, [ChatMessage(role="user", content=question)], 16, preamble)
        req = ChatRequest(messages=messages, purpose="probe", meta={"seat": self.seat, "probe_id": probe_id})
        why = scoring_refusal(self.model)
        if why is not None:
            return ChoiceScores(candidates=list(candidates), error=why, model=self.model.name)
        try:
            got: ChoiceScores = await self.model.score_choices(req, list(candidates), first_token)  # type: ignore[attr-defined]
        except Exception as err:  # a probe must never stop the game
            got = ChoiceScores(candidates=list(candidates), error=f"{type(err).__name__}: {err}", model=self.model.name)
        resp = ChatResponse(
            text="", usage=got.usage, latency_s=got.latency_s, model=got.model or self.model.name, error=got.error
        )
        status = "ok" if got.error is None else "error"
        self._report(
            self._info("probe", status, 1, resp, got.error, None, ctx, probe_id=probe_id).with_prompt(messages)
        )
        return got


def _marked(
    info: CallRecord, decision: Decision, view: PlayerView, resp: ChatResponse, guard: EchoGuard | None
) -> CallRecord:
    """``info`` with the answer's quality marks (``copied_words``, ``off_roster``) set; returns ``info``.

    Read from the answer as given, before the echo guard removed anything: the text of a
    decision that needs one (``text`` or ``statement``) against the seat's prompt outside the
    public transcript, and a ``target`` that names no seat of the game (not counted under
    rules where a vote may name nobody).
    """
    value = resp.parsed if resp.ok else None
    if value is None and resp.ok:
        value, _ = parse_json(resp.text)
    if not isinstance(value, dict):
        if decision.wants_target and not decision.needs_text and resp.ok and resp.text.strip():
            value = {"target": resp.text}
        else:
            return info
    if decision.wants_target and not decision.no_vote:  # there, naming nobody is a way to abstain
        info.off_roster = int(off_roster(value.get("target"), view.names))
    said = value.get("statement" if decision.wants_target or decision.choices else "text")
    if guard is not None and isinstance(said, str):
        info.copied_words = guard.copied(said)
    return info


def _reason_word(why: str) -> str:
    """A fixed description of why an answer was unusable (never echoes model text)."""
    for key in ("call failed", "not a JSON object", "empty", "missing target", "not a legal option", "missing"):
        if key in why:
            return {
                "call failed": "the call failed",
                "not a JSON object": "it was not a JSON object",
                "empty": "it was empty",
                "missing target": "it named no target",
                "not a legal option": "the target is not one of the allowed names",
                "missing": "a field was missing",
            }[key]
    return "it did not follow the format"


# ---------------------------------------------------------------------- specs
def model_spec_forms() -> list[str]:
    """Model strings in words for an unknown agent spec's message, naming the providers registered now."""
    return [f"a model string PROVIDER/MODEL (PROVIDER: {', '.join(backend_names())})"]


def is_model_spec(spec: str) -> bool:
    """Whether ``spec`` is a model string of a registered provider (``provider/model``)."""
    provider, sep, rest = spec.partition("/")
    return bool(sep and rest) and provider in backend_names()


def _check_agent_options(spec: str, opts: dict[str, Any]) -> dict[str, Any]:
    """Validate the agent options of a spec (types and ranges) before any game starts.

    Raises:
        ModelSpecError: A bad value; the message names the option and quotes the spec.
    """
    out = dict(opts)
    if "max_tokens" in out:
        value = out["max_tokens"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ModelSpecError(f"max_tokens: expected an integer >= 1, got {value!r} in {spec!r}")
    if "retries" in out:
        value = out["retries"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ModelSpecError(f"retries: expected an integer >= 0, got {value!r} in {spec!r}")
    if "temperature" in out:
        value = out["temperature"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
            raise ModelSpecError(f"temperature: expected a number >= 0, got {value!r} in {spec!r}")
        out["temperature"] = float(value)
    if "layout" in out and out["layout"] not in ("shared_first", "seat_first"):
        raise ModelSpecError(f"layout: expected shared_first or seat_first, got {out['layout']!r} in {spec!r}")
    if "pack" in out and not isinstance(out["pack"], str):
        raise ModelSpecError(f"pack: expected a pack name or YAML path, got {out['pack']!r} in {spec!r}")
    return out


def make_llm_agent(
    spec: str, seat: int, rules: RuleSet, seed: int, *, pool: ModelPool | None = None, persona: Persona | None = None
) -> LLMAgent:
    """Build an :class:`LLMAgent` from a model spec (``provider/model?options``).

    Agent options (``pack``, ``layout``, ``max_tokens``, ``temperature``, ``retries``) are
    kept by the agent; the rest go to the backend, shared through ``pool``.

    Raises:
        ModelSpecError: Malformed spec, unknown provider or option.
        PromptPackError: Unknown prompt pack.
        ImportError: The backend's optional dependency is missing.
    """
    model_str, options = parse_model_spec(spec)
    agent_opts = _check_agent_options(spec, {k: options.pop(k) for k in AGENT_OPTIONS if k in options})
    try:
        model = (pool or DEFAULT_POOL).get(model_str, **options)
    except ModelSpecError:
        raise
    except (TypeError, ValueError) as err:
        # e.g. ``n_ctx=abc`` or ``timeout=abc``: name the spec and its options, not just int()'s complaint
        raise ModelSpecError(f"options of {model_str} ({', '.join(sorted(options))}): {err}") from err
    pack = load_prompt_pack(agent_opts.pop("pack", "en"))
    return LLMAgent(seat, rules, seed, model, pack=pack, persona=persona, label=model_str, **agent_opts)


def llm_factory(spec: str, seat: int, rules: RuleSet, seed: int) -> LLMAgent:
    """Agent factory for model strings (registered with ``register_agent_resolver``)."""
    return make_llm_agent(spec, seat, rules, seed)
