"""Counterfactual replay (layer ``counterfactual``): fork a recorded game at a step and intervene.

A fork replays the parent up to a decision (the fork step), changes one thing there (an
answer, a fresh draw, a private belief, a night action) and plays the continuation N times;
each replica is a branch, an ordinary game log with a ``parent`` header block. Builds on
``harness``. The bifurcation experiment (:func:`run_bifurcation`) builds on forks. See ``docs/counterfactual.md``.

Example:
    >>> import asyncio
    >>> from mafialab.counterfactual import Inject, fork_steps, run_fork  # doctest: +SKIP
    >>> batch = asyncio.run(run_fork("runs/g1", at=12, intervention=Inject(target="Casey", text="..."),
    ...                              n=20, agents="scripted", out="forks"))  # doctest: +SKIP
"""

from mafialab.counterfactual._bifurcate import (
    BifurcationEstimate,
    BifurcationRun,
    PlannedPoint,
    Sample,
    estimate_bifurcation,
    plan_points,
    run_bifurcation,
    select_variants,
)
from mafialab.counterfactual._compare import (
    BatchSummary,
    compare_batches,
    one_batch,
    rate,
    read_batches,
)
from mafialab.counterfactual._embed import (
    Embedder,
    OpenAIEmbedder,
    TfidfEmbedder,
    farthest_point,
    make_embedder,
    mean_pairwise_cosine,
)
from mafialab.counterfactual._fork import (
    Branch,
    ForkBatch,
    ForkEstimate,
    SweepRow,
    branch_specs,
    estimate_fork,
    fork_batch_id,
    injected_action,
    prepare,
    run_fork,
    sweep,
)
from mafialab.counterfactual._steps import (
    INTERVENTION_ADAPTER,
    PUBLIC_KINDS,
    ForkStep,
    ForkSteps,
    Inject,
    Intervention,
    Night,
    PrivateBelief,
    Resample,
    batch_id,
    branch_id,
    continuation_seed,
    fork_steps,
    inject_vote_text,
    intervention_from,
    parse_vote_text,
    resolve_step,
    step_after_message,
)
from mafialab.counterfactual._timing import CallTiming, call_timing

__all__ = [
    "BifurcationEstimate",
    "BifurcationRun",
    "Embedder",
    "OpenAIEmbedder",
    "PlannedPoint",
    "Sample",
    "TfidfEmbedder",
    "estimate_bifurcation",
    "farthest_point",
    "make_embedder",
    "mean_pairwise_cosine",
    "plan_points",
    "run_bifurcation",
    "select_variants",
    "INTERVENTION_ADAPTER",
    "PUBLIC_KINDS",
    "BatchSummary",
    "PrivateBelief",
    "Branch",
    "ForkBatch",
    "ForkEstimate",
    "ForkStep",
    "Inject",
    "Intervention",
    "Night",
    "Resample",
    "SweepRow",
    "batch_id",
    "branch_id",
    "branch_specs",
    "compare_batches",
    "continuation_seed",
    "estimate_fork",
    "CallTiming",
    "call_timing",
    "fork_batch_id",
    "ForkSteps",
    "fork_steps",
    "inject_vote_text",
    "injected_action",
    "intervention_from",
    "one_batch",
    "parse_vote_text",
    "prepare",
    "rate",
    "read_batches",
    "resolve_step",
    "run_fork",
    "step_after_message",
    "sweep",
]
