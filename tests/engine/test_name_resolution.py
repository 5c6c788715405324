"""Names in free-text and JSON answers are read as a person would read them, never guessed."""

from __future__ import annotations

import pytest

from mafialab.engine import TRANSLITERATION, NameMatch, resolve_name, transliterate

ROSTER = ["Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray"]


@pytest.mark.parametrize(
    ("answer", "name", "how"),
    [
        ("Finley", "Finley", "exact"),
        ("VOTE: **Finley**", "Finley", "normalised"),
        ("**Finley**", "Finley", "normalised"),
        ("_Finley_", "Finley", "normalised"),
        ('"Finley"', "Finley", "normalised"),
        ("«Finley»", "Finley", "normalised"),
        ("finley.", "Finley", "normalised"),
        ("  FINLEY!  ", "Finley", "normalised"),
        ("TARGET: Casey", "Casey", "normalised"),
        ("I vote for Dana", "Dana", "normalised"),
        ("Fínley", "Finley", "normalised"),
        ("Thinking it over...\nVOTE: Dana\n", "Dana", "line"),
        ("Reasons: Alex was quiet.\nTARGET: **Bailey**", "Bailey", "line"),
        ("I think we should eliminate Finley today.", "Finley", "in_text"),
        ("Финли", "Finley", "transliterated"),
        ("Алекс", "Alex", "transliterated"),
        ("Грей", "Gray", "transliterated"),
        ("Кейси", "Casey", "transliterated"),
        ("Голосую за Финли", "Finley", "transliterated"),
    ],
)
def test_answers_resolve_to_the_roster_name(answer, name, how):
    got = resolve_name(answer, ROSTER)
    assert (got.name, got.how, got.cause) == (name, how, "")


@pytest.mark.parametrize(
    ("answer", "cause"),
    [
        ("Finley or Alex", "ambiguous: Alex, Finley"),
        ("I vote for Finley, not Alex", "ambiguous: Alex, Finley"),
        ("a gray area, but Alex", "ambiguous: Alex, Gray"),
        ("Zed", "unknown"),
        ("   ", "empty"),
        ("芬利", "other_script"),
        (None, "unknown"),
        (3, "unknown"),
    ],
)
def test_never_guesses_between_names_and_says_why(answer, cause):
    got = resolve_name(answer, ROSTER)
    assert got.name is None and got.cause == cause


def test_names_equal_up_to_case_or_skeleton_are_ambiguous():
    assert resolve_name("alex", ["Alex", "ALEX"]).cause == "ambiguous: Alex, ALEX"
    # Алекс's skeleton (lks) fits both Alex and Alix: refused, not guessed
    assert resolve_name("Алекс", ["Alex", "Alix"]).cause == "ambiguous: Alex, Alix"


def test_transliteration_table_covers_russian_alphabet():
    assert set("абвгдеёжзийклмнопрстуфхцчшщъыьэюя") <= set(TRANSLITERATION)
    assert transliterate("Щука") == "shchuka"


def test_metrics_read_probe_names_with_the_resolver_except_the_reference_reading():
    from mafialab.analysis import DEFAULT, MAFIASCOPE
    from mafialab.analysis._data import Probe
    from mafialab.analysis._metrics import answer

    parsed = [
        {"player": "**Bailey**", "guessed_role": "Mafia", "confidence": 80},
        {"player": "casey.", "guessed_role": "Villager", "confidence": 60},
        {"player": "Bailey or Casey", "guessed_role": "Mafia", "confidence": 10},
    ]
    p = Probe(line=1, round=1, msg=1, position=0, player="Alex", probe_id="role_assessment", parsed=parsed,
              parse_ok=True, raw="", ts=None, after_seq=3)  # fmt: skip
    got = [x["player"] for x in answer(p, DEFAULT, ROSTER)]
    assert got == ["Bailey", "Casey", "Bailey or Casey"]  # two names stay unread, never guessed
    assert [x["player"] for x in answer(p, MAFIASCOPE, ROSTER)] == [x["player"] for x in parsed]


def test_names_inside_a_100kb_answer_are_found_in_any_case() -> None:
    roster = ["Alex", "Bailey", "Casey"]
    pad = "word " * 20_000
    assert resolve_name(pad + "so I pick bAILEY." + pad, roster) == NameMatch("Bailey", "in_text")
    assert resolve_name(pad + "Alex or casey " + pad, roster).cause == "ambiguous: Alex, Casey"
    assert resolve_name(pad, roster).cause == "unknown"
    # non-ASCII text keeps the case-insensitive regex (no lower-case shortcut)
    assert resolve_name(pad + "ÄÖ — I pick CASEY — ÄÖ" + pad, roster) == NameMatch("Casey", "in_text")
