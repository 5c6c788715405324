"""Belief metrics with confidence intervals (layer ``analysis``).

F1 first-order accuracy, Unknown rate and recall of the hidden team; F2 calibration (ECE,
Brier, reliability bins); F3 second-order agreement and over-prediction; F4 vote coupling;
all with game-level cluster-bootstrap intervals. Definitions: MafiaScope's F1-F4
(the MafiaScope recordings' README, karpovilia/mafiascope); methods and differences: ``docs/metrics.md``.
"""

from mafialab.analysis._bootstrap import (
    MIN_CLUSTERS,
    bootstrap_weights,
    cluster_bootstrap_ci,
    clusters_with_data,
    no_interval_reason,
    percentile_ci,
)
from mafialab.analysis._data import SKIPPED_FAMILIES, GameData, Probe, game_data, load_games
from mafialab.analysis._export import EVENT_COLUMNS, TGN_COLUMNS, belief_edges, export_parquet, log_tables
from mafialab.analysis._metrics import (
    DEFAULT,
    MAFIASCOPE,
    METHODS,
    Method,
    answer,
    first_order,
    get_method,
    parse_counts,
    second_order,
    vocabulary,
    vote_coupling,
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
from mafialab.analysis._report import compute_report, report

__all__ = [
    "ATTITUDES",
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
    "answer",
    "belief_edges",
    "bootstrap_weights",
    "cluster_bootstrap_ci",
    "clusters_with_data",
    "compute_report",
    "export_parquet",
    "first_order",
    "game_data",
    "get_method",
    "load_games",
    "no_interval_reason",
    "log_tables",
    "parse_counts",
    "percentile_ci",
    "repair_json",
    "repair_json_reference",
    "report",
    "second_order",
    "vocabulary",
    "vote_coupling",
    "write_plots",
]
