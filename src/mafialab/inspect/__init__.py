"""mafialab's benchmarks as Inspect AI tasks (layer ``inspect``; optional extra ``mafialab[inspect]``).

``inspect eval mafialab/beliefshift`` (the belief-shift benchmark, one sample per item and
observer) and ``inspect eval mafialab/game`` (seeded probed games where the model under
evaluation plays chosen seats) after ``pip install 'mafialab[inspect]'``: the package
registers both through Inspect's ``inspect_ai`` entry point. Models reach mafialab's
agents, probes and elicitation through :class:`InspectChatModel`. See ``docs/inspect.md``.

Importing this package without Inspect AI installed raises :class:`ImportError` with the
install line; the rest of mafialab never imports it.
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

try:
    import inspect_ai  # noqa: F401
except ImportError as _err:  # pragma: no cover - exercised without the extra only
    raise ImportError("mafialab.inspect needs Inspect AI, an optional extra: pip install 'mafialab[inspect]'") from _err

from mafialab.inspect._beliefshift import (
    beliefshift,
    completion,
    elicit,
    prior_discrimination,
)
from mafialab.inspect._beliefshift import beliefshift_scorer as beliefshift_scorer
from mafialab.inspect._beliefshift import table1 as table1
from mafialab.inspect._beliefshift import table2 as table2
from mafialab.inspect._game import (
    game,
    seat_figures,
)
from mafialab.inspect._game import game_metrics as game_metrics
from mafialab.inspect._game import game_scorer as game_scorer
from mafialab.inspect._game import play_seats as play_seats
from mafialab.inspect._model import InspectChatModel

__all__ = [
    "InspectChatModel",
    "beliefshift",
    "completion",
    "elicit",
    "game",
    "prior_discrimination",
    "seat_figures",
]
