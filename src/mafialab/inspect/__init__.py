"""mafialab's benchmarks as Inspect AI tasks (layer ``inspect``; optional extra ``mafialab[inspect]``).

``inspect eval mafialab/beliefshift`` (the belief-shift benchmark, one sample per item and
observer) and ``inspect eval mafialab/game`` (seeded probed games where the model under
evaluation plays chosen seats) after ``pip install 'mafialab[inspect]'``: the package
registers both through Inspect's ``inspect_ai`` entry point. Models reach mafialab's
agents, probes and elicitation through :class:`InspectChatModel`. See ``docs/inspect.md``.

Importing this package without Inspect AI installed raises :class:`ImportError` with the
install line; the rest of mafialab never imports it.
"""

try:
    import inspect_ai  # noqa: F401
except ImportError as _err:  # pragma: no cover - exercised without the extra only
    raise ImportError("mafialab.inspect needs Inspect AI, an optional extra: pip install 'mafialab[inspect]'") from _err

from mafialab.inspect._beliefshift import (
    beliefshift,
    beliefshift_scorer,
    completion,
    elicit,
    prior_discrimination,
    table1,
    table2,
)
from mafialab.inspect._game import game, game_metrics, game_scorer, play_seats, seat_figures
from mafialab.inspect._model import InspectChatModel

__all__ = [
    "InspectChatModel",
    "beliefshift",
    "beliefshift_scorer",
    "completion",
    "elicit",
    "game",
    "game_metrics",
    "game_scorer",
    "play_seats",
    "prior_discrimination",
    "seat_figures",
    "table1",
    "table2",
]
