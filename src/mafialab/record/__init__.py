"""Logs (layer ``record``): the typed log schema, JSONL writer and reader."""

from mafialab.record._io import (
    GAME_FILE,
    GameLog,
    JsonlWriter,
    LogFormatError,
    iter_game_dirs,
    iter_jsonl,
    read_game,
    read_records,
    strip_clock,
)
from mafialab.record._schema import (
    CALLS_FILE,
    CLOCK_FIELDS,
    EVENT_ADAPTER,
    PROBES_FILE,
    SCHEMA_VERSION,
    VERDICTS_FILE,
    GameHeader,
    GameStatus,
    ProbeRecord,
    SeatInfo,
)

__all__ = [
    "CALLS_FILE",
    "CLOCK_FIELDS",
    "EVENT_ADAPTER",
    "GAME_FILE",
    "PROBES_FILE",
    "SCHEMA_VERSION",
    "VERDICTS_FILE",
    "GameHeader",
    "GameLog",
    "GameStatus",
    "JsonlWriter",
    "LogFormatError",
    "ProbeRecord",
    "SeatInfo",
    "iter_game_dirs",
    "iter_jsonl",
    "read_game",
    "read_records",
    "strip_clock",
]
