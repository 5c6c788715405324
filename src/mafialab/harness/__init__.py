"""The game loop (``harness``): connects engine, agents and logs; replay and resume.

Sits between ``record`` and ``analysis`` in the layer order.
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.harness._batch import ObserverFactory as ObserverFactory
from mafialab.harness._batch import play_games as play_games
from mafialab.harness._calls import DECISION_PURPOSES as DECISION_PURPOSES
from mafialab.harness._calls import GATE_THRESHOLD as GATE_THRESHOLD
from mafialab.harness._calls import CallRecorder as CallRecorder
from mafialab.harness._calls import (
    PreflightError,
    preflight,
)
from mafialab.harness._calls import agent_models as agent_models
from mafialab.harness._calls import ping as ping
from mafialab.harness._calls import unreachable as unreachable
from mafialab.harness._heap import freeze_startup_heap
from mafialab.harness._play import (
    GameObserver,
    GameResult,
    play_game,
)
from mafialab.harness._play import default_game_id as default_game_id
from mafialab.harness._play import make_header as make_header
from mafialab.harness._play import run_config as run_config
from mafialab.harness._play import run_game as run_game
from mafialab.harness._play import summarize as summarize
from mafialab.harness._ray import RAY_HINT as RAY_HINT
from mafialab.harness._ray import (
    RayConnectError,
    driver_limits,
    ray_map,
    ray_run,
)
from mafialab.harness._ray import RayObserverFactory as RayObserverFactory
from mafialab.harness._ray import connect_ray as connect_ray
from mafialab.harness._ray import play_games_ray as play_games_ray
from mafialab.harness._ray import read_game_files as read_game_files
from mafialab.harness._ray import result_from_logs as result_from_logs
from mafialab.harness._ray import write_game_files as write_game_files
from mafialab.harness._replay import ReplayedDecision as ReplayedDecision
from mafialab.harness._replay import (
    ReplayMismatch,
    initial_state,
    recorded_actions,
    replay,
    resume,
)
from mafialab.harness._replay import ReplayStop as ReplayStop
from mafialab.harness._replay import replay_decisions as replay_decisions
from mafialab.harness._replay import replay_rules as replay_rules
from mafialab.harness._replay import replay_until_mismatch as replay_until_mismatch

__all__ = [
    "GameObserver",
    "GameResult",
    "PreflightError",
    "RayConnectError",
    "ReplayMismatch",
    "driver_limits",
    "freeze_startup_heap",
    "initial_state",
    "play_game",
    "preflight",
    "ray_map",
    "ray_run",
    "recorded_actions",
    "replay",
    "resume",
]
