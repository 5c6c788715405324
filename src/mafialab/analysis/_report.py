"""The report: F1-F4 pooled over games, with cluster-bootstrap intervals (``docs/report-format.md``)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mafialab.analysis._baselines import PREDICTORS
from mafialab.analysis._calibration import calibration_summary
from mafialab.analysis._coverage import coverage_of
from mafialab.analysis._data import NOT_APPLICABLE_MISSION, GameData
from mafialab.analysis._dynamics import DYNAMICS_FIELDS, dynamics_block, retest_floor
from mafialab.analysis._inclusion import inclusion_block
from mafialab.analysis._instrument import pooled_instrument
from mafialab.analysis._metrics import (
    F1_FIELDS,
    F3_FIELDS,
    F4_METRICS,
    SIDES,
    VOTER_SIDES,
    Method,
    calibration_size,
    get_method,
)
from mafialab.analysis._quadrants import QUADRANT_NAMES
from mafialab.analysis._readouts import READOUT_SIZE, readouts_block
from mafialab.analysis._report_model import (
    CI,
    BaselineRate,
    Baselines,
    Coverage,
    Dynamics,
    DynamicsGroup,
    FirstOrder,
    FirstOrderCI,
    Inclusion,
    Increment,
    Increments,
    Instrument,
    InstrumentGame,
    InstrumentPooled,
    QuadrantCell,
    QuadrantCounts,
    Quadrants,
    QualityCounts,
    Readouts,
    Report,
    ReportRow,
    RetestFloor,
    SecondOrder,
    SecondOrderCI,
    SecondOrderSides,
    VoteCoupling,
    VoteCouplingSide,
    VoteRate,
)
from mafialab.analysis._stats import (
    MIN_CLUSTERS,
    bootstrap_weights,
    cluster_bootstrap_ci,
    finite_or_none,
    mcnemar_exact,
    no_interval_reason,
    ratio_statistic,
)
from mafialab.analysis._summaries import iter_summaries
from mafialab.analysis._summary import GameSummary, Stats, SummaryCache, summarise_game
from mafialab.record import RETEST_FILE, RetestRecord, find_files, read_retests


def _ci(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


def _majority(x: np.ndarray) -> np.ndarray:
    n = x[..., 0]
    return np.where(n > 0, x[..., 2:5].max(axis=-1) / np.where(n > 0, n, 1), np.nan)


def _diff(x: np.ndarray) -> np.ndarray:
    """Probe top-1 rate minus baseline rate on common votes: (probe_hits - baseline_hits) / n."""
    n = x[..., 0]
    return np.where(n > 0, (x[..., 1] - x[..., 2]) / np.where(n > 0, n, 1), np.nan)


class ReportBuilder:
    """The report of a corpus, built one game summary at a time (:func:`compute_report` uses it).

    Each :meth:`add` keeps a few hundred numbers of the game (its per-game sums, for the
    bootstrap) and its instrument row; counts that need no interval are added up at once.
    So memory grows with the number of games, not with their records.

    Args:
        method: ``"default"``, ``"mafiascope"`` or a :class:`Method`.

    Raises:
        ValueError: On an unknown method name.
    """

    def __init__(self, method: Method | str = "default") -> None:
        self.method = get_method(method) if isinstance(method, str) else method
        self.skipped: list[str] = []
        self.degraded: list[str] = []
        self.branches = 0  # fork branches among the counted games (with --include-branches)
        self.winners: Counter[str] = Counter()
        self.probe_records = 0
        self.parsed = 0
        self.usable: Counter[str] = Counter()
        self.batteries: set[str] = set()
        self.quadrants: dict[str, np.ndarray] = {}
        self.families: Counter[str] = Counter()  # counted games per family (mission games: no elimination)
        self._ids: list[str] = []
        self._roots: list[str] = []
        # per game, compactly: one array of its sums (the fixed-layout sections, then F1 per
        # round, then dynamics per group), the rounds and dynamics groups present, its instrument row
        self._sums: list[np.ndarray] = []
        self._rounds: list[tuple[int, ...]] = []
        self._dyn_keys: list[tuple[str, ...]] = []
        self._instrument: list[str] = []
        # per game, its readout sums (analysis._readouts), or None for a game without a logprob answer
        self._readouts: list[np.ndarray | None] = []

    def add(self, summary: GameSummary, stats: Stats | None = None) -> None:
        """Count one game: its ``summary.stats``, or ``stats`` (a group of its seats) when given.

        Raises:
            ValueError: The summary was computed under another method.
        """
        s = summary
        if s.method != self.method.name:
            raise ValueError(f"summary of {s.game_id} was computed under method {s.method!r}, not {self.method.name!r}")
        if s.skipped:
            self.skipped.append(s.game_id)
            return
        if s.degraded:
            self.degraded.append(s.game_id)
            return
        self.families[s.family] += 1
        st = s.stats if stats is None else stats
        if st is None:
            raise ValueError(f"summary of {s.game_id} holds no statistics")
        self._ids.append(s.game_id)
        self._roots.append(s.root or s.game_id)
        self.branches += s.branch
        self.winners[s.winner or "unfinished"] += 1
        if s.battery:
            self.batteries.add(s.battery)
        self.probe_records += st.probe_records
        self.parsed += st.parsed
        self.usable.update(st.usable)
        for model, q in st.quadrants.items():
            self.quadrants[model] = self.quadrants.get(model, np.zeros(len(q), dtype=int)) + np.array(q)
        rounds = tuple(st.first_order)
        dyn_keys = tuple(sys.intern(k) for k in st.dynamics)
        self._rounds.append(rounds)
        self._dyn_keys.append(dyn_keys)
        self._sums.append(
            np.array(
                [
                    *st.calibration,
                    *(x for side in SIDES for x in st.second_order[side]),
                    *(x for side in VOTER_SIDES for m in F4_METRICS for x in st.vote_coupling[f"{side} {m}"]),
                    *(x for side in VOTER_SIDES for p in PREDICTORS for x in st.baselines[f"{side} {p}"]),
                    *(x for side in VOTER_SIDES for p in PREDICTORS for x in st.increment[f"{side} {p}"]),
                    *(x for r in rounds for x in st.first_order[r]),
                    *(x for k in dyn_keys for x in st.dynamics[k]),
                ]
            )
        )
        self._instrument.append(json.dumps(st.instrument))
        self._readouts.append(np.array(st.readouts) if any(st.readouts) else None)

    def report(
        self,
        *,
        resamples: int = 1000,
        seed: int = 0,
        retests: Sequence[RetestRecord] = (),
        branches_left_out: Sequence[str] = (),
    ) -> Report:
        """The report over the games added so far (as :func:`compute_report` returns it).

        ``branches_left_out``: ids of the fork branches the caller left out, stated in
        ``inclusion`` (:func:`mafialab.analysis._inclusion.inclusion_block`).
        """
        m = self.method
        n_games = len(self._ids)
        # branches of one root game are one cluster (they share the root's prefix)
        roots = sorted(set(self._roots))
        index = {r: i for i, r in enumerate(roots)}
        cluster = np.array([index[r] for r in self._roots], dtype=int)
        weights = bootstrap_weights(max(len(roots), 1), resamples, seed)
        widths = [calibration_size(m), len(SIDES) * len(F3_FIELDS), len(VOTER_SIDES) * len(F4_METRICS) * 3,
                  len(VOTER_SIDES) * len(PREDICTORS) * 2, len(VOTER_SIDES) * len(PREDICTORS) * 5]  # fmt: skip
        width = sum(widths)
        fixed = np.array([x[:width] for x in self._sums]) if n_games else np.zeros((0, width))
        nf, nd = len(F1_FIELDS), len(DYNAMICS_FIELDS)
        f1_games = [
            {r: x[width + i * nf : width + (i + 1) * nf] for i, r in enumerate(rs)}
            for x, rs in zip(self._sums, self._rounds, strict=True)
        ]
        dyn_games = [
            {k: x[width + len(rs) * nf + i * nd : width + len(rs) * nf + (i + 1) * nd] for i, k in enumerate(ks)}
            for x, rs, ks in zip(self._sums, self._rounds, self._dyn_keys, strict=True)
        ]
        cx, f3, f4, tb, inc = (np.ascontiguousarray(p) for p in np.split(fixed, np.cumsum(widths)[:-1], axis=1))

        def by_cluster(per_game: np.ndarray) -> np.ndarray:
            # rows per game -> rows per root game (sums), the unit the bootstrap resamples
            if len(roots) == per_game.shape[0]:
                return per_game
            x = np.zeros((len(roots), *per_game.shape[1:]))
            np.add.at(x, cluster, per_game)
            return x

        def ci(per_game: np.ndarray, stat) -> list[float] | None:  # type: ignore[no-untyped-def]
            if n_games == 0:
                return None
            return _ci(cluster_bootstrap_ci(by_cluster(per_game), stat, weights=weights))

        # F1
        rounds = sorted({r for pr in f1_games for r in pr})
        first: dict[str, FirstOrder] = {}
        for r in rounds:
            x = np.array([pr.get(r, np.zeros(len(F1_FIELDS))) for pr in f1_games])
            tot = x.sum(axis=0)
            acc, unk, rec = ratio_statistic(0, 1), ratio_statistic(4, 5), ratio_statistic(6, 7)
            first[str(r)] = FirstOrder(
                committed_accuracy=finite_or_none(acc(tot)),
                committed_n=int(tot[1]),
                accuracy_chance=finite_or_none(ratio_statistic(2, 3)(tot)),
                unknown_rate=finite_or_none(unk(tot)),
                unknown_n=int(tot[5]),
                recall=finite_or_none(rec(tot)),
                recall_n=int(tot[7]),
                recall_chance=finite_or_none(ratio_statistic(8, 9)(tot)),
                ci95=FirstOrderCI(committed_accuracy=ci(x, acc), unknown_rate=ci(x, unk), recall=ci(x, rec)),
            )
        # F2: one definition (analysis._calibration), shared with the viewer
        calibration = calibration_summary(by_cluster(cx) if n_games else cx, m, weights if n_games else None)
        # F3
        second: dict[str, SecondOrder] = {}
        for i, side in enumerate(SIDES):
            x = np.ascontiguousarray(f3[:, i * len(F3_FIELDS) : (i + 1) * len(F3_FIELDS)])
            tot = x.sum(axis=0) if n_games else np.zeros(len(F3_FIELDS))
            ratio, accf = ratio_statistic(7, 4), ratio_statistic(1, 0)
            second[side] = SecondOrder(
                pairs=int(tot[0]),
                overprediction_ratio=finite_or_none(ratio(tot)),
                predicted_suspects=int(tot[7]),
                actual_suspects=int(tot[4]),
                accuracy=finite_or_none(accf(tot)),
                majority_baseline=finite_or_none(_majority(tot)),
                ci95=SecondOrderCI(
                    overprediction_ratio=ci(x, ratio), accuracy=ci(x, accf), majority_baseline=ci(x, _majority)
                ),
            )
        # F4
        coupling: dict[str, VoteCouplingSide] = {}
        for si, side in enumerate(VOTER_SIDES):
            measures: dict[str, VoteRate] = {}
            for mi, metric in enumerate(F4_METRICS):
                j = (si * len(F4_METRICS) + mi) * 3
                x = np.ascontiguousarray(f4[:, j : j + 3])
                tot = x.sum(axis=0) if n_games else np.zeros(3)
                rate = ratio_statistic(0, 1)
                measures[metric] = VoteRate(
                    hits=int(tot[0]),
                    n=int(tot[1]),
                    rate=finite_or_none(rate(tot)),
                    chance=finite_or_none(ratio_statistic(2, 1)(tot)),
                    ci95=ci(x, rate),
                )
            baselines: dict[str, BaselineRate] = {}
            increment: dict[str, Increment] = {}
            for pi, pred in enumerate(PREDICTORS):
                j = si * len(PREDICTORS) + pi
                x = np.ascontiguousarray(tb[:, 2 * j : 2 * j + 2])
                tot = x.sum(axis=0) if n_games else np.zeros(2)
                rate = ratio_statistic(0, 1)
                baselines[pred] = BaselineRate(
                    hits=int(tot[0]), n=int(tot[1]), rate=finite_or_none(rate(tot)), ci95=ci(x, rate)
                )
                x = np.ascontiguousarray(inc[:, 5 * j : 5 * j + 5])
                tot = x.sum(axis=0) if n_games else np.zeros(5)
                b, c = int(tot[3]), int(tot[4])
                increment[pred] = Increment(
                    n=int(tot[0]),
                    probe_hits=int(tot[1]),
                    baseline_hits=int(tot[2]),
                    b=b,
                    c=c,
                    mcnemar_p=mcnemar_exact(b, c).p,
                    diff=finite_or_none(_diff(tot)),
                    diff_ci95=ci(x, _diff),
                )
            coupling[side] = VoteCouplingSide(
                **measures, baselines=Baselines(**baselines), increment=Increments(**increment)
            )

        # belief dynamics (MafiaScope §7)
        def dyn_ci(per_game: np.ndarray, num: int, den: int) -> list[float] | None:
            return ci(per_game, ratio_statistic(num, den))

        def dyn_group(key: str) -> DynamicsGroup:
            x = np.array([g.get(key, np.zeros(len(DYNAMICS_FIELDS))) for g in dyn_games])
            return DynamicsGroup.model_validate(dynamics_block(x.reshape(len(dyn_games), len(DYNAMICS_FIELDS)), dyn_ci))

        keys = {tuple(k.split(":", 1)) for g in dyn_games for k in g}
        dyn_rounds = sorted((k for k in keys if k[0] == "round"), key=lambda k: int(k[1]))
        by_round = {k[1]: dyn_group(f"round:{k[1]}") for k in dyn_rounds}
        observed = {k: v.flip_pairs for k, v in by_round.items()}
        floor = retest_floor(list(retests), observed) if retests else None
        dynamics = Dynamics(
            **dict(dyn_group("all:")),
            by_model={k[1]: dyn_group(f"model:{k[1]}") for k in sorted(k for k in keys if k[0] == "model")},
            by_round=by_round,
            retest=None if floor is None else RetestFloor.model_validate(floor),
        )
        return Report(
            method=m.name,
            resamples=resamples,
            seed=seed,
            games=n_games,
            skipped=list(self.skipped),
            degraded=list(self.degraded),
            inclusion=Inclusion.model_validate(
                inclusion_block(n_games, self.branches, len(self.degraded), len(self.skipped), len(branches_left_out))
            ),
            no_interval=no_interval_reason(n_games),
            min_games_for_interval=MIN_CLUSTERS,
            winners=dict(sorted(self.winners.items())),
            probe_records=self.probe_records,
            parsed=self.parsed,
            first_order=first,
            calibration=calibration,
            second_order=SecondOrderSides(**second),
            vote_coupling=VoteCoupling(**coupling),
            dynamics=dynamics,
            quadrants=_quadrant_table(self.quadrants),
            instrument=Instrument.model_validate(pooled_instrument([json.loads(row) for row in self._instrument])),
            coverage=Coverage.model_validate(coverage_of(self.usable, self.batteries)),
            readouts=self._readouts_section(ci),
            not_applicable=self._not_applicable(),
        )

    def _readouts_section(self, ci: Any) -> Readouts | None:
        """Stated vs logprob readouts (:func:`~mafialab.analysis._readouts.readouts_block`)."""
        if not any(x is not None for x in self._readouts):
            return None
        zeros = np.zeros(READOUT_SIZE)
        per_game = np.array([zeros if x is None else x for x in self._readouts])
        block = readouts_block(per_game, lambda x, stat: ci(np.ascontiguousarray(x), stat))
        return None if block is None else Readouts.model_validate(block)

    def _not_applicable(self) -> dict[str, str]:
        """Sections that need an elimination, when every counted game is a mission game (no elimination)."""
        if not self.families or set(self.families) != {"mission"}:
            return {}
        return {"quadrants": NOT_APPLICABLE_MISSION, "vote_coupling_baselines": NOT_APPLICABLE_MISSION}


def compute_report(
    games: Iterable[GameData | GameSummary],
    method: Method | str = "default",
    *,
    resamples: int = 1000,
    seed: int = 0,
    retests: Sequence[RetestRecord] = (),
    branches_left_out: Sequence[str] = (),
) -> Report:
    """Compute the full report (F1-F4 with 95 % cluster-bootstrap intervals) over ``games``.

    Each game is reduced to its summary (:func:`mafialab.analysis.summarise_game`) and the
    corpus is computed from summaries only (:class:`ReportBuilder`), so ``games`` may be a
    generator that reads one game at a time.

    Games of a skipped family (the Resistance variant) are counted under ``skipped`` and left
    out of everything else. Games sharing a root (branches of one game, when included) form
    one bootstrap cluster: their per-game sums are added before resampling. Point estimates
    pool numerators and denominators over games; each
    ``ci95`` is the 2.5-97.5 percentile interval over ``resamples`` game-level resamples drawn
    once (seeded) and shared by every statistic.

    Args:
        games: Flattened games (:func:`mafialab.analysis.load_games`) or their summaries
            (computed under ``method``).
        method: ``"default"``, ``"mafiascope"`` or a :class:`Method`.
        resamples: Bootstrap resamples (1,000 by default).
        seed: Bootstrap seed.
        retests: Test-retest records (``mafialab retest``); their flip rate is reported as
            ``dynamics.retest`` beside the observed rate.
        branches_left_out: Ids of the fork branches the caller left out
            (:func:`mafialab.analysis.load_games`'s ``left_out``), stated in ``inclusion``.

    Returns:
        A :class:`~mafialab.analysis._report_model.Report`; its ``model_dump(mode="json")``
        is the object documented in ``docs/report-format.md`` (``report --format json``): ``games``,
        ``winners``, ``probe_records``, ``parsed``, ``first_order``, ``calibration``,
        ``second_order``, ``vote_coupling`` (with the transcript ``baselines`` and the probe's
        ``increment`` over them per voter side: :func:`mafialab.analysis.transcript_baselines`),
        ``instrument`` (calls, tokens and the fate of probe answers, per game and pooled:
        :func:`mafialab.analysis.instrument`), ``dynamics`` (belief dynamics, MafiaScope §7),
        ``quadrants`` (innocent day votes by quadrant, MafiaScope §6), plus ``method``,
        ``resamples``, ``seed``, ``skipped``, ``degraded`` (ids of games the integrity gate
        marked degraded: left out of every number, as in the viewer), ``no_interval``,
        ``inclusion`` (what the figures count and leave out, with the rule in one line:
        :func:`mafialab.analysis._inclusion.inclusion`).
        ``calibration`` is :func:`mafialab.analysis._calibration.calibration_summary` (with its
        ``population`` in words and per-bin intervals). ``coverage``
        (:func:`mafialab.analysis.coverage`) says which metrics the probe answers support
        and, for each missing one, which probe it needs. Rates whose denominator is 0
        are ``null``; an interval is ``null`` when fewer than
        :data:`~mafialab.analysis.MIN_CLUSTERS` games contribute to its statistic (a bootstrap
        over one game has zero width) or it cannot be computed; ``no_interval`` is the reason
        when the whole report has fewer than two games.

    Raises:
        ValueError: On an unknown method name, or a summary computed under another method.
    """
    b = ReportBuilder(method)
    for g in games:
        b.add(g if isinstance(g, GameSummary) else summarise_game(g, b.method))
    return b.report(resamples=resamples, seed=seed, retests=retests, branches_left_out=branches_left_out)


def _quadrant_counts(q: np.ndarray) -> dict[str, Any]:
    """``q``: ``[votes, assessed, *QUADRANT_NAMES counts]`` -> the fields of a :class:`QuadrantCounts`."""
    votes, assessed = int(q[0]), int(q[1])
    out: dict[str, Any] = {"votes": votes, "assessed": assessed}
    for i, name in enumerate(QUADRANT_NAMES):
        n = int(q[2 + i])
        out[name] = QuadrantCell(n=n, share=n / assessed if assessed else None)
    return out


def _quadrant_table(by_model: dict[str, np.ndarray]) -> Quadrants:
    """Innocent day votes by quadrant, overall and per voter model (MafiaScope §6)."""
    total = sum(by_model.values(), np.zeros(2 + len(QUADRANT_NAMES), dtype=int))
    return Quadrants(
        **_quadrant_counts(total),
        by_model={m: QuadrantCounts(**_quadrant_counts(by_model[m])) for m in sorted(by_model)},
    )


def find_retests(root: Path) -> list[Path]:
    """Every ``retest.jsonl`` under ``root`` (sorted)."""
    return find_files(Path(root), RETEST_FILE)


def report(
    root: Path,
    method: Method | str = "default",
    *,
    resamples: int = 1000,
    seed: int = 0,
    cache: Path | SummaryCache | None = None,
) -> Report:
    """:func:`compute_report` over every game under ``root``, read one game at a time.

    Test-retest records found under ``root`` (:func:`find_retests`) are used for the floor.

    Args:
        root: Folder searched recursively for ``game.jsonl`` (branches left out).
        method: ``"default"``, ``"mafiascope"`` or a :class:`Method`.
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.
        cache: Folder of cached per-game summaries (``docs/report-format.md``; e.g.
            :func:`~mafialab.analysis._summary.default_cache_dir`), or a
            :class:`~mafialab.analysis._summary.SummaryCache`; ``None``: every game's summary
            is computed and nothing is stored.

    Raises:
        FileNotFoundError: If ``root`` holds no game.
        mafialab.record.LogFormatError: If a game log has no valid header.
        ValueError: On an unknown method name.
    """
    retests = read_retests(find_retests(root))
    store = SummaryCache(cache) if isinstance(cache, (str, Path)) else cache
    summaries = iter_summaries(root, method, cache=store)
    return compute_report(summaries, method, resamples=resamples, seed=seed, retests=retests)


def report_rows(rep: Report) -> list[ReportRow]:
    """Flatten a report into one row per number: the CSV layout and the dashboard's corpus tables.

    ``mafialab report --format csv`` prints these rows (:meth:`ReportRow.csv_fields`), and the
    viewer's corpus tables show the F1-F4 rates among them, so both print the same numbers.

    Returns:
        :class:`~mafialab.analysis._report_model.ReportRow` objects in report order:
        ``section`` (``summary``, ``first_order``, ``calibration``, ``second_order``,
        ``vote_coupling``, ``instrument``, ``dynamics``, ``quadrants``), ``group`` (round,
        side, bin, game, model; may be empty), ``name`` (the JSON key), ``value``, ``ci`` (the
        95 % interval, ``None`` when the number has none) and ``n`` (the count a rate is over).
    """
    rows: list[ReportRow] = []

    def add(section: str, group: str, name: str, value: Any, ci: CI = None, n: int | None = None) -> None:
        rows.append(ReportRow(section=section, group=group, name=name, value=value, ci=ci, n=n))

    for k, v in (("games", rep.games), ("probe_records", rep.probe_records), ("parsed", rep.parsed)):
        add("summary", "", k, v)
    for k, v in rep.inclusion:  # what the figures count and leave out, and the rule in words
        if k != "games":
            add("summary", "inclusion", k, v)
    for w, c in rep.winners.items():
        add("summary", "winners", w, c)
    for r, f in rep.first_order.items():
        g = f"round {r}"
        add("first_order", g, "committed_accuracy", f.committed_accuracy, f.ci95.committed_accuracy, f.committed_n)
        add("first_order", g, "committed_n", f.committed_n)
        add("first_order", g, "accuracy_chance", f.accuracy_chance)
        add("first_order", g, "unknown_rate", f.unknown_rate, f.ci95.unknown_rate, f.unknown_n)
        add("first_order", g, "unknown_n", f.unknown_n)
        add("first_order", g, "recall", f.recall, f.ci95.recall, f.recall_n)
        add("first_order", g, "recall_n", f.recall_n)
        add("first_order", g, "recall_chance", f.recall_chance)
    cal = rep.calibration
    add("calibration", "", "n", cal.n)
    add("calibration", "", "ece", cal.ece, cal.ci95.ece, cal.n)
    add("calibration", "", "brier", cal.brier, cal.ci95.brier, cal.n)
    for b in cal.bins:
        add("calibration", f"bin {b.lo}-{b.hi}", "n", b.n)
        add("calibration", f"bin {b.lo}-{b.hi}", "accuracy", b.accuracy, n=b.n)
        add("calibration", f"bin {b.lo}-{b.hi}", "mean_confidence", b.mean_confidence, n=b.n)
    for side, s in rep.second_order:
        add("second_order", side, "pairs", s.pairs)
        add("second_order", side, "overprediction_ratio", s.overprediction_ratio, s.ci95.overprediction_ratio, s.pairs)
        add("second_order", side, "predicted_suspects", s.predicted_suspects)
        add("second_order", side, "actual_suspects", s.actual_suspects)
        add("second_order", side, "accuracy", s.accuracy, s.ci95.accuracy, s.pairs)
        add("second_order", side, "majority_baseline", s.majority_baseline, s.ci95.majority_baseline, s.pairs)
    for side, v in rep.vote_coupling:
        for metric, x in v.measures().items():
            add("vote_coupling", f"{side} {metric}", "hits", x.hits)
            add("vote_coupling", f"{side} {metric}", "n", x.n)
            add("vote_coupling", f"{side} {metric}", "rate", x.rate, x.ci95, x.n)
            add("vote_coupling", f"{side} {metric}", "chance", x.chance, n=x.n)
        for pred, bl in v.baselines:
            add("vote_coupling", f"{side} baseline {pred}", "hits", bl.hits)
            add("vote_coupling", f"{side} baseline {pred}", "n", bl.n)
            add("vote_coupling", f"{side} baseline {pred}", "rate", bl.rate, bl.ci95, bl.n)
        for pred, i in v.increment:
            for k, val in i:
                if k != "diff_ci95":
                    add("vote_coupling", f"{side} increment {pred}", k, val, i.diff_ci95 if k == "diff" else None,
                        i.n if k == "diff" else None)  # fmt: skip
    ins = rep.instrument
    instrument_rows: list[tuple[str, InstrumentPooled | InstrumentGame]] = [
        ("pooled", ins.pooled),
        *((g.game_id, g) for g in ins.games),
    ]
    for gid, row in instrument_rows:
        add("instrument", gid, "game_calls", row.game_calls)
        add("instrument", gid, "probe_calls", row.probe_calls)
        add("instrument", gid, "multiplier", row.multiplier)
        for part, tok in row.tokens:
            add("instrument", gid, f"{part}_prompt_tokens", None if tok is None else tok.prompt)
            add("instrument", gid, f"{part}_completion_tokens", None if tok is None else tok.completion)
        for k, c in row.probe_answers:
            add("instrument", gid, f"answers_{k}", c)
        for k, c in row.lost:
            add("instrument", gid, f"lost_{k}", c)
        for k, c in row.probe_failures.items():
            add("instrument", gid, f"failures_{k}", c)
        qs = row.quality  # quality signals (format 3)
        for k in QualityCounts.model_fields:
            add("instrument", gid, f"quality_{k}", getattr(qs, k))
        add("instrument", gid, "quality_constant_answers", len(qs.constant))
    dyn = rep.dynamics
    groups: list[tuple[str, DynamicsGroup]] = [
        ("all", dyn),
        *((f"model {k}", v) for k, v in dyn.by_model.items()),
        *((f"round {k}", v) for k, v in dyn.by_round.items()),
    ]
    for group, d in groups:
        add("dynamics", group, "volatility", d.volatility, d.ci95.volatility, d.volatility_pairs)
        add("dynamics", group, "volatility_pairs", d.volatility_pairs)
        add("dynamics", group, "flip_rate", d.flip_rate, d.ci95.flip_rate, d.flip_pairs)
        add("dynamics", group, "flip_pairs", d.flip_pairs)
        add("dynamics", group, "flips", d.flips)
        add("dynamics", group, "return_rate", d.return_rate, d.ci95.return_rate, d.flips)
        add("dynamics", group, "returns", d.returns)
    if dyn.retest is not None:
        for k, val in dyn.retest:
            if k != "by_round":
                add("dynamics", "retest floor", k, val)
    quad = rep.quadrants
    for group, q in [("all", quad), *((f"model {k}", x) for k, x in quad.by_model.items())]:
        add("quadrants", group, "votes", q.votes)
        add("quadrants", group, "assessed", q.assessed)
        for name, cell in q.cells().items():
            add("quadrants", group, name, cell.n)
    return rows
