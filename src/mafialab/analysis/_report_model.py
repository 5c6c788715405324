"""The typed report: every section of ``mafialab report`` as a pydantic model (``docs/report-format.md``).

:func:`mafialab.analysis.compute_report` returns a :class:`Report`; ``report --format json``
prints ``Report.model_dump(mode="json")`` (the keys and values ``docs/report-format.md``
lists, in its order), ``--format csv`` and the viewer's corpus tables print the rows of
:func:`mafialab.analysis.report_rows`. Every model refuses a key it does not declare
(``extra="forbid"``) and a value of the wrong type, with a
:class:`pydantic.ValidationError` naming the field, so a section cannot drift from the
documented format unnoticed. The models are frozen: a report is a result, not a workspace.

Conventions (as documented): rates are fractions in [0, 1] (ratios may exceed 1), ``None``
where the denominator is 0; an interval (``CI``) is ``[lo, hi]``, the 95 % percentile
interval of the game-level cluster bootstrap, or ``None`` when fewer than two games
contribute or it cannot be computed.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

CI = Annotated[list[float], Field(min_length=2, max_length=2)] | None
"""A 95 % interval ``[lo, hi]``, or ``None`` (fewer than two games, or not computable)."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Inclusion(_Section):
    """Which games the figures count (:func:`mafialab.analysis._inclusion.inclusion_block`).

    Attributes:
        games: Games counted.
        branches: Fork branches among them (with ``--include-branches``).
        branches_left_out: Fork branches left out by the rule.
        degraded: Degraded games left out.
        skipped: Games of a skipped family left out.
        rule: The rule in one line (shown by the table, the dashboard and the Calibration tab).
    """

    games: int
    branches: int
    branches_left_out: int
    degraded: int
    skipped: int
    rule: str


class FirstOrderCI(_Section):
    """Intervals of the F1 rates of one round: each a :data:`CI` within [0, 1], named as the rate it bounds."""

    committed_accuracy: CI
    unknown_rate: CI
    recall: CI


class FirstOrder(_Section):
    """F1 for one round.

    Attributes:
        committed_accuracy: Share of committed (non-Unknown) guesses that are right.
        committed_n: Committed guesses.
        accuracy_chance: Mean share of alive others holding the target's true role.
        unknown_rate: Share of Unknown among recognised guesses.
        unknown_n: Recognised guesses.
        recall: Recall of the hidden team.
        recall_n: Its observations.
        recall_chance: Chance recall (alive hidden-team / alive others).
        ci95: Intervals of the three rates.
    """

    committed_accuracy: float | None
    committed_n: int
    accuracy_chance: float | None
    unknown_rate: float | None
    unknown_n: int
    recall: float | None
    recall_n: int
    recall_chance: float | None
    ci95: FirstOrderCI


class CalibrationBin(_Section):
    """One non-empty reliability bin ``[lo, hi)`` (the top bin ``[80, 100]``).

    Attributes:
        lo: Lower edge (confidence, 0-100).
        hi: Upper edge.
        n: Guesses in the bin.
        games: Games with a guess in the bin.
        accuracy: Share of them that are right.
        mean_confidence: Their mean confidence (0-100).
        ci95: Game-level interval of ``accuracy``.
        no_interval: Why ``ci95`` is ``None`` (fewer than 2 games), else ``None``.
    """

    lo: int
    hi: int
    n: int
    games: int
    accuracy: float
    mean_confidence: float
    ci95: CI
    no_interval: str | None


class CalibrationCI(_Section):
    """Intervals of ECE and Brier score: each a :data:`CI` within [0, 1]."""

    ece: CI
    brier: CI


class Calibration(_Section):
    """F2 calibration (:func:`mafialab.analysis._calibration.calibration_summary`).

    Attributes:
        population: What is counted, in words.
        games: Games with at least one counted guess.
        n: Committed guesses with a confidence in [0, 100].
        ece: Expected calibration error.
        brier: Brier score.
        bins: Non-empty bins in confidence order.
        ci95: Intervals of ``ece`` and ``brier``.
        no_interval: Why the intervals are ``None`` (fewer than 2 games), else ``None``.
    """

    population: str
    games: int
    n: int
    ece: float | None
    brier: float | None
    bins: list[CalibrationBin]
    ci95: CalibrationCI
    no_interval: str | None


class AgentCalibration(Calibration):
    """:class:`Calibration` of one agent's observers (:func:`mafialab.analysis.calibration`).

    Attributes:
        agent: The agent (model label) counted, or ``None`` for every observer.
    """

    agent: str | None


class SecondOrderCI(_Section):
    """Intervals of the F3 rates of one side: each a :data:`CI` (within [0, 1], the ratio's may exceed 1)."""

    overprediction_ratio: CI
    accuracy: CI
    majority_baseline: CI


class SecondOrder(_Section):
    """F3 over one side of predictors.

    Attributes:
        pairs: Scored (prediction, actual) pairs.
        overprediction_ratio: ``predicted_suspects / actual_suspects``.
        predicted_suspects: Pairs predicted "suspects".
        actual_suspects: Pairs actually "suspects".
        accuracy: Share of exact matches.
        majority_baseline: Share of the most common actual attitude.
        ci95: Intervals of the three rates.
    """

    pairs: int
    overprediction_ratio: float | None
    predicted_suspects: int
    actual_suspects: int
    accuracy: float | None
    majority_baseline: float | None
    ci95: SecondOrderCI


class SecondOrderSides(_Section):
    """F3 over all predictors and split by the predictor's side."""

    all: SecondOrder
    innocents: SecondOrder
    mafia: SecondOrder


class VoteRate(_Section):
    """One F4 measure of one side of voters.

    Attributes:
        hits: Votes matching the belief.
        n: Votes counted.
        rate: ``hits / n``.
        chance: Mean chance of a hit.
        ci95: Interval of ``rate``.
    """

    hits: int
    n: int
    rate: float | None
    chance: float | None
    ci95: CI


class BaselineRate(_Section):
    """One transcript-only predictor of the same votes.

    Attributes:
        hits: Votes predicted right.
        n: Votes where the predictor predicts.
        rate: ``hits / n``.
        ci95: Interval of ``rate``.
    """

    hits: int
    n: int
    rate: float | None
    ci95: CI


class Baselines(_Section):
    """The transcript predictors (:data:`mafialab.analysis._baselines.PREDICTORS`), in report order."""

    most_mentioned: BaselineRate
    most_accused: BaselineRate
    previous_target: BaselineRate


class Increment(_Section):
    """The probe's top-1 against one predictor on the votes where both predict.

    Attributes:
        n: Votes where both predict.
        probe_hits: Hits of the probe's top-1.
        baseline_hits: Hits of the predictor.
        b: Probe right and predictor wrong.
        c: The reverse.
        mcnemar_p: Exact two-sided McNemar p-value; ``None`` when ``b + c = 0``.
        diff: ``(probe_hits - baseline_hits) / n``.
        diff_ci95: Interval of ``diff``.
    """

    n: int
    probe_hits: int
    baseline_hits: int
    b: int
    c: int
    mcnemar_p: float | None
    diff: float | None
    diff_ci95: CI


class Increments(_Section):
    """:class:`Increment` per transcript predictor."""

    most_mentioned: Increment
    most_accused: Increment
    previous_target: Increment


class VoteCouplingSide(_Section):
    """F4 of one side of voters, with the transcript baselines and the increment over them."""

    top1: VoteRate
    committed_set: VoteRate
    post_vote_top1: VoteRate
    baselines: Baselines
    increment: Increments

    def measures(self) -> dict[str, VoteRate]:
        """The F4 measures by name, in report order (``top1``, ``committed_set``, ``post_vote_top1``)."""
        return {"top1": self.top1, "committed_set": self.committed_set, "post_vote_top1": self.post_vote_top1}


class VoteCoupling(_Section):
    """F4 by the voter's side."""

    innocents: VoteCouplingSide
    mafia: VoteCouplingSide


class DynamicsCI(_Section):
    """Intervals of the belief-dynamics rates: each a :data:`CI` (``volatility`` in [0, 2], the rates in [0, 1])."""

    volatility: CI
    flip_rate: CI
    return_rate: CI


class DynamicsGroup(_Section):
    """Belief dynamics of one group (:func:`mafialab.analysis._dynamics.dynamics_block`).

    Attributes:
        volatility: Mean L1 distance (0-2) between consecutive suspicion vectors.
        volatility_pairs: Their pairs.
        flip_rate: Top-suspect flips / pairs.
        flip_pairs: Pairs counted for flips.
        flips: Top-suspect flips.
        return_rate: Share of flips back to an earlier top suspect.
        returns: Their number.
        ci95: Intervals of the three rates.
    """

    volatility: float | None
    volatility_pairs: int
    flip_rate: float | None
    flip_pairs: int
    flips: int
    return_rate: float | None
    returns: int
    ci95: DynamicsCI


class RetestRound(_Section):
    """The test-retest floor of one round (:class:`RetestFloor`'s fields of the same names, for that round).

    Attributes:
        pairs: Consecutive repeat pairs (>= 1).
        flips: Top-suspect flips between repeats.
        flip_rate: ``flips / pairs`` in [0, 1].
    """

    pairs: int
    flips: int
    flip_rate: float


class RetestFloor(_Section):
    """The test-retest floor (:func:`mafialab.analysis.retest_floor`).

    Attributes:
        contexts: Frozen (point, player) contexts.
        pairs: Consecutive repeat pairs.
        flips: Top-suspect flips between repeats.
        flip_rate: ``flips / pairs``.
        volatility: Mean L1 distance between repeats (``None`` without a comparable pair).
        flip_rate_reweighted: Per-round rates weighted by the observed pairs per round.
        by_round: Round (as a string) -> its floor.
    """

    contexts: int
    pairs: int
    flips: int
    flip_rate: float
    volatility: float | None
    flip_rate_reweighted: float | None
    by_round: dict[str, RetestRound]


class Dynamics(DynamicsGroup):
    """Belief dynamics over all probed seats, per agent and per round, with the retest floor.

    Attributes:
        by_model: Agent -> its group.
        by_round: Round (as a string) -> its group.
        retest: The test-retest floor, or ``None`` without retest records.
    """

    by_model: dict[str, DynamicsGroup]
    by_round: dict[str, DynamicsGroup]
    retest: RetestFloor | None


class QuadrantCell(_Section):
    """Votes in one quadrant and their share of the assessed votes (``None`` without one)."""

    n: int
    share: float | None


class QuadrantCounts(_Section):
    """Innocent day votes by quadrant (MafiaScope §6) for one group of voters.

    Attributes:
        votes: Innocent day votes.
        assessed: Those with an assessment.
    """

    votes: int
    assessed: int
    correct_good: QuadrantCell
    policy_gap: QuadrantCell
    perception_gap: QuadrantCell
    luck: QuadrantCell

    def cells(self) -> dict[str, QuadrantCell]:
        """The four quadrants by name, in table order (:data:`mafialab.analysis._quadrants.QUADRANT_NAMES`)."""
        return {"correct_good": self.correct_good, "policy_gap": self.policy_gap,
                "perception_gap": self.perception_gap, "luck": self.luck}  # fmt: skip


class Quadrants(QuadrantCounts):
    """:class:`QuadrantCounts` over all voters, and per voter's agent in ``by_model``."""

    by_model: dict[str, QuadrantCounts]


class TokenCounts(_Section):
    """Token sums of one kind of call (game decisions or probes), as the logs record them.

    Attributes:
        prompt: Prompt tokens summed over the calls (>= 0), from the ``usage`` of each call in
            ``calls.jsonl``, or of each probe record when a game has no ``calls.jsonl``.
        completion: Completion tokens summed the same way (>= 0).
    """

    prompt: int
    completion: int


class Tokens(_Section):
    """Token sums of game and probe calls; ``None`` where no game records them."""

    game: TokenCounts | None
    probe: TokenCounts | None


class ProbeAnswers(_Section):
    """The fate of probe answers: records, JSON as given, usable after repair, unusable."""

    records: int
    raw: int
    repaired: int
    unusable: int


class Lost(_Section):
    """Why the unusable answers were lost (:data:`mafialab.analysis._instrument.LOSS_CAUSES`); sum: ``unusable``."""

    transport_error: int
    empty: int
    truncated: int
    unparseable: int
    wrong_shape: int
    schema_failed: int = 0


class ConstantAnswers(_Section):
    """A model whose answers to one probe id never vary (:mod:`mafialab._quality`).

    Attributes:
        model: The model.
        probe_id: The probe id.
        answers: Its answers (10 or more).
        value: The one value they all take (as text), or ``None`` when empty.
    """

    model: str
    probe_id: str
    answers: int
    value: str | None


class AnswerSpread(_Section):
    """A model's answers to one probe id: how many, and their one value when they never vary.

    Attributes:
        n: Answers.
        value: The common value (as text) when every answer is the same, else ``None``.
    """

    n: int
    value: str | None


class QualityCounts(_Section):
    """The counts of the quality signals (:func:`mafialab.analysis._quality.game_quality`), in report order.

    Attributes:
        speeches: Decision answers with a text.
        copied_speeches: Of them, those copying 8 or more consecutive words of the seat's own
            prompt (:func:`mafialab._quality.copied_words`).
        public_texts: Public texts of the game log (speeches, intros, vote statements) measured for junk.
        junk_speeches: Of them, those that are markup or punctuation, not words (:func:`mafialab._quality.is_junk`).
        off_roster: Names given that are no seat of the game (:func:`mafialab._quality.off_roster`).
    """

    speeches: int
    copied_speeches: int
    public_texts: int = 0
    junk_speeches: int = 0
    off_roster: int


class ModelQuality(QualityCounts):
    """The quality signals of one model: :class:`QualityCounts` and the spread of its answers.

    Attributes:
        answers: Probe id -> the spread of its answers.
    """

    answers: dict[str, AnswerSpread]


class Quality(QualityCounts):
    """Quality signals beside the integrity gate (``docs/metrics.md``, "Quality signals"): a warning, never a gate.

    :class:`QualityCounts` over all models, then:

    Attributes:
        constant: Models and probe ids whose 10+ answers take one value.
        by_model: The counts per model (sorted by name).
    """

    constant: list[ConstantAnswers]
    by_model: dict[str, ModelQuality]


class InstrumentPooled(_Section):
    """The instrument's cost and loss over all scored games.

    Attributes:
        games: Games.
        game_calls: Model calls for game decisions.
        probe_calls: Model calls for probes.
        multiplier: (probe calls + game calls) / game calls; ``None`` without game calls.
        tokens: Token sums.
        tokens_games: Games whose logs record tokens.
        probe_answers: The fate of the probe answers.
        lost: Why unusable answers were lost.
        probe_failures: Probe id -> answers lost because none came (sorted; only ids with one).
        quality: The quality signals over the games (report format 3).
    """

    games: int
    game_calls: int
    probe_calls: int
    multiplier: float | None
    tokens: Tokens
    tokens_games: int
    probe_answers: ProbeAnswers
    lost: Lost
    probe_failures: dict[str, int]
    quality: Quality


class InstrumentGame(_Section):
    """The instrument of one game (:func:`mafialab.analysis._instrument.game_instrument`).

    The fields other than ``game_id`` and ``calls_source`` mean what they mean in
    :class:`InstrumentPooled`, for this game alone.

    Attributes:
        game_id: The game.
        calls_source: Where the call counts come from (``calls.jsonl`` or ``game log``).
        game_calls: Model calls for game decisions (>= 0).
        probe_calls: Model calls for probes (>= 0).
        multiplier: (probe calls + game calls) / game calls (>= 1); ``None`` without game calls.
        tokens: Token sums.
        probe_answers: The fate of the probe answers.
        lost: Why unusable answers were lost.
        probe_failures: Probe id -> answers lost because none came.
        quality: The game's quality signals (report format 3).
    """

    game_id: str
    calls_source: str
    game_calls: int
    probe_calls: int
    multiplier: float | None
    tokens: Tokens
    probe_answers: ProbeAnswers
    lost: Lost
    probe_failures: dict[str, int]
    quality: Quality


class Instrument(_Section):
    """The instrument's cost and loss (:func:`mafialab.analysis.instrument`).

    Attributes:
        pooled: Over every scored game.
        games: One row per scored game, in load order.
    """

    pooled: InstrumentPooled
    games: list[InstrumentGame]


class MetricCoverage(_Section):
    """Whether one metric could be computed, and which probe it needs.

    Attributes:
        name: The metric in words.
        needs: Probe ids whose answers it reads (all needed).
        computed: Every needed probe has a usable answer.
        missing: Needed probe ids without a usable answer.
        why: The sentence shown when it is not computed, else ``None``.
    """

    name: str
    needs: list[str]
    computed: bool
    missing: list[str]
    why: str | None


class Coverage(_Section):
    """What the probe battery supports (:func:`mafialab.analysis.coverage`).

    Attributes:
        batteries: Probe batteries recorded in the headers.
        answers: Probe id -> usable answers.
        metrics: Report section (or ``vote_coupling.<measure>``) -> its coverage.
    """

    batteries: list[str]
    answers: dict[str, int]
    metrics: dict[str, MetricCoverage]


class ReadoutBin(_Section):
    """One reliability bin of a readout's confidence (:mod:`mafialab.analysis._readouts`).

    Attributes:
        lo: Lower edge (confidence in [0, 1]).
        hi: Upper edge.
        n: Answers in the bin.
        accuracy: Share of them whose pick is on the hidden team (``None`` when empty).
        confidence: Their mean confidence (``None`` when empty).
    """

    lo: float
    hi: float
    n: int
    accuracy: float | None
    confidence: float | None


class ReadoutCI(_Section):
    """95 % cluster-bootstrap intervals of a readout's rates (``None``: no interval)."""

    accuracy: CI
    ece: CI
    brier: CI
    vote_coupling: CI


class ReadoutSide(_Section):
    """One readout of the top suspect: stated (name, confidence) or logprob (argmax, its probability).

    Attributes:
        n: Answers (observers outside the hidden team).
        accuracy: Share whose pick is on the hidden team.
        mean_confidence: Mean confidence of the pick in [0, 1] (stated: ``confidence / 100``).
        ece: Expected calibration error over :data:`~mafialab.analysis._readouts.BINS` bins.
        brier: Mean ``(confidence - hit)^2``.
        vote_n: Answers followed by a day vote of the observer.
        vote_coupling: Share of those votes cast for the pick.
        bins: Reliability bins.
        ci95: Intervals.
    """

    n: int
    accuracy: float | None
    mean_confidence: float | None
    ece: float | None
    brier: float | None
    vote_n: int
    vote_coupling: float | None
    bins: list[ReadoutBin]
    ci95: ReadoutCI


class ReadoutDynamics(_Section):
    """Belief dynamics of the logprob readout, per observer between consecutive answers.

    Attributes:
        steps: Consecutive pairs compared.
        volatility: Mean total-variation distance between the two distributions.
        flip_rate: Share of pairs whose most probable candidate changed.
        retest_floor: Top-suspect flip rate on a frozen context: 0 (no sampling).
    """

    steps: int
    volatility: float | None
    flip_rate: float | None
    retest_floor: float


class Readouts(_Section):
    """Stated beliefs beside log-probability beliefs for the same question at the same steps.

    Defined once in :mod:`mafialab.analysis._readouts` (``docs/probes.md``).

    Attributes:
        stated: The stated readout.
        logprob: The logprob readout.
        pairs: Steps with both readouts.
        agreement: Share of those where both name the same player.
        agreement_ci95: Its interval.
        dynamics: Dynamics of the logprob readout.
    """

    stated: ReadoutSide
    logprob: ReadoutSide
    pairs: int
    agreement: float | None
    agreement_ci95: CI
    dynamics: ReadoutDynamics


class Report(_Section):
    """The report of a corpus: F1-F4 pooled over games with intervals (``docs/report-format.md``).

    ``model_dump(mode="json")`` is the object ``mafialab report --format json`` prints, key
    for key; :func:`mafialab.analysis.report_rows` flattens it into the CSV rows.

    Attributes:
        method: ``default`` or ``mafiascope``.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.
        games: Games scored.
        skipped: Ids of games of a skipped family.
        degraded: Ids of games the integrity gate marked degraded (left out of every number).
        inclusion: Which games the figures count, with the rule in one line.
        no_interval: Why no interval is given anywhere (fewer than two games), else ``None``.
        min_games_for_interval: Games a statistic needs for an interval.
        winners: Team -> games won (``unfinished`` for games without a winner).
        probe_records: Probe records in the scored games.
        parsed: Records whose answer parsed (an empty list counts).
        first_order: Round (as a string) -> F1.
        calibration: F2.
        second_order: F3.
        vote_coupling: F4, with transcript baselines and the increment over them.
        dynamics: Belief dynamics (MafiaScope §7).
        quadrants: Innocent day votes by quadrant (MafiaScope §6).
        instrument: Calls, tokens and the fate of probe answers.
        coverage: Which metrics the probe answers support.
        readouts: Stated vs logprob readouts (``None`` when no game has a logprob answer).
        not_applicable: Sections the rule sets of the counted games give no meaning (section ->
            why; e.g. the quadrant table of day votes for mission games); left out when empty.
    """

    method: str
    resamples: int
    seed: int
    games: int
    skipped: list[str]
    degraded: list[str]
    inclusion: Inclusion
    no_interval: str | None
    min_games_for_interval: int
    winners: dict[str, int]
    probe_records: int
    parsed: int
    first_order: dict[str, FirstOrder]
    calibration: Calibration
    second_order: SecondOrderSides
    vote_coupling: VoteCoupling
    dynamics: Dynamics
    quadrants: Quadrants
    instrument: Instrument
    coverage: Coverage
    readouts: Readouts | None = None
    not_applicable: dict[str, str] = {}

    @model_serializer(mode="wrap")
    def _drop_empty_not_applicable(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # reports of elimination games serialise as before the field existed
        data: dict[str, Any] = handler(self)
        if not data.get("not_applicable", 1):
            del data["not_applicable"]
        return data


class ReportRow(_Section):
    """One number of a report (:func:`mafialab.analysis.report_rows`): a CSV row, a dashboard row.

    Attributes:
        section: ``summary``, ``first_order``, ``calibration``, ``second_order``,
            ``vote_coupling``, ``instrument``, ``dynamics`` or ``quadrants``.
        group: Round, side, bin, game, model, ... (``round 1``, ``innocents top1``); may be empty.
        name: The JSON key of the number (``committed_accuracy``).
        value: The number (the inclusion rule's row: its line of text); ``None`` for no value.
        ci: Its 95 % interval ``[lo, hi]``, or ``None`` when it has none.
        n: For a rate, the count it is over (``committed_n`` for ``committed_accuracy``,
            ``pairs`` for the F3 rates, ``n`` for an F4 rate); ``None`` for a count.
    """

    section: str
    group: str
    name: str
    value: int | float | str | None
    ci: CI = None
    n: int | None = None

    def csv_fields(self) -> dict[str, int | float | str | None]:
        """The row in the CSV layout (``docs/report-format.md``): ``section, group, name, value, ci_lo, ci_hi``."""
        lo, hi = (None, None) if self.ci is None else self.ci
        return {"section": self.section, "group": self.group, "name": self.name, "value": self.value,
                "ci_lo": lo, "ci_hi": hi}  # fmt: skip
