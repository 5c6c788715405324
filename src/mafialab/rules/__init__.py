"""Rule sets as data (layer ``rules``): no I/O beyond loading YAML files on request."""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.rules._ruleset import (
    ARENA12,
    BUILTIN,
    MAFIASCOPE7,
    WEREWOLF7,
    RoleSpec,
    RuleSet,
    RuleSetError,
    Team,
    load_rules,
    rule_fields,
)
from mafialab.rules._ruleset import BUILTIN_VERSIONS as BUILTIN_VERSIONS
from mafialab.rules._ruleset import COSMETIC_FIELDS as COSMETIC_FIELDS
from mafialab.rules._ruleset import MAFIASCOPE7_V2 as MAFIASCOPE7_V2
from mafialab.rules._ruleset import RULE_SCOPE as RULE_SCOPE
from mafialab.rules._ruleset import WEREWOLF7_V2 as WEREWOLF7_V2
from mafialab.rules._ruleset import DayRules as DayRules
from mafialab.rules._ruleset import Lexicon as Lexicon
from mafialab.rules._ruleset import NightAbility as NightAbility
from mafialab.rules._ruleset import NightRules as NightRules
from mafialab.rules._ruleset import rules_from_dict as rules_from_dict
from mafialab.rules._winners import UNFINISHED as UNFINISHED
from mafialab.rules._winners import (
    winner_name,
)
from mafialab.rules._winners import winners_line as winners_line

__all__ = [
    "ARENA12",
    "BUILTIN",
    "MAFIASCOPE7",
    "RoleSpec",
    "RuleSet",
    "RuleSetError",
    "Team",
    "WEREWOLF7",
    "load_rules",
    "rule_fields",
    "winner_name",
]
