"""The game state machine (layer ``engine``): no model calls, no clock, no printing."""

from mafialab.engine._decisions import (
    MAX_STATEMENT_CHARS,
    MAX_TEXT_CHARS,
    Action,
    Decision,
    DecisionKind,
    Invalid,
    check_action,
)
from mafialab.engine._events import (
    PUBLIC,
    Elimination,
    Event,
    GameEnd,
    Imported,
    InvestigationResult,
    KillChosen,
    MafiaChat,
    NightAction,
    NightResult,
    Phase,
    PhaseStarted,
    PrivateNote,
    RoleAssigned,
    SeatingEvent,
    Speech,
    TeamRevealed,
    Visibility,
    Vote,
    VoteTally,
)
from mafialab.engine._events import (  # not public API (not in __all__): the import of Kaggle's bids
    Bid as Bid,
)
from mafialab.engine._events import (
    BidResult as BidResult,
)
from mafialab.engine._names import TRANSLITERATION, NameMatch, resolve_name, transliterate
from mafialab.engine._rng import STREAMS, derive_seed, stream
from mafialab.engine._state import GameState, deal_roles
from mafialab.engine._view import PlayerView, can_see, player_view, team_of, visible_events

__all__ = [
    "MAX_STATEMENT_CHARS",
    "MAX_TEXT_CHARS",
    "PUBLIC",
    "STREAMS",
    "TRANSLITERATION",
    "Action",
    "Decision",
    "DecisionKind",
    "Elimination",
    "Event",
    "GameEnd",
    "GameState",
    "Imported",
    "Invalid",
    "InvestigationResult",
    "KillChosen",
    "NameMatch",
    "MafiaChat",
    "NightAction",
    "NightResult",
    "Phase",
    "PhaseStarted",
    "PlayerView",
    "PrivateNote",
    "RoleAssigned",
    "SeatingEvent",
    "Speech",
    "TeamRevealed",
    "Visibility",
    "Vote",
    "VoteTally",
    "can_see",
    "check_action",
    "deal_roles",
    "derive_seed",
    "player_view",
    "resolve_name",
    "stream",
    "team_of",
    "transliterate",
    "visible_events",
]
