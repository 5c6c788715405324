"""Records of the belief-shift benchmark: annotations, benchmark items, results.

Every file is JSON Lines whose first line is a header record (``kind`` ends in
``_header``) carrying a format version; the following lines are data records.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mafialab._quality import CONSTANT_MIN_ANSWERS, constant_value
from mafialab.rules import Team

ANNOTATION_VERSION = 1
"""Version of the annotation file format (``ANN.jsonl``)."""
BENCH_VERSION = 1
"""Version of the benchmark file format (``BENCH.jsonl``)."""
RESULTS_VERSION = 1
"""Version of the results file format (``RESULTS.jsonl``)."""

SCALE: tuple[int, ...] = (-3, -2, -1, 0, 1, 2, 3)
"""The seven belief levels: -3 strongly village-side ... +3 strongly wolf-side (paper, Protocol)."""
LABELS: tuple[str, ...] = ("-3", "-2", "-1", "0", "+1", "+2", "+3")
"""The seven labels a model may answer, one per level of :data:`SCALE`."""
SHIFT_RANGE_INDEPENDENT: tuple[int, ...] = tuple(range(-6, 7))
"""Levels a shift takes under the independent protocol (posterior - prior, -6..+6)."""

Category = Literal["suspect", "accuse"]
"""Message strength: ``suspect`` (raises the possibility that the target is wolf-aligned)
or ``accuse`` (states directly that the target is on the wolf team)."""
Protocol = Literal["anchored", "independent"]
"""Elicitation protocol: ``anchored`` (the shift is asked with the model's own prior shown,
as in the paper) or ``independent`` (the posterior is asked without the prior; shift =
posterior - prior)."""
TrustBin = Literal["trust", "neutral", "distrust"]

TRUST_BINS: dict[str, tuple[int, ...]] = {
    "trust": (-3, -2),
    "neutral": (-1, 0, 1),
    "distrust": (2, 3),
}
"""Trust bins of the observer's prior about the accuser (paper, Table 2)."""


def trust_bin(prior_about_accuser: int) -> TrustBin:
    """The trust bin of a prior about the accuser.

    Args:
        prior_about_accuser: A level of :data:`SCALE` (-3..+3).

    Returns:
        ``"trust"`` for -3/-2, ``"neutral"`` for -1/0/+1, ``"distrust"`` for +2/+3.

    Raises:
        ValueError: If the value is not on the scale.
    """
    if prior_about_accuser in (-3, -2):
        return "trust"
    if prior_about_accuser in (-1, 0, 1):
        return "neutral"
    if prior_about_accuser in (2, 3):
        return "distrust"
    raise ValueError(f"prior {prior_about_accuser!r} is not on the -3..+3 scale")


def label_of(level: int) -> str:
    """The label of a level (``2 -> "+2"``, ``0 -> "0"``)."""
    return f"+{level}" if level > 0 else str(level)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlayerRef(_Record):
    """A player of a recorded game with its true role and team (from the roster).

    Attributes:
        seat: Seat number (from 0).
        name: Seat name.
        role: True role name.
        team: True team id (``town`` = village side, ``mafia`` = wolf side).
    """

    seat: int = Field(ge=0)
    name: str
    role: str
    team: Team


def message_id(game_id: str, round_: int, index: int) -> str:
    """The id of a public message: ``"<game_id>:r<round>:m<index>"``."""
    return f"{game_id}:r{round_}:m{index}"


class ScannedMessage(_Record):
    """A day-discussion message an annotator looked at (annotated or not).

    Attributes:
        message_id: See :func:`message_id`.
        game_id: Game id.
        round: Round (= day number).
        index: Public message index within the round (1-based).
        seat: Speaker seat.
        candidates: Seats that could be targets (alive, not the speaker).
    """

    message_id: str
    game_id: str
    round: int
    index: int
    seat: int
    candidates: list[int]


class FailedMessage(_Record):
    """A message the annotator could not label (model failure); excluded from agreement."""

    message_id: str
    cause: str
    detail: str = ""


class AnnotationHeader(_Record):
    """First line of an annotation file.

    Attributes:
        kind: ``"annotation_header"``.
        version: :data:`ANNOTATION_VERSION`.
        annotator: ``rules:<pack id>`` (e.g. ``rules:annotator-en-v14``; plain ``rules`` in files
            written before pack v7) or the model string.
        software: ``mafialab <version>``.
        games: Game ids scanned.
        scanned: Every message looked at, so agreement can count "no label" as a label.
        failed: Messages the annotator failed on (with cause).
        rosters: Seat names of every scanned game, by game id (seat ``i`` is ``rosters[g][i]``),
            so a labels file that names players can be joined (empty in older files).
        meta: Free-form extras.
    """

    kind: Literal["annotation_header"] = "annotation_header"
    version: int = ANNOTATION_VERSION
    annotator: str
    software: str = ""
    games: list[str] = Field(default_factory=list)
    scanned: list[ScannedMessage] = Field(default_factory=list)
    failed: list[FailedMessage] = Field(default_factory=list)
    rosters: dict[str, list[str]] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)


class Annotation(_Record):
    """One (message, target) annotation.

    Attributes:
        kind: ``"annotation"``.
        message_id: See :func:`message_id`.
        game_id: Game id.
        round: Round of the message.
        index: Public message index within the round.
        day: Day number (= round).
        seq: ``seq`` of the speech event in the game log.
        accuser: The speaker.
        target: The player suspected or accused.
        category: ``suspect`` or ``accuse``.
        evidence: The span of the message that carries the label.
        annotator: ``rules:<pack id>`` (e.g. ``rules:annotator-en-v14``; plain ``rules`` in files
            written before pack v7) or the model string.
    """

    kind: Literal["annotation"] = "annotation"
    message_id: str
    game_id: str
    round: int
    index: int
    day: int
    seq: int
    accuser: PlayerRef
    target: PlayerRef
    category: Category
    evidence: str
    annotator: str


class ObserverContext(_Record):
    """One observer of a benchmark item and the history it could see before the message.

    Attributes:
        seat: Observer seat.
        name: Observer name.
        role: Its true role (it knows it).
        team: Its team (always ``town``: observers are village-side).
        preamble: Number of leading ``history`` lines that are never dropped (seating, own role).
        history: Rendered history, one line per visible event before the message, oldest
            first; computed only through :func:`mafialab.engine.visible_events`.
        history_chars: Total characters of ``history``.
    """

    seat: int
    name: str
    role: str
    team: Team
    preamble: int
    history: list[str]
    history_chars: int


class BenchHeader(_Record):
    """First line of ``BENCH.jsonl``.

    Attributes:
        kind: ``"bench_header"``.
        version: :data:`BENCH_VERSION`.
        bench_id: SHA-256 (first 16 hex digits) of the items, so results name the exact benchmark.
        software: ``mafialab <version>`` that froze it.
        seed: Seed of the observer draws.
        max_observers: ``--observers``.
        annotator: Annotator of the source annotations.
        annotations_sha256: SHA-256 of the annotation file.
        render_version: Version of the event-to-text rendering.
        prompts: The prompt pack used by ``beliefshift run`` (copied in, so the file is self-contained).
        n_items: Number of items.
        n_observations: Number of (item, observer) pairs.
        games: Game ids used.
        meta: Free-form extras.
    """

    kind: Literal["bench_header"] = "bench_header"
    version: int = BENCH_VERSION
    bench_id: str
    software: str = ""
    seed: int
    max_observers: int
    annotator: str
    annotations_sha256: str = ""
    render_version: int
    prompts: dict[str, str]
    n_items: int
    n_observations: int
    games: list[str]
    meta: dict[str, Any] = Field(default_factory=dict)


class BenchItem(_Record):
    """One annotated (message, target) with its observers.

    Attributes:
        kind: ``"item"``.
        item_id: ``"<message_id>:t<target seat>"``.
        message_id: See :func:`message_id`.
        game_id: Game id.
        round: Round of the message (= day).
        index: Public message index within the round.
        seq: ``seq`` of the speech event.
        category: ``suspect`` or ``accuse``.
        evidence: Annotator's evidence span.
        accuser: The speaker.
        target: The player suspected or accused.
        message: The message as rendered to observers (one line).
        setting: Game setting text (players, roles, team names).
        game: Game name from the lexicon (``Werewolf``, ``Mafia``).
        town_team: Display name of the village side.
        mafia_team: Display name of the wolf side.
        eligible: Seats eligible to observe.
        observer_seed: Seed of this item's observer draw (derived from the bench seed).
        observers: The drawn observers (0..max_observers).
    """

    kind: Literal["item"] = "item"
    item_id: str
    message_id: str
    game_id: str
    round: int
    index: int
    seq: int
    category: Category
    evidence: str
    accuser: PlayerRef
    target: PlayerRef
    message: str
    setting: str
    game: str
    town_team: str
    mafia_team: str
    eligible: list[int]
    observer_seed: int
    observers: list[ObserverContext]


class Rating(_Record):
    """A pair of values about the accuser and the target.

    Priors and posteriors lie on -3..+3; anchored shifts on -3..+3; independent shifts on -6..+6.
    """

    accuser: int
    target: int


FailureCause = Literal["transport", "length", "empty", "non_json", "schema", "out_of_scale"]
"""Why a call failed: ``transport`` (the backend raised or reported a transport/rate-limit
error), ``length`` (generation cap hit), ``empty`` (no text), ``non_json`` (text is not a
JSON object), ``schema`` (JSON of the wrong shape), ``out_of_scale`` (a value not among the
seven labels). A failure is never scored as 0."""


class StageCall(_Record):
    """One elicitation stage of one observation, after retries.

    Attributes:
        stage: ``prior``, ``shift`` (anchored) or ``posterior`` (independent).
        ok: Whether a valid answer was obtained.
        attempts: Calls made (1 + retries used).
        causes: Failure cause of each failed attempt, in order.
        cause: Cause of the final failure, or ``None``.
        detail: Error detail of the final failure.
        text: Raw answer text of the last attempt (reasoning removed).
        reasoning: Reasoning text of the last attempt, kept apart from the answer.
        latency_s: Summed latency of the attempts.
        prompt_tokens: Prompt tokens of the last attempt (0 if unknown).
        completion_tokens: Completion tokens of the last attempt.
        cached_tokens: Prompt tokens served from a prefix cache, if reported.
    """

    stage: Literal["prior", "shift", "posterior"]
    ok: bool
    attempts: int
    causes: list[FailureCause] = Field(default_factory=list)
    cause: FailureCause | None = None
    detail: str = ""
    text: str = ""
    reasoning: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None


class ResultsHeader(_Record):
    """First line of a results file.

    Attributes:
        kind: ``"results_header"``.
        version: :data:`RESULTS_VERSION`.
        bench_id: Id of the benchmark answered.
        bench_version: Its format version.
        model: Model string.
        label: Configuration label used in reports (defaults to the model string).
        protocol: ``anchored`` or ``independent``.
        options: Run options (retries, concurrency, max_tokens, temperature, context window).
        software: ``mafialab <version>``.
    """

    kind: Literal["results_header"] = "results_header"
    version: int = RESULTS_VERSION
    bench_id: str
    bench_version: int
    model: str
    label: str
    protocol: Protocol
    options: dict[str, Any] = Field(default_factory=dict)
    software: str = ""


class ResultRecord(_Record):
    """One observation: an observer's prior and shift for one benchmark item.

    Attributes:
        kind: ``"result"``.
        bench_id: Benchmark id.
        item_id: Item id.
        message_id: Message id.
        game_id: Game id.
        model: Model string.
        label: Configuration label.
        protocol: ``anchored`` or ``independent``.
        category: ``suspect`` or ``accuse``.
        accuser: The speaker (true role/team).
        target: The target (true role/team).
        observer: The observer.
        ok: Whether every stage succeeded.
        cause: Cause of the first failing stage, or ``None``.
        prior: Prior about accuser and target (-3..+3), if obtained.
        shift: Shift (anchored: -3..+3 as answered; independent: posterior - prior, -6..+6).
        posterior: Posterior (independent protocol only).
        calls: One record per stage.
        history_events: Lines of history the observer had.
        history_dropped: Oldest history lines dropped to fit the context window (0 if none).
        prompt_chars: Characters of the longest prompt sent.
    """

    kind: Literal["result"] = "result"
    bench_id: str
    item_id: str
    message_id: str
    game_id: str
    model: str
    label: str
    protocol: Protocol
    category: Category
    accuser: PlayerRef
    target: PlayerRef
    observer: PlayerRef
    ok: bool
    cause: FailureCause | None = None
    prior: Rating | None = None
    shift: Rating | None = None
    posterior: Rating | None = None
    calls: list[StageCall] = Field(default_factory=list)
    history_events: int = 0
    history_dropped: int = 0
    prompt_chars: int = 0

    @model_validator(mode="after")
    def _on_scale(self) -> ResultRecord:
        """A valid observation carries its ratings, each on its scale (else a clear error)."""
        if self.ok:
            need = ["prior", "shift"] + (["posterior"] if self.protocol == "independent" else [])
            for name in need:
                if getattr(self, name) is None:
                    raise ValueError(f"{name}: missing in an observation marked ok")
        span = 6 if self.protocol == "independent" else 3
        for name, lim in (("prior", 3), ("posterior", 3), ("shift", span)):
            r = getattr(self, name)
            for who in ("accuser", "target"):
                v = getattr(r, who) if r is not None else 0
                if not -lim <= v <= lim:
                    raise ValueError(f"{name}.{who}: {v} is outside the scale -{lim}..+{lim}")
        return self


def too_few_to_judge(valid: int) -> str | None:
    """A note when ``valid`` observations are too few to say whether the answers vary, else ``None``.

    Below :data:`~mafialab._quality.CONSTANT_MIN_ANSWERS` valid observations no stage is
    flagged constant (:func:`constant_stages`): e.g. 4 answers all 0/0 are counted informative,
    but they say nothing about whether the model ever answers otherwise. A note, not a flag.
    """
    if 0 < valid < CONSTANT_MIN_ANSWERS:
        return (
            f"too few valid observations ({valid} < {CONSTANT_MIN_ANSWERS}) to judge whether the answers vary; "
            "completion counts them as informative"
        )
    return None


def constant_stages(records: list[ResultRecord]) -> dict[str, str]:
    """The stages whose answers never vary over a set of valid observations: ``{stage: "accuser/target"}``.

    A stage (``prior``, ``shift``, ``posterior``) is constant when its answers among the
    records marked ``ok`` number at least :data:`~mafialab._quality.CONSTANT_MIN_ANSWERS` and
    hold one distinct (accuser, target) pair, e.g. ``{"prior": "0/0", "shift": "0/0"}`` for a
    model answering 0/0 everywhere (:func:`mafialab._quality.constant_value`, the definition
    ``report`` and the viewer use for probe answers). Such answers measure nothing: the run's
    completion counts none of them as informative.
    """
    out: dict[str, str] = {}
    for stage in ("prior", "shift", "posterior"):
        values = [f"{r.accuser}/{r.target}" for rec in records if rec.ok and (r := getattr(rec, stage)) is not None]
        one = constant_value(values)
        if one is not None:
            out[stage] = one
    return out
