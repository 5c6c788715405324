"""A JSON value given on the command line (``fork run --inject``) that does not parse is worded as
a JSON config file that does not parse: ``not valid JSON (MSG at line L column C)``."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafialab.cli._fork import parse_intervention
from mafialab.config import ConfigError, read_config

NAMES = ["Alex", "Bailey", "Casey"]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("{bad", "at line 1 column 2"),
        ('{"target": "Casey",}', "at line 1 column 20"),
        ('{"target": "Casey",\n "text": }', "at line 2 column 10"),
        ("", "at line 1 column 1"),
    ],
)
def test_an_inject_json_error_has_the_config_file_wording_with_line_and_column(
    tmp_path: Path, text: str, where: str
) -> None:
    with pytest.raises(ValueError) as err:
        parse_intervention(NAMES, text, False, None, None)
    msg = str(err.value)
    f = tmp_path / "same.json"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as cerr:
        read_config(f)
    file_words = str(cerr.value).removeprefix(f"{f}: ")
    assert file_words.startswith("not valid JSON (") and file_words.endswith(f" {where})")
    assert msg.startswith(f"--inject: {file_words}; e.g. "), msg
    assert "\n" not in msg


def test_an_inject_target_may_be_a_seat_number() -> None:
    """``--inject '{"target": 1}'`` said "target: Input should be a valid string"."""
    from mafialab.counterfactual import Inject

    assert parse_intervention(NAMES, '{"target": 1}', False, None, None) == Inject(target="Bailey")
    assert parse_intervention(NAMES, '{"target": "Casey", "text": "x"}', False, None, None) == Inject(
        target="Casey", text="x"
    )
    assert parse_intervention(NAMES, '{"target": null}', False, None, None) == Inject(no_vote=True)
    with pytest.raises(ValueError, match=r"--inject: unknown target '7' \(a seat number 0\.\.2 or a name: Alex"):
        parse_intervention(NAMES, '{"target": 7}', False, None, None)
    with pytest.raises(ValueError) as err:
        parse_intervention(NAMES, '{"target": ["Casey"]}', False, None, None)
    assert str(err.value) == (
        "--inject: target: give the player's name or seat number (Alex, Bailey, Casey), "
        'or null for no vote; got ["Casey"]'
    )
    assert "valid string" not in str(err.value)
