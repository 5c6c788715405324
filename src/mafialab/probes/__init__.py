"""Belief probes (layer ``probes``): the battery DSL, tolerant parsing, the non-invasive runner.

A probe is a private question put to an agent on a copy of its own context after a game
event (a public message, its own night action, the end of a round); the answer goes to
``probes.jsonl`` and never into any game-facing call. :func:`run_retest` re-asks a battery on
frozen contexts of a recorded game (the test-retest floor). :class:`GameSetup` attaches a
battery's runner and the seats played from outside to each game of a run. See ``docs/probes.md``.
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.probes._battery import BUILTIN_BATTERIES as BUILTIN_BATTERIES
from mafialab.probes._battery import CHAIN_MAX_CHARS as CHAIN_MAX_CHARS
from mafialab.probes._battery import FIXED_PLACEHOLDERS as FIXED_PLACEHOLDERS
from mafialab.probes._battery import NOT_AVAILABLE as NOT_AVAILABLE
from mafialab.probes._battery import PREAMBLE_PLACEHOLDERS as PREAMBLE_PLACEHOLDERS
from mafialab.probes._battery import SCHEMA_LISTS as SCHEMA_LISTS
from mafialab.probes._battery import ProbeBattery as ProbeBattery
from mafialab.probes._battery import (
    ProbeBatteryError,
    When,
    resolve_battery,
)
from mafialab.probes._battery import ProbeSpec as ProbeSpec
from mafialab.probes._battery import battery_from_dict as battery_from_dict
from mafialab.probes._battery import chain_text as chain_text
from mafialab.probes._battery import load_battery as load_battery
from mafialab.probes._battery import render_preamble as render_preamble
from mafialab.probes._battery import render_question as render_question
from mafialab.probes._battery import render_schema as render_schema
from mafialab.probes._parse import ParsedAnswer as ParsedAnswer
from mafialab.probes._parse import check_players as check_players
from mafialab.probes._parse import parse_answer as parse_answer
from mafialab.probes._retest import RetestPoint as RetestPoint
from mafialab.probes._retest import logprob_retest_floor as logprob_retest_floor
from mafialab.probes._retest import probe_points as probe_points
from mafialab.probes._retest import (
    run_retest,
)
from mafialab.probes._runner import (
    ProbeableAgent,
    ProbeRunner,
    applies,
    make_probe_observer,
)
from mafialab.probes._runner import Trigger as Trigger
from mafialab.probes._runner import find_triggers as find_triggers
from mafialab.probes._setup import (
    GameSetup,
)
from mafialab.probes._setup import SeatHost as SeatHost

__all__ = [
    "GameSetup",
    "ProbeBatteryError",
    "ProbeRunner",
    "ProbeableAgent",
    "When",
    "applies",
    "make_probe_observer",
    "resolve_battery",
    "run_retest",
]
