"""Elicitation of priors and belief shifts from a chat model (``beliefshift run``)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mafialab import __version__
from mafialab._words import count
from mafialab.beliefshift._answer import split_answer
from mafialab.beliefshift._io import read_results
from mafialab.beliefshift._schema import (
    LABELS,
    SCALE,
    BenchHeader,
    BenchItem,
    FailureCause,
    ObserverContext,
    PlayerRef,
    Protocol,
    Rating,
    ResultRecord,
    ResultsHeader,
    StageCall,
    constant_stages,
    label_of,
    too_few_to_judge,
)
from mafialab.engine import derive_seed, resolve_name
from mafialab.models import CHARS_PER_TOKEN, ChatMessage, ChatModel, ChatRequest, estimate_tokens
from mafialab.record import JsonlWriter

log = logging.getLogger(__name__)

DEFAULT_MODEL = "local/smollm2"
"""Default model of ``beliefshift run``: the embedded model (llama.cpp in-process, offline)."""

RESERVE_TOKENS = 64
"""Tokens kept free in the context window besides the generation cap (chat-template overhead)."""

_INT_LABEL = re.compile(r"^[+-]?\d+$")


@dataclass(frozen=True)
class RunOptions:
    """Options of one elicitation run.

    Attributes:
        protocol: ``anchored`` (shift asked with the prior shown) or ``independent``
            (posterior asked without it; shift = posterior - prior).
        retries: Extra attempts per stage after a failure (>= 0).
        concurrency: Observations in flight at once (>= 1); each has one call in flight
            (anchored) or two (independent: prior and posterior together).
        max_tokens: Generation cap per call.
        temperature: Sampling temperature (``None``: the backend's default, as in the paper).
        context_window: Context window in tokens to fit prompts into (``None``: the model's
            ``context_window``; if that is ``None`` too, no shortening).
        label: Configuration label for reports (default: the model string).
        seed: Base of the per-call sampling seeds.
    """

    protocol: Protocol = "anchored"
    retries: int = 2
    concurrency: int = 8
    max_tokens: int = 1024
    temperature: float | None = None
    context_window: int | None = None
    label: str | None = None
    seed: int = 0


def parse_levels(obj: dict[str, Any], accuser: str, target: str) -> tuple[Rating | None, FailureCause | None, str]:
    """Read the two labels of an answer ``{"<accuser>": label, "<target>": label}``.

    Keys are player names, read with :func:`mafialab.engine.resolve_name` when not exact.
    A label is one of :data:`LABELS` (``"-3"`` ... ``"+3"``); an integer on the scale, or a
    string of one (``"2"``), is read as the same level. Anything else is a failure, never 0.

    Returns:
        ``(rating, None, "")`` or ``(None, cause, detail)`` with cause ``schema`` (a key
        missing) or ``out_of_scale`` (a value not on the seven-level scale).
    """
    vals: list[int] = []
    for key in (accuser, target):
        if key in obj:
            v = obj[key]
        else:  # "**Alex**", "alex": read as a person would (one resolver), never a guess
            hits = [k for k in obj if isinstance(k, str) and resolve_name(k, [accuser, target]).name == key]
            if len(hits) != 1:
                return None, "schema", f"{key}: missing" if not hits else f"{key}: given twice ({hits})"
            v = obj[hits[0]]
        level: int | None = None
        if isinstance(v, bool):
            level = None
        elif isinstance(v, int):
            level = v
        elif isinstance(v, str) and _INT_LABEL.match(v.strip()):
            level = int(v.strip())
        if level is None or level not in SCALE:
            return None, "out_of_scale", f"{key}: {v!r} is not one of {', '.join(LABELS)}"
        vals.append(level)
    return Rating(accuser=vals[0], target=vals[1]), None, ""


def rating_schema(accuser: str, target: str) -> dict[str, Any]:
    """JSON schema of an answer: one of the seven labels per player (enum)."""
    prop = {"type": "string", "enum": list(LABELS)}
    return {
        "type": "object",
        "properties": {accuser: prop, target: prop},
        "required": [accuser, target],
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class Prompts:
    """The prompts of one observation, built from a benchmark header's prompt pack."""

    system: str
    history: str
    prior: str
    shift: str
    posterior: str
    dropped: int
    history_events: int

    def prior_messages(self) -> list[ChatMessage]:
        """System, then history + prior question."""
        return [
            ChatMessage(role="system", content=self.system),
            ChatMessage(role="user", content=f"{self.history}\n\n{self.prior}"),
        ]

    def shift_messages(self, prior_answer: str, prior_text: str) -> list[ChatMessage]:
        """The prior conversation, the model's prior answer, then the message + shift question."""
        return [
            *self.prior_messages(),
            ChatMessage(role="assistant", content=prior_answer),
            ChatMessage(role="user", content=self.shift.replace("{prior_text}", prior_text)),
        ]

    def posterior_messages(self) -> list[ChatMessage]:
        """System, then history + message + posterior question (no prior shown)."""
        return [
            ChatMessage(role="system", content=self.system),
            ChatMessage(role="user", content=f"{self.history}\n\n{self.posterior}"),
        ]


def _fmt(template: str, **kw: str) -> str:
    # Plain placeholder substitution (str.format would choke on braces in the example JSON).
    out = template
    for k, v in kw.items():
        out = out.replace("{" + k + "}", v)
    return out


def build_prompts(
    header: BenchHeader,
    item: BenchItem,
    obs: ObserverContext,
    *,
    context_window: int | None,
    max_tokens: int,
    count_tokens: Callable[[str], int] | None = None,
) -> Prompts:
    """The prompts of one (item, observer), shortened to fit ``context_window`` if needed.

    Shortening (documented in ``docs/beliefshift.md``): when the longest prompt's tokens plus
    ``max_tokens`` plus :data:`RESERVE_TOKENS` exceed the window, the oldest history lines
    after the observer's identity preamble are dropped, whole, until it fits, and one line
    saying how many were omitted takes their place. The count is recorded as
    ``history_dropped``. Tokens are counted with ``count_tokens`` (the model's tokenizer,
    where the backend has one), else estimated by :func:`~mafialab.models.estimate_tokens`; the history is
    counted line by line.
    """
    count = count_tokens or estimate_tokens
    p = header.prompts
    town, mafia = item.town_team, item.mafia_team
    team_name = town if obs.team == "town" else mafia
    example = json.dumps({item.accuser.name: "<label>", item.target.name: "<label>"})
    common = {"town": town, "mafia": mafia, "game": item.game, "example": example}
    scale = _fmt(p["scale"], **common)
    shift_scale = _fmt(p["shift_scale"], **common)
    common |= {"scale": scale, "shift_scale": shift_scale, "message": item.message}
    system = _fmt(p["system"], name=obs.name, role=obs.role, team_name=team_name, setting=item.setting, **common)
    prior = _fmt(p["prior"], **common)
    shift = _fmt(p["shift"], **common)
    posterior = _fmt(p["posterior"], **common)

    lines = list(obs.history)
    dropped = 0
    if context_window is not None:
        # the longest prompt: system + history + prior question + prior answer + shift question
        # (anchored), or system + history + posterior question (independent); 40 tokens of slack
        # for the restated prior and the chat template's role markers
        asked = max(count(prior) + count(shift) + 2 * count(example), count(posterior)) + 40
        fixed = count(system) + count(_fmt(p["history"], history="")) + asked
        budget = context_window - max_tokens - RESERVE_TOKENS - fixed
        sizes = [count(x) + 1 for x in lines]
        total = sum(sizes)
        pre = obs.preamble
        marker = count(_fmt(p["omitted"], n="0000")) + 1
        while total > budget and len(lines) > pre:
            total -= sizes.pop(pre)
            del lines[pre]
            dropped += 1
            if dropped == 1:
                total += marker
        if dropped:
            lines.insert(pre, _fmt(p["omitted"], n=str(dropped)))
    history = _fmt(p["history"], history="\n".join(lines))
    return Prompts(system, history, prior, shift, posterior, dropped, len(obs.history))


@dataclass
class RunSummary:
    """Outcome of a run.

    Attributes:
        total: Observations in the benchmark.
        done: Observations answered in this run (the rest were already in the results file).
        ok: Observations with every stage answered validly (in the file after the run).
        causes: Failure causes of failed observations.
        shortened: Observations whose history was shortened.
        constant: Stages whose valid answers never vary (:func:`constant_stages`, e.g.
            ``{"prior": "0/0", "shift": "0/0"}``); empty when the answers vary.
    """

    total: int = 0
    done: int = 0
    ok: int = 0
    causes: Counter[str] = field(default_factory=Counter)
    shortened: int = 0
    constant: dict[str, str] = field(default_factory=dict)

    @property
    def informative(self) -> int:
        """Valid observations that carry information: all of :attr:`ok`, none when a stage is constant."""
        return 0 if self.constant else self.ok

    @property
    def note(self) -> str | None:
        """Why constancy could not be judged (:func:`too_few_to_judge`: under 10 valid observations), else ``None``."""
        return too_few_to_judge(self.ok)

    @property
    def completion(self) -> float:
        """Share of observations answered validly and informatively (0-1): :attr:`informative` / :attr:`total`."""
        return self.informative / self.total if self.total else 0.0


class ResultsMismatch(ValueError):
    """``--out`` holds results of another benchmark, model label or protocol."""


class ContextWindowError(ValueError):
    """The context window cannot hold the generation budget (``--max-tokens`` plus the reserve)."""


def _ref(o: ObserverContext) -> PlayerRef:
    return PlayerRef(seat=o.seat, name=o.name, role=o.role, team=o.team)


async def run_bench(
    header: BenchHeader,
    items: Sequence[BenchItem],
    model: ChatModel,
    out: Path,
    options: RunOptions = RunOptions(),
    *,
    on_result: Callable[[ResultRecord], None] | None = None,
) -> RunSummary:
    """Elicit priors and shifts for every (item, observer) and append the results to ``out``.

    Per observation: (a) prior - history, then the question about the accuser and the
    target on -3..+3; (b) anchored protocol: the same conversation, the model's own prior
    answer, the message and the shift question (-3..+3, positive = toward wolf);
    independent protocol: history, the message and the prior question again (no prior
    shown), asked concurrently with (a); shift = posterior - prior (-6..+6). Every answer
    is requested under :func:`rating_schema`; a failed stage is retried ``options.retries``
    times and then recorded with its cause (the observation is not ok, never scored 0).

    If ``out`` already holds results of the same benchmark, label and protocol, the
    observations answered validly there are skipped (resume); failed ones are asked again
    and their new record appended (readers keep the last record per observation).

    Args:
        header: Benchmark header (prompt pack).
        items: Benchmark items.
        model: The chat model.
        out: Results file (JSONL; created with a header line if new).
        options: Run options.
        on_result: Called with each record as it is written (progress).

    Returns:
        A :class:`RunSummary` of the whole file after the run.

    Raises:
        ResultsMismatch: ``out`` belongs to another benchmark, label or protocol.
        ContextWindowError: The window is not larger than ``max_tokens`` plus
            :data:`RESERVE_TOKENS` (nothing is written).
        BeliefShiftFormatError: ``out`` is unreadable.
    """
    rf = _ResultsFile.check(header, model, Path(out), options)
    sem = asyncio.Semaphore(max(1, options.concurrency))
    summary = RunSummary()
    writer = rf.open_writer(header, model, options)
    last = rf.last
    elicit = _Elicitor(header, model, options, rf.label, rf.window, rf.counter)

    async def one(item: BenchItem, obs: ObserverContext) -> None:
        # one observation at a time per slot: its shift call follows its prior call directly,
        # so a server with a single prefix cache (llama.cpp) reuses the shared history
        async with sem:
            rec = await elicit.observe(item, obs)
        writer.write(rec)
        last[(item.item_id, obs.seat)] = rec
        summary.done += 1
        if on_result is not None:
            on_result(rec)

    try:
        await asyncio.gather(*(one(it, o) for it, o in rf.missing(items)))
    finally:
        writer.close()
    _tally(summary, items, last)
    return summary


@dataclass
class BenchEstimate:
    """What ``beliefshift run`` would do (``--dry-run``): observations, calls and time.

    Attributes:
        total: Observations (item x observer) of the items given.
        todo: Observations without a valid result in the results file yet (to elicit).
        calls: Model calls for them without a retry (two stages each: prior, then shift or
            posterior).
        max_calls: With every retry (``calls * (retries + 1)``).
        seconds_per_call: Mean latency of the calls already in the results file (this model,
            label and protocol), ``None`` when it holds none.
        basis: Where the latency comes from, or why there is none, in words.
        why_empty: Why there is nothing to elicit (``None`` when there is something).
    """

    total: int
    todo: int
    calls: int
    max_calls: int
    seconds_per_call: float | None
    basis: str
    why_empty: str | None = None

    @property
    def seconds(self) -> float | None:
        """Time of ``calls`` one after another at the measured latency (``None``: unmeasured)."""
        return None if self.seconds_per_call is None else self.calls * self.seconds_per_call


def estimate_bench(
    header: BenchHeader, items: Sequence[BenchItem], model: ChatModel, out: Path, options: RunOptions = RunOptions()
) -> BenchEstimate:
    """Observations, calls and time of :func:`run_bench` on ``items`` into ``out``, calling no model.

    Returns a :class:`BenchEstimate` (``mafialab.beliefshift._elicit``; its fields are the
    answer, the class is not exported).

    The latency is measured in ``out`` itself: the calls of the results already there (a
    resumed run, or a first slice run with ``--limit``); a new results file gives none.

    Raises:
        ResultsMismatch, ContextWindowError, BeliefShiftFormatError: As :func:`run_bench`.
    """
    rf = _ResultsFile.check(header, model, Path(out), options)
    total = sum(len(it.observers) for it in items)
    todo = len(rf.missing(items))
    stages = [c for r in rf.last.values() for c in r.calls]
    attempts = sum(max(1, c.attempts) for c in stages)
    if attempts:
        per: float | None = sum(c.latency_s for c in stages) / attempts
        basis = f"mean {per:.2f} s of {count(attempts, 'call')} of {rf.label} already in {out.name}"
    else:
        per = None
        basis = (
            f"no measured latency: {out.name} holds no result of {rf.label} yet; run a slice first "
            "(--limit N, the same --out), then --dry-run again"
        )
    why = None
    if not total:
        why = "the benchmark has no observation" + (" in the items given" if items else " (no items)")
    elif not todo:
        why = f"every observation already has a valid result in {out.name}"
    calls = 2 * todo
    return BenchEstimate(total, todo, calls, calls * (options.retries + 1), per, basis, why)


async def elicit_observation(
    header: BenchHeader,
    item: BenchItem,
    observer: ObserverContext,
    model: ChatModel,
    options: RunOptions = RunOptions(),
) -> ResultRecord:
    """Ask one observer of one item its prior and its shift: the one code path of every runner.

    ``beliefshift run`` (:func:`run_bench`) and the Inspect task ``mafialab/beliefshift``
    both come here, so prompts (:func:`build_prompts`), the answer schema
    (:func:`rating_schema`), parsing (:func:`parse_levels`) and retries are the same.
    Per observation: the prior (history, then the question about the accuser and the
    target on -3..+3); then, anchored, the same conversation with the model's own prior
    answer, the message and the shift question, or, independent, the history, the message
    and the prior question again (asked concurrently; shift = posterior - prior, -6..+6).
    A stage that fails is retried ``options.retries`` times, then recorded with its cause
    (``ok`` false, never scored 0).

    Args:
        header: Benchmark header (prompt pack).
        item: The benchmark item.
        observer: One of ``item.observers``.
        model: The chat model (any :class:`~mafialab.models.ChatModel`).
        options: Run options (``concurrency`` is not used here).

    Returns:
        The observation's :class:`ResultRecord` (not written anywhere).

    Raises:
        ContextWindowError: The window cannot hold ``max_tokens`` plus :data:`RESERVE_TOKENS`.
    """
    label = options.label or model.name
    window = _check_window(options, model)
    counter: Callable[[str], int] | None = model.count_tokens if model.counts_tokens else None
    return await _Elicitor(header, model, options, label, window, counter).observe(item, observer)


def _check_window(options: RunOptions, model: ChatModel) -> int | None:
    """The context window in use; refuses one that cannot hold the generation budget."""
    window = options.context_window if options.context_window is not None else model.context_window
    if window is not None and window <= options.max_tokens + RESERVE_TOKENS:
        raise ContextWindowError(
            f"--context-window: {window} tokens cannot hold --max-tokens {options.max_tokens} plus the "
            f"{RESERVE_TOKENS} reserved, let alone a prompt (raise the window or lower --max-tokens)"
        )
    return window


@dataclass
class _ResultsFile:
    """A results file about to be (re)opened: what resume found in it, and the run's label and window."""

    path: Path
    label: str
    window: int | None
    counter: Callable[[str], int] | None
    last: dict[tuple[str, int], ResultRecord]
    has_lines: bool

    @classmethod
    def check(cls, header: BenchHeader, model: ChatModel, out: Path, options: RunOptions) -> _ResultsFile:
        """Read ``out`` for resume (nothing written yet).

        Raises:
            ResultsMismatch, ContextWindowError, BeliefShiftFormatError: As :func:`run_bench`.
        """
        label = options.label or model.name
        window = _check_window(options, model)
        counter = model.count_tokens if model.counts_tokens else None
        last = _previous_results(out, header.bench_id, label, options.protocol)
        return cls(out, label, window, counter, last, out.exists() and out.stat().st_size > 0)

    def missing(self, items: Sequence[BenchItem]) -> list[tuple[BenchItem, ObserverContext]]:
        """The (item, observer) pairs without a valid result yet, in benchmark order."""
        return [
            (it, o)
            for it in items
            for o in it.observers
            if not ((prev := self.last.get((it.item_id, o.seat))) is not None and prev.ok)
        ]

    def open_writer(self, header: BenchHeader, model: ChatModel, options: RunOptions) -> JsonlWriter:
        """An appending writer; a torn last line is ended first and a new file gets its header line."""
        if self.has_lines:
            _end_torn_line(self.path)
        writer = JsonlWriter(self.path, clock=None)
        if not self.last and not self.has_lines:
            writer.write(_results_header(header, model, self.label, options, self.window, self.counter))
        return writer


def _results_header(
    header: BenchHeader,
    model: ChatModel,
    label: str,
    options: RunOptions,
    window: int | None,
    counter: Callable[[str], int] | None,
) -> ResultsHeader:
    """The first line of a new results file: benchmark, model, label, protocol and run options."""
    return ResultsHeader(
        bench_id=header.bench_id,
        bench_version=header.version,
        model=model.name,
        label=label,
        protocol=options.protocol,
        options={
            "retries": options.retries,
            "concurrency": options.concurrency,
            "max_tokens": options.max_tokens,
            "temperature": options.temperature,
            "context_window": window,
            "token_count": "model tokenizer" if counter is not None else f"characters / {CHARS_PER_TOKEN}",
            "seed": options.seed,
        },
        software=f"mafialab {__version__}",
    )


def _previous_results(out: Path, bench_id: str, label: str, protocol: str) -> dict[tuple[str, int], ResultRecord]:
    """The last record per (item, observer seat) already in ``out`` (resume).

    Raises:
        ResultsMismatch: ``out`` holds results of another benchmark, label or protocol.
    """
    last: dict[tuple[str, int], ResultRecord] = {}
    if not (out.exists() and out.stat().st_size > 0):
        return last
    old_header, old, _ = read_results(out)
    oh = old_header
    if oh is not None and (oh.bench_id, oh.label, oh.protocol) != (bench_id, label, protocol):
        raise ResultsMismatch(
            f"{out}: holds results of bench {oh.bench_id}, label {oh.label!r}, protocol {oh.protocol} "
            f"(this run: {bench_id}, {label!r}, {protocol}); choose another --out"
        )
    for r in old:
        if (r.bench_id, r.label, r.protocol) != (bench_id, label, protocol):
            raise ResultsMismatch(
                f"{out}: holds a result of bench {r.bench_id}, label {r.label!r}, protocol {r.protocol} "
                f"(this run: {bench_id}, {label!r}, {protocol}); choose another --out"
            )
        last[(r.item_id, r.observer.seat)] = r
    return last


def _end_torn_line(out: Path) -> None:
    """End a torn last line (a crash while writing) so it cannot swallow the next record."""
    with out.open("rb+") as fh:
        fh.seek(-1, 2)
        if fh.read(1) != b"\n":
            fh.write(b"\n")


def _tally(summary: RunSummary, items: Sequence[BenchItem], last: dict[tuple[str, int], ResultRecord]) -> None:
    """Count every observation by its latest record: ok, failed by cause, shortened; and the constant stages."""
    valid: list[ResultRecord] = []
    for it in items:
        for o in it.observers:
            summary.total += 1
            rec = last.get((it.item_id, o.seat))
            if rec is None:
                continue
            if rec.ok:
                summary.ok += 1
                valid.append(rec)
            else:
                summary.causes[rec.cause or "unknown"] += 1
            summary.shortened += rec.history_dropped > 0
    summary.constant = constant_stages(valid)


class _Elicitor:
    """Asks one model the questions of one observation (shared settings of a run)."""

    def __init__(
        self,
        header: BenchHeader,
        model: ChatModel,
        options: RunOptions,
        label: str,
        window: int | None,
        counter: Callable[[str], int] | None,
    ) -> None:
        self.header = header
        self.model = model
        self.options = options
        self.label = label
        self.window = window
        self.counter = counter

    async def ask(
        self, req: ChatRequest, stage: str, names: tuple[str, str], key: str
    ) -> tuple[Rating | None, StageCall]:
        """One stage's call with retries; the rating, or ``None`` and the failure cause in the call record."""
        options, model = self.options, self.model
        causes: list[FailureCause] = []
        latency = 0.0
        detail = ""
        text, reasoning = "", None
        usage = None
        for attempt in range(options.retries + 1):
            r = req.model_copy(update={"seed": derive_seed(options.seed, f"{key}:{stage}:{attempt}") % (2**31)})
            try:
                resp = await model.chat(r)
            except Exception as err:  # a backend that raises is a transport failure
                causes.append("transport")
                detail = f"{type(err).__name__}: {err}"
                continue
            latency += resp.latency_s
            usage = resp.usage
            ans = split_answer(resp)
            text, reasoning = ans.text, ans.reasoning
            if ans.obj is None:
                causes.append(ans.cause or "schema")
                detail = ans.detail
                continue
            rating, cause, detail = parse_levels(ans.obj, *names)
            if rating is not None:
                return rating, StageCall(
                    stage=stage,  # type: ignore[arg-type]
                    ok=True,
                    attempts=attempt + 1,
                    causes=causes,
                    text=text,
                    reasoning=reasoning,
                    latency_s=round(latency, 3),
                    prompt_tokens=usage.prompt_tokens if usage else 0,
                    completion_tokens=usage.completion_tokens if usage else 0,
                    cached_tokens=usage.cached_tokens if usage else None,
                )
            causes.append(cause or "schema")
        return (
            None,
            StageCall(
                stage=stage,  # type: ignore[arg-type]
                ok=False,
                attempts=options.retries + 1,
                causes=causes,
                cause=causes[-1] if causes else "transport",
                detail=detail[:500],
                text=text[:2000],
                reasoning=reasoning,
                latency_s=round(latency, 3),
                prompt_tokens=usage.prompt_tokens if usage else 0,
                completion_tokens=usage.completion_tokens if usage else 0,
                cached_tokens=usage.cached_tokens if usage else None,
            ),
        )

    async def observe(self, item: BenchItem, obs: ObserverContext) -> ResultRecord:
        """Prior and shift (anchored) or prior and posterior (independent) of one observer."""
        header, model, options, label, window, counter = (
            self.header,
            self.model,
            self.options,
            self.label,
            self.window,
            self.counter,
        )
        ask = self.ask
        pr = build_prompts(
            header, item, obs, context_window=window, max_tokens=options.max_tokens, count_tokens=counter
        )
        names = (item.accuser.name, item.target.name)
        schema = rating_schema(*names)
        key = f"{item.item_id}:{obs.seat}"

        def req(messages: list[ChatMessage], stage: str) -> ChatRequest:
            return ChatRequest(
                messages=messages,
                json_schema=schema,
                max_tokens=options.max_tokens,
                temperature=options.temperature,
                purpose="elicit",
                meta={"item_id": item.item_id, "observer": obs.seat, "stage": stage, "protocol": options.protocol},
            )

        prior_msgs = pr.prior_messages()
        calls: list[StageCall] = []
        shift: Rating | None = None
        posterior: Rating | None = None
        longest = sum(len(m.content) for m in prior_msgs)
        if options.protocol == "anchored":
            prior, c1 = await ask(req(prior_msgs, "prior"), "prior", names, key)
            calls.append(c1)
            if prior is not None:
                answer = json.dumps({names[0]: label_of(prior.accuser), names[1]: label_of(prior.target)})
                prior_text = f"{names[0]} {label_of(prior.accuser)}, {names[1]} {label_of(prior.target)}"
                shift_msgs = pr.shift_messages(answer, prior_text)
                longest = sum(len(m.content) for m in shift_msgs)
                shift, c2 = await ask(req(shift_msgs, "shift"), "shift", names, key)
                calls.append(c2)
        else:
            post_msgs = pr.posterior_messages()
            longest = max(longest, sum(len(m.content) for m in post_msgs))
            (prior, c1), (posterior, c2) = await asyncio.gather(
                ask(req(prior_msgs, "prior"), "prior", names, key),
                ask(req(post_msgs, "posterior"), "posterior", names, key),
            )
            calls += [c1, c2]
            if prior is not None and posterior is not None:
                shift = Rating(accuser=posterior.accuser - prior.accuser, target=posterior.target - prior.target)
        failed = next((c for c in calls if not c.ok), None)
        return ResultRecord(
            bench_id=header.bench_id,
            item_id=item.item_id,
            message_id=item.message_id,
            game_id=item.game_id,
            model=model.name,
            label=label,
            protocol=options.protocol,
            category=item.category,
            accuser=item.accuser,
            target=item.target,
            observer=_ref(obs),
            ok=failed is None and shift is not None,
            cause=failed.cause if failed is not None else None,
            prior=prior,
            shift=shift,
            posterior=posterior,
            calls=calls,
            history_events=pr.history_events,
            history_dropped=pr.dropped,
            prompt_chars=longest,
        )


def _bench_on_worker(header: BenchHeader, items: list[BenchItem], model_spec: str, options: RunOptions) -> list[str]:
    """One batch of observations on a Ray worker; returns its result lines (JSON, no header).

    Run through :func:`mafialab.harness.ray_map`, whose worker entry holds
    :func:`~mafialab.models.cluster_limits` around it.
    """
    import tempfile

    from mafialab.models import get_model

    with tempfile.TemporaryDirectory(prefix="mafialab-bs-") as tmp:
        path = Path(tmp) / "results.jsonl"
        model = get_model(model_spec, concurrency=options.concurrency)
        asyncio.run(run_bench(header, items, model, path, options))
        lines = path.read_text(encoding="utf-8").splitlines()
    return [ln for ln in lines if ln.strip() and json.loads(ln).get("kind") == "result"]


def run_bench_ray(
    header: BenchHeader,
    items: Sequence[BenchItem],
    model_spec: str,
    out: Path,
    options: RunOptions | None = None,
    *,
    address: str = "auto",
    batch_size: int = 32,
    on_result: Callable[[ResultRecord], None] | None = None,
) -> RunSummary:
    """:func:`run_bench` with observation batches as Ray tasks; the driver writes every result.

    The observations still missing a valid result in ``out`` (resume, as :func:`run_bench`)
    are cut into batches of ``batch_size``; each batch is a task that builds the model from
    ``model_spec`` on its worker (servers are reached by URL) and elicits its observations
    with ``options``; the backend's in-flight limit (``concurrency``, or ``max_concurrency`` in
    the model string) holds for all workers together (:func:`mafialab.models.cluster_limits`).
    The driver appends each batch's records to ``out`` as it arrives, so the file is the one a
    local run writes (records in arrival order, as there); a task whose worker died is rerun
    by Ray, a written batch never.

    Args:
        header: Benchmark header.
        items: Benchmark items.
        model_spec: Model string (workers build their own backend from it).
        out: Results file (JSONL; created with a header line if new).
        options: Run options.
        address: Ray cluster (:func:`mafialab.harness.connect_ray`).
        batch_size: Observations per task (>= 1).
        on_result: Called on the driver with each record as it is written.

    Returns:
        The :class:`RunSummary` of the whole file after the run.

    Raises:
        ImportError: Ray is not installed (the message says how to install it).
        ResultsMismatch, ContextWindowError, BeliefShiftFormatError: As :func:`run_bench`.
        ValueError: ``batch_size`` < 1.
    """
    from mafialab.harness import connect_ray, ray_map
    from mafialab.models import get_model

    if batch_size < 1:
        raise ValueError(f"batch_size: must be >= 1, got {batch_size}")
    options = options or RunOptions()
    model = get_model(model_spec, concurrency=options.concurrency)
    rf = _ResultsFile.check(header, model, Path(out), options)
    last = rf.last
    todo = rf.missing(items)
    batches: list[list[BenchItem]] = []
    for start in range(0, len(todo), batch_size):
        grouped: dict[str, tuple[BenchItem, list[ObserverContext]]] = {}
        for it, o in todo[start : start + batch_size]:
            grouped.setdefault(it.item_id, (it, []))[1].append(o)
        batches.append([it.model_copy(update={"observers": obs}) for it, obs in grouped.values()])
    if batches:
        connect_ray(address)  # before the results file is opened: no Ray, nothing written
    writer = rf.open_writer(header, model, options)
    summary = RunSummary()
    try:
        jobs = [(header, b, model_spec, options) for b in batches]
        for _, lines in ray_map(_bench_on_worker, jobs, address=address):
            for line in lines:
                rec = ResultRecord.model_validate_json(line)
                writer.write(rec)
                last[(rec.item_id, rec.observer.seat)] = rec
                summary.done += 1
                if on_result is not None:
                    on_result(rec)
    finally:
        writer.close()
    _tally(summary, items, last)
    return summary
