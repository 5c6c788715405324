"""Every configuration file loads through one loader and fails with one error format.

``<file>: <field path>: <problem>``, list positions in brackets, for rule sets, probe
batteries, season files, prompt packs, event templates, price tables and belief-shift model
lists alike.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from mafialab.agents import load_prompt_pack
from mafialab.arena import load_season
from mafialab.beliefshift import load_models_yaml
from mafialab.config import ConfigError, field_path, load_config
from mafialab.probes import load_battery
from mafialab.record import load_prices
from mafialab.render import load_event_templates
from mafialab.rules import load_rules

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
