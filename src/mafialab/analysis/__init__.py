"""Belief metrics with confidence intervals (layer ``analysis``).

F1 first-order accuracy, Unknown rate and recall of the hidden team; F2 calibration (ECE,
Brier, reliability bins); F3 second-order agreement and over-prediction; F4 vote coupling,
with transcript-only baselines and the probe's McNemar increment over them; the
instrument's own cost and loss; all rates with game-level cluster-bootstrap intervals. Definitions: MafiaScope's F1-F4
(the MafiaScope recordings' README, karpovilia/mafiascope); methods and differences: ``docs/metrics.md``.
"""

from mafialab.analysis._baselines import (
    PREDICTORS,
    mcnemar_exact,
    transcript_baselines,
    transcript_predictions,
)
from mafialab.analysis._bifurcation import (
    BLOCK_FIELDS,
    POINT_FIELDS,
    bifurcation_report,
    blocks_csv_rows,
    fmt_rate,
    modal_concentration,
    report_bifurcation,
    valid_target,
)
from mafialab.analysis._bootstrap import (
    MIN_CLUSTERS,
    bootstrap_weights,
    cluster_bootstrap_ci,
    clusters_with_data,
    no_interval_reason,
    percentile_ci,
    wilson,
)
from mafialab.analysis._calibration import calibration, calibration_population, calibration_summary
from mafialab.analysis._coverage import METRIC_PROBES, coverage
from mafialab.analysis._data import SKIPPED_FAMILIES, GameData, Probe, game_data, load_games, same_id
from mafialab.analysis._dynamics import (
    SuspicionVector,
    belief_dynamics,
    l1_common_support,
    retest_floor,
    suspicion_series,
    suspicion_vector,
    vector_from_answer,
)
from mafialab.analysis._export import EVENT_COLUMNS, TGN_COLUMNS, belief_edges, export_parquet, log_tables
from mafialab.analysis._instrument import LOSS_CAUSES, instrument
from mafialab.analysis._metrics import (
    DEFAULT,
    MAFIASCOPE,
    METHODS,
    Method,
    VoteUnit,
    answer,
    first_order,
    get_method,
    parse_counts,
    second_order,
    vocabulary,
    vote_coupling,
    vote_units,
)
from mafialab.analysis._parse import (
    ATTITUDES,
    REFERENCE_ROLES,
    UNKNOWN,
    RoleVocabulary,
    repair_json,
    repair_json_reference,
)
from mafialab.analysis._plots import write_plots
from mafialab.analysis._quadrants import QUADRANT_NAMES, VoteQuadrant, quadrant_of, vote_quadrants
from mafialab.analysis._report import compute_report, find_retests, report, report_rows

__all__ = [
    "METRIC_PROBES",
    "QUADRANT_NAMES",
    "SuspicionVector",
    "VoteQuadrant",
    "belief_dynamics",
    "find_retests",
    "l1_common_support",
    "quadrant_of",
    "retest_floor",
    "suspicion_series",
    "suspicion_vector",
    "vector_from_answer",
    "vote_quadrants",
    "BLOCK_FIELDS",
    "POINT_FIELDS",
    "bifurcation_report",
    "blocks_csv_rows",
    "fmt_rate",
    "modal_concentration",
    "report_bifurcation",
    "valid_target",
    "ATTITUDES",
    "LOSS_CAUSES",
    "PREDICTORS",
    "DEFAULT",
    "EVENT_COLUMNS",
    "MAFIASCOPE",
    "METHODS",
    "MIN_CLUSTERS",
    "REFERENCE_ROLES",
    "SKIPPED_FAMILIES",
    "TGN_COLUMNS",
    "UNKNOWN",
    "GameData",
    "Method",
    "Probe",
    "RoleVocabulary",
    "VoteUnit",
    "answer",
    "belief_edges",
    "bootstrap_weights",
    "calibration",
    "coverage",
    "calibration_population",
    "calibration_summary",
    "cluster_bootstrap_ci",
    "clusters_with_data",
    "compute_report",
    "report_rows",
    "export_parquet",
    "first_order",
    "game_data",
    "get_method",
    "instrument",
    "load_games",
    "same_id",
    "no_interval_reason",
    "log_tables",
    "mcnemar_exact",
    "parse_counts",
    "percentile_ci",
    "repair_json",
    "repair_json_reference",
    "report",
    "second_order",
    "transcript_baselines",
    "transcript_predictions",
    "vocabulary",
    "vote_coupling",
    "vote_units",
    "write_plots",
    "wilson",
]
