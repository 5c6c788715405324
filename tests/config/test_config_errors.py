"""Every configuration file loads through one loader and fails with one error format.

``<file>: <field path>: <problem>``, list positions in brackets, for rule sets, probe
batteries, season files, prompt packs, event templates, price tables and belief-shift model
lists alike."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict
from typer.testing import CliRunner

from mafialab._words import kind_of
from mafialab.agents import load_prompt_pack
from mafialab.arena import load_season, season_from_dict
from mafialab.beliefshift import load_annotator_pack, load_models_yaml, load_prompts_text, read_labels
from mafialab.cli import app
from mafialab.config import ConfigError, field_path, load_config
from mafialab.probes import ProbeBattery, load_battery
from mafialab.record import load_prices
from mafialab.render import load_event_templates
from mafialab.rules import RuleSet, RuleSetError, load_rules
from mafialab.rules._ruleset import WEREWOLF7, rules_from_dict

# loader, a document with one bad field, the field path the message must name
CASES: list[tuple[str, Callable[[Path], Any], str, str]] = [
    (
        "rules",
        load_rules,
        "extends: werewolf7\nroles: [{name: W, count: 0, team: mafia, ability: kill}]\n",
        "roles[0].count",
    ),
    ("battery", load_battery, "probes: [{id: a, question: hi, max_tokens: 0}]\n", "probes[0].max_tokens"),
    (
        "season",
        load_season,
        "rules: werewolf7\ngames: 1\nroster: [scripted]\nlimits: {min_answered_share: 3}\n",
        "limits.min_answered_share",
    ),
    ("pack", load_prompt_pack, "id: x\nmax_text_chars: 1\n", "max_text_chars"),
    ("events", load_event_templates, "prompt: {kinds: {speech: [{txt: a}]}}\n", "prompt.kinds.speech[0].text"),
    ("prices", load_prices, "openai/x: {input: -1, output: 0}\n", "openai/x.input"),
    ("models", load_models_yaml, "models: [{label: a}, {label: b, params_b: -3}]\n", "models[1].params_b"),
]


@pytest.mark.parametrize(("what", "load", "doc", "path"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_field_is_named_with_its_file(
    tmp_path: Path, what: str, load: Callable[[Path], Any], doc: str, path: str
) -> None:
    f = tmp_path / f"{what}.yaml"
    f.write_text(doc, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load(f)
    msg = str(err.value)
    assert msg.startswith(f"{f}: ") and f" {path}: " in f" {msg.removeprefix(f'{f}: ')}", msg


@pytest.mark.parametrize(("what", "load"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_bad_yaml_names_the_file_and_line(tmp_path: Path, what: str, load: Callable[[Path], Any]) -> None:
    f = tmp_path / f"{what}.yaml"
    f.write_text("a: 1\nb: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{f}: line \d+: not valid YAML \("):
        load(f)
    f.write_bytes(b"a: \xff\xfe\n")
    with pytest.raises(ConfigError, match=rf"^{f}: cannot read: not UTF-8 text"):
        load(f)


class _Inner(BaseModel):
    n: int


class _Doc(BaseModel):
    items: list[_Inner]
    name: str


def test_load_config_reports_several_problems_and_json(tmp_path: Path) -> None:
    f = tmp_path / "c.json"
    f.write_text('{"items": [{"n": 1}, {"n": "x"}]}', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(f, _Doc)
    assert str(err.value) == (
        f"{f}: items[1].n: Input should be a valid integer, unable to parse string as an integer; name: Field required"
    )
    f.write_text('{"items": [', encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{f}: not valid JSON \(.* at line 1 column \d+\)$"):
        load_config(f, _Doc)
    with pytest.raises(ConfigError, match=r"^doc: expected a mapping of fields at the top level, found a list$"):
        load_config([1], _Doc, source="doc")
    assert load_config({"items": [], "name": "a"}, _Doc) == _Doc(items=[], name="a")
    assert field_path(("roster", 2, "agent")) == "roster[2].agent" and field_path(()) == "(top level)"


# Configuration errors say what is wrong in words: an empty file, an unknown field (with the


runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


class _Inner_config_messages(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = 1


class _Doc_config_messages(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    inner: _Inner_config_messages = _Inner_config_messages()
    items: list[_Inner_config_messages] = []


@pytest.mark.parametrize("text", ["", "\n# only a comment\n"])
def test_an_empty_yaml_file_says_it_is_empty(tmp_path: Path, text: str) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(f, _Doc_config_messages)
    assert str(err.value) == f"{f}: the file is empty (expected a mapping of _Doc_config_messages fields)"
    with pytest.raises(RuleSetError) as rerr:
        load_rules(f)
    assert str(rerr.value) == f"{f}: the file is empty (expected a rule set: a mapping of its fields)"
    assert "NoneType" not in str(rerr.value)


def test_an_unknown_field_names_the_nearest_or_the_allowed_fields() -> None:
    with pytest.raises(ConfigError) as err:
        load_config({"nmae": "a"}, _Doc_config_messages, source="doc")
    assert "nmae: unknown field 'nmae' (did you mean 'name'?)" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_config({"name": "a", "zzz": 1}, _Doc_config_messages, source="doc")
    assert str(err.value) == "doc: zzz: unknown field 'zzz' (allowed: name, inner, items)"
    with pytest.raises(ConfigError) as err:
        load_config({"name": "a", "inner": {"cuont": 2}, "items": [{}, {"qq": 1}]}, _Doc_config_messages, source="doc")
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
        load_config(f, _Doc_config_messages)
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


# The fields an unknown-field error lists (or suggests) are the keys the file may hold:


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
        # fields a dump leaves out while unset (mission, reveal_team_on_death) take the rule set's own value
        data = {"extends": "werewolf7", key: whole.get(key, getattr(WEREWOLF7, key, "werewolf7"))}
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


# A file whose top level is the wrong kind of value says, in plain words, what was expected and


PYTHON_TYPES = re.compile(r"\bgot\b|NoneType|\b(dict|str|int|float|bool|tuple|datetime)\b")


"""What the old messages said (``got list``, ``got NoneType``): Python's names, not words."""


class _Doc_top_level_kind(BaseModel):
    name: str = "x"


def _prompt_pack(path: Path) -> object:
    return load_prompts_text(path.read_text(encoding="utf-8"), str(path))


LOADERS: dict[str, tuple[Callable[[Path], object], str]] = {
    "config": (lambda p: load_config(p, _Doc_top_level_kind), "a mapping of fields"),
    "rules": (load_rules, "a rule set (a mapping of its fields)"),
    "probes": (load_battery, "a probe battery (a mapping with a 'probes' list)"),
    "season": (load_season, "a mapping of fields"),
    "prices": (load_prices, "a mapping of fields"),
    "prompt pack": (_prompt_pack, "a prompt pack (a mapping of its prompts)"),
    "annotator pack": (load_annotator_pack, "an annotator pack (a mapping with its cues)"),
}


VALUES: list[tuple[str, str]] = [
    ("- a\n- b\n", "a list"),
    ("just words\n", "a string"),
    ("3\n", "a number"),
    ("2.5\n", "a number"),
    ("true\n", "true/false"),
    ("2024-01-02\n", "a date"),
]


@pytest.mark.parametrize("loader", sorted(LOADERS))
@pytest.mark.parametrize(("text", "found"), VALUES)
def test_every_loader_says_what_it_expected_and_found_at_the_top_level(
    tmp_path: Path, loader: str, text: str, found: str
) -> None:
    load, wanted = LOADERS[loader]
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load(path)
    assert str(err.value) == f"{path}: expected {wanted} at the top level, found {found}"
    assert not PYTHON_TYPES.search(str(err.value).removeprefix(str(path))), str(err.value)


def test_a_nested_value_of_the_wrong_kind_names_its_field(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text("introspection: [1, 2]\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_battery(path)
    assert str(err.value) == f"{path}: introspection: expected a mapping of fields, found a list"


def test_a_labels_line_of_the_wrong_kind_says_what_it_found(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"game_id": "g", "round": 1, "speaker": "A", "labels": []}) + "\n[1, 2]\n")
    with pytest.raises(ValueError) as err:
        read_labels(path)
    assert str(err.value) == f"{path}:2: expected a JSON object, found a list"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["play", "-a", "scripted", "--rules", "{f}", "-o", "{o}"],
         "error: --rules: {f}: expected a rule set (a mapping of its fields) at the top level, found a list"),
        (["play", "-a", "scripted", "--probes", "{f}", "-o", "{o}"],
         "error: --probes: {f}: expected a probe battery (a mapping with a 'probes' list) at the top level, "
         "found a list"),
        (["play", "-a", "scripted", "--prices", "{f}", "-o", "{o}"],
         "error: --prices: {f}: expected a mapping of fields at the top level, found a list"),
    ],
)  # fmt: skip
def test_the_command_line_names_the_option_and_the_file(tmp_path: Path, args: list[str], line: str) -> None:
    f = tmp_path / "list.yaml"
    f.write_text("- a\n- b\n", encoding="utf-8")
    fill = {"f": str(f), "o": str(tmp_path / "out")}
    res = runner.invoke(app, [a.format(**fill) for a in args])
    assert res.exit_code == 2, res.output
    assert res.output.strip().splitlines() == [line.format(**fill)]


@pytest.mark.parametrize(
    ("value", "words"),
    [({}, "a mapping"), ([], "a list"), ((1,), "a list"), ("x", "a string"), (0, "a number"), (1.5, "a number"),
     (False, "true/false"), (None, "nothing (null)"), ({1}, "a set"), (b"x", "binary data"),
     (object(), "a value of another kind")],
)  # fmt: skip
def test_kind_of_words(value: Any, words: str) -> None:
    assert kind_of(value) == words
