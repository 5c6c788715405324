"""The belief-shift benchmark as the Inspect task ``mafialab/beliefshift``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from mafialab.beliefshift import ResultRecord, RunOptions, build_report, elicit_observation, read_bench
from mafialab.inspect._model import InspectChatModel, to_inspect_message

RESULT_KEY = "result"
"""Key of the observation's result record (JSON) in the score's metadata and the sample's store.

``mafialab beliefshift report`` reads it back from the log."""

TABLE1_KEYS: tuple[str, ...] = tuple(
    f"t1.{team}.{cat}.{who}"
    for team in ("village", "wolf")
    for cat in ("suspect", "accuse")
    for who in ("target", "accuser")
)
"""Metrics of paper Table 1: mean shift of the target / the accuser by accuser team x strength."""

TABLE2_KEYS: tuple[str, ...] = tuple(
    f"t2.{team}.{b}.{who}"
    for team in ("village", "wolf")
    for b in ("trust", "neutral", "distrust")
    for who in ("target", "accuser")
)
"""Metrics of paper Table 2: mean shift by the trust bin of the prior about the accuser x accuser team."""

PRIOR_KEYS: tuple[str, ...] = ("prior.wolf", "prior.village", "prior.separation")
"""Metrics of the prior-discrimination table: mean prior about true wolves, villagers, and their difference."""


def _records(scores: Sequence[SampleScore]) -> list[ResultRecord]:
    out = []
    for s in scores:
        rec = (s.score.metadata or {}).get(RESULT_KEY)
        if isinstance(rec, dict):
            out.append(ResultRecord.model_validate(rec))
    return out


def _quantities(scores: Sequence[SampleScore], keys: Sequence[str]) -> dict[str, float | None]:
    """Means of ``keys`` as ``mafialab beliefshift report`` computes them (one configuration).

    The records go through :func:`mafialab.beliefshift.build_report`, the report's own
    aggregation, so the eval's metrics are the report's model-row means (``None``: no data).
    """
    recs = _records(scores)
    rep = build_report(recs)
    q = next(iter(rep.quantities.values()), {})
    out: dict[str, float | None] = {}
    for k in keys:
        st = q.get(k)
        out[k] = None if st is None or math.isnan(st.mean) else float(st.mean)
    return out


@metric
def table1() -> Metric:
    """Paper Table 1's cells: mean shift of target and accuser by accuser team and strength.

    Keys ``t1.<village|wolf>.<suspect|accuse>.<target|accuser>``; shifts on -3..+3 (anchored)
    or -6..+6 (independent), positive toward wolf; a cell without observations is left out.
    """

    def compute(scores: list[SampleScore]) -> Any:
        return _quantities(scores, TABLE1_KEYS)

    return compute


@metric
def table2() -> Metric:
    """Paper Table 2's cells: mean shift by trust bin of the prior about the accuser and accuser team.

    Keys ``t2.<village|wolf>.<trust|neutral|distrust>.<target|accuser>``; Trust {-3,-2},
    Neutral {-1,0,+1}, Distrust {+2,+3}; a cell without observations is left out.
    """

    def compute(scores: list[SampleScore]) -> Any:
        return _quantities(scores, TABLE2_KEYS)

    return compute


@metric
def prior_discrimination() -> Metric:
    """Mean prior (-3..+3) about players truly on the wolf side and the village side, and wolves - villagers."""

    def compute(scores: list[SampleScore]) -> Any:
        return _quantities(scores, PRIOR_KEYS)

    return compute


@metric
def completion() -> Metric:
    """Share of observations answered validly at every stage (0-1; the report's completion %, / 100)."""

    def compute(scores: list[SampleScore]) -> Any:
        recs = _records(scores)
        return sum(r.ok for r in recs) / len(recs) if recs else 0.0

    return compute


@scorer(metrics=[completion(), prior_discrimination(), table1(), table2()])
def beliefshift_scorer() -> Any:
    """Per-observation values: ``ok`` (1/0) and, when valid, the priors and shifts.

    Value keys ``ok``, ``prior_accuser``, ``prior_target`` (-3..+3), ``shift_accuser``,
    ``shift_target`` (anchored -3..+3, independent -6..+6); the whole result record (as
    ``beliefshift run`` writes it) is in ``metadata["result"]``; ``explanation`` gives the
    failure cause of an observation that is not valid.
    """

    async def score(state: TaskState, target: Target) -> Score:
        rec = ResultRecord.model_validate(state.store.get(RESULT_KEY))
        value: dict[str, float] = {"ok": 1.0 if rec.ok else 0.0}
        if rec.ok and rec.prior is not None and rec.shift is not None:
            value |= {
                "prior_accuser": float(rec.prior.accuser),
                "prior_target": float(rec.prior.target),
                "shift_accuser": float(rec.shift.accuser),
                "shift_target": float(rec.shift.target),
            }
        answer = next((c.text for c in reversed(rec.calls) if c.text), "")
        why = "" if rec.ok else f"failed: {rec.cause} ({', '.join(c.detail for c in rec.calls if c.detail)})"
        return Score(value=value, answer=answer, explanation=why, metadata={RESULT_KEY: rec.model_dump(mode="json")})

    return score


@solver
def elicit(header: Any, items: dict[str, Any], options: RunOptions) -> Solver:
    """Ask the observer of the sample its prior and shift, exactly as ``beliefshift run`` does.

    Calls :func:`mafialab.beliefshift.elicit_observation` with the model under evaluation
    behind :class:`~mafialab.inspect.InspectChatModel`; the record goes to the sample's store
    (key ``result``); the sample's messages become the last stage's conversation and answer
    (anchored: history, prior question, prior answer, message and shift question, shift answer).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        item = items[state.metadata["item_id"]]
        obs = next(o for o in item.observers if o.seat == state.metadata["observer"])
        chat = InspectChatModel(get_model(), context_window=options.context_window)
        rec = await elicit_observation(header, item, obs, chat, options)
        state.store.set(RESULT_KEY, rec.model_dump(mode="json"))
        if chat.outputs:  # the transcript: the last stage's conversation and its answer
            last = chat.outputs[-1]
            state.messages = [to_inspect_message(m) for m in chat.requests[-1].messages]
            if last.choices:
                state.messages.append(last.message)
            state.output = last
        return state

    return solve


@task
def beliefshift(
    bench: str,
    protocol: str = "anchored",
    retries: int = 2,
    max_tokens: int = 1024,
    temperature: float | None = None,
    context_window: int | None = None,
    label: str | None = None,
    seed: int = 0,
) -> Task:
    """The belief-shift benchmark: one sample per (item, observer) of a benchmark file.

    ``inspect eval mafialab/beliefshift --model PROVIDER/MODEL -T bench=BENCH.jsonl
    -T protocol=anchored``. Each sample asks one observer its prior about the accuser and
    the target, then its shift (or, ``independent``, its posterior), with the prompts,
    answer schema, parsing and retries of ``mafialab beliefshift run`` (one shared function).
    Metrics: completion, the prior discrimination and the cells of the paper's Tables 1
    and 2 (model-row means of ``mafialab beliefshift report``, which also reads this
    eval's log). Concurrency is Inspect's (``--max-samples``, ``--max-connections``).

    Args:
        bench: Benchmark file (``mafialab beliefshift freeze``).
        protocol: ``anchored`` (the paper's; prior shown) or ``independent``.
        retries: Extra attempts per stage after an unusable answer (>= 0).
        max_tokens: Generation cap per call.
        temperature: Sampling temperature (``None``: the provider's default).
        context_window: Fit prompts into this many tokens (``None``: no shortening).
        label: Configuration label in reports (default: the Inspect model string).
        seed: Base of the per-call sampling seeds.

    Raises:
        ValueError: Unknown protocol, negative retries, or a window that cannot hold the cap.
        mafialab.beliefshift.BeliefShiftFormatError: Unreadable benchmark file.
    """
    if protocol not in ("anchored", "independent"):
        raise ValueError(f"protocol: expected anchored or independent, got {protocol!r}")
    if int(retries) < 0:
        raise ValueError(f"retries: must be >= 0, got {retries}")
    header, items = read_bench(Path(bench))
    options = RunOptions(
        protocol=protocol,  # type: ignore[arg-type]
        retries=int(retries),
        max_tokens=int(max_tokens),
        temperature=None if temperature is None else float(temperature),
        context_window=None if context_window is None else int(context_window),
        label=label,
        seed=int(seed),
    )
    samples = [
        Sample(
            id=f"{it.item_id}/o{o.seat}",
            input=f"{o.name} ({o.role}) reads: {it.message}",
            metadata={
                "item_id": it.item_id,
                "observer": o.seat,
                "bench_id": header.bench_id,
                "category": it.category,
                "accuser": it.accuser.name,
                "target": it.target.name,
            },
        )
        for it in items
        for o in it.observers
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"beliefshift-{header.bench_id}", location=str(bench)),
        solver=elicit(header, {it.item_id: it for it in items}, options),
        scorer=beliefshift_scorer(),
        metadata={"bench_id": header.bench_id, "protocol": protocol},
    )
