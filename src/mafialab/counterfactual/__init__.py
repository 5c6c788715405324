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

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.counterfactual._bifurcate import BifurcationEstimate as BifurcationEstimate
from mafialab.counterfactual._bifurcate import BifurcationRun as BifurcationRun
from mafialab.counterfactual._bifurcate import PlannedPoint as PlannedPoint
from mafialab.counterfactual._bifurcate import (
    Sample,
    plan_points,
    run_bifurcation,
)
from mafialab.counterfactual._bifurcate import estimate_bifurcation as estimate_bifurcation
from mafialab.counterfactual._bifurcate import select_variants as select_variants
from mafialab.counterfactual._compare import BatchSummary as BatchSummary
from mafialab.counterfactual._compare import (
    compare_batches,
    rate,
    read_batches,
)
from mafialab.counterfactual._compare import one_batch as one_batch
from mafialab.counterfactual._embed import Embedder as Embedder
from mafialab.counterfactual._embed import OpenAIEmbedder as OpenAIEmbedder
from mafialab.counterfactual._embed import TfidfEmbedder as TfidfEmbedder
from mafialab.counterfactual._embed import farthest_point as farthest_point
from mafialab.counterfactual._embed import make_embedder as make_embedder
from mafialab.counterfactual._embed import mean_pairwise_cosine as mean_pairwise_cosine
from mafialab.counterfactual._fork import (
    Branch,
    ForkBatch,
    SweepRow,
    fork_batch_id,
    run_fork,
    sweep,
)
from mafialab.counterfactual._fork import ForkEstimate as ForkEstimate
from mafialab.counterfactual._fork import branch_specs as branch_specs
from mafialab.counterfactual._fork import estimate_fork as estimate_fork
from mafialab.counterfactual._fork import injected_action as injected_action
from mafialab.counterfactual._fork import prepare as prepare
from mafialab.counterfactual._steps import INTERVENTION_ADAPTER as INTERVENTION_ADAPTER
from mafialab.counterfactual._steps import PUBLIC_KINDS as PUBLIC_KINDS
from mafialab.counterfactual._steps import (
    ForkStep,
    Inject,
    Night,
    PrivateBelief,
    Resample,
    continuation_seed,
    fork_steps,
    inject_vote_text,
    step_after_message,
)
from mafialab.counterfactual._steps import ForkSteps as ForkSteps
from mafialab.counterfactual._steps import Intervention as Intervention
from mafialab.counterfactual._steps import batch_id as batch_id
from mafialab.counterfactual._steps import branch_id as branch_id
from mafialab.counterfactual._steps import intervention_from as intervention_from
from mafialab.counterfactual._steps import parse_vote_text as parse_vote_text
from mafialab.counterfactual._steps import resolve_step as resolve_step
from mafialab.counterfactual._timing import CallTiming as CallTiming
from mafialab.counterfactual._timing import call_timing as call_timing

__all__ = [
    "Branch",
    "ForkBatch",
    "ForkStep",
    "Inject",
    "Night",
    "PrivateBelief",
    "Resample",
    "Sample",
    "SweepRow",
    "compare_batches",
    "continuation_seed",
    "fork_batch_id",
    "fork_steps",
    "inject_vote_text",
    "plan_points",
    "rate",
    "read_batches",
    "run_bifurcation",
    "run_fork",
    "step_after_message",
    "sweep",
]
