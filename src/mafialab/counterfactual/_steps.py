"""Forkable steps of a recorded game and interventions at a step."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from mafialab.engine import Action, Decision, GameState
from mafialab.harness import ReplayStop, replay_until_mismatch
from mafialab.record import GameLog

PUBLIC_KINDS = ("speak", "vote", "nominate")
"""Decision kinds whose answer is a public message (the steps ``fork sweep`` forks at)."""

_VOTE_LINE = re.compile(r"VOTE:\s*\**\s*([A-Za-z][A-Za-z-]*)")


@dataclass(frozen=True)
class ForkStep:
    """One decision of a recorded game at which a fork may start.

    Attributes:
        id: Decision id (the ``STEP`` of ``fork run --at``).
        round: Round number.
        phase: ``intro``, ``night`` or ``day``.
        index: 0-based position of the decision among the decisions of its round and phase
            (``round:phase:index`` names the step too).
        seat: Acting seat.
        name: Acting seat's name.
        kind: Decision kind (``speak``, ``vote``, ``kill`` …).
        done: What was done in the parent: the target's name and/or the text (shortened).
        public: Whether the answer is a public message.
        source_index: Imported games: the source's per-round message counter of the turn
            (MafiaScope ``msg_seq``); else ``None``.
    """

    id: int
    round: int
    phase: str
    index: int
    seat: int
    name: str
    kind: str
    done: str
    public: bool
    source_index: int | None = None

    @property
    def label(self) -> str:
        """``round:phase:index``."""
        return f"{self.round}:{self.phase}:{self.index}"


def _done(state: GameState, d: Decision, a: Action) -> str:
    parts = []
    if d.wants_target:
        parts.append(state.names[a.target] if a.target is not None else "(no vote)")
    if d.choices:
        parts.append(a.choice or "(blank)")
    if a.text:
        t = " ".join(a.text.split())
        parts.append(json.dumps(t[:60] + ("…" if len(t) > 60 else ""), ensure_ascii=False))
    return " ".join(parts)


class ForkSteps(list[ForkStep]):
    """The forkable steps of a game, in order (a ``list`` of :class:`ForkStep`).

    Attributes:
        stop: ``None`` when every decision of the log replays; else the
            :class:`mafialab.harness.ReplayStop` naming the first decision that cannot be
            forked at and why (the list holds the steps before it).
    """

    stop: ReplayStop | None = None


def fork_steps(log: GameLog) -> ForkSteps:
    """Every decision of ``log`` that replays, in order: the steps a fork may start at.

    Args:
        log: A native game, a branch with its prefix, or an imported MafiaScope game.

    Returns:
        One :class:`ForkStep` per decision before the first one the replay cannot follow
        (see :func:`mafialab.harness.replay_until_mismatch`): an unreadable recorded answer
        (e.g. a night action naming no seat), an outcome the engine does not reproduce, or an
        event lost to an unreadable line of the log. ``.stop`` says where and why the list
        stops (``None``: it does not). An empty list with no stop: the game has no decisions.

    Raises:
        ReplayMismatch: The log does not replay at all (e.g. an imported Sheriff variant).
    """
    state, done, stop = replay_until_mismatch(log)
    counts: dict[tuple[int, str], int] = {}
    out = ForkSteps()
    out.stop = stop
    for r in done:
        d = r.decision
        key = (d.round, d.phase)
        i = counts.get(key, 0)
        counts[key] = i + 1
        out.append(
            ForkStep(
                id=d.id,
                round=d.round,
                phase=d.phase,
                index=i,
                seat=d.seat,
                name=state.names[d.seat],
                kind=d.kind,
                done=_done(state, d, r.action),
                public=(d.kind in PUBLIC_KINDS and (d.kind != "vote" or state.rules.day.vote == "public_sequential"))
                or (d.kind == "team_vote" and d.needs_text),  # a mission game's public team vote
                source_index=r.source_index,
            )
        )
    return out


def resolve_step(steps: list[ForkStep], step: str | int, option: str = "--at") -> ForkStep:
    """The step named by a decision id (``"12"``) or ``round:phase:index`` (``"1:day:3"``).

    ``option`` is the command-line option the step came from, named in the errors.

    Raises:
        ValueError: No such step (the message names the argument and the range); a step at
            or after the point where the replay stops following the game (``steps.stop`` of
            a :class:`ForkSteps`) is refused naming that step and the cause.
    """
    text = str(step).strip()
    stop = getattr(steps, "stop", None)
    if text.isdigit():
        found = next((s for s in steps if s.id == int(text)), None)
        if found is None and stop is not None and (stop.step is None or int(text) >= stop.step):
            first = f"decision ids {steps[0].id}..{steps[-1].id} fork" if steps else "no step forks"
            raise ValueError(f"{option}: step {text} cannot be forked: the replay stops at {stop.reason} ({first})")
    else:
        parts = text.split(":")
        if len(parts) != 3 or not parts[0].isdigit() or not parts[2].isdigit():
            raise ValueError(f"{option}: expected a decision id or round:phase:index (e.g. 1:day:3), got {text!r}")
        found = next((s for s in steps if s.label == f"{int(parts[0])}:{parts[1]}:{int(parts[2])}"), None)
    if found is None:
        rng = f"{steps[0].id}..{steps[-1].id}" if steps else "none"
        why = f"; the replay stops at {stop.reason}" if stop is not None else ""
        raise ValueError(
            f"{option}: no forkable step {text!r} (decision ids {rng}; list them with `mafialab fork steps`){why}"
        )
    return found


def step_after_message(steps: list[ForkStep], round: int, msg_seq: int, kind: str | None = None) -> ForkStep:
    """The first step after public message ``msg_seq`` of ``round`` in an imported game.

    MafiaScope names a fork point ``[round, seq of the last public message before it]``; the
    step forked is the next recorded turn (``source_index > msg_seq``) of that round, of
    ``kind`` if given (e.g. ``"vote"``).

    Raises:
        ValueError: No such step (the game is not imported, or does not replay that far).
    """
    for s in steps:
        after = s.round == round and s.source_index is not None and s.source_index > msg_seq
        if after and (kind is None or s.kind == kind):
            return s
    raise ValueError(f"fork point [{round}, {msg_seq}]: no replayable {kind or 'step'} after that message")


class _Intervention(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def key(self) -> str:
        """Canonical JSON of the intervention (part of the batch id and the branch seeds)."""
        return json.dumps(self.model_dump(), sort_keys=True, ensure_ascii=False)


class Resample(_Intervention):
    """Ask the acting seat again from its frozen context (no change but the draw)."""

    type: Literal["resample"] = "resample"


class Inject(_Intervention):
    """Replace the acting seat's answer at the fork step.

    Attributes:
        target: Seat name the answer names (targeted decisions); ``None`` with
            ``no_vote=True`` casts no vote where the rules allow it.
        text: The speech, chat or vote statement (decisions that take text).
        no_vote: The injected vote names no valid target: the seat casts no vote (never
            replaced by a fallback). Only under rules with ``day.no_vote``.
        choice: The answer of a choice decision (mission games: ``approve``/``reject`` for a
            team vote, ``success``/``fail`` for a mission card).
    """

    type: Literal["inject"] = "inject"
    target: str | None = None
    text: str | None = None
    no_vote: bool = False
    choice: str | None = None


class PrivateBelief(_Intervention):
    """Add a private line to one seat's context from the fork step on (only that seat sees it).

    Attributes:
        seat: The seat.
        text: The line (e.g. ``"You are sure Casey is Mafia."``).
    """

    type: Literal["belief"] = "belief"
    seat: int = Field(ge=0)
    text: str = Field(min_length=1)


class Night(_Intervention):
    """Override a seat's next night action (kill vote, protection or investigation) from the step on.

    Attributes:
        seat: The acting seat.
        target: The target seat.
    """

    type: Literal["night"] = "night"
    seat: int = Field(ge=0)
    target: int = Field(ge=0)


Intervention = Annotated[Resample | Inject | PrivateBelief | Night, Field(discriminator="type")]
"""One intervention at a fork step, discriminated by ``type``."""

INTERVENTION_ADAPTER: TypeAdapter[Intervention] = TypeAdapter(Intervention)
"""Validates an intervention dict (e.g. a branch header's ``parent.intervention``)."""


def parse_vote_text(text: str, names: list[str] | tuple[str, ...]) -> str | None:
    """The name in the last ``VOTE: <name>`` line of a MafiaScope-style vote text, or ``None``.

    A name that is not a seat name gives ``None`` (no valid vote).
    """
    found = _VOTE_LINE.findall(text or "")
    return found[-1] if found and found[-1] in names else None


def inject_vote_text(text: str, names: list[str] | tuple[str, ...]) -> Inject:
    """An :class:`Inject` for a vote given as MafiaScope-style text (``... VOTE: <name>``).

    The target is read from the text as MafiaScope's engine reads it; a text without a valid
    ``VOTE:`` line (or naming a dead player or the voter, checked when applied) casts no vote.
    """
    target = parse_vote_text(text, names)
    return Inject(target=target, text=text, no_vote=target is None)


def _key(intervention: BaseModel) -> str:
    """The intervention's canonical text in ids and seeds."""
    return intervention.key() if isinstance(intervention, _Intervention) else json.dumps(intervention.model_dump())


def batch_id(parent_id: str, step: int, intervention: BaseModel, seed: int, agents: Sequence[str] | None = None) -> str:
    """Batch id: the first 8 hex digits of SHA-256 over (parent id, step, intervention, ``--seed``, agents).

    ``agents`` (the continuation's agent spec per seat) is left out when ``None``: a batch
    played by the parent's own roster keeps the id it had before agents were part of it.
    """
    key = _key(intervention)
    who = "" if agents is None else "|" + json.dumps(list(agents), ensure_ascii=False)
    return hashlib.sha256(f"{parent_id}|{step}|{key}|{seed}{who}".encode()).hexdigest()[:8]


def continuation_seed(parent_seed: int, step: int, intervention: BaseModel, seed: int, replica: int) -> int:
    """A branch's continuation seed: 63 bits of SHA-256 over (parent seed, step, intervention, ``--seed``, replica)."""
    key = _key(intervention)
    digest = hashlib.sha256(f"mafialab-fork|{parent_seed}|{step}|{key}|{seed}|{replica}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def branch_id(parent_id: str, batch: str, replica: int) -> str:
    """``<parent>~<batch>-<replica>``."""
    return f"{parent_id}~{batch}-{replica}"


def intervention_from(data: dict[str, Any]) -> Intervention:
    """Validate an intervention dict (raises ``pydantic.ValidationError`` naming the field)."""
    return INTERVENTION_ADAPTER.validate_python(data)
