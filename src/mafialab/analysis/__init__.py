"""Belief metrics with confidence intervals (layer ``analysis``).

F1 first-order accuracy, Unknown rate and recall of the hidden team; F2 calibration (ECE,
Brier, reliability bins); F3 second-order agreement and over-prediction; F4 vote coupling,
with transcript-only baselines and the probe's McNemar increment over them; the
instrument's own cost and loss; all rates with game-level cluster-bootstrap intervals. Definitions: MafiaScope's F1-F4
(the MafiaScope recordings' README, karpovilia/mafiascope); methods and differences: ``docs/metrics.md``.
"""

# Each name loads its own module when first used (PEP 562): `play`'s closing quality check
# reads one game through `game_data` and `game_quality` without loading the whole analysis
# stack (numpy and the report models). The imports below are what type checkers read.
from typing import TYPE_CHECKING

from mafialab._lazy import lazy_names

if TYPE_CHECKING:
    # Names below marked ``X as X`` are used by other mafialab packages and are not public API
    # (not in __all__, not in docs/api.md); they may change without notice.
    from mafialab.analysis._baselines import transcript_baselines as transcript_baselines
    from mafialab.analysis._baselines import (
        transcript_predictions as transcript_predictions,
    )
    from mafialab.analysis._bifurcation import bifurcation_report as bifurcation_report
    from mafialab.analysis._bifurcation import (
        blocks_csv_rows as blocks_csv_rows,
    )
    from mafialab.analysis._bifurcation import (
        report_bifurcation,
    )
    from mafialab.analysis._calibration import (
        calibration,
    )
    from mafialab.analysis._calibration import (
        pooled_calibration as pooled_calibration,
    )
    from mafialab.analysis._compare import BY_KEYS as BY_KEYS
    from mafialab.analysis._compare import REFERENCES as REFERENCES
    from mafialab.analysis._compare import (
        compare,
    )
    from mafialab.analysis._compare import (
        compare_built as compare_built,
    )
    from mafialab.analysis._compare import (
        compare_rows as compare_rows,
    )
    from mafialab.analysis._compare import (
        comparison_json as comparison_json,
    )
    from mafialab.analysis._compare import group_games as group_games
    from mafialab.analysis._compare import load_reference as load_reference
    from mafialab.analysis._compare import (
        mix_line as mix_line,
    )
    from mafialab.analysis._compare import (
        pooled_mix as pooled_mix,
    )
    from mafialab.analysis._compare import (
        summary_groups as summary_groups,
    )
    from mafialab.analysis._compare import (
        summary_table as summary_table,
    )
    from mafialab.analysis._coverage import (
        coverage,
    )
    from mafialab.analysis._coverage import coverage_at as coverage_at
    from mafialab.analysis._data import NOT_APPLICABLE_MISSION as NOT_APPLICABLE_MISSION
    from mafialab.analysis._data import GameData as GameData
    from mafialab.analysis._data import (
        RepeatedIds as RepeatedIds,
    )
    from mafialab.analysis._data import game_data as game_data
    from mafialab.analysis._data import (
        load_games,
    )
    from mafialab.analysis._data import (
        same_id as same_id,
    )
    from mafialab.analysis._data import (
        split_branches as split_branches,
    )
    from mafialab.analysis._dynamics import (
        belief_dynamics,
        retest_floor,
    )
    from mafialab.analysis._export import (
        OutputExistsError,
        belief_edges,
        export_parquet,
        log_tables,
    )
    from mafialab.analysis._hf import (
        HfTable as HfTable,
    )
    from mafialab.analysis._hf import (
        export_hf as export_hf,
    )
    from mafialab.analysis._hf import (
        hf_rows as hf_rows,
    )
    from mafialab.analysis._hf import (
        import_hf as import_hf,
    )
    from mafialab.analysis._hf import (
        model_columns as model_columns,
    )
    from mafialab.analysis._inclusion import (
        inclusion as inclusion,
    )
    from mafialab.analysis._inclusion import (
        inclusion_block as inclusion_block,
    )
    from mafialab.analysis._instrument import (
        instrument,
    )
    from mafialab.analysis._instrument import (
        usable as usable,
    )
    from mafialab.analysis._kaggle import (
        kaggle_figures as kaggle_figures,
    )
    from mafialab.analysis._metrics import (
        DEFAULT,
        MAFIASCOPE,
        Method,
        first_order,
        second_order,
        vote_coupling,
    )
    from mafialab.analysis._metrics import METHODS as METHODS
    from mafialab.analysis._metrics import (
        answer as answer,
    )
    from mafialab.analysis._metrics import get_method as get_method
    from mafialab.analysis._metrics import (
        parse_counts as parse_counts,
    )
    from mafialab.analysis._parse import (
        ATTITUDES as ATTITUDES,
    )
    from mafialab.analysis._parse import (
        UNKNOWN as UNKNOWN,
    )
    from mafialab.analysis._parse import (
        RoleVocabulary as RoleVocabulary,
    )
    from mafialab.analysis._plots import write_plots as write_plots
    from mafialab.analysis._quadrants import vote_quadrants as vote_quadrants
    from mafialab.analysis._quality import (
        NONE_FIRED as NONE_FIRED,
    )
    from mafialab.analysis._quality import (
        game_quality as game_quality,
    )
    from mafialab.analysis._quality import (
        quality_lines as quality_lines,
    )
    from mafialab.analysis._ratings import (
        GTE_EXTRA_HINT as GTE_EXTRA_HINT,
    )
    from mafialab.analysis._ratings import (
        OPENSKILL_MU as OPENSKILL_MU,
    )
    from mafialab.analysis._ratings import (
        OPENSKILL_SIGMA as OPENSKILL_SIGMA,
    )
    from mafialab.analysis._ratings import (
        GameOutcome as GameOutcome,
    )
    from mafialab.analysis._ratings import (
        GteRatings as GteRatings,
    )
    from mafialab.analysis._ratings import (
        RatingRow as RatingRow,
    )
    from mafialab.analysis._ratings import (
        Ratings as Ratings,
    )
    from mafialab.analysis._ratings import (
        SeatOutcome as SeatOutcome,
    )
    from mafialab.analysis._ratings import (
        gte_available as gte_available,
    )
    from mafialab.analysis._ratings import (
        gte_ratings as gte_ratings,
    )
    from mafialab.analysis._ratings import (
        outcomes_from_json as outcomes_from_json,
    )
    from mafialab.analysis._ratings import (
        rate_games as rate_games,
    )
    from mafialab.analysis._report import (
        ReportBuilder as ReportBuilder,
    )
    from mafialab.analysis._report import (
        compute_report,
        report,
        report_rows,
    )
    from mafialab.analysis._report import (
        find_retests as find_retests,
    )
    from mafialab.analysis._report_model import (
        Calibration as Calibration,
    )
    from mafialab.analysis._report_model import (
        Instrument as Instrument,
    )
    from mafialab.analysis._report_model import (
        InstrumentGame as InstrumentGame,
    )
    from mafialab.analysis._report_model import (
        InstrumentPooled as InstrumentPooled,
    )
    from mafialab.analysis._report_model import (
        Quality as Quality,
    )
    from mafialab.analysis._report_model import (
        Report,
    )
    from mafialab.analysis._report_model import (
        ReportRow as ReportRow,
    )
    from mafialab.analysis._report_model import (
        TokenCounts as TokenCounts,
    )
    from mafialab.analysis._seat_effects import (
        opening_order as opening_order,
    )
    from mafialab.analysis._seat_effects import (
        seat_effects as seat_effects,
    )
    from mafialab.analysis._seat_effects import (
        seat_rows as seat_rows,
    )
    from mafialab.analysis._stats import (
        EMPTY_STAT as EMPTY_STAT,
    )
    from mafialab.analysis._stats import (
        MIN_CLUSTERS as MIN_CLUSTERS,
    )
    from mafialab.analysis._stats import (
        Rate as Rate,
    )
    from mafialab.analysis._stats import (
        Stat as Stat,
    )
    from mafialab.analysis._stats import (
        TestResult as TestResult,
    )
    from mafialab.analysis._stats import (
        bootstrap_mean_ci as bootstrap_mean_ci,
    )
    from mafialab.analysis._stats import (
        bootstrap_weights as bootstrap_weights,
    )
    from mafialab.analysis._stats import (
        cluster_bootstrap_ci,
        wilson,
    )
    from mafialab.analysis._stats import (
        combine as combine,
    )
    from mafialab.analysis._stats import (
        diff_ci as diff_ci,
    )
    from mafialab.analysis._stats import (
        fisher_exact as fisher_exact,
    )
    from mafialab.analysis._stats import (
        fmt_p as fmt_p,
    )
    from mafialab.analysis._stats import (
        fmt_rate as fmt_rate,
    )
    from mafialab.analysis._stats import (
        mcnemar_exact as mcnemar_exact,
    )
    from mafialab.analysis._stats import (
        mean_ci as mean_ci,
    )
    from mafialab.analysis._stats import (
        newcombe as newcombe,
    )
    from mafialab.analysis._stats import (
        no_interval_reason as no_interval_reason,
    )
    from mafialab.analysis._stats import (
        rate as rate,
    )
    from mafialab.analysis._steps import (
        StepMetrics as StepMetrics,
    )
    from mafialab.analysis._steps import (
        step_metrics as step_metrics,
    )
    from mafialab.analysis._summaries import (
        iter_summaries as iter_summaries,
    )
    from mafialab.analysis._summaries import (
        map_summaries as map_summaries,
    )
    from mafialab.analysis._summary import (
        METRIC_VERSION as METRIC_VERSION,
    )
    from mafialab.analysis._summary import (
        SEAT_KEYS as SEAT_KEYS,
    )
    from mafialab.analysis._summary import (
        GameSummary as GameSummary,
    )
    from mafialab.analysis._summary import (
        SummaryCache as SummaryCache,
    )
    from mafialab.analysis._summary import (
        cached_summary as cached_summary,
    )
    from mafialab.analysis._summary import (
        default_cache_dir as default_cache_dir,
    )
    from mafialab.analysis._summary import (
        logs_digest as logs_digest,
    )
    from mafialab.analysis._summary import (
        summarise_game as summarise_game,
    )

_LAZY: dict[str, str] = {
    "transcript_baselines": "mafialab.analysis._baselines",
    "transcript_predictions": "mafialab.analysis._baselines",
    "bifurcation_report": "mafialab.analysis._bifurcation",
    "blocks_csv_rows": "mafialab.analysis._bifurcation",
    "report_bifurcation": "mafialab.analysis._bifurcation",
    "calibration": "mafialab.analysis._calibration",
    "pooled_calibration": "mafialab.analysis._calibration",
    "BY_KEYS": "mafialab.analysis._compare",
    "REFERENCES": "mafialab.analysis._compare",
    "compare": "mafialab.analysis._compare",
    "compare_built": "mafialab.analysis._compare",
    "compare_rows": "mafialab.analysis._compare",
    "comparison_json": "mafialab.analysis._compare",
    "group_games": "mafialab.analysis._compare",
    "load_reference": "mafialab.analysis._compare",
    "mix_line": "mafialab.analysis._compare",
    "pooled_mix": "mafialab.analysis._compare",
    "summary_groups": "mafialab.analysis._compare",
    "summary_table": "mafialab.analysis._compare",
    "coverage": "mafialab.analysis._coverage",
    "coverage_at": "mafialab.analysis._coverage",
    "NOT_APPLICABLE_MISSION": "mafialab.analysis._data",
    "GameData": "mafialab.analysis._data",
    "RepeatedIds": "mafialab.analysis._data",
    "game_data": "mafialab.analysis._data",
    "load_games": "mafialab.analysis._data",
    "same_id": "mafialab.analysis._data",
    "split_branches": "mafialab.analysis._data",
    "belief_dynamics": "mafialab.analysis._dynamics",
    "retest_floor": "mafialab.analysis._dynamics",
    "OutputExistsError": "mafialab.analysis._export",
    "belief_edges": "mafialab.analysis._export",
    "export_parquet": "mafialab.analysis._export",
    "log_tables": "mafialab.analysis._export",
    "HfTable": "mafialab.analysis._hf",
    "export_hf": "mafialab.analysis._hf",
    "hf_rows": "mafialab.analysis._hf",
    "import_hf": "mafialab.analysis._hf",
    "model_columns": "mafialab.analysis._hf",
    "inclusion": "mafialab.analysis._inclusion",
    "inclusion_block": "mafialab.analysis._inclusion",
    "instrument": "mafialab.analysis._instrument",
    "usable": "mafialab.analysis._instrument",
    "kaggle_figures": "mafialab.analysis._kaggle",
    "DEFAULT": "mafialab.analysis._metrics",
    "MAFIASCOPE": "mafialab.analysis._metrics",
    "Method": "mafialab.analysis._metrics",
    "first_order": "mafialab.analysis._metrics",
    "second_order": "mafialab.analysis._metrics",
    "vote_coupling": "mafialab.analysis._metrics",
    "METHODS": "mafialab.analysis._metrics",
    "answer": "mafialab.analysis._metrics",
    "get_method": "mafialab.analysis._metrics",
    "parse_counts": "mafialab.analysis._metrics",
    "ATTITUDES": "mafialab.analysis._parse",
    "UNKNOWN": "mafialab.analysis._parse",
    "RoleVocabulary": "mafialab.analysis._parse",
    "write_plots": "mafialab.analysis._plots",
    "vote_quadrants": "mafialab.analysis._quadrants",
    "NONE_FIRED": "mafialab.analysis._quality",
    "game_quality": "mafialab.analysis._quality",
    "quality_lines": "mafialab.analysis._quality",
    "GTE_EXTRA_HINT": "mafialab.analysis._ratings",
    "OPENSKILL_MU": "mafialab.analysis._ratings",
    "OPENSKILL_SIGMA": "mafialab.analysis._ratings",
    "GameOutcome": "mafialab.analysis._ratings",
    "GteRatings": "mafialab.analysis._ratings",
    "RatingRow": "mafialab.analysis._ratings",
    "Ratings": "mafialab.analysis._ratings",
    "SeatOutcome": "mafialab.analysis._ratings",
    "gte_available": "mafialab.analysis._ratings",
    "gte_ratings": "mafialab.analysis._ratings",
    "outcomes_from_json": "mafialab.analysis._ratings",
    "rate_games": "mafialab.analysis._ratings",
    "ReportBuilder": "mafialab.analysis._report",
    "compute_report": "mafialab.analysis._report",
    "report": "mafialab.analysis._report",
    "report_rows": "mafialab.analysis._report",
    "find_retests": "mafialab.analysis._report",
    "Calibration": "mafialab.analysis._report_model",
    "Instrument": "mafialab.analysis._report_model",
    "InstrumentGame": "mafialab.analysis._report_model",
    "InstrumentPooled": "mafialab.analysis._report_model",
    "Quality": "mafialab.analysis._report_model",
    "Report": "mafialab.analysis._report_model",
    "ReportRow": "mafialab.analysis._report_model",
    "TokenCounts": "mafialab.analysis._report_model",
    "opening_order": "mafialab.analysis._seat_effects",
    "seat_effects": "mafialab.analysis._seat_effects",
    "seat_rows": "mafialab.analysis._seat_effects",
    "EMPTY_STAT": "mafialab.analysis._stats",
    "MIN_CLUSTERS": "mafialab.analysis._stats",
    "Rate": "mafialab.analysis._stats",
    "Stat": "mafialab.analysis._stats",
    "TestResult": "mafialab.analysis._stats",
    "bootstrap_mean_ci": "mafialab.analysis._stats",
    "bootstrap_weights": "mafialab.analysis._stats",
    "cluster_bootstrap_ci": "mafialab.analysis._stats",
    "wilson": "mafialab.analysis._stats",
    "combine": "mafialab.analysis._stats",
    "diff_ci": "mafialab.analysis._stats",
    "fisher_exact": "mafialab.analysis._stats",
    "fmt_p": "mafialab.analysis._stats",
    "fmt_rate": "mafialab.analysis._stats",
    "mcnemar_exact": "mafialab.analysis._stats",
    "mean_ci": "mafialab.analysis._stats",
    "newcombe": "mafialab.analysis._stats",
    "no_interval_reason": "mafialab.analysis._stats",
    "rate": "mafialab.analysis._stats",
    "StepMetrics": "mafialab.analysis._steps",
    "step_metrics": "mafialab.analysis._steps",
    "iter_summaries": "mafialab.analysis._summaries",
    "map_summaries": "mafialab.analysis._summaries",
    "METRIC_VERSION": "mafialab.analysis._summary",
    "SEAT_KEYS": "mafialab.analysis._summary",
    "GameSummary": "mafialab.analysis._summary",
    "SummaryCache": "mafialab.analysis._summary",
    "cached_summary": "mafialab.analysis._summary",
    "default_cache_dir": "mafialab.analysis._summary",
    "logs_digest": "mafialab.analysis._summary",
    "summarise_game": "mafialab.analysis._summary",
}
"""Every name of the package (public and internal), by the module that defines it."""


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())

__all__ = [
    "DEFAULT",
    "MAFIASCOPE",
    "Method",
    "OutputExistsError",
    "Report",
    "belief_dynamics",
    "belief_edges",
    "calibration",
    "cluster_bootstrap_ci",
    "compare",
    "compute_report",
    "coverage",
    "export_parquet",
    "first_order",
    "instrument",
    "load_games",
    "log_tables",
    "report",
    "report_bifurcation",
    "report_rows",
    "retest_floor",
    "second_order",
    "vote_coupling",
    "wilson",
]
