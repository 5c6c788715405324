"""Seasons and leaderboards (layer ``arena``).

A season seats a roster of agents (models, scripted or random players) across many games
with balanced seating, passes an integrity gate, judges every game and publishes a
leaderboard and ``index.json``. See ``docs/arena.md``.
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.arena._config import JudgeSpec as JudgeSpec
from mafialab.arena._config import RosterEntry as RosterEntry
from mafialab.arena._config import (
    SeasonConfig,
    SeasonConfigError,
    season_from_dict,
    season_warnings,
)
from mafialab.arena._config import entry_codes as entry_codes
from mafialab.arena._config import load_season as load_season
from mafialab.arena._effects import (
    EFFECTS_NOTE as EFFECTS_NOTE,
)
from mafialab.arena._effects import (
    effect_rows as effect_rows,
)
from mafialab.arena._leaderboard import INDEX_FILE as INDEX_FILE
from mafialab.arena._leaderboard import LEADERBOARD_MD as LEADERBOARD_MD
from mafialab.arena._leaderboard import (
    RATINGS_NOTE as RATINGS_NOTE,
)
from mafialab.arena._leaderboard import EntryStats as EntryStats
from mafialab.arena._leaderboard import GameRow as GameRow
from mafialab.arena._leaderboard import SeasonIndex as SeasonIndex
from mafialab.arena._leaderboard import (
    build_index,
)
from mafialab.arena._leaderboard import game_rows as game_rows
from mafialab.arena._leaderboard import leaderboard_rows as leaderboard_rows
from mafialab.arena._leaderboard import render_markdown as render_markdown
from mafialab.arena._leaderboard import terminal_game_rows as terminal_game_rows
from mafialab.arena._leaderboard import terminal_tables as terminal_tables
from mafialab.arena._leaderboard import write_index as write_index
from mafialab.arena._manifest import MANIFEST_FILE as MANIFEST_FILE
from mafialab.arena._manifest import (
    SeasonError,
)
from mafialab.arena._manifest import SeasonManifest as SeasonManifest
from mafialab.arena._manifest import Slot as Slot
from mafialab.arena._manifest import load_manifest as load_manifest
from mafialab.arena._manifest import plan_season as plan_season
from mafialab.arena._pool import (
    EVALUATION_FILE as EVALUATION_FILE,
)
from mafialab.arena._pool import POOL_PROTOCOL as POOL_PROTOCOL
from mafialab.arena._pool import (
    PoolError,
)
from mafialab.arena._pool import evaluate_entrant as evaluate_entrant
from mafialab.arena._pool import freeze_pool as freeze_pool
from mafialab.arena._pool import load_pool as load_pool
from mafialab.arena._power import (
    games_needed as games_needed,
)
from mafialab.arena._power import (
    pilot_sd as pilot_sd,
)
from mafialab.arena._season import ProgressFn as ProgressFn
from mafialab.arena._season import preflight_season as preflight_season
from mafialab.arena._season import resume_season as resume_season
from mafialab.arena._season import (
    run_season,
)
from mafialab.arena._seating import (
    plan_seating,
)

__all__ = [
    "PoolError",
    "SeasonConfig",
    "SeasonConfigError",
    "SeasonError",
    "build_index",
    "plan_seating",
    "run_season",
    "season_from_dict",
    "season_warnings",
]
