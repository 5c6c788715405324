"""Configuration errors say what is wrong in words: an empty file, an unknown field (with the
nearest name or the allowed ones), the whole JSON error with line and column, and
``rules show`` naming the value given. One line, exit code 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict
from typer.testing import CliRunner

from mafialab.arena import season_from_dict
from mafialab.cli import app
from mafialab.config import ConfigError, load_config
from mafialab.rules import RuleSetError, load_rules

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


class _Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = 1


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    inner: _Inner = _Inner()
    items: list[_Inner] = []


@pytest.mark.parametrize("text", ["", "\n# only a comment\n"])
def test_an_empty_yaml_file_says_it_is_empty(tmp_path: Path, text: str) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(f, _Doc)
    assert str(err.value) == f"{f}: the file is empty (expected a mapping of _Doc fields)"
    with pytest.raises(RuleSetError) as rerr:
        load_rules(f)
    assert str(rerr.value) == f"{f}: the file is empty (expected a rule set: a mapping of its fields)"
    assert "NoneType" not in str(rerr.value)


def test_an_unknown_field_names_the_nearest_or_the_allowed_fields() -> None:
    with pytest.raises(ConfigError) as err:
        load_config({"nmae": "a"}, _Doc, source="doc")
    assert "nmae: unknown field 'nmae' (did you mean 'name'?)" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_config({"name": "a", "zzz": 1}, _Doc, source="doc")
    assert str(err.value) == "doc: zzz: unknown field 'zzz' (allowed: name, inner, items)"
    with pytest.raises(ConfigError) as err:
        load_config({"name": "a", "inner": {"cuont": 2}, "items": [{}, {"qq": 1}]}, _Doc, source="doc")
    msg = str(err.value)
    assert "inner.cuont: unknown field 'cuont' (did you mean 'count'?)" in msg
    assert "items[1].qq: unknown field 'qq' (allowed: count)" in msg
    assert "Extra inputs" not in msg


def test_rule_set_and_season_fields_are_named(tmp_path: Path) -> None:
    f = tmp_path / "r.yaml"
    f.write_text("extends: werewolf7\nname: mine\nnight:\n  kil_vote: sequential\n", encoding="utf-8")
    with pytest.raises(RuleSetError) as err:
        load_rules(f)
    assert str(err.value) == f"{f}: night.kil_vote: unknown field 'kil_vote' (did you mean 'kill_vote'?)"
    with pytest.raises(ValueError) as serr:
        season_from_dict({"name": "s", "rules": "arena12", "gmaes": 3, "roster": []}, source="s.yaml")
    assert "gmaes: unknown field 'gmaes' (did you mean 'games'?)" in str(serr.value)


def test_a_json_error_keeps_the_whole_message(tmp_path: Path) -> None:
    f = tmp_path / "c.json"
    f.write_text('{"name": "a', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(f, _Doc)
    assert str(err.value) == f"{f}: not valid JSON (Unterminated string starting at line 1 column 10)"


def test_rules_show_names_the_value_given(tmp_path: Path) -> None:
    res = runner.invoke(app, ["rules", "show", "nope"])
    assert res.exit_code == 2 and res.output.startswith("error: NAME: unknown rule set 'nope' ("), res.output
    f = tmp_path / "empty.yaml"
    f.write_text("", encoding="utf-8")
    res = runner.invoke(app, ["rules", "show", str(f)])
    assert res.exit_code == 2, res.output
    # the argument's label, then the value given (never the library's own "rules:")
    assert res.output == f"error: NAME: {f}: the file is empty (expected a rule set: a mapping of its fields)\n"
