"""The bifurcation experiment (MafiaScope §6): resample a vote, keep diverse variants, fork each.

For each point (a recorded day vote, or a mission game's team vote): draw the voter's answer
K times from its frozen context at temperature T; keep the factual answer, one variant per
distinct answer not yet covered (a day vote's target, no valid vote included; a team vote's
approve or reject, a blank one included), then farthest-point selection by cosine distance
up to M; inject each kept variant and play the game out once. Everything is written as it is
produced (``samples/``, ``points.jsonl``, ``forks.jsonl``, ``forks/``), so an interrupted run
resumes without redoing finished samples or forks. Layout and statistics:
``docs/counterfactual.md``; the report is :func:`mafialab.analysis.bifurcation_report`.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import random
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mafialab._words import count
from mafialab.analysis import game_data, vote_quadrants
from mafialab.analysis import get_method as get_analysis_method
from mafialab.counterfactual._embed import Embedder, farthest_point, make_embedder, mean_pairwise_cosine
from mafialab.counterfactual._fork import (
    AgentBuilder,
    branch_specs,
    estimate_fork,
    fork_batch_id,
    prepare,
    refuse_changed_options,
    run_fork,
)
from mafialab.counterfactual._steps import ForkStep, Inject, Resample, branch_id, fork_steps, resolve_step
from mafialab.counterfactual._timing import CallTiming, call_timing
from mafialab.engine import derive_seed
from mafialab.harness import connect_ray, driver_limits, ray_run, replay_decisions
from mafialab.models import max_samples_per_request
from mafialab.record import (
    FORK_GAMES_DIR,
    FORKS_FILE,
    NO_VOTE,
    PROBES_FILE,
    SAMPLES_DIR,
    BifurcationHeader,
    BifurcationPoint,
    ForkOutcome,
    GameLog,
    JsonlWriter,
    is_bifurcation_dir,
    iter_jsonl,
    iter_probe_records,
    read_bifurcation,
    read_game,
    replace_point,
    write_header,
)
from mafialab.rules import RuleSet

log = logging.getLogger(__name__)

POINT_KINDS = ("vote", "team_vote")
"""Decision kinds a point may be (in the day phase): an elimination game's day vote, a mission game's team vote."""

DEFAULT_RESAMPLES = 500
DEFAULT_KEEP = 20
DEFAULT_TEMPERATURE = 1.2
RANDOM_DRAWS = 200
"""Random draws of ``keep`` samples for the diversity baseline (MafiaScope: 200)."""


@dataclass
class PlannedPoint:
    """A fork point chosen by ``--points``.

    Attributes:
        point_id: ``<quadrant or "point">_<game id>_d<decision>_<voter>``.
        step: The vote's fork step.
        quadrant: Its quadrant (``random`` for a control draw; ``None`` unknown).
        factual_target: The parent's vote target (``None``: no vote).
        factual_text: The parent's vote statement.
        alive: Names alive at the vote.
        factual_choice: A team vote's recorded answer (``approve``/``reject``; ``None``: blank,
            or a day vote).
    """

    point_id: str
    step: ForkStep
    quadrant: str | None
    factual_target: str | None
    factual_text: str
    alive: list[str]
    factual_choice: str | None = None

    @property
    def factual_answer(self) -> str | None:
        """What the factual variant covers in the selection: the choice of a team vote, else the target."""
        return self.factual_choice if self.step.kind == "team_vote" else self.factual_target


@dataclass
class Sample:
    """One resample of a point's vote answer.

    Attributes:
        sample_idx: Index among the point's samples.
        text: The statement.
        target: Vote target name, ``None`` for no valid vote.
        fallback: The agent fell back (no usable answer): left out of counts and selection.
        choice: A team vote's answer (``approve``/``reject``; ``None``: blank, or a day vote).
    """

    sample_idx: int
    text: str
    target: str | None
    fallback: bool = False
    choice: str | None = None

    @property
    def answer(self) -> str | None:
        """What the sample decides: its choice when it has one (a team vote), else its vote target."""
        return self.choice if self.choice is not None else self.target


@dataclass
class BifurcationEstimate:
    """What a run would cost (``--dry-run``).

    Attributes:
        points: Points planned.
        resample_calls: Resample calls still to make.
        forks: Forks still to play, at most: a point forks each kept variant once and keeps at
            most ``min(keep, resamples + 1)`` (the factual answer plus one per distinct resample).
        fork_calls: Estimated model calls of those forks.
        cost_usd: Estimated cost of the forks (the parent's cost per call), ``None`` if unpriced.
        why_empty: Why ``--points`` names no point (``None`` when it names some).
        resample_timing: The measured latency the resample calls are timed with (the
            voters' calls in the parent, or ``--sampler``'s model's).
        fork_timing: The measured latency the forks' calls are timed with (the parent's
            calls, or ``--agents``'s model's).
    """

    points: int
    resample_calls: int
    forks: int
    fork_calls: float
    cost_usd: float | None
    why_empty: str | None = None
    resample_timing: CallTiming | None = None
    fork_timing: CallTiming | None = None

    @property
    def calls(self) -> float:
        """All calls: resamples plus the forks' estimate."""
        return self.resample_calls + self.fork_calls

    @property
    def seconds(self) -> float | None:
        """Time of every call one after another (resamples and forks), ``None`` when a needed latency is unmeasured.

        An upper bound for the forks: a point keeps at most ``min(keep, resamples + 1)``
        variants (the factual one plus one per distinct resample; identical resamples are
        one), each forked once, so it may fork fewer.
        """
        parts = []
        for timing, calls in ((self.resample_timing, self.resample_calls), (self.fork_timing, self.fork_calls)):
            if not calls:
                continue
            secs = timing.seconds(calls) if timing is not None else None
            if secs is None:
                return None
            parts.append(secs)
        return sum(parts)


@dataclass
class BifurcationRun:
    """Result of :func:`run_bifurcation`.

    Attributes:
        out: The bifurcation directory.
        points: Points of the run.
        samples: Samples drawn in this call (resumed samples excluded).
        forks: Forks played in this call.
        errors: Forks that could not be played (``point:variant: why``).
    """

    out: Path
    points: list[str] = field(default_factory=list)
    samples: int = 0
    forks: int = 0
    errors: list[str] = field(default_factory=list)


def _vote_steps(plog: GameLog) -> tuple[list[ForkStep], dict[int, tuple[int | None, str, str | None]]]:
    steps = [s for s in fork_steps(plog) if s.kind in POINT_KINDS and s.phase == "day"]
    _, done = replay_decisions(plog, check=False)
    actions = {r.decision.id: (r.action.target, r.action.text or "", r.action.choice) for r in done}
    return steps, actions


def plan_points(plog: GameLog, spec: str, *, per_quadrant: int | None = None, seed: int = 0) -> list[PlannedPoint]:
    """The points ``--points spec`` names in ``plog``.

    A point is a day vote (elimination games) or a team vote (mission games: the decision
    kinds of :data:`POINT_KINDS`). A team vote has no quadrant (quadrants need an
    elimination vote); ``innocent-votes`` and ``random:N`` draw the town team's team votes.

    Args:
        plog: The parent game.
        spec: Comma-separated decision ids (or ``round:phase:index``), ``innocent-votes``
            or ``random:N``.
        per_quadrant: With ``innocent-votes``: draw this many policy-gap and this many
            perception-gap votes by a shuffle seeded with ``seed``.
        seed: Seed of the draws.

    Returns:
        The points, in decision order (draws keep the drawn order); a step named twice is one point.

    Raises:
        ValueError: A bad spec, an unknown step, a step that is not a day vote, or
            ``random:N`` with N < 1 (the message names ``--points``).
    """
    steps, actions = _vote_steps(plog)
    by_id = {s.id: s for s in steps}
    state_names = [s.name for s in sorted(plog.header.roster, key=lambda r: r.seat)]
    spec = spec.strip()
    quadrant_of: dict[int, str | None] = {}
    innocent: list[int] = []
    gd = game_data(plog)
    vote_decision = {ev.seq: getattr(ev, "decision", None) for ev in plog.events if ev.kind == "vote"}
    for v in vote_quadrants(gd, get_analysis_method("default")):
        d = vote_decision.get(v.vote_seq)
        if d in by_id:
            quadrant_of[d] = v.quadrant
            innocent.append(d)
    mafia = {s.name for s in plog.header.roster if s.team == "mafia"}
    # innocent votes that have no F4 unit (e.g. an unprobed game still has votes)
    for s in steps:
        if s.name not in mafia and s.id not in quadrant_of:
            quadrant_of[s.id] = None
            innocent.append(s.id)
    innocent.sort()
    chosen: list[tuple[int, str | None]]
    if spec == "innocent-votes":
        chosen = [(d, quadrant_of[d]) for d in innocent]
        if per_quadrant is not None:
            rng = random.Random(seed)
            picked: list[tuple[int, str | None]] = []
            for q in ("policy_gap", "perception_gap"):
                pool = [d for d in innocent if quadrant_of[d] == q]
                rng.shuffle(pool)
                picked += [(d, q) for d in pool[:per_quadrant]]
            chosen = picked
    elif spec.startswith("random:"):
        try:
            n = int(spec.split(":", 1)[1])
        except ValueError:
            raise ValueError(f"--points: random:N needs an integer N, got {spec!r}") from None
        if n < 1:
            raise ValueError(f"--points: random:N needs N >= 1, got {n}")
        pool = list(innocent)
        random.Random(seed).shuffle(pool)
        chosen = [(d, "random") for d in pool[:n]]
    else:
        chosen = []
        all_steps = fork_steps(plog)
        for part in (p for p in spec.split(",") if p.strip()):
            step = resolve_step(all_steps, part.strip(), "--points")
            if step.id not in by_id:
                raise ValueError(
                    f"--points: step {part.strip()!r} is a {step.kind} decision, not a day vote or a team vote"
                )
            if all(d != step.id for d, _ in chosen):  # a step named twice is one point, forked once
                chosen.append((step.id, quadrant_of.get(step.id)))
        if not chosen:
            raise ValueError("--points: no decision ids given (or use innocent-votes, random:N)")
    gid = plog.header.game_id
    out = []
    for d, quad in chosen:
        step = by_id[d]
        target, said, choice = actions.get(d, (None, "", None))
        state, _ = prepare(plog, step, Resample(), 0)
        out.append(
            PlannedPoint(
                point_id=f"{quad or 'point'}_{gid}_d{d}_{step.name}",
                step=step,
                quadrant=quad,
                factual_target=state_names[target] if target is not None else None,
                factual_text=said or "",
                alive=[state.names[s] for s in state.alive_seats()],
                factual_choice=choice if step.kind == "team_vote" else None,
            )
        )
    return out


def variant_key(text: str, target: str | None) -> tuple[str, str]:
    """What makes two answers the same variant: the text (runs of whitespace read as one space) and the vote target.

    Two resamples with the same key would be injected as the same answer; they are one variant.
    """
    return " ".join(text.split()), target if target is not None else NO_VOTE


def select_variants(
    emb: np.ndarray,
    factual_target: str | None,
    samples: Sequence[Sample],
    keep: int,
    *,
    factual_text: str | None = None,
) -> list[tuple[int, str]]:
    """Choose the kept variants of a point (MafiaScope §6, step 2), each a distinct answer.

    Identical answers (same :func:`variant_key`) are one variant: only the first sample of
    each distinct answer is a candidate, and a sample identical to the factual answer is
    none. So fewer than ``keep`` variants are kept when the samples hold fewer distinct
    answers (50 identical resamples give the factual variant and at most one other).

    Args:
        emb: Unit rows: row 0 the factual text, row ``1 + i`` the ``i``-th of ``samples``.
        factual_target: The factual vote target (``None``: no vote); for a team vote, the
            factual choice (``None``: blank). A sample's answer is its :attr:`Sample.answer`
            (its choice when it has one, else its target).
        samples: Usable samples (fallbacks removed), in sample order.
        keep: Variants to keep at most, the factual one included (>= 1).
        factual_text: The factual answer's text; samples identical to it are not kept
            (``None``: no sample is compared with it).

    Returns:
        ``(row, stage)`` per kept variant in order: ``(0, "factual")``, then one
        ``target_coverage`` row per vote target (team vote: choice) not yet covered (the first
        sample with it; no valid vote, a blank choice, counts as one of its own), then
        ``farthest`` rows by max-min cosine distance among the distinct answers left.
    """
    kept: list[tuple[int, str]] = [(0, "factual")]
    covered = {factual_target if factual_target is not None else NO_VOTE}
    seen = {variant_key(factual_text, factual_target)} if factual_text is not None else set()
    distinct: list[int] = []  # rows of the first sample of each answer not seen before
    for i, s in enumerate(samples):
        key = variant_key(s.text, s.answer)
        if key not in seen:
            seen.add(key)
            distinct.append(1 + i)
    for r in distinct:
        target = samples[r - 1].answer
        named = target if target is not None else NO_VOTE
        if named not in covered and len(kept) < keep:
            covered.add(named)
            kept.append((r, "target_coverage"))
    rows = {r for r, _ in kept}
    cands = [r for r in distinct if r not in rows]
    for r in farthest_point(emb, [r for r, _ in kept], cands, keep - len(kept)):
        kept.append((r, "farthest"))
    return kept


def _diversity(emb: np.ndarray, kept: Sequence[int], n_samples: int, seed: int, embed_name: str) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    pool = np.arange(1, n_samples + 1)
    k = min(len(kept), len(pool))
    draws = [mean_pairwise_cosine(emb, list(rng.choice(pool, size=k, replace=False))) for _ in range(RANDOM_DRAWS)]
    vals = [d for d in draws if d is not None]
    return {
        "mean_pairwise_cos_selected": mean_pairwise_cosine(emb, kept),
        "mean_pairwise_cos_random": float(np.mean(vals)) if vals else None,
        "random_std": float(np.std(vals)) if vals else None,
        "n_random_draws": len(vals),
        "embed": embed_name,
    }


def _read_samples(path: Path) -> dict[int, Sample]:
    got: dict[int, Sample] = {}
    if path.is_file():
        for _, rec in iter_jsonl(path):
            try:
                s = Sample(
                    int(rec["sample_idx"]), str(rec.get("text") or ""), rec.get("target"), bool(rec.get("fallback")),
                    rec.get("choice"),
                )  # fmt: skip
            except (KeyError, TypeError, ValueError):
                continue
            got[s.sample_idx] = s
    return got


def _params(
    parent: str, points: str, per_quadrant: int | None, seed: int, resamples: int, keep: int, temperature: float,
    embed: str, sampler: str | None, agents: str | None,
) -> dict[str, Any]:  # fmt: skip
    return {
        "parent": parent,
        "points": points,
        "per_quadrant": per_quadrant,
        "seed": seed,
        "resamples": resamples,
        "keep": keep,
        "temperature": temperature,
        "embed": embed,
        "sampler": sampler,
        "agents": agents,
        "variants": "distinct",  # identical resamples are one variant (a run that kept copies is not resumed)
    }


def why_no_points(plog: GameLog, spec: str, *, per_quadrant: int | None = None) -> str:
    """Why ``--points spec`` names no point of ``plog``, in words for the command line.

    ``innocent-votes`` with ``per_quadrant`` draws policy-gap and perception-gap votes only;
    their quadrants need the voter's role assessment (a probe answer) before the vote, so an
    unprobed game has none.
    """
    gid = plog.header.game_id
    steps, _ = _vote_steps(plog)
    if not steps:
        return f"{gid} has no day vote to fork"
    mafia = {s.name for s in plog.header.roster if s.team == "mafia"}
    innocent = [s for s in steps if s.name not in mafia]
    if not innocent:
        return f"every day vote of {gid} was cast by a mafia member (innocent-votes and random:N draw innocent votes)"
    if spec.strip() == "innocent-votes" and per_quadrant is not None and all(s.kind == "team_vote" for s in innocent):
        return (
            f"--per-quadrant draws policy-gap and perception-gap votes; quadrants are not applicable to this rule "
            f"set ({gid} is a mission game: a team vote names no one to eliminate); use innocent-votes without "
            "--per-quadrant, random:N or decision ids"
        )
    if spec.strip() == "innocent-votes" and per_quadrant is not None:
        probed = any(True for _ in iter_probe_records(plog.path, game_id=plog.game_id, warn=False))
        if not probed:
            return (
                f"--per-quadrant draws policy-gap and perception-gap votes, whose quadrants need probe answers "
                f"({PROBES_FILE}) with the voter's role assessment before the vote; {gid} has none: "
                "record games with --probes (e.g. `mafialab play --probes default`), or give decision ids"
            )
        by_id = {s.id for s in innocent}
        vote_decision = {ev.seq: getattr(ev, "decision", None) for ev in plog.events if ev.kind == "vote"}
        quads = Counter(
            v.quadrant
            for v in vote_quadrants(game_data(plog), get_analysis_method("default"))
            if vote_decision.get(v.vote_seq) in by_id
        )
        # no quadrant: no role assessment answered before the vote (or the vote is not a counted one)
        unassessed = len(innocent) - sum(n for q, n in quads.items() if q is not None)
        found = ", ".join(f"{n} {q}" for q, n in sorted((q, n) for q, n in quads.items() if q is not None))
        words = f"none of the {count(len(innocent), 'innocent vote')} of {gid} is a policy or perception gap"
        if found:
            words += f" ({found})"
        if unassessed:
            words += (
                f"{';' if found else ':'} {unassessed} unassessed: quadrants need role_assessment answers "
                "(record with --probes default)"
            )
        return words
    return f"{spec!r} names no day vote of {gid}"


def estimate_bifurcation(
    parent: Path | GameLog,
    points: str,
    *,
    per_quadrant: int | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    keep: int = DEFAULT_KEEP,
    out: Path | None = None,
    sampler: str | None = None,
    agents: str | None = None,
) -> BifurcationEstimate:
    """Calls, cost and time a run would take, minus what ``out`` already holds (``--dry-run``).

    Time: the resample calls at the mean latency of the voters' calls in the parent's
    ``calls.jsonl`` (of ``sampler``'s model when given), the forks' calls at the mean latency
    of the parent's calls (of ``agents``'s model when given). An empty selection says why
    (:func:`why_no_points`). Forks are counted at their upper bound, ``min(keep, resamples + 1)``
    a point (``keep`` 600 with 5 resamples plays 6 forks at most, not 600).
    """
    plog = parent if isinstance(parent, GameLog) else read_game(Path(parent))
    planned = plan_points(plog, points, per_quadrant=per_quadrant, seed=seed)
    if not planned:
        return BifurcationEstimate(0, 0, 0, 0.0, 0.0, why_no_points(plog, points, per_quadrant=per_quadrant))
    done_forks: set[tuple[str, int]] = set()
    if out is not None and is_bifurcation_dir(out):
        done_forks = {(f.point_id, f.variant_idx) for f in read_bifurcation(out).forks}
    resample_calls = forks = 0
    fork_calls = 0.0
    cost: float | None = 0.0
    for p in planned:
        have = len(_read_samples(Path(out) / SAMPLES_DIR / f"{p.point_id}.jsonl")) if out is not None else 0
        resample_calls += max(0, resamples - have)
        # the factual answer plus at most one variant per resample: never more than resamples + 1
        todo = sum(1 for v in range(min(keep, resamples + 1)) if (p.point_id, v) not in done_forks)
        forks += todo
        if todo:
            est = estimate_fork(plog, p.step, n=todo)
            fork_calls += est.calls
            cost = None if cost is None or est.cost_usd is None else cost + est.cost_usd
    voters = None if sampler is not None else {p.step.seat for p in planned}
    return BifurcationEstimate(
        len(planned),
        resample_calls,
        forks,
        fork_calls,
        cost,
        resample_timing=call_timing(plog, seats=voters, spec=sampler),
        fork_timing=call_timing(plog, spec=agents),
    )


async def _draw(agent: Any, decision: Any, view: Any, names: Sequence[str], seed: int, idx: int) -> Sample:
    a = copy.copy(agent)  # shares the model backend; its own seed for this draw
    if hasattr(a, "seed"):
        a.seed = derive_seed(seed, f"bifurcate:sample:{idx}")
    if hasattr(a, "set_call_sink"):
        a.set_call_sink(None)
    action = await a.decide(decision, view)
    target = names[action.target] if action.target is not None else None
    return Sample(idx, action.text or "", target, bool(getattr(action, "fallback", False)), action.choice)


def samples_per_request(agent: Any) -> int:
    """Resamples one request may carry for ``agent`` (>= 1).

    The backend's ``max_n`` when the agent can draw several answers at once (``decide_n``)
    and its backend sends the server's ``n`` (:func:`mafialab.models.max_samples_per_request`),
    else 1.
    """
    model = getattr(agent, "model", None)
    if not callable(getattr(agent, "decide_n", None)) or model is None:
        return 1
    return max_samples_per_request(model)


def sample_chunks(missing: Sequence[int], per_request: int) -> list[list[int]]:
    """Missing sample indices in runs of at most ``per_request`` consecutive indices (in order)."""
    chunks: list[list[int]] = []
    for i in missing:
        if chunks and len(chunks[-1]) < per_request and chunks[-1][-1] == i - 1:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


async def _draw_chunk(
    agent: Any, decision: Any, view: Any, names: Sequence[str], seed: int, idxs: Sequence[int]
) -> list[Sample]:
    """Samples ``idxs`` of a point: one :meth:`decide_n` (one request with the server's ``n``)."""
    if len(idxs) == 1:
        return [await _draw(agent, decision, view, names, seed, idxs[0])]
    a = copy.copy(agent)
    if hasattr(a, "seed"):
        a.seed = derive_seed(seed, f"bifurcate:sample:{idxs[0]}")
    if hasattr(a, "set_call_sink"):
        a.set_call_sink(None)
    actions = await a.decide_n(decision, view, len(idxs))
    return [
        Sample(i, act.text or "", names[act.target] if act.target is not None else None, bool(act.fallback), act.choice)
        for i, act in zip(idxs, actions, strict=True)
    ]


SAMPLES_PER_TASK = 32
"""Resamples per Ray task of ``bifurcate run --ray`` (whole chunks: a chunk larger than this is a task alone)."""


def _task_groups(chunks: Sequence[list[int]], per_task: int) -> list[list[list[int]]]:
    """Consecutive ``chunks`` grouped into tasks of at most ``per_task`` samples (a bigger chunk alone)."""
    groups: list[list[list[int]]] = []
    size = 0
    for c in chunks:
        if groups and size + len(c) <= per_task:
            groups[-1].append(c)
            size += len(c)
        else:
            groups.append([c])
            size = len(c)
    return groups


def _draws_on_worker(
    spec: str, seat: int, rules: RuleSet, seed: int, decision: Any, view: Any, names: tuple[str, ...], psed: int,
    chunks: list[list[int]], parallel: int, build_agent: AgentBuilder | None,
) -> list[Sample]:  # fmt: skip
    """Chunks of a point's resamples on a Ray worker (its own agent, ``parallel`` requests at once)."""
    from mafialab.agents import make_agent

    agent = (build_agent or make_agent)(spec, seat, rules, seed)

    async def go() -> list[Sample]:
        limit = asyncio.Semaphore(max(1, parallel))

        async def one(idxs: list[int]) -> list[Sample]:
            async with limit:
                return await _draw_chunk(agent, decision, view, names, psed, idxs)

        return [s for got in await asyncio.gather(*(one(c) for c in chunks)) for s in got]

    return asyncio.run(go())


async def run_bifurcation(
    parent: Path | GameLog,
    points: str,
    out: Path,
    *,
    per_quadrant: int | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    keep: int = DEFAULT_KEEP,
    temperature: float = DEFAULT_TEMPERATURE,
    embed: str | Embedder = "tfidf",
    sampler: str | None = None,
    agents: str | None = None,
    parallel: int = 8,
    build_agent: AgentBuilder | None = None,
    check_remote: bool = True,
    progress: Callable[[str, int], None] | None = None,
    ray: str | None = None,
) -> BifurcationRun:
    """Run (or resume) the bifurcation experiment on one parent game.

    Args:
        parent: Parent game directory or log (native, branch, or imported MafiaScope game
            whose actions replay).
        points: ``--points`` (see :func:`plan_points`).
        out: The bifurcation directory (created; an existing run with the same parameters
            is resumed).
        per_quadrant: ``--per-quadrant`` for ``innocent-votes``.
        seed: Seed of point draws, of every resample and of the forks (``--seed``).
        resamples: Samples per point, K >= 1 (MafiaScope: 500).
        keep: Kept variants per point, M >= 1, the factual one included (MafiaScope: 20).
        temperature: Sampling temperature of the resamples (MafiaScope: 1.2).
        embed: ``tfidf``, ``openai/<model>?base_url=...`` or an :class:`Embedder`.
        sampler: Agent spec that resamples the voter (default: the voter's roster spec), at
            ``temperature``.
        agents: Agent spec of the forks' continuation (default: the parent's roster).
        parallel: Resample requests, and forks, in flight at once (a request carries up to
            the sampler backend's ``max_n`` resamples with the server's ``n``).
        build_agent: Agent factory (tests).
        check_remote: Preflight remote models before the first call.
        progress: Called with ``("sample" | "fork", count)`` as work finishes.
        ray: Run the resamples and the forks as Ray tasks on this cluster (``auto``,
            ``local`` or an address, :func:`mafialab.harness.connect_ray`): the missing samples'
            chunks (the same chunks as locally, so the same draws) in groups of
            :data:`SAMPLES_PER_TASK` per task, and each kept variant's fork as a task
            (:func:`run_fork` with ``ray``). The driver writes every sample, point, outcome
            and fork directory as it arrives, so the layout and the resume are a local run's;
            the embeddings and the selection stay on the driver.

    Returns:
        What this call did.

    Raises:
        ValueError: Bad parameters, a bad ``--points``, or ``out`` holding a run with other
            parameters (the message names them).
        mafialab.harness.ReplayMismatch: The parent does not replay up to a point.
        ImportError: ``ray`` given and Ray is not installed (nothing is written).
    """
    from mafialab.agents import make_agent

    if resamples < 1 or keep < 1:
        raise ValueError(f"--resamples and --keep must be >= 1 (got {resamples}, {keep})")
    if temperature < 0:
        raise ValueError(f"--temperature must be >= 0, got {temperature}")
    out = Path(out)
    plog = parent if isinstance(parent, GameLog) else read_game(Path(parent))
    embedder = make_embedder(embed) if isinstance(embed, str) else embed
    params = _params(plog.header.game_id, points, per_quadrant, seed, resamples, keep, temperature,
                     embedder.name, sampler, agents)  # fmt: skip
    if is_bifurcation_dir(out):
        refuse_changed_options(out, "a bifurcation run", read_bifurcation(out).header.parameters, params)
    planned = plan_points(plog, points, per_quadrant=per_quadrant, seed=seed)
    if not planned:
        raise ValueError(f"--points: {why_no_points(plog, points, per_quadrant=per_quadrant)}")
    if ray is not None:
        connect_ray(ray)  # before anything is written
    write_header(out, BifurcationHeader(experiment=f"bifurcation of {plog.header.game_id}", parameters=params))
    run = BifurcationRun(out=out, points=[p.point_id for p in planned])
    winner = plog.winner
    done = {(f.point_id, f.variant_idx): f for f in read_bifurcation(out).forks} if (out / FORKS_FILE).exists() else {}
    exp = _Experiment(
        plog=plog, out=out, run=run, seed=seed, resamples=resamples, keep=keep, temperature=temperature,
        embedder=embedder, sampler=sampler, agents=agents, parallel=parallel, build_agent=build_agent,
        build=build_agent or make_agent, progress=progress, ray=ray,
        # on Ray every draw task and fork is submitted at once (the cluster schedules them); a task
        # keeps ``parallel`` requests in flight on its worker
        limit=asyncio.Semaphore(max(1, parallel) if ray is None else 1 << 30),
        checked=not check_remote,
        mafia=sorted(s.name for s in plog.header.roster if s.team == "mafia"),
        parent_winner=winner if winner in ("town", "mafia") else None,
    )  # fmt: skip
    # on Ray the driver's own calls (the preflight, the embeddings) share the cluster's per-backend
    # limits with the workers' calls
    with driver_limits(ray):
        for p in planned:
            have = await exp.resample(p)  # 1. resample (resuming what samples/<point>.jsonl already holds)
            variants = await exp.select(p, have)  # 2. select
            # 3. fork each kept variant once
            await asyncio.gather(*(exp.fork(p, *v) for v in variants if (p.point_id, v[0]) not in done))
    return run


_Variant = tuple[int, str, int | None, str, str, str | None, int]
"""A kept variant of a point: index, selection stage, sample index (``None``: the factual answer),
source (``factual``/``sampled``), text, vote target (team vote: choice), and how many samples it stands for."""


@dataclass
class _Experiment:
    """One :func:`run_bifurcation` call's settings and shared state, and its three steps per point."""

    plog: GameLog
    out: Path
    run: BifurcationRun
    seed: int
    resamples: int
    keep: int
    temperature: float
    embedder: Embedder
    sampler: str | None
    agents: str | None
    parallel: int
    build_agent: AgentBuilder | None
    build: AgentBuilder
    progress: Callable[[str, int], None] | None
    ray: str | None
    limit: asyncio.Semaphore
    checked: bool
    """Whether remote models were preflighted (or need not be)."""
    mafia: list[str]
    parent_winner: str | None

    async def resample(self, p: PlannedPoint) -> dict[int, Sample]:
        """Every sample of ``p``: those ``samples/<point>.jsonl`` holds, and the missing ones drawn and written."""
        from mafialab.harness import preflight

        spath = self.out / SAMPLES_DIR / f"{p.point_id}.jsonl"
        have = _read_samples(spath)
        missing = [i for i in range(self.resamples) if i not in have]
        if not missing:
            return have
        plog, seed, ray = self.plog, self.seed, self.ray
        spec = branch_specs(plog, agents=self.sampler, temperature=self.temperature)[p.step.seat]
        state, _ = prepare(plog, p.step, Resample(), 0)
        decision = next(d for d in state.pending() if d.id == p.step.id)
        view = state.view(p.step.seat)
        agent = self.build(spec, p.step.seat, state.rules, seed)
        if not self.checked:
            await preflight([agent])
            self.checked = True
        psed = derive_seed(seed, f"bifurcate:{p.point_id}")
        names = tuple(state.names)

        async def one(idxs: list[int]) -> list[Sample]:
            async with self.limit:
                return await _draw_chunk(agent, decision, view, names, psed, idxs)

        # a backend that draws n answers per request gets one request per chunk; a chunk is
        # written when it is complete, so an interruption never loses a finished sample
        chunks = sample_chunks(missing, samples_per_request(agent))
        if ray is None:
            draws = [one(c) for c in chunks]
        else:  # groups of chunks as Ray tasks (the same chunks, so the same draws); written here
            draws = [
                ray_run(_draws_on_worker, spec, p.step.seat, state.rules, seed, decision, view,
                        names, psed, g, self.parallel, self.build_agent, address=ray)
                for g in _task_groups(chunks, SAMPLES_PER_TASK)
            ]  # fmt: skip
        with JsonlWriter(spath, clock=None) as w:
            for fut in asyncio.as_completed(draws):
                for s in await fut:
                    rec = {"sample_idx": s.sample_idx, "text": s.text, "target": s.target, "fallback": s.fallback}
                    if s.choice is not None:  # a team vote's answer (day votes' lines read as before)
                        rec["choice"] = s.choice
                    w.write(rec)
                    have[s.sample_idx] = s
                    self.run.samples += 1
                    if self.progress is not None:
                        self.progress("sample", 1)
        return have

    async def select(self, p: PlannedPoint, have: dict[int, Sample]) -> list[_Variant]:
        """Keep the most diverse answers of ``p``'s usable samples; describe the point (written again)."""
        samples = [have[i] for i in sorted(have) if i < self.resamples and not have[i].fallback]
        counts = Counter(s.answer if s.answer is not None else NO_VOTE for s in samples)
        emb = await self.embedder.embed([p.factual_text, *[s.text for s in samples]])
        kept = select_variants(emb, p.factual_answer, samples, self.keep, factual_text=p.factual_text)
        same = Counter(variant_key(s.text, s.answer) for s in samples)  # samples each kept variant stands for
        team_vote = p.step.kind == "team_vote"
        # a secret team vote has no text: its variants differ by the choice alone, not measured by embeddings
        wordless = team_vote and not any(t.strip() for t in [p.factual_text, *(s.text for s in samples)])
        diversity = None if wordless else _diversity(emb, [r for r, _ in kept], len(samples), self.seed,
                                                     self.embedder.name)  # fmt: skip
        point = BifurcationPoint(
            point_id=p.point_id,
            game_id=self.plog.header.game_id,
            decision=p.step.id,
            round=p.step.round,
            voter=p.step.name,
            quadrant=p.quadrant,
            factual_target=p.factual_target,
            parent_winner=self.parent_winner,  # type: ignore[arg-type]
            mafia=self.mafia,
            alive=p.alive,
            target_counts=None if team_vote else dict(counts),
            diversity=diversity,
            extra={"fallback_samples": sum(1 for s in have.values() if s.fallback)},
        )
        if team_vote:
            point.kind, point.factual_choice, point.choice_counts = p.step.kind, p.factual_choice, dict(counts)
            point.factual_passed = proposal_passed(self.plog, p.step.id)
        replace_point(self.out, point)  # a resumed run describes the point again: one line per point
        variants: list[_Variant] = []
        for v, (row, stage) in enumerate(kept):
            if row == 0:
                text, answer, sidx, source = p.factual_text, p.factual_answer, None, "factual"
            else:
                s = samples[row - 1]
                text, answer, sidx, source = s.text, s.answer, s.sample_idx, "sampled"
            variants.append((v, stage, sidx, source, text, answer, same[variant_key(text, answer)]))
        return variants

    async def fork(
        self, p: PlannedPoint, v: int, stage: str, sidx: int | None, source: str, text: str, answer: str | None,
        n_same: int,
    ) -> None:  # fmt: skip
        """Fork kept variant ``v`` of ``p`` and append its outcome (a fork finished before an interruption is kept)."""
        plog, seed, agents, out = self.plog, self.seed, self.agents, self.out
        forks_dir = out / FORK_GAMES_DIR
        team_vote = p.step.kind == "team_vote"
        target, choice = (None, answer) if team_vote else (answer, None)
        if team_vote:  # a blank answer (``None``) casts no vote where the rules allow it
            iv = Inject(choice=choice, text=text or None, no_vote=choice is None)
        else:
            iv = Inject(target=target, text=text, no_vote=target is None)
        # each kept variant forks with its own seed (kept variants are distinct answers)
        fseed = derive_seed(seed, f"bifurcate:fork:{p.point_id}:{v}") % (2**31)
        bid = branch_id(plog.header.game_id, fork_batch_id(plog, p.step.id, iv, seed=fseed, agents=agents), 0)
        bdir = forks_dir / bid
        outcome = ForkOutcome(
            point_id=p.point_id, variant_idx=v, source=source, stage=stage, sample_idx=sidx,  # type: ignore[arg-type]
            text=text, vote_target=target, fork_id=bid, count=n_same, choice=choice,
        )  # fmt: skip
        async with self.limit:
            if bdir.exists():
                old = read_game(bdir)
                if old.winner is not None:  # finished before an interruption: keep it
                    outcome.winner, outcome.rounds = old.winner, _rounds(old)  # type: ignore[assignment]
                    if team_vote:
                        outcome.proposal_passed = proposal_passed(old, p.step.id)
                    _append(out, outcome)
                    return
                log.info("%s: unfinished fork from an interrupted run, played again", bdir)
                shutil.rmtree(bdir)
            try:
                batch = await run_fork(
                    plog, p.step, iv, n=1, seed=fseed, agents=agents, out=forks_dir,
                    build_agent=self.build_agent, check_remote=False, ray=self.ray,
                )  # fmt: skip
            except ValueError as err:
                outcome.error = str(err)
                self.run.errors.append(f"{p.point_id}:{v}: {err}")
            else:
                b = batch.branches[0]
                outcome.winner = b.winner
                played = read_game(b.path) if b.path is not None else None
                outcome.rounds = _rounds(played) if played is not None else None
                if team_vote and played is not None:
                    outcome.proposal_passed = proposal_passed(played, p.step.id)
                self.run.forks += 1
            _append(out, outcome)
            if self.progress is not None:
                self.progress("fork", 1)


def proposal_passed(glog: GameLog, decision: int) -> bool | None:
    """Whether the team proposal voted on at team-vote ``decision`` of ``glog`` passed.

    Read from the first ``team_vote_tally`` event after that decision's ``team_vote`` event
    (its ``approved``); ``None`` when the game has neither (not played that far).
    """
    voted = False
    for ev in glog.events:
        if ev.kind == "team_vote" and getattr(ev, "decision", None) == decision:
            voted = True
        elif voted and ev.kind == "team_vote_tally":
            return bool(ev.approved)  # type: ignore[attr-defined]
    return None


def _rounds(glog: GameLog) -> int | None:
    end = next((e for e in reversed(glog.events) if e.kind == "game_end"), None)
    return getattr(end, "rounds", None) if end is not None else None


def _append(out: Path, outcome: ForkOutcome) -> None:
    with JsonlWriter(out / FORKS_FILE, clock=None) as w:
        w.write(outcome)
