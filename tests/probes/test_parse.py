"""Tolerant parsing of probe answers: fences, trailing text, truncation, bad names."""

from __future__ import annotations

import pytest

from mafialab.models import parse_json_lenient
from mafialab.probes import load_battery, parse_answer, render_schema

NAMES = ("Alex", "Bailey", "Casey", "Dana")
ALIVE = ("Alex", "Casey", "Dana")  # Bailey is dead


def _schema(probe_id: str) -> dict:
    lists = {
        "$players": list(ALIVE),
        "$others": ["Casey", "Dana"],
        "$roles": ["Mafia", "Doctor", "Villager", "Unknown"],
    }
    schema = load_battery("default").probe(probe_id).json_schema
    assert schema is not None
    return render_schema(schema, lists)


def test_plain_json_is_not_repaired():
    assert parse_json_lenient('[{"player": "Alex", "score": 3}]') == ([{"player": "Alex", "score": 3}], True, False)
    assert parse_json_lenient("null") == (None, True, False)


def test_fenced_answer_is_repaired():
    text = 'Here you go:\n```json\n{"toward_me": []}\n```\nThanks'
    assert parse_json_lenient(text) == ({"toward_me": []}, True, True)


def test_trailing_text_is_repaired():
    value, ok, repaired = parse_json_lenient('Sure. [{"player": "Alex", "score": 7}] Hope that helps!')
    assert (value, ok, repaired) == ([{"player": "Alex", "score": 7}], True, True)


def test_truncated_answer_is_closed():
    text = (
        '[{"player": "Alex", "guessed_role": "Mafia", "confidence": 70, "reason": "quiet"}, {"player": "Casey", "gues'
    )
    value, ok, repaired = parse_json_lenient(text)
    assert ok and repaired
    assert value[0] == {"player": "Alex", "guessed_role": "Mafia", "confidence": 70, "reason": "quiet"}
    assert value[1]["player"] == "Casey"


def test_prose_is_not_json():
    assert parse_json_lenient("I think Alex is the Mafia, honestly.") == (None, False, False)
    assert parse_json_lenient("") == (None, False, False)
    assert parse_json_lenient("[") == (None, False, False)  # nothing recoverable


def test_not_json_answer_keeps_nothing_parsed():
    res = parse_answer("I'd rather not say.", _schema("suspicion_ranking"), names=NAMES, alive=ALIVE)
    assert (res.value, res.ok, res.repaired, res.schema_ok, res.issues) == (None, False, False, None, [])


def test_valid_answer_validates():
    text = '[{"player": "Casey", "score": 80}, {"player": "Dana", "score": 10}, {"player": "Alex", "score": 0}]'
    res = parse_answer(text, _schema("suspicion_ranking"), names=NAMES, alive=ALIVE)
    assert res.ok and res.schema_ok is True and res.issues == [] and not res.repaired


def test_dead_and_unknown_players_are_flagged_but_kept():
    text = (
        '[{"player": "Bailey", "guessed_role": "Mafia", "confidence": 60, "reason": "x"},'
        ' {"player": "Zed", "guessed_role": "Villager", "confidence": 50, "reason": "y"},'
        ' {"player": "casey", "guessed_role": "Villager", "confidence": 55, "reason": "z"}]'
    )
    res = parse_answer(text, _schema("role_assessment"), names=NAMES, alive=ALIVE)
    assert res.ok and res.value[0]["player"] == "Bailey" and res.value[1]["player"] == "Zed"
    assert res.schema_ok is False  # the rendered schema allows only alive names
    assert "$[0].player: 'Bailey' is dead" in res.issues
    assert "$[1].player: 'Zed' is not a player" in res.issues
    assert not any("'casey'" in i and "not a player" in i for i in res.issues)  # case-insensitive name check


def test_schema_violation_is_reported_with_its_path():
    res = parse_answer('{"toward_me": [{"player": "Dana", "attitude": "loves", "confidence": 150, "reason": ""}]}',
                       _schema("social_map"), names=NAMES, alive=ALIVE)  # fmt: skip
    assert res.ok and res.schema_ok is False
    assert any(i.startswith("$.toward_me[0].attitude:") for i in res.issues)
    assert any(i.startswith("$.toward_me[0].confidence:") for i in res.issues)


def test_backend_parsed_value_is_taken_as_is():
    res = parse_answer("garbage", None, parsed={"action": "vote"})
    assert res.ok and res.value == {"action": "vote"} and not res.repaired and res.schema_ok is None


DEGENERATE = ["[" * 1200, "[" * 900 + "]" * 900, '{"a":' * 500 + "1" + "}" * 500]


@pytest.mark.parametrize("text", DEGENERATE)
def test_degenerate_nesting_is_an_unparsed_answer(text: str) -> None:
    from mafialab.probes._parse import parse_answer

    parse_json_lenient(text)  # must not raise
    ans = parse_answer(text, {"type": "array"}, names=["Alex"], alive=["Alex"])
    assert ans.ok is False and ans.value is None


def test_nesting_depth_and_the_limit() -> None:
    from mafialab.probes._parse import _MAX_DEPTH, _nesting_depth, parse_answer

    assert [_nesting_depth(v) for v in (5, [], [[1]], {"a": [{"b": 1}]}, [1, [2, [3]]])] == [0, 1, 2, 3, 3]
    ok = parse_answer("x", parsed=[{"player": "Alex", "score": 3}])
    assert ok.ok and ok.value == [{"player": "Alex", "score": 3}]
    at_limit: list = []
    for _ in range(_MAX_DEPTH - 1):
        at_limit = [at_limit]
    assert _nesting_depth(at_limit) == _MAX_DEPTH and parse_answer("x", parsed=at_limit).ok
    assert not parse_answer("x", parsed=[at_limit]).ok  # one level more: refused, with an issue
    assert "nested" in parse_answer("x", parsed=[at_limit]).issues[0]


CONFIDENCE = {"type": "number", "minimum": 0, "maximum": 100}


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_bare_non_finite_number_is_not_a_valid_answer(text: str) -> None:
    # NaN passes every minimum/maximum check, and a log records it as null
    res = parse_answer(text, CONFIDENCE)
    assert (res.ok, res.value, res.schema_ok) == (False, None, None)
    assert len(res.issues) == 1 and res.issues[0].startswith(f"$: {text} is not a JSON number")


def test_nan_inside_an_answer_is_named_and_the_answer_not_used() -> None:
    schema = {"type": "array", "items": {"type": "object", "properties": {"score": CONFIDENCE}}}
    res = parse_answer('[{"player": "Alex", "score": 10}, {"player": "Dana", "score": NaN}]', schema)
    assert (res.ok, res.value) == (False, None)
    assert res.issues == ["$[1].score: NaN is not a JSON number (use a finite number or null); not used"]
    # a value a backend parsed itself is checked the same way
    res = parse_answer("x", schema, parsed=[{"player": "Alex", "score": float("inf")}])
    assert (res.ok, res.value, res.issues) == (False, None, ["$[0].score: not a finite JSON number; not used"])
