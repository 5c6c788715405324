"""Seasons and leaderboards (layer ``arena``).

A season seats a roster of agents (models, scripted or random players) across many games
with balanced seating, passes an integrity gate, judges every game and publishes a
leaderboard and ``index.json``. See ``docs/arena.md``.
"""

from mafialab.arena._config import (
    JudgeSpec,
    RosterEntry,
    SeasonConfig,
    SeasonConfigError,
    entry_codes,
    load_season,
    season_from_dict,
    season_warnings,
)
from mafialab.arena._effects import (
    EFFECTS_NOTE as EFFECTS_NOTE,
)
from mafialab.arena._effects import (
    effect_rows as effect_rows,
)
from mafialab.arena._leaderboard import (
    INDEX_FILE,
    LEADERBOARD_MD,
    EntryStats,
    GameRow,
    SeasonIndex,
    build_index,
    game_rows,
    leaderboard_rows,
    render_markdown,
    terminal_game_rows,
    terminal_tables,
    write_index,
)
from mafialab.arena._leaderboard import (
    RATINGS_NOTE as RATINGS_NOTE,
)
from mafialab.arena._manifest import (
    MANIFEST_FILE,
    SeasonError,
    SeasonManifest,
    Slot,
    load_manifest,
    plan_season,
)
from mafialab.arena._pool import (
    EVALUATION_FILE as EVALUATION_FILE,
)
from mafialab.arena._pool import (
    POOL_PROTOCOL,
    PoolError,
    evaluate_entrant,
    freeze_pool,
    load_pool,
)
from mafialab.arena._power import (
    games_needed as games_needed,
)
from mafialab.arena._power import (
    pilot_sd as pilot_sd,
)
from mafialab.arena._season import (
    ProgressFn,
    preflight_season,
    resume_season,
    run_season,
)
from mafialab.arena._seating import (
    plan_seating,
)

__all__ = [
    "EntryStats",
    "GameRow",
    "INDEX_FILE",
    "JudgeSpec",
    "LEADERBOARD_MD",
    "MANIFEST_FILE",
    "POOL_PROTOCOL",
    "PoolError",
    "ProgressFn",
    "RosterEntry",
    "SeasonConfig",
    "SeasonConfigError",
    "SeasonError",
    "SeasonIndex",
    "SeasonManifest",
    "Slot",
    "build_index",
    "game_rows",
    "leaderboard_rows",
    "terminal_game_rows",
    "terminal_tables",
    "load_manifest",
    "entry_codes",
    "evaluate_entrant",
    "freeze_pool",
    "load_pool",
    "load_season",
    "season_warnings",
    "plan_season",
    "plan_seating",
    "preflight_season",
    "render_markdown",
    "resume_season",
    "run_season",
    "season_from_dict",
    "write_index",
]
