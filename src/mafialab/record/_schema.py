"""The ``game.jsonl`` schema: a header record, then engine events."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
    model_validator,
)

from mafialab.config import ConfigError, load_config, read_config
from mafialab.engine import Event
from mafialab.rules import RuleSet, Team

SCHEMA_VERSION = 4
"""Version of the game-log schema written by this mafialab. Bumped on incompatible change."""


class SeatInfo(BaseModel):
    """One seat of the roster (moderator's knowledge; never shown to players).

    Attributes:
        seat: Seat number (from 0).
        name: Seat name.
        role: True role name.
        team: True team id.
        agent: Agent spec or model string that played the seat.
        persona: Optional persona fields (e.g. Big-Five ``{"O": 0-100, ...}``).
    """

    model_config = ConfigDict(extra="forbid")

    seat: int = Field(ge=0)
    name: str
    role: str
    team: Team
    agent: str
    persona: dict[str, Any] | None = None


class ParentInfo(BaseModel):
    """Where a branch (a fork of a recorded game) comes from: the ``parent`` block of its header.

    A branch is the parent's prefix (every event before the fork step, equal to the parent's
    clock fields aside) followed by a continuation played from ``continuation_seed``. Its
    ``game_id`` is ``<parent game id>~<batch>-<replica>``; see ``docs/counterfactual.md``.

    Attributes:
        game_id: The parent game's id.
        step: Decision id of the fork step in the parent (``None`` for an imported fork
            whose source gave only a message position).
        intervention: What was changed at the step (``{"type": "inject" | "resample" |
            "belief" | "night", ...}``; imported forks keep the source's object).
        batch: Batch id: a hash of (parent id, step, intervention, ``--seed``); the
            replicas of one fork command share it.
        replica: Replica number within the batch (0-based).
        continuation_seed: Seed of the continuation's engine streams and agents, derived from
            (parent seed, step, intervention, ``--seed``, replica).
        seed: The ``--seed`` given to the fork command.
        root: Id of the root game (the first non-branch ancestor); bootstrap clusters.
        prefix: ``"replayed"`` (the log holds the parent's prefix) or ``"absent"`` (an
            imported fork log that starts at the fork, as MafiaScope wrote them).
        fork_point: The source's fork position, if any (MafiaScope: ``[round, msg_seq]``).
    """

    model_config = ConfigDict(extra="forbid")

    game_id: str
    step: int | None = Field(default=None, ge=0)
    intervention: dict[str, Any] = Field(default_factory=dict)
    batch: str
    replica: int = Field(default=0, ge=0)
    continuation_seed: int | None = None
    seed: int = 0
    root: str
    prefix: Literal["replayed", "absent"] = "replayed"
    fork_point: list[int] | None = None


class GameHeader(BaseModel):
    """First record of ``game.jsonl``.

    Attributes:
        kind: Always ``"game_start"``.
        seq: Always 0.
        schema_version: :data:`SCHEMA_VERSION` of the writer.
        game_id: Directory name of the game.
        rules_id: Versioned rule-set id (``werewolf7-v1``).
        rules: The complete rule set, so a log replays without the code that wrote it.
        seed: Game seed.
        roster: Every seat with role, team and agent.
        software: ``mafialab <version>``.
        source: Where the game came from: ``"mafialab"`` or an importer (``"mafiascope"``).
        meta: Free-form extras (importer provenance, run options).
        parent: Set on branches (forks): the parent game, fork step and intervention
            (:class:`ParentInfo`); ``None`` for a root game.
        ts: Wall-clock creation time (a clock field).

    Raises:
        pydantic.ValidationError: If ``rules_id`` is not ``rules.id``, the roster does not hold
            each seat of the rule set once, or a seat's role/team is not one of the rule set's.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["game_start"] = "game_start"
    seq: Literal[0] = 0
    schema_version: int = SCHEMA_VERSION
    game_id: str
    rules_id: str
    rules: RuleSet
    seed: int
    roster: list[SeatInfo]
    software: str
    source: str = "mafialab"
    meta: dict[str, Any] = Field(default_factory=dict)
    parent: ParentInfo | None = None
    ts: float | None = None

    @model_serializer(mode="wrap")
    def _drop_unset_parent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # root games carry no parent block, so their headers stay as they were
        data: dict[str, Any] = handler(self)
        if data.get("parent", 0) is None:
            del data["parent"]
        return data

    @model_validator(mode="after")
    def _check_roster(self) -> GameHeader:
        # a damaged header would otherwise surface later as a KeyError deep in the metrics
        if self.rules_id != self.rules.id:
            raise ValueError(f"rules_id: {self.rules_id!r} but the rules describe {self.rules.id!r}")
        n = self.rules.n_seats
        seats = sorted(s.seat for s in self.roster)
        if seats != list(range(n)):
            raise ValueError(f"roster: seats {seats}, expected each of 0..{n - 1} once ({self.rules.id} has {n} seats)")
        teams = {r.name: r.team for r in self.rules.roles}
        for s in self.roster:
            if teams.get(s.role) != s.team:
                raise ValueError(
                    f"roster: seat {s.seat} is {s.role!r} of team {s.team!r}; {self.rules.id} roles are "
                    + ", ".join(f"{k} ({v})" for k, v in teams.items())
                )
        return self


class GameStatus(BaseModel):
    """A note appended after the events (e.g. the integrity gate marking a game degraded).

    Attributes:
        kind: Always ``"game_status"``.
        seq: Sequence number after the last event.
        degraded: Whether the game failed the integrity gate.
        answered_share: Share of player decisions the agents answered themselves (0-1).
        decisions: Number of player decisions.
        fallbacks: Number of decisions settled by a fallback.
        detail: Free-form extras.
        ts: Clock field.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["game_status"] = "game_status"
    seq: int = Field(ge=1)
    degraded: bool = False
    answered_share: float = Field(default=1.0, ge=0.0, le=1.0)
    decisions: int = 0
    fallbacks: int = 0
    detail: dict[str, Any] = Field(default_factory=dict)
    ts: float | None = None


EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
"""Validates one event record (a dict or JSON) into its typed event class."""

CLOCK_FIELDS = frozenset({"ts"})
"""Fields that hold wall-clock values and are ignored when comparing logs."""


class ProbeRecord(BaseModel):
    """One private probe answer, a line of ``probes.jsonl`` beside ``game.jsonl``.

    The key of the information state the agent answered from is
    ``(round, msg_index, seat, position)``; ``after_seq`` is the ``seq`` of the last game
    event that existed when the probe ran (the probe saw a copy of the agent's context up to
    that event, filtered by the engine's visibility function).

    Attributes:
        kind: Always ``"probe"``.
        game_id: Game id.
        round: Round of the trigger.
        msg_index: Public message index (within the round) that triggered the probe, or
            -1 for ``round_end`` (and ``night_action``) probes, as in MafiaScope.
        seat: Probed seat.
        player: Probed seat's name.
        role: Probed seat's true role (moderator knowledge, for scoring).
        probe_id: Probe id in the battery (``role_assessment`` …).
        position: Order of the probe within this trigger for this seat (0-based).
        trigger: ``always`` (after a public message), ``own_turn``, ``round_end`` or
            ``night_action``.
        phase: Phase of the trigger (free text; imported MafiaScope phases kept verbatim).
        after_seq: ``seq`` of the last game event visible in the world when probing.
        question: The rendered question; when the battery has a preamble, the preamble, a
            blank line, then the question (what the agent was asked).
        answer_raw: Verbatim model answer ("" when the call failed).
        answer_parsed: Parsed JSON answer, or ``None``.
        parse_ok: Whether ``answer_parsed`` holds a usable JSON value.
        repaired: Whether parsing needed repair (fences, trailing text, truncation).
        schema_ok: Whether the parsed answer validates against the probe's JSON schema
            (``None``: no schema, or nothing parsed).
        issues: Problems found in the parsed answer (schema violations, players that are
            unknown or dead), each ``"<json path>: <why>"``; the answer is kept as given.
        model: Model that answered (``scripted`` for scripted agents).
        latency_ms: Call latency in milliseconds.
        prompt_tokens: Prompt tokens (0 if unknown).
        completion_tokens: Completion tokens (0 if unknown).
        error: Transport or model error, if any.
        ts: Clock field (imported probes keep their original timestamp).
        distribution: A ``logprob`` probe's readout (schema v4): probability of each
            candidate, ``{candidate: p}`` in the battery's candidate order, the softmax of
            :attr:`logprobs` (values in [0, 1], summing to 1); ``None`` for other probes
            and for a failed call. Its ``answer_parsed`` is the most probable candidate.
        logprobs: The model's natural-log probability of each candidate's token sequence
            after the question (summed over its tokens, or its first token's alone, see
            :attr:`scoring`); ``None`` as :attr:`distribution`.
        scoring: ``sequence`` (every token of a candidate scored) or ``first_token`` (the
            battery's ``first_token`` approximation); ``None`` for other probes.
    """

    model_config = ConfigDict(extra="allow")

    kind: Literal["probe"] = "probe"
    game_id: str
    round: int = Field(ge=0)
    msg_index: int
    seat: int = Field(ge=0)
    player: str
    role: str
    probe_id: str
    position: int = Field(ge=0)
    trigger: Literal["always", "own_turn", "round_end", "night_action"] = "always"
    phase: str = ""
    after_seq: int = Field(ge=0)
    question: str
    answer_raw: str
    answer_parsed: Any = None
    parse_ok: bool = False
    repaired: bool = False
    schema_ok: bool | None = None
    issues: list[str] = Field(default_factory=list)
    model: str = ""
    latency_ms: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    ts: float | None = None
    distribution: dict[str, float] | None = None
    logprobs: dict[str, float] | None = None
    scoring: Literal["sequence", "first_token"] | None = None


PROBES_FILE = "probes.jsonl"
CALLS_FILE = "calls.jsonl"
VERDICTS_FILE = "verdicts.jsonl"

PERSON_SEAT_KINDS: frozenset[str] = frozenset({"human", "human-web"})
"""``meta.agents.<seat>.external`` values of the seats a person plays (at the terminal, in a
browser). Their records in ``calls.jsonl`` are the person's decisions (and probe answers),
not model calls: readers count them apart (``remote`` seats, programs, stay calls)."""


def person_seats(agents: Any) -> frozenset[int]:
    """The seats a person plays, from a header's ``meta.agents`` (``{"<seat>": {"external": "human", ...}}``).

    Args:
        agents: ``header.meta["agents"]`` (seat as a string → the agent's description), or
            anything else (``None``, an imported game's meta): no seat.

    Returns:
        Seat numbers whose ``external`` is in :data:`PERSON_SEAT_KINDS`; a key that is not a
        seat number is skipped.
    """
    if not isinstance(agents, dict):
        return frozenset()
    seats = set()
    for key, desc in agents.items():
        if isinstance(desc, dict) and desc.get("external") in PERSON_SEAT_KINDS and str(key).isdigit():
            seats.add(int(key))
    return frozenset(seats)


JudgeAxis = Literal["deception", "detection", "influence"]
"""The three judge axes (see :class:`PlayerScore`)."""

JUDGE_AXES: tuple[JudgeAxis, ...] = ("deception", "detection", "influence")


class PlayerScore(BaseModel):
    """One player's validated judge scores (integers 0-10, ``None`` when not applicable).

    Attributes:
        seat: Seat number.
        name: Seat name.
        role: True role.
        team: True team id.
        deception: Mafia only: blending in, misdirection, managing suspicion (0-10).
            Always ``None`` for a non-mafia player, whatever the judge returned.
        detection: Non-mafia only: quality of reads, arguments and votes toward finding
            the mafia (0-10). Always ``None`` for a mafia player.
        influence: Everyone: how much the table's votes and narratives followed this
            player's pushes (0-10).
        note: The judge's note citing concrete behaviour (untrusted model text).
    """

    model_config = ConfigDict(extra="forbid")

    seat: int = Field(ge=0)
    name: str
    role: str
    team: Team
    deception: int | None = Field(default=None, ge=0, le=10)
    detection: int | None = Field(default=None, ge=0, le=10)
    influence: int | None = Field(default=None, ge=0, le=10)
    note: str = ""


class Verdict(BaseModel):
    """One judge's verdict on one game, a line of ``verdicts.jsonl`` beside ``game.jsonl``.

    A verdict is either ``ok`` (validated, possibly with ``problems`` noted) or ``missing``
    (every attempt was unusable; no score is invented, ``players`` is empty).

    Attributes:
        kind: Always ``"verdict"``.
        schema_version: :data:`SCHEMA_VERSION` of the writer.
        game_id: Game judged.
        judge: Model string of the judge.
        status: ``ok`` or ``missing``.
        headline: One-line headline (``None`` if missing).
        recap: Short recap of the game.
        mvp: Seat name of the most valuable player, or ``None`` (judge named none or an
            unknown player).
        mvp_seat: Seat of ``mvp``.
        players: Validated scores, one per seat in seat order (``ok`` verdicts only).
        attempts: Judge calls made (1 + retries).
        problems: What validation changed or dropped (clamped, nulled, unknown names …),
            and why earlier attempts were unusable.
        error: Why the verdict is missing.
        condensation: How the transcript was condensed to fit the judge's context window
            (``None`` when the full transcript was sent); see ``docs/arena.md``.
        prompt_tokens: Prompt tokens over all attempts (0 if unknown).
        completion_tokens: Completion tokens over all attempts.
        raw: Verbatim text of the last answer (kept for audit).
        ts: Clock field.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["verdict"] = "verdict"
    schema_version: int = SCHEMA_VERSION
    game_id: str
    judge: str
    status: Literal["ok", "missing"]
    headline: str | None = None
    recap: str | None = None
    mvp: str | None = None
    mvp_seat: int | None = None
    players: list[PlayerScore] = Field(default_factory=list)
    attempts: int = Field(default=1, ge=0)
    problems: list[str] = Field(default_factory=list)
    error: str | None = None
    condensation: dict[str, Any] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw: str = ""
    ts: float | None = None


class Price(BaseModel):
    """Price of a model in US dollars per million tokens (``--prices`` files, season configs).

    Attributes:
        input: Uncached prompt tokens.
        output: Completion tokens.
        cached_input: Prompt tokens served from a cache (default: ``input``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int | None = 0) -> float:
        """US dollars: ``(prompt − cached)·input + cached·cached_input + completion·output``, per 1e6.

        ``cached_tokens`` is clamped to ``0..prompt_tokens``; ``None`` counts as 0.
        """
        cached = min(max(cached_tokens or 0, 0), prompt_tokens)
        cin = self.input if self.cached_input is None else self.cached_input
        return ((prompt_tokens - cached) * self.input + cached * cin + completion_tokens * self.output) / 1e6


class PriceTable(BaseModel):
    """Prices per model string; a key ``provider/*`` covers a whole provider.

    The default table prices the embedded (``local/*``) and ``mock/*`` models at zero and
    knows no hosted model: give a YAML file (``model: {input: .., output: ..}``) for those.
    """

    model_config = ConfigDict(extra="forbid")

    prices: dict[str, Price] = Field(
        default_factory=lambda: {"local/*": Price(input=0, output=0), "mock/*": Price(input=0, output=0)}
    )

    def price(self, model: str) -> Price | None:
        """The price of ``model`` (exact key first, then ``provider/*``), or ``None``."""
        p = self.prices.get(model)
        if p is None:
            p = self.prices.get(model.partition("/")[0] + "/*")
        return p

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int | None) -> float | None:
        """Cost in US dollars of one call, or ``None`` when the model has no price.

        ``cost = (prompt - cached) * input + cached * cached_input + completion * output``,
        prices per million tokens.
        """
        p = self.price(model)
        if p is None:
            return None
        return round(p.cost(prompt_tokens, completion_tokens, cached_tokens), 8)


class _PriceFile(RootModel[dict[str, Price]]):
    """A ``--prices`` file: model string → :class:`Price`."""


def load_prices(path: str | Path) -> PriceTable:
    """Read a price table from YAML (``{model: {input, output, cached_input}}``), merged over the defaults.

    Raises:
        ConfigError: Unreadable or empty file, or a bad entry (the message names the file, the
            model and the field, e.g. ``prices.yaml: openai/gpt-4o.input: …``), as every other
            configuration file is read.
    """
    path = Path(path)
    data = read_config(path)
    if data is None:  # an empty file is a mistake, not "no prices": say so, as for rules and batteries
        raise ConfigError(
            f"{path}: the file is empty (expected a price table: a mapping of model strings to "
            "input, output and cached_input prices)"
        )
    prices = load_config(data, _PriceFile, source=str(path)).root
    return PriceTable(prices={**PriceTable().prices, **prices})
