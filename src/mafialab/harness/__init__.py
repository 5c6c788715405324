"""The game loop (``harness``): connects engine, agents and logs; replay and resume.

Sits between ``record`` and ``analysis`` in the layer order.
"""

from mafialab.harness._batch import ObserverFactory, play_games
from mafialab.harness._calls import (
    DECISION_PURPOSES,
    GATE_THRESHOLD,
    CallRecorder,
    PreflightError,
    agent_models,
    ping,
    preflight,
    unreachable,
)
from mafialab.harness._heap import freeze_startup_heap
from mafialab.harness._play import (
    GameObserver,
    GameResult,
    default_game_id,
    make_header,
    play_game,
    run_config,
    run_game,
    summarize,
)
from mafialab.harness._ray import (
    RAY_HINT,
    RayConnectError,
    RayObserverFactory,
    connect_ray,
    driver_limits,
    play_games_ray,
    ray_map,
    ray_run,
    read_game_files,
    result_from_logs,
    write_game_files,
)
from mafialab.harness._replay import (
    ReplayedDecision,
    ReplayMismatch,
    initial_state,
    recorded_actions,
    replay,
    replay_decisions,
    replay_rules,
    resume,
)

__all__ = [
    "ObserverFactory",
    "play_games",
    "RAY_HINT",
    "RayConnectError",
    "RayObserverFactory",
    "connect_ray",
    "driver_limits",
    "freeze_startup_heap",
    "play_games_ray",
    "ray_map",
    "ray_run",
    "read_game_files",
    "result_from_logs",
    "write_game_files",
    "DECISION_PURPOSES",
    "GATE_THRESHOLD",
    "CallRecorder",
    "PreflightError",
    "agent_models",
    "ping",
    "preflight",
    "unreachable",
    "GameObserver",
    "GameResult",
    "ReplayMismatch",
    "ReplayedDecision",
    "initial_state",
    "replay_decisions",
    "replay_rules",
    "default_game_id",
    "run_config",
    "make_header",
    "play_game",
    "recorded_actions",
    "replay",
    "resume",
    "run_game",
    "summarize",
]
