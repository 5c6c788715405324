"""Repair rules (reference and tolerant) and role normalisation."""

from __future__ import annotations

import pytest

from mafialab.analysis import UNKNOWN, RoleVocabulary
from mafialab.analysis._parse import repair_json, repair_json_reference
from mafialab.rules import ARENA12, MAFIASCOPE7, WEREWOLF7

BOTH = pytest.mark.parametrize("fn", [repair_json_reference, repair_json])


@BOTH
def test_plain_and_fenced(fn) -> None:  # type: ignore[no-untyped-def]
    assert fn('[{"player": "Alex"}]') == ([{"player": "Alex"}], True)
    assert fn('```json\n{"toward_me": []}\n```') == ({"toward_me": []}, True)
    assert fn("  42 ") == (42, True)


@BOTH
def test_truncated_list_keeps_complete_items_only(fn) -> None:  # type: ignore[no-untyped-def]
    raw = '[\n {"player": "Ellis", "guessed_role": "Unknown", "confidence": 40},\n {"player": "Casey", "guessed_r'
    assert fn(raw) == ([{"player": "Ellis", "guessed_role": "Unknown", "confidence": 40}], True)
    # cut inside a number: the half item is dropped, never kept with confidence 7 instead of 75
    raw = '[{"player": "A", "confidence": 50}, {"player": "B", "confidence": 7'
    assert fn(raw) == ([{"player": "A", "confidence": 50}], True)
    nested = '{"toward_me": [{"player": "A", "attitude": "trusts"}, {"player": "B", "att'
    assert fn(nested) == ({"toward_me": [{"player": "A", "attitude": "trusts"}]}, True)


@BOTH
def test_trailing_text_and_brackets_inside_strings(fn) -> None:  # type: ignore[no-untyped-def]
    raw = 'Sure! [{"player": "A", "reason": "said ] and } oddly"}] Hope this helps [1'
    assert fn(raw) == ([{"player": "A", "reason": "said ] and } oddly"}], True)
    assert fn('Here: {"a": "x\\"]"} end') == ({"a": 'x"]'}, True)


@BOTH
def test_not_json(fn) -> None:  # type: ignore[no-untyped-def]
    assert fn("I think Alex is the Mafia.") == (None, False)
    assert fn("") == (None, False)
    assert fn("ERROR: ('Connection aborted.', ConnectionResetError(104, 'reset'))") == (None, False)
    assert fn('[{"player": "A"') == (None, False)  # nothing complete to keep


def test_mismatched_closer_reference_vs_tolerant() -> None:
    # the last object lacks its "}" before the final "]" (README exact reading 1)
    raw = '[{"player": "A", "guessed_role": "Mafia"}, {"player": "B", "guessed_role": "Villager"]'
    # reference: the scan fails; the last resort (first "{" to last "}") yields one object, the
    # wrong shape for role_assessment, so the answer is unusable there
    assert repair_json_reference(raw) == ({"player": "A", "guessed_role": "Mafia"}, True)
    assert repair_json(raw) == ([{"player": "A", "guessed_role": "Mafia"}], True)
    assert repair_json_reference('[{"a": [1, 2}]') == (None, False)
    assert repair_json('[{"a": [1, 2}]') == (None, False)  # nothing complete before the break


def test_last_resort_first_to_last_bracket() -> None:
    # the scan stops at the first complete value ({}), which parses; the greedy span is the fallback
    assert repair_json_reference('x {"a": 1} y') == ({"a": 1}, True)
    # an unbalanced opener before the real object: the scan fails, the greedy {..} span parses
    raw = '[ note {"a": [1, 2]}'
    assert repair_json_reference(raw) == ({"a": [1, 2]}, True)


def test_reference_role_vocabulary() -> None:
    v = RoleVocabulary.reference()
    assert v.normalise("Villager or Doctor") == "Villager"
    assert v.normalise("Possible Mafia") == "Mafia"
    assert v.normalise("Mafia|Villager") == "Mafia"
    assert v.normalise(" sheriff ") == "Sheriff"
    assert v.normalise("UNKNOWN") == UNKNOWN
    assert v.normalise("Commissar") is None
    assert v.normalise(3) is None
    assert v.is_mafia("Mafia") and not v.is_mafia("Villager") and not v.is_mafia(None)


def test_rule_set_vocabularies() -> None:
    ms = RoleVocabulary.from_rules(MAFIASCOPE7)
    assert [r for _, r in ms.needles if _ == r.lower()] == ["Mafia", "Villager", "Doctor"]
    assert ms.normalise("Villager or Doctor") == "Villager"
    assert ms.normalise("Sheriff") is None  # no such role in this game
    ww = RoleVocabulary.from_rules(WEREWOLF7)
    assert ww.normalise("Werewolf") == "Werewolf"
    assert ww.normalise("one of the werewolves") == "Werewolf"
    assert ww.normalise("Mafia") == "Werewolf"  # hidden team, whatever the skin
    assert ww.normalise("Seer") == "Seer" and ww.normalise("villager") == "Villager"
    assert ww.is_mafia("Werewolf") and not ww.is_mafia("Seer")
    ar = RoleVocabulary.from_rules(ARENA12)
    assert ar.normalise("Angel") == "Angel" and ar.normalise("Town") == "Town" and ar.is_mafia("Mafia")


DEGENERATE = ["[" * 1200, "[" * 900 + "]" * 900, '{"a":' * 500 + "1" + "}" * 500]


@pytest.mark.parametrize("text", DEGENERATE)
def test_metric_parsers_survive_degenerate_nesting(text: str) -> None:
    from mafialab.analysis._parse import repair_json, repair_json_reference

    for parse in (repair_json, repair_json_reference):
        parse(text)  # must not raise RecursionError
