"""Rule sets as data (layer ``rules``): no I/O beyond loading YAML files on request."""

from mafialab.rules._ruleset import (
    ARENA12,
    BUILTIN,
    BUILTIN_VERSIONS,
    MAFIASCOPE7,
    MAFIASCOPE7_V2,
    WEREWOLF7,
    DayRules,
    Lexicon,
    NightAbility,
    NightRules,
    RoleSpec,
    RuleSet,
    RuleSetError,
    Team,
    load_rules,
    rules_from_dict,
)

__all__ = [
    "ARENA12",
    "BUILTIN",
    "BUILTIN_VERSIONS",
    "MAFIASCOPE7",
    "MAFIASCOPE7_V2",
    "WEREWOLF7",
    "DayRules",
    "Lexicon",
    "NightAbility",
    "NightRules",
    "RoleSpec",
    "RuleSet",
    "RuleSetError",
    "Team",
    "load_rules",
    "rules_from_dict",
]
