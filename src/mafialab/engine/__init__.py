"""The game state machine (layer ``engine``): no model calls, no clock, no printing."""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.engine._decisions import MAX_STATEMENT_CHARS as MAX_STATEMENT_CHARS
from mafialab.engine._decisions import MAX_TEXT_CHARS as MAX_TEXT_CHARS
from mafialab.engine._decisions import (
    Action,
    Decision,
    DecisionKind,
)
from mafialab.engine._decisions import Invalid as Invalid
from mafialab.engine._decisions import check_action as check_action
from mafialab.engine._events import PUBLIC as PUBLIC
from mafialab.engine._events import (  # not public API (not in __all__): the import of Kaggle's bids
    Bid as Bid,
)
from mafialab.engine._events import (
    BidResult as BidResult,
)
from mafialab.engine._events import (
    Elimination,
    Event,
    GameEnd,
    Imported,
    NightAction,
    NightResult,
    Phase,
    PhaseStarted,
    RoleAssigned,
    Speech,
    Visibility,
    Vote,
)
from mafialab.engine._events import InvestigationResult as InvestigationResult
from mafialab.engine._events import KillChosen as KillChosen
from mafialab.engine._events import MafiaChat as MafiaChat
from mafialab.engine._events import PrivateNote as PrivateNote
from mafialab.engine._events import SeatingEvent as SeatingEvent
from mafialab.engine._events import TeamRevealed as TeamRevealed
from mafialab.engine._events import VoteTally as VoteTally
from mafialab.engine._names import (
    TRANSLITERATION,
    resolve_name,
)
from mafialab.engine._names import NameMatch as NameMatch
from mafialab.engine._names import transliterate as transliterate
from mafialab.engine._rng import STREAMS as STREAMS
from mafialab.engine._rng import (
    derive_seed,
    stream,
)
from mafialab.engine._state import GameState, deal_roles
from mafialab.engine._view import (
    PlayerView,
    player_view,
    visible_events,
)
from mafialab.engine._view import can_see as can_see
from mafialab.engine._view import team_of as team_of

__all__ = [
    "Action",
    "Decision",
    "DecisionKind",
    "Elimination",
    "Event",
    "GameEnd",
    "GameState",
    "Imported",
    "NightAction",
    "NightResult",
    "Phase",
    "PhaseStarted",
    "PlayerView",
    "RoleAssigned",
    "Speech",
    "TRANSLITERATION",
    "Visibility",
    "Vote",
    "deal_roles",
    "derive_seed",
    "player_view",
    "resolve_name",
    "stream",
    "visible_events",
]
