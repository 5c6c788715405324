"""Winners are named the way the game's rule set names its teams."""

from __future__ import annotations

from mafialab.rules import MAFIASCOPE7, WEREWOLF7, winner_name, winners_line


def test_a_winner_is_named_by_its_rule_sets_lexicon() -> None:
    assert winner_name("mafia", WEREWOLF7) == "Werewolves"
    assert winner_name("town", WEREWOLF7) == "Village"
    assert winner_name("mafia", MAFIASCOPE7) == "Mafia"
    assert winner_name("town", MAFIASCOPE7) == "Villagers"
    assert winner_name(None, WEREWOLF7) == "unfinished"
    assert winner_name("unfinished", [WEREWOLF7]) == "unfinished"


def test_pooled_rule_sets_that_name_a_team_differently_show_both_names() -> None:
    assert winner_name("town", [WEREWOLF7, MAFIASCOPE7, WEREWOLF7]) == "Village/Villagers"
    assert winner_name("mafia", [MAFIASCOPE7, MAFIASCOPE7]) == "Mafia"


def test_winner_counts_read_as_one_line_town_first_unfinished_last() -> None:
    counts = {"unfinished": 1, "mafia": 2, "town": 3}
    assert winners_line(counts, WEREWOLF7) == "Village 3, Werewolves 2, unfinished 1"
    assert winners_line({None: 2, "mafia": 1, "town": 0}, MAFIASCOPE7) == "Mafia 1, unfinished 2"
    assert winners_line({}, WEREWOLF7) == "none"
