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
    CLOCK_FIELDS,
    EVENT_ADAPTER,
    SCHEMA_VERSION,
    GameHeader,
    GameStatus,
    SeatInfo,
)

__all__ = [
    "CLOCK_FIELDS",
    "EVENT_ADAPTER",
    "GAME_FILE",
    "SCHEMA_VERSION",
    "GameHeader",
    "GameLog",
    "GameStatus",
    "JsonlWriter",
    "LogFormatError",
    "SeatInfo",
    "iter_game_dirs",
    "iter_jsonl",
    "read_game",
    "read_records",
    "strip_clock",
]
