"""Belief metrics with confidence intervals (layer ``analysis``).

F1 first-order accuracy, Unknown rate and recall of the hidden team; F2 calibration (ECE,
Brier, reliability bins); F3 second-order agreement and over-prediction; F4 vote coupling,
with transcript-only baselines and the probe's McNemar increment over them; the
instrument's own cost and loss; all rates with game-level cluster-bootstrap intervals. Definitions: MafiaScope's F1-F4
(the MafiaScope recordings' README, karpovilia/mafiascope); methods and differences: ``docs/metrics.md``.
"""

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
