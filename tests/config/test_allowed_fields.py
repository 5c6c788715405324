"""The fields an unknown-field error lists (or suggests) are the keys the file may hold:
``extends`` in a rule set (read before validation), an alias (a probe's ``schema``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mafialab.config import ConfigError, load_config
from mafialab.probes import ProbeBattery
from mafialab.rules import RuleSet, RuleSetError, load_rules
from mafialab.rules._ruleset import WEREWOLF7, rules_from_dict


def _listed(msg: str) -> list[str]:
    m = re.search(r"\(allowed: ([^)]*)\)", msg)
    assert m, msg
    return m.group(1).split(", ")


def test_a_rule_set_file_s_allowed_fields_include_extends_and_each_is_accepted(tmp_path: Path) -> None:
    f = tmp_path / "r.yaml"
    f.write_text("extends: werewolf7\nzzqq: 1\n", encoding="utf-8")
    with pytest.raises(RuleSetError) as err:
        load_rules(f)
    listed = _listed(str(err.value))
    assert "extends" in listed and set(RuleSet.model_fields) <= set(listed)
    whole = WEREWOLF7.model_dump()
    for key in listed:  # every name it lists is a key a rule-set file may hold
        data = {"extends": "werewolf7", key: whole.get(key, "werewolf7")}
        assert rules_from_dict(data).name == "werewolf7", key


def test_a_near_miss_of_extends_is_suggested(tmp_path: Path) -> None:
    f = tmp_path / "r.yaml"
    f.write_text("extend: werewolf7\nname: mine\n", encoding="utf-8")
    with pytest.raises(RuleSetError) as err:
        load_rules(f)
    assert "extend: unknown field 'extend' (did you mean 'extends'?)" in str(err.value)


def test_an_alias_is_listed_as_the_file_spells_it() -> None:
    probe = ProbeBattery.model_fields["probes"].annotation.__args__[0]  # the probe spec model
    with pytest.raises(ConfigError) as err:
        load_config({"id": "x", "question": "q?", "zzqq": 1}, probe, source="battery")
    assert "schema" in _listed(str(err.value))  # the key a battery file writes (alias of json_schema)
