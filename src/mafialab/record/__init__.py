"""Logs (layer ``record``): the typed log schema, JSONL writer and reader."""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.
from mafialab._files import (
    atomic_path as atomic_path,
)
from mafialab._files import (
    write_atomic as write_atomic,
)
from mafialab.models import (
    CallRecord,
)
from mafialab.models import (
    CallSummary as CallSummary,
)
from mafialab.record._bifurcation import (
    BIFURCATION_FILE as BIFURCATION_FILE,
)
from mafialab.record._bifurcation import (
    FORK_GAMES_DIR as FORK_GAMES_DIR,
)
from mafialab.record._bifurcation import (
    FORKS_FILE as FORKS_FILE,
)
from mafialab.record._bifurcation import (
    NO_VOTE as NO_VOTE,
)
from mafialab.record._bifurcation import (
    POINTS_FILE as POINTS_FILE,
)
from mafialab.record._bifurcation import (
    QUADRANTS as QUADRANTS,
)
from mafialab.record._bifurcation import RETEST_FILE as RETEST_FILE
from mafialab.record._bifurcation import (
    SAMPLES_DIR as SAMPLES_DIR,
)
from mafialab.record._bifurcation import (
    Bifurcation,
)
from mafialab.record._bifurcation import (
    BifurcationHeader as BifurcationHeader,
)
from mafialab.record._bifurcation import (
    BifurcationPoint as BifurcationPoint,
)
from mafialab.record._bifurcation import (
    ForkOutcome as ForkOutcome,
)
from mafialab.record._bifurcation import RetestRecord as RetestRecord
from mafialab.record._bifurcation import (
    is_bifurcation_dir as is_bifurcation_dir,
)
from mafialab.record._bifurcation import read_bifurcation as read_bifurcation
from mafialab.record._bifurcation import read_retests as read_retests
from mafialab.record._bifurcation import (
    replace_point as replace_point,
)
from mafialab.record._bifurcation import (
    write_header as write_header,
)
from mafialab.record._import_kaggle import (
    import_kaggle as import_kaggle,
)
from mafialab.record._import_kaggle import (
    kaggle_rules as kaggle_rules,
)
from mafialab.record._import_mafiascope import (
    SNAPSHOTS_FILE,
    import_mafiascope,
)
from mafialab.record._io import (
    GAME_FILE,
    GameLog,
    iter_game_dirs,
    iter_jsonl,
    latest_verdicts,
    read_game,
)
from mafialab.record._io import (
    PARTIAL_DIR as PARTIAL_DIR,
)
from mafialab.record._io import JsonlWriter as JsonlWriter
from mafialab.record._io import (
    find_files as find_files,
)
from mafialab.record._io import (
    log_version as log_version,
)
from mafialab.record._io import (
    no_games_message as no_games_message,
)
from mafialab.record._io import (
    none_readable_message as none_readable_message,
)
from mafialab.record._io import (
    prepend_records as prepend_records,
)
from mafialab.record._io import (
    probe_sort_key as probe_sort_key,
)
from mafialab.record._io import (
    read_header as read_header,
)
from mafialab.record._io import (
    read_records as read_records,
)
from mafialab.record._io import (
    strip_clock as strip_clock,
)
from mafialab.record._migrate import (
    LogFormatError,
    LogVersionError,
)
from mafialab.record._readers import (
    iter_call_records as iter_call_records,
)
from mafialab.record._readers import (
    iter_probe_records as iter_probe_records,
)
from mafialab.record._readers import (
    iter_verdict_records as iter_verdict_records,
)
from mafialab.record._readers import read_verdicts as read_verdicts
from mafialab.record._schema import (
    CALLS_FILE,
    PROBES_FILE,
    GameHeader,
    Price,
    ProbeRecord,
    SeatInfo,
    Verdict,
)
from mafialab.record._schema import (
    JUDGE_AXES as JUDGE_AXES,
)
from mafialab.record._schema import (
    PERSON_SEAT_KINDS as PERSON_SEAT_KINDS,
)
from mafialab.record._schema import SCHEMA_VERSION as SCHEMA_VERSION
from mafialab.record._schema import VERDICTS_FILE as VERDICTS_FILE
from mafialab.record._schema import GameStatus as GameStatus
from mafialab.record._schema import ParentInfo as ParentInfo
from mafialab.record._schema import PlayerScore as PlayerScore
from mafialab.record._schema import PriceTable as PriceTable
from mafialab.record._schema import load_prices as load_prices
from mafialab.record._schema import (
    person_seats as person_seats,
)

RECORDED_FILES: frozenset[str] = frozenset(
    {
        GAME_FILE,
        CALLS_FILE,
        PROBES_FILE,
        VERDICTS_FILE,
        SNAPSHOTS_FILE,
        RETEST_FILE,
        BIFURCATION_FILE,
        POINTS_FILE,
        FORKS_FILE,
    }
)
"""The names of the files mafialab records in a game's (or a bifurcation's) folder.

No command writes one of these through ``--out``: :func:`mafialab.cli._app.check_out_file`
refuses such a path inside a recorded folder (a recorded log is never overwritten). Not API.
"""

__all__ = [
    "Bifurcation",
    "CALLS_FILE",
    "CallRecord",
    "GAME_FILE",
    "GameHeader",
    "GameLog",
    "LogFormatError",
    "LogVersionError",
    "PROBES_FILE",
    "Price",
    "ProbeRecord",
    "SeatInfo",
    "Verdict",
    "import_mafiascope",
    "iter_game_dirs",
    "iter_jsonl",
    "latest_verdicts",
    "read_game",
]
