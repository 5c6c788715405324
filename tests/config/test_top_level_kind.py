"""A file whose top level is the wrong kind of value says, in plain words, what was expected and
what was found (``expected a mapping of fields at the top level, found a list``), naming the
file: every loader of YAML/JSON files (configs, rule sets, probe batteries, seasons, prices,
prompt and annotator packs, labels lines), never a Python type name (``got list``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from mafialab._words import kind_of
from mafialab.arena import load_season
from mafialab.beliefshift import load_annotator_pack, load_prompts_text, read_labels
from mafialab.cli import app
from mafialab.config import load_config
from mafialab.probes import load_battery
from mafialab.record import load_prices
from mafialab.rules import load_rules

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})

PYTHON_TYPES = re.compile(r"\bgot\b|NoneType|\b(dict|str|int|float|bool|tuple|datetime)\b")
"""What the old messages said (``got list``, ``got NoneType``): Python's names, not words."""


class _Doc(BaseModel):
    name: str = "x"


def _prompt_pack(path: Path) -> object:
    return load_prompts_text(path.read_text(encoding="utf-8"), str(path))


LOADERS: dict[str, tuple[Callable[[Path], object], str]] = {
    "config": (lambda p: load_config(p, _Doc), "a mapping of fields"),
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
