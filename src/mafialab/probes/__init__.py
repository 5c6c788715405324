"""Belief probes (layer ``probes``): the battery DSL, tolerant parsing, the non-invasive runner.

A probe is a private question put to an agent on a copy of its own context after a game
event (a public message, its own night action, the end of a round); the answer goes to
``probes.jsonl`` and never into any game-facing call. :func:`run_retest` re-asks a battery on
frozen contexts of a recorded game (the test-retest floor). :class:`GameSetup` attaches a
battery's runner and the seats played from outside to each game of a run. See ``docs/probes.md``.
"""

from mafialab.probes._battery import (
    BUILTIN_BATTERIES,
    CHAIN_MAX_CHARS,
    FIXED_PLACEHOLDERS,
    NOT_AVAILABLE,
    PREAMBLE_PLACEHOLDERS,
    SCHEMA_LISTS,
    ProbeBattery,
    ProbeBatteryError,
    ProbeSpec,
    When,
    battery_from_dict,
    chain_text,
    load_battery,
    render_preamble,
    render_question,
    render_schema,
    resolve_battery,
)
from mafialab.probes._parse import ParsedAnswer, check_players, parse_answer
from mafialab.probes._retest import RetestPoint, logprob_retest_floor, probe_points, run_retest
from mafialab.probes._runner import (
    ProbeableAgent,
    ProbeRunner,
    Trigger,
    applies,
    find_triggers,
    make_probe_observer,
)
from mafialab.probes._setup import GameSetup, SeatHost

__all__ = [
    "BUILTIN_BATTERIES",
    "FIXED_PLACEHOLDERS",
    "GameSetup",
    "PREAMBLE_PLACEHOLDERS",
    "NOT_AVAILABLE",
    "SCHEMA_LISTS",
    "ParsedAnswer",
    "ProbeBattery",
    "ProbeBatteryError",
    "ProbeRunner",
    "ProbeSpec",
    "ProbeableAgent",
    "RetestPoint",
    "SeatHost",
    "Trigger",
    "When",
    "applies",
    "battery_from_dict",
    "CHAIN_MAX_CHARS",
    "chain_text",
    "check_players",
    "find_triggers",
    "load_battery",
    "logprob_retest_floor",
    "make_probe_observer",
    "parse_answer",
    "probe_points",
    "render_preamble",
    "render_question",
    "render_schema",
    "resolve_battery",
    "run_retest",
]
