"""Forking a recorded game at a step: replay the prefix, intervene, play the continuation N times."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from mafialab._words import count
from mafialab.agents import Agent, is_model_spec, make_agent, make_llm_agent
from mafialab.counterfactual._steps import (
    ForkStep,
    Inject,
    Intervention,
    Night,
    PrivateBelief,
    Resample,
    batch_id,
    branch_id,
    continuation_seed,
    fork_steps,
    resolve_step,
)
from mafialab.counterfactual._timing import call_timing
from mafialab.engine import Action, Decision, Event, GameState, PlayerView, check_action
from mafialab.harness import (
    connect_ray,
    driver_limits,
    play_game,
    ray_run,
    read_game_files,
    replay,
    write_game_files,
)
from mafialab.models import (
    ChatRequest,
    ChatResponse,
    ModelPool,
    complete_n,
    max_samples_per_request,
    parse_model_spec,
)
from mafialab.probes import GameSetup
from mafialab.record import (
    CALLS_FILE,
    GAME_FILE,
    PARTIAL_DIR,
    PROBES_FILE,
    GameLog,
    ParentInfo,
    PriceTable,
    iter_call_records,
    iter_probe_records,
    person_seats,
    prepend_records,
    probe_sort_key,
    read_game,
    read_header,
)
from mafialab.rules import RuleSet, Team

log = logging.getLogger(__name__)

AgentBuilder = Callable[[str, int, RuleSet, int], Agent]
"""``build(spec, seat, rules, continuation_seed) -> Agent`` (default :func:`mafialab.agents.make_agent`)."""


@dataclass
class Branch:
    """One replica of a fork.

    Attributes:
        game_id: ``<parent>~<batch>-<replica>``.
        replica: Replica number (0-based).
        continuation_seed: Seed of the continuation.
        winner: Winning team, or ``None`` if the branch did not finish.
        path: The branch's game directory (``None`` when not written).
        decisions: Decisions played in the continuation.
        fallbacks: Continuation decisions settled by a fallback.
        degraded: Whether the integrity gate marked the branch degraded.
        applied: Whether the intervention took effect. Always true but for a ``--night``
            override, which takes the seat's next night action after the step: when the game
            ends first, the branch is only a resample of the parent (the command warns).
    """

    game_id: str
    replica: int
    continuation_seed: int
    winner: Team | None
    path: Path | None = None
    decisions: int = 0
    fallbacks: int = 0
    degraded: bool = False
    applied: bool = True


@dataclass
class ForkBatch:
    """The N replicas of one fork command.

    Attributes:
        parent_id: Parent game id.
        root_id: Root game id (the first ancestor that is not a branch).
        step: The fork step.
        intervention: What was changed.
        seed: The ``--seed`` of the command.
        batch: Batch id.
        branches: One per replica, in replica order.
        resumed: How many of ``branches`` were already in ``out`` (written by an earlier,
            interrupted or shorter, run of the same batch) and were read back, not played.
    """

    parent_id: str
    root_id: str
    step: ForkStep
    intervention: Intervention
    seed: int
    batch: str
    branches: list[Branch] = field(default_factory=list)
    resumed: int = 0

    def wins(self, team: Team) -> int:
        """Branches won by ``team``."""
        return sum(1 for b in self.branches if b.winner == team)

    @property
    def finished(self) -> int:
        """Branches that reached a winner."""
        return sum(1 for b in self.branches if b.winner is not None)


@dataclass
class ForkEstimate:
    """What a fork command would cost, from the parent's ``calls.jsonl``.

    Attributes:
        branches: Replicas to play.
        calls_per_branch: Estimated model calls per branch (game decisions after the step,
            plus probe calls at the parent's probe rate when probing).
        calls: ``calls_per_branch * branches``.
        cost_usd: Estimated cost (the parent's cost per call times the calls), ``None``
            when the parent's calls carry no price.
        basis: How the estimate was made, in words.
        seconds: Estimated time of the calls one after another (``calls`` times the measured
            mean latency), ``None`` when no latency was measured.
        time_basis: Where the latency comes from (:class:`~mafialab.counterfactual.CallTiming`).
    """

    branches: int
    calls_per_branch: float
    calls: float
    cost_usd: float | None
    basis: str
    seconds: float | None = None
    time_basis: str = ""


class _Answering:
    """Wraps an agent: answers chosen decisions with fixed actions, delegates the rest."""

    def __init__(self, inner: Agent, pick: Callable[[Decision], Action | None]):
        self.inner = inner
        self.label = inner.label
        self._pick = pick

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        a = self._pick(decision)
        if a is not None:
            return a
        return await self.inner.decide(decision, view)

    def __getattr__(self, name: str) -> Any:  # probe, set_call_sink, describe, persona …
        return getattr(self.inner, name)


class _Primed:
    """A backend that answers one request with an answer drawn ahead, and delegates the rest.

    Fork replicas that resample the same frozen context ask the same first request; their
    answers are drawn together (:func:`mafialab.models.complete_n`, the server's ``n``) and
    each replica's backend is primed with its own. The primed answer is used only for a
    request whose messages and schema equal the drawn one (first attempt of the fork
    decision), once; everything else (retries, later decisions, probes) reaches the backend.
    """

    def __init__(self, inner: Any, request: ChatRequest, answer: ChatResponse):
        self.inner = inner
        self.name = inner.name
        self.context_window = inner.context_window
        self.calls_network = inner.calls_network
        self.counts_tokens = inner.counts_tokens
        self._request = request
        self._answer: ChatResponse | None = answer

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))

    async def chat(self, request: ChatRequest) -> ChatResponse:
        a = self._answer
        if (
            a is not None
            and request.meta.get("attempt") == 1
            and request.messages == self._request.messages
            and request.json_schema == self._request.json_schema
        ):
            self._answer = None
            return a
        return await self.inner.chat(request)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def _draw_ahead(
    agent: Any, state: GameState, step: ForkStep, k: int
) -> tuple[ChatRequest, list[ChatResponse]] | None:
    """The fork decision's first answers for ``k`` replicas in as few requests as the backend allows.

    ``None`` when the agent or its backend draws one answer per request.
    """
    model = getattr(agent, "model", None)
    if k < 2 or model is None or not callable(getattr(agent, "first_request", None)):
        return None
    if max_samples_per_request(model) < 2:
        return None
    request = agent.first_request(_pending(state, step), state.view(step.seat))
    return request, await complete_n(model, request, k)


def _with_temperature(spec: str, temperature: float | None) -> str:
    if temperature is None or not is_model_spec(spec):
        return spec
    model, given = parse_model_spec(spec)
    opts = {"temperature": temperature, **given}
    return f"{model}?{urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in opts.items()})}"


def branch_specs(
    parent: GameLog, agents: str | None = None, seats: dict[int, str] | None = None, temperature: float | None = None
) -> list[str]:
    """Agent spec per seat for the continuation: ``seats`` over ``agents`` over the parent's roster.

    Raises:
        ValueError: A seat override out of range.
    """
    roster = sorted(parent.header.roster, key=lambda s: s.seat)
    specs = [agents or s.agent for s in roster]
    for seat, spec in (seats or {}).items():
        if not 0 <= seat < len(specs):
            raise ValueError(f"--seat: seat {seat} out of range 0..{len(specs) - 1}")
        specs[seat] = spec
    return [_with_temperature(s, temperature) for s in specs]


def fork_batch_id(
    parent: GameLog,
    step: int,
    intervention: Intervention | None = None,
    *,
    seed: int = 0,
    agents: str | None = None,
    seats: dict[int, str] | None = None,
    temperature: float | None = None,
) -> str:
    """The batch id :func:`run_fork` gives a fork with these options (before anything is played).

    :func:`batch_id` over the parent id, the step, the intervention, ``seed`` and the
    continuation's agent spec per seat (:func:`branch_specs`); the specs are left out when
    they are the parent's roster, so such a batch keeps the id it had before agents were part
    of it. Two forks that differ in their agents are two batches.

    Raises:
        ValueError: A seat override out of range.
    """
    iv: Intervention = intervention if intervention is not None else Resample()
    return _batch(parent, step, iv, seed, branch_specs(parent, agents, seats, temperature))


def _batch(parent: GameLog, step: int, iv: Intervention, seed: int, specs: Sequence[str]) -> str:
    roster = [s.agent for s in sorted(parent.header.roster, key=lambda s: s.seat)]
    return batch_id(parent.header.game_id, step, iv, seed, None if list(specs) == roster else specs)


def refuse_changed_options(where: Path, what: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Refuse to resume ``what`` in ``where`` with options other than those it was started with.

    Args:
        where: The output folder (the message starts with it, so the command line names it
            ``--out``).
        what: What the folder holds, e.g. ``"a bifurcation run"``.
        old: The options recorded by the earlier run (name → value).
        new: This run's options; a name missing from ``old`` counts as changed.

    Raises:
        ValueError: Some option differs; the message names every such option.
    """
    diff = sorted(k for k in new if old.get(k) != new[k])
    if diff:
        raise ValueError(
            f"{where}: holds {what} with other parameters ({', '.join(diff)}); "
            "resume with the same command or choose another --out"
        )


def _read_branch(glog: GameLog, replica: int, step: ForkStep, iv: Intervention) -> Branch:
    """A finished branch on disk as :func:`_play_branch` returned it when it was played."""
    cont = [e for e in glog.events if (d := getattr(e, "decision", None)) is not None and d >= step.id]
    fallbacks = sum(1 for e in cont if getattr(e, "fallback", False))
    status = glog.status
    applied = True
    if isinstance(iv, Night):  # the override takes the seat's first night action after the step
        applied = any(e.kind == "night_action" and getattr(e, "seat", None) == iv.seat for e in cont)
    parent = glog.header.parent
    cseed = parent.continuation_seed if parent is not None else None
    return Branch(
        game_id=glog.header.game_id,
        replica=replica,
        continuation_seed=cseed if cseed is not None else 0,
        winner=glog.winner,  # type: ignore[arg-type]
        path=glog.path,
        decisions=status.decisions if status is not None else len(cont),
        fallbacks=status.fallbacks if status is not None else fallbacks,
        degraded=bool(status is not None and status.degraded),
        applied=applied,
    )


def _finished_branches(
    out: Path, pid: str, batch: str, replicas: Sequence[int], step: ForkStep, iv: Intervention, options: dict[str, Any]
) -> dict[int, Branch]:
    """The replicas of ``batch`` already in ``out``; clears what an interrupted run left half-written.

    A branch is played into ``out/.partial/<batch>/<id>/`` and renamed to ``out/<id>/`` once its
    files are all written, so ``out/<id>/game.jsonl`` is a finished branch. A leftover in
    ``.partial`` is removed (the replica is played again), and so is a branch folder of an
    older mafialab whose game never ended.

    Raises:
        ValueError: A finished branch of the batch was played with other ``options``, or a
            folder with a branch's name holds files but no game log.
    """
    done: dict[int, Branch] = {}
    for r in replicas:
        gid = branch_id(pid, batch, r)
        stale = out / PARTIAL_DIR / batch / gid
        if stale.exists():
            log.info("%s: half-written branch of an interrupted run, played again", stale)
            shutil.rmtree(stale)
            _drop_staging(stale.parent)
        final = out / gid
        if (final / GAME_FILE).is_file():
            fork = read_header(final).meta.get("fork")
            old = fork.get("options") if isinstance(fork, dict) else None
            if isinstance(old, dict):  # branches of older mafialab versions recorded none
                refuse_changed_options(out, f"fork batch {batch}", old, options)
            glog = read_game(final, warn=False)
            if any(e.kind == "game_end" for e in glog.events):
                done[r] = _read_branch(glog, r, step, iv)
                continue
            log.info("%s: unfinished branch of an interrupted run, played again", final)
            shutil.rmtree(final)
        elif final.is_dir():
            if any(final.iterdir()):
                raise ValueError(f"out: {final} holds files but no {GAME_FILE}; move it away or choose another --out")
            final.rmdir()
    return done


def _make_staging(staging: Path, game_id: str) -> None:
    """Create ``staging/<game_id>/`` for a branch about to be written.

    Another run into the same folder removes ``staging`` when it finds it empty
    (:func:`_drop_staging`); a creation that loses that race is tried again.
    """
    for _ in range(5):
        try:
            (staging / game_id).mkdir(parents=True, exist_ok=True)
            return
        except FileNotFoundError:  # ``staging`` removed between its creation and the branch's
            continue
    (staging / game_id).mkdir(parents=True, exist_ok=True)


def _drop_staging(staging: Path) -> None:
    """Remove a batch's staging folder and ``.partial`` when no branch is being written there.

    Each batch stages in its own ``.partial/<batch>/``, so jobs of other batches writing into
    the same folder at once (the fork API) never lose their staging folder to this one.
    """
    for folder in (staging, staging.parent):
        with contextlib.suppress(OSError):  # missing, or a branch is still in it
            folder.rmdir()


def _move_into_place(staged: Path, final: Path) -> Path:
    """Rename a fully written branch folder from ``.partial`` to its place (one atomic step).

    Raises:
        ValueError: ``final`` appeared meanwhile (another run of the same batch into the same folder).
    """
    try:
        os.rename(staged, final)  # refused when ``final`` exists and is not empty
    except OSError as err:
        raise ValueError(f"out: cannot move {staged} to {final} ({err.strerror or err})") from None
    return final


def _copy_prefix_probes(plog: GameLog, path: Path, game_id: str, prefix_len: int) -> int:
    """Put the parent's probe records of the prefix (``after_seq`` within it) first in the branch's ``probes.jsonl``.

    The belief trajectory of a branch then starts where the parent's did. Returns the
    number of records copied (0 when the parent was not probed).
    """
    head = sorted(
        (
            {**r, "game_id": game_id}
            for _, r in iter_probe_records(plog.path, game_id=plog.game_id)  # another game's records: skipped, named
            if r.get("kind") == "probe" and int(r.get("after_seq") or 0) <= prefix_len
        ),
        key=probe_sort_key,
    )
    if not head:
        return 0
    prepend_records(path / PROBES_FILE, head)
    return len(head)


def _root(log_: GameLog) -> str:
    p = log_.header.parent
    return p.root if p is not None else log_.header.game_id


def _pending(state: GameState, step: ForkStep) -> Decision:
    d = next((x for x in state.pending() if x.id == step.id), None)
    if d is None:  # pragma: no cover - replay(upto=step) always leaves the step pending
        raise ValueError(f"--at: decision {step.id} is not pending after the replay")
    return d


def injected_action(state: GameState, decision: Decision, iv: Inject) -> Action:
    """The action ``iv`` stands for at ``decision``, checked against the rules.

    A target that is unknown, dead or the voter casts no vote where the decision allows
    one (``day.no_vote``), as MafiaScope's engine counts it.

    Raises:
        ValueError: The answer does not fit the decision (the message says why).
    """
    target: int | None = None
    if iv.choice is not None and not decision.choices:
        takes = "a target" if decision.wants_target else "text"
        raise ValueError(
            f"--inject: decision {decision.id} ({decision.kind}) has no choice (it takes {takes}); "
            "a choice answers a team vote or a mission card"
        )
    if decision.wants_target:
        if iv.target is not None and not iv.no_vote:
            seat = state.names.index(iv.target) if iv.target in state.names else None
            if seat is not None and seat in decision.options:
                target = seat
            elif not decision.no_vote:
                raise ValueError(
                    f"--inject: target {iv.target!r} is not a legal option of decision {decision.id} "
                    f"({', '.join(state.names[s] for s in decision.options)})"
                )
        elif not decision.no_vote:
            raise ValueError(
                f"--inject: decision {decision.id} ({decision.kind}) needs a target; {state.rules.id} has no no-vote"
            )
    elif iv.target is not None:
        what = f"one of {', '.join(decision.choices)}" if decision.choices else "text"
        raise ValueError(f"--inject: decision {decision.id} ({decision.kind}) takes {what}, not a target")
    if decision.choices and iv.choice is None and not decision.no_vote:
        raise ValueError(
            f"--inject: decision {decision.id} ({decision.kind}) needs a choice: one of {', '.join(decision.choices)}"
        )
    text = iv.text
    if text is not None:
        text = text[: decision.max_chars]
    if not decision.needs_text and decision.kind != "vote":
        text = None
    a = Action(decision=decision.id, seat=decision.seat, target=target, text=text, choice=iv.choice)
    why = check_action(decision, a)
    if why is not None:
        raise ValueError(f"--inject: decision {decision.id} ({decision.kind}): {why}")
    return a


def prepare(parent: GameLog, step: ForkStep, iv: Intervention, cseed: int) -> tuple[GameState, list[Event]]:
    """The state at ``step`` (prefix replayed, streams reseeded, a belief note added) and the prefix.

    Returns:
        ``(state, prefix)``: the prefix events carry the parent's clock fields where the
        parent is a native log.

    Raises:
        ReplayMismatch: The parent does not replay up to the step.
        ValueError: The intervention does not fit the step or the game.
    """
    state = replay(parent, upto=step.id)
    n = len(state.events)
    if parent.header.source == "mafialab":
        prefix = [ev.model_copy(update={"ts": p.ts}) for ev, p in zip(state.events, parent.events[:n], strict=True)]
    else:
        prefix = list(state.events)
    state.reseed(cseed)
    d = _pending(state, step)
    if isinstance(iv, Inject):
        injected_action(state, d, iv)
    elif isinstance(iv, Night):
        for s, what in ((iv.seat, "seat"), (iv.target, "target")):
            if not 0 <= s < state.n_seats:
                raise ValueError(f"--night: {what} {s} out of range 0..{state.n_seats - 1}")
        for s, what in ((iv.seat, "seat"), (iv.target, "target")):
            if not state.alive[s]:
                raise ValueError(f"--night: {what} {s} ({state.names[s]}) is dead at step {d.id}")
        ability = state.rules.role(state.roles[iv.seat]).ability
        if ability is None:
            who = f"{iv.seat} ({state.names[iv.seat]}, {state.roles[iv.seat]})"
            raise ValueError(f"--night: seat {who} has no night action to override")
        # a target that is never legal, whatever the night: refused before anything is played
        never = None
        if iv.target == iv.seat and not (ability == "protect" and state.rules.night.protect_self):
            never = "the seat itself"
        elif ability == "kill" and state.teams[iv.target] == state.teams[iv.seat]:
            never = "a teammate"
        if never is not None:
            raise ValueError(
                f"--night: {state.names[iv.target]} is {never}, never a legal {ability} target for seat "
                f"{iv.seat} ({state.names[iv.seat]}, {state.roles[iv.seat]})"
            )
        if d.seat == iv.seat and d.kind in ("kill", "protect", "investigate") and iv.target not in d.options:
            raise ValueError(f"--night: target {state.names[iv.target]} is not a legal {d.kind} target at step {d.id}")
    elif isinstance(iv, PrivateBelief):
        if not 0 <= iv.seat < state.n_seats:
            raise ValueError(f"--belief: seat {iv.seat} out of range 0..{state.n_seats - 1}")
        if not state.alive[iv.seat]:
            raise ValueError(f"--belief: seat {iv.seat} ({state.names[iv.seat]}) is dead at step {d.id}")
        state.add_private_note(iv.seat, iv.text)
    return state, prefix


def _wrap(
    agents: list[Agent], step: ForkStep, iv: Intervention, state: GameState
) -> tuple[list[Agent], Callable[[], bool]]:
    """The seat agents with the intervention in place, and a check of whether it took effect."""
    out = list(agents)
    if isinstance(iv, Inject):
        action = injected_action(state, _pending(state, step), iv)
        out[step.seat] = _Answering(agents[step.seat], lambda d: action if d.id == step.id else None)
    elif isinstance(iv, Night):
        used: list[int] = []

        def pick(d: Decision) -> Action | None:
            if used or d.id < step.id or d.kind not in ("kill", "protect", "investigate"):
                return None
            used.append(d.id)
            return Action(decision=d.id, seat=d.seat, target=iv.target)

        out[iv.seat] = _Answering(agents[iv.seat], pick)
        return out, lambda: bool(used)
    return out, lambda: True


@dataclass
class _BranchJob:
    """Everything one replica needs (picklable: it travels to a Ray worker)."""

    plog: GameLog
    step: ForkStep
    iv: Intervention
    specs: list[str]
    seed: int
    batch: str
    root: str
    meta: dict[str, Any]
    replica: int
    probes: str | None
    prices: PriceTable | None
    primed: tuple[ChatRequest, ChatResponse] | None  # the fork decision's answer drawn ahead


async def _play_branch(job: _BranchJob, out: Path | None, build: AgentBuilder) -> tuple[Branch, int]:
    """Play one replica into ``out/<branch id>/``; returns the branch and the length of its prefix."""
    plog, step, iv = job.plog, job.step, job.iv
    cseed = continuation_seed(plog.header.seed, step.id, iv, job.seed, job.replica)
    state, prefix = prepare(plog, step, iv, cseed)
    seat_agents = [build(job.specs[s], s, state.rules, cseed) for s in range(state.n_seats)]
    primed = getattr(seat_agents[step.seat], "model", None)
    if job.primed is not None and primed is not None:
        seat_agents[step.seat].model = _Primed(primed, *job.primed)  # type: ignore[attr-defined]
    wrapped, applied = _wrap(seat_agents, step, iv, state)
    gid = branch_id(plog.header.game_id, job.batch, job.replica)
    # a replica played without a folder (nothing is written) is not probed
    setup = GameSetup.of(job.probes if out is not None else None)
    info = ParentInfo(
        game_id=plog.header.game_id,
        step=step.id,
        intervention=iv.model_dump(),
        batch=job.batch,
        replica=job.replica,
        continuation_seed=cseed,
        seed=job.seed,
        root=job.root,
        prefix="replayed",
    )
    res = await play_game(
        state.rules,
        wrapped,
        plog.header.seed,
        out=out,
        game_id=gid,
        observers=setup.observers(state.rules, cseed, wrapped, out, game_id=gid),
        meta=job.meta,
        prices=job.prices,
        check_remote=False,
        state=state,
        prefix=prefix,
        parent=info,
    )
    branch = Branch(
        game_id=gid,
        replica=job.replica,
        continuation_seed=cseed,
        winner=res.winner,
        path=res.path,
        decisions=res.decisions,
        fallbacks=res.fallbacks,
        degraded=res.degraded,
        applied=applied(),
    )
    return branch, len(prefix)


def _pooled_builder() -> AgentBuilder:
    """The default agent factory: model agents share one backend per model (one in-flight limit, one client)."""
    pool = ModelPool()

    def build(spec: str, seat: int, rules: RuleSet, cseed: int) -> Agent:
        if is_model_spec(spec):
            return make_llm_agent(spec, seat, rules, cseed, pool=pool)
        return make_agent(spec, seat, rules, cseed)

    return build


def _branch_files(job: _BranchJob, build_agent: AgentBuilder | None) -> tuple[Branch, int, dict[str, bytes]]:
    """:func:`_play_branch` on a Ray worker, into a temporary folder; the branch, its prefix length, its files."""
    with tempfile.TemporaryDirectory(prefix="mafialab-fork-") as tmp:
        branch, plen = asyncio.run(_play_branch(job, Path(tmp), build_agent or _pooled_builder()))
        return branch, plen, read_game_files(Path(tmp) / branch.game_id)


async def run_fork(
    parent: Path | GameLog,
    at: int | str | ForkStep,
    intervention: Intervention | None = None,
    *,
    n: int = 1,
    seed: int = 0,
    agents: str | None = None,
    seats: dict[int, str] | None = None,
    temperature: float | None = None,
    probes: str | None = None,
    parallel: int = 1,
    out: Path | None = None,
    prices: PriceTable | None = None,
    build_agent: AgentBuilder | None = None,
    check_remote: bool = True,
    replicas: Sequence[int] | None = None,
    ray: str | None = None,
    progress: Callable[[Branch], None] | None = None,
) -> ForkBatch:
    """Fork ``parent`` at step ``at``, apply ``intervention`` and play the continuation ``n`` times.

    Each replica is a branch ``<parent>~<batch>-<replica>`` written to ``out/<branch id>/``
    (``game.jsonl`` with the parent's prefix and a ``parent`` header block, ``calls.jsonl``,
    ``probes.jsonl`` when probing). Its continuation draws from its own seed
    (:func:`continuation_seed`); with deterministic agents the same call gives identical
    branches. The batch id is :func:`fork_batch_id`'s.

    A branch is played into ``out/.partial/<branch id>/`` and renamed into place once all its
    files are written. The call resumes: replicas of the batch already in ``out`` are read
    back, not played again (so a larger ``n`` adds replicas), and a half-written branch that
    an interrupted run left in ``.partial`` is removed and played again.

    Args:
        parent: The parent game directory (or its log): a native game, a branch, or an
            imported MafiaScope game whose actions replay under ``mafiascope7-v2``.
        at: The fork step: a decision id, ``round:phase:index`` or a :class:`ForkStep`.
        intervention: :class:`Inject`, :class:`Resample` (default), :class:`PrivateBelief` or
            :class:`Night`.
        n: Number of replicas (>= 1).
        seed: The command's seed (part of the batch id and every continuation seed).
        agents: Agent spec for every seat (default: the parent's roster specs).
        seats: Per-seat agent specs over ``agents``.
        temperature: Sampling temperature added to model specs.
        probes: Probe battery for the continuation (``None``/``"none"``: no probes).
        parallel: Branches played at the same time.
        out: Directory for the branches (``None``: nothing written).
        prices: Price table for ``calls.jsonl``.
        build_agent: Agent factory ``(spec, seat, rules, continuation_seed)``.
        check_remote: Preflight remote models once before the first branch.
        replicas: Replica numbers of the batch (default ``range(n)``); those already in
            ``out`` are read back.
        ray: Play the replicas as Ray tasks on this cluster (``auto``, ``local`` or an
            address, :func:`mafialab.harness.connect_ray`; needs ``out``). The fork
            decision's answers of :class:`Resample` replicas are drawn here first (one request
            with the server's ``n``, as locally) and each task gets its own; each worker plays
            its branch into a temporary folder and returns the files, which are written into
            ``out/<branch id>/`` here. ``parallel`` does not apply (the cluster schedules).
        progress: Called with each branch as it finishes.

    Returns:
        The :class:`ForkBatch` (branches in replica order, those read back included).

    Raises:
        ValueError: ``n`` < 1, an unknown step, an intervention that does not fit the step,
            an agent spec that cannot be built, or ``out`` holding branches of the batch that
            were played with another ``probes`` (the message names it).
        ReplayMismatch: The parent does not replay up to the step (the message names the
            first step that cannot be reproduced).
        ImportError: ``ray`` given and Ray is not installed (nothing is played).
    """
    from mafialab.harness import preflight

    if n < 1:
        raise ValueError(f"-n: at least 1 replica, got {n}")
    if ray is not None and out is None:
        raise ValueError("out: --ray writes the branches' files; give --out")
    plog = parent if isinstance(parent, GameLog) else read_game(Path(parent))
    iv: Intervention = intervention if intervention is not None else Resample()
    step = at if isinstance(at, ForkStep) else resolve_step(fork_steps(plog), at)
    prepare(plog, step, iv, 0)  # refuse a step that does not replay or a misfit intervention up front
    specs = branch_specs(plog, agents, seats, temperature)
    build = build_agent or _pooled_builder()  # one backend per model for every branch
    pid = plog.header.game_id
    batch = _batch(plog, step.id, iv, seed, specs)
    root = _root(plog)
    base = dict(plog.header.meta)
    meta = {k: base[k] for k in ("agents",) if k in base}
    try:
        probe_agents = [build(s, i, plog.header.rules, seed) for i, s in enumerate(specs)]
    except Exception as err:
        raise ValueError(
            f"agents: cannot build the continuation's agents ({err}); the parent was played by "
            f"{sorted({s.agent for s in plog.header.roster})}: give --agents or --seat"
        ) from None
    if ray is not None:  # after the agents (a seat no worker can play is refused first), before any call
        connect_ray(ray)
    limit = asyncio.Semaphore(max(1, parallel))
    wanted = list(replicas) if replicas is not None else list(range(n))
    options = {"probes": probes or "none"}  # what else tells two runs of one batch apart is in the batch id
    done = _finished_branches(Path(out), pid, batch, wanted, step, iv, options) if out is not None else {}
    todo = [r for r in wanted if r not in done]
    ahead: tuple[ChatRequest, list[ChatResponse]] | None = None
    # on Ray the driver's own calls (the preflight, the answers drawn ahead) share the cluster's
    # per-backend limits with the workers' calls
    with driver_limits(ray):
        if check_remote and todo:
            await preflight(probe_agents)
        # replicas resample one frozen context: the server's n draws them together
        if isinstance(iv, Resample) and todo:
            ahead = await _draw_ahead(probe_agents[step.seat], prepare(plog, step, iv, 0)[0], step, len(todo))

    def job(replica: int) -> _BranchJob:
        primed = (ahead[0], ahead[1][todo.index(replica)]) if ahead is not None else None
        fork_meta = {**meta, "fork": {"at": step.label, "kind": step.kind, "seat": step.seat, "options": options}}
        return _BranchJob(plog, step, iv, specs, seed, batch, root, fork_meta, replica, probes, prices, primed)

    # a branch is written into OUT/.partial/<batch>/ and moved to OUT/<branch id>/ once all its files are
    staging = Path(out) / PARTIAL_DIR / batch if out is not None else None

    async def one(replica: int) -> Branch:
        gid = branch_id(pid, batch, replica)
        if ray is None:
            async with limit:
                if staging is not None:
                    _make_staging(staging, gid)
                branch, plen = await _play_branch(job(replica), staging, build)
        else:  # on a worker (drawn answer included); the driver writes the files where a local branch goes
            assert staging is not None
            branch, plen, files = await ray_run(_branch_files, job(replica), build_agent, address=ray)
            _make_staging(staging, gid)
            branch.path = write_game_files(staging, branch.game_id, files)
        if branch.path is not None and plog.header.source == "mafialab":
            _copy_prefix_probes(plog, branch.path, branch.game_id, plen)
        if branch.path is not None and out is not None:
            branch.path = _move_into_place(branch.path, Path(out) / branch.game_id)
        if progress is not None:
            progress(branch)
        return branch

    if progress is not None:
        for r in sorted(done):
            progress(done[r])
    try:
        played = {b.replica: b for b in await asyncio.gather(*(one(r) for r in todo))}
    finally:
        if staging is not None:
            _drop_staging(staging)
    branches = [done[r] if r in done else played[r] for r in wanted]
    return ForkBatch(
        parent_id=pid, root_id=root, step=step, intervention=iv, seed=seed, batch=batch, branches=branches,
        resumed=len(done),
    )  # fmt: skip


def estimate_fork(
    parent: Path | GameLog, at: int | str | ForkStep, n: int = 1, probes: bool = False, agents: str | None = None
) -> ForkEstimate:
    """Estimate the model calls, cost and time of a fork from the parent's ``calls.jsonl`` (``--dry-run``).

    The parent's game-decision calls at or after the step estimate one branch's decision
    calls (a continuation plays about as long as the rest of the parent); with ``probes``,
    the parent's probe calls are scaled by the share of its decisions after the step. Cost:
    the parent's mean cost per priced call times the calls. Time: the calls times the mean
    latency of the parent's calls (:func:`call_timing`; with ``agents``, of that model's
    calls only), one after another.

    Raises:
        ValueError: ``n`` < 1 or an unknown step.
    """
    if n < 1:
        raise ValueError(f"-n: at least 1 replica, got {n}")
    plog = parent if isinstance(parent, GameLog) else read_game(Path(parent))
    steps = fork_steps(plog)
    step = at if isinstance(at, ForkStep) else resolve_step(steps, at)
    after = sum(1 for s in steps if s.id >= step.id)
    share = after / len(steps) if steps else 0.0
    calls = [c for _, c in iter_call_records(plog.path, game_id=plog.game_id)]
    persons = person_seats(plog.header.meta.get("agents"))  # a person's decisions are no model calls
    calls = [c for c in calls if c.get("kind", "call") == "call" and c.get("seat") not in persons]
    dec = [c for c in calls if c.get("decision") is not None and int(c["decision"]) >= step.id]
    probe_calls = [c for c in calls if c.get("purpose") == "probe"]
    per = len(dec) + (len(probe_calls) * share if probes else 0.0)
    used = dec + (probe_calls if probes else [])
    priced = [float(c["cost_usd"]) for c in calls if c.get("cost_usd") is not None]
    cost = None
    if priced:
        cost = (sum(priced) / len(priced)) * per * n
    if not (plog.path / CALLS_FILE).is_file():
        basis = "the parent has no calls.jsonl (scripted or imported seats make no model calls)"
    elif not calls:
        basis = "the parent recorded no model calls (scripted, imported and human seats make none)"
    else:
        basis = (
            f"{count(len(dec), 'game-decision call')} of the parent at or after step {step.id}"
            + (f" + {count(len(probe_calls), 'probe call')} x {share:.2f} of the decisions" if probes else "")
            + (f"; mean ${sum(priced) / len(priced):.6f} per priced call" if priced else "; calls unpriced")
        )
        if probes and not probe_calls:
            basis += "; the parent recorded no probe calls, so the continuation's probes are not counted"
    del used
    timing = call_timing(plog, spec=agents)
    return ForkEstimate(
        branches=n,
        calls_per_branch=per,
        calls=per * n,
        cost_usd=cost,
        basis=basis,
        seconds=timing.seconds(per * n),
        time_basis=timing.basis,
    )


@dataclass
class SweepRow:
    """One step of a sensitivity sweep: P(each team wins) over the step's replicas.

    Attributes:
        step: The fork step.
        batch: The step's fork batch.
        n: Finished branches.
        town: ``{"k", "n", "p", "lo", "hi"}`` (Wilson interval).
        mafia: The same for the hidden team.
    """

    step: ForkStep
    batch: ForkBatch
    n: int
    town: dict[str, Any]
    mafia: dict[str, Any]


async def sweep(
    parent: Path | GameLog,
    n: int,
    *,
    steps: Sequence[int | str] | None = None,
    seed: int = 0,
    out: Path | None = None,
    **fork_options: Any,
) -> list[SweepRow]:
    """Fork at every public step (or the given ``steps``) with :class:`Resample`, ``n`` replicas each.

    The "sensitivity map": P(each team wins) per step, with Wilson intervals. Branches go to
    ``out`` as for :func:`run_fork`; ``fork_options`` are passed on (agents, seats,
    temperature, parallel, build_agent …).

    Raises:
        ValueError: ``n`` < 1 or an unknown step.
    """
    from mafialab.counterfactual._compare import rate

    plog = parent if isinstance(parent, GameLog) else read_game(Path(parent))
    all_steps = fork_steps(plog)
    chosen = [resolve_step(all_steps, s, "--steps") for s in steps] if steps else [s for s in all_steps if s.public]
    rows = []
    for st in chosen:
        b = await run_fork(plog, st, Resample(), n=n, seed=seed, out=out, **fork_options)
        fin = b.finished
        rows.append(SweepRow(step=st, batch=b, n=fin, town=rate(b.wins("town"), fin), mafia=rate(b.wins("mafia"), fin)))
        fork_options["check_remote"] = False
    return rows
