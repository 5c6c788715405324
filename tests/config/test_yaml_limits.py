"""Every YAML input is parsed under limits applied while it is composed.

At most 100 alias expansions and 100,000 nodes in a document (an alias counts as everything it
repeats), files up to 10 MB (refused before they are read). A "billion laughs" document of a
few hundred bytes is refused at once with the file's name and the limit, by every loader."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import mafialab.config._load as config_load
from mafialab.agents import load_prompt_pack
from mafialab.analysis import load_reference
from mafialab.arena import load_season
from mafialab.beliefshift import load_annotator_pack, load_models_yaml, load_prompts_text
from mafialab.beliefshift._report import load_published
from mafialab.cli import app
from mafialab.config import ConfigError, parse_config_text, read_config, read_config_text
from mafialab.probes import load_battery
from mafialab.record import load_prices
from mafialab.remote._questions import person_questions
from mafialab.render import load_event_templates
from mafialab.rules import load_rules

ROOT = Path(__file__).resolve().parents[2]


ALIASES = "more than 100 alias expansions (YAML anchors); refused"


NODES = "more than 100,000 YAML nodes (aliases counted as what they repeat); refused"


ALIASES_RE, NODES_RE = re.escape(ALIASES), re.escape(NODES)


def bomb(levels: int = 9, width: int = 10) -> str:
    """``levels`` anchors, each a list referencing the previous one ``width`` times (10**8 strings expanded)."""
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_the_bomb_is_a_few_hundred_bytes() -> None:
    assert len(bomb().encode()) < 500


def test_the_bomb_is_refused_while_composing_with_the_line() -> None:
    # a2 (line 3) holds 10 uses of a1, each repeating a1's 10 aliases: 110 expansions
    with pytest.raises(ConfigError, match=rf"^battery\.yaml: line 3: {ALIASES_RE}$"):
        parse_config_text(bomb(), "battery.yaml")


def test_each_alias_inside_a_repeated_anchor_counts() -> None:
    # 2 levels of 10: 10 alias uses at a1, then 10 x (1 + 10) = 110 at a2
    assert parse_config_text(bomb(levels=2), "x.yaml") == {"a0": ["lol"], "a1": [["lol"]] * 10}
    with pytest.raises(ConfigError, match=ALIASES_RE):
        parse_config_text(bomb(levels=3), "x.yaml")


def test_a_hundred_alias_uses_load_and_one_more_is_refused() -> None:
    doc = "base: &b {x: 1}\nuses:\n" + "  - *b\n" * 100
    assert parse_config_text(doc, "ok.yaml")["uses"] == [{"x": 1}] * 100
    with pytest.raises(ConfigError, match=rf"^many\.yaml: line 103: {ALIASES_RE}$"):
        parse_config_text(doc + "  - *b\n", "many.yaml")


def test_more_than_a_hundred_thousand_nodes_are_refused() -> None:
    with pytest.raises(ConfigError, match=rf"^big\.yaml: line 1: {NODES_RE}$"):
        parse_config_text("[" + "1," * 100_000 + "]", "big.yaml")


def test_the_node_limit_counts_every_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config_load, "MAX_YAML_NODES", 1000)
    # the list itself is a node: 999 items make 1,000
    assert len(parse_config_text("[" + "1," * 999 + "]", "ok.yaml")) == 999
    with pytest.raises(ConfigError, match=r"^big\.yaml: line 1: more than 1,000 YAML nodes"):
        parse_config_text("[" + "1," * 1000 + "]", "big.yaml")
    # a mapping's keys are nodes too: 1 + 2 x 500
    with pytest.raises(ConfigError, match=r"more than 1,000 YAML nodes"):
        parse_config_text("{" + "".join(f"k{i}: 1, " for i in range(500)) + "}", "map.yaml")


def test_an_alias_counts_the_nodes_it_repeats() -> None:
    # 60 uses of a 2,001-node list: 60 alias expansions, but 120,000 nodes once expanded
    doc = "a: &a [" + "1," * 2000 + "]\nb: [" + ", ".join(["*a"] * 60) + "]\n"
    with pytest.raises(ConfigError, match=rf"^wide\.yaml: line 2: {NODES_RE}$"):
        parse_config_text(doc, "wide.yaml")


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^loop\.yaml: line 1: alias \*x is inside its own anchor"):
        parse_config_text("a: &x [1, *x]\n", "loop.yaml")


def test_merge_keys_and_a_few_aliases_still_load() -> None:
    doc = "base: &b {x: 1, y: 2}\none: {<<: *b, y: 3}\ntwo: *b\n"
    assert parse_config_text(doc, "m.yaml") == {
        "base": {"x": 1, "y": 2},
        "one": {"x": 1, "y": 3},
        "two": {"x": 1, "y": 2},
    }


def test_a_file_over_10_mb_is_refused_before_it_is_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "huge.yaml"
    with f.open("wb") as out:
        out.truncate(10_000_001)  # sparse: nothing written

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the file was opened")

    for name in ("open", "read_text", "read_bytes"):
        monkeypatch.setattr(Path, name, never)
    with pytest.raises(
        ConfigError,
        match=rf"^{re.escape(str(f))}: larger than 10 MB \(the most a configuration file may hold\); refused$",
    ):
        read_config(f)


def test_a_resource_over_10_mb_is_read_no_further_than_the_limit(tmp_path: Path) -> None:
    # a package resource (here inside a zip) has no size to check first: the read stops past 10 MB
    z = tmp_path / "pkg.zip"
    with zipfile.ZipFile(z, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big.yaml", "#" * 10_000_001)
        zf.writestr("ok.yaml", "a: 1\n")
    assert read_config(zipfile.Path(z, "ok.yaml"), source="ok") == {"a": 1}
    with pytest.raises(ConfigError, match=r"^big: larger than 10 MB"):
        read_config_text(zipfile.Path(z, "big.yaml"), source="big")


def test_a_file_of_10_mb_is_read(tmp_path: Path) -> None:
    f = tmp_path / "ten.json"  # JSON files have the same size limit, and parse fast
    f.write_text('{"a": 1}' + " " * (10_000_000 - 8), encoding="utf-8")
    assert f.stat().st_size == 10_000_000
    assert read_config(f) == {"a": 1}


def _prompts(path: Path) -> Any:
    return load_prompts_text(read_config_text(path), str(path))


LOADERS: dict[str, Callable[[Path], Any]] = {
    "rules": load_rules,
    "battery": load_battery,
    "season": load_season,
    "pack": load_prompt_pack,
    "events": load_event_templates,
    "prices": load_prices,
    "models": load_models_yaml,
    "annotator": load_annotator_pack,
    "prompts": _prompts,
}


@pytest.mark.parametrize("what", sorted(LOADERS))
def test_every_loader_refuses_the_bomb_naming_its_file(tmp_path: Path, what: str) -> None:
    f = tmp_path / f"{what}.yaml"
    f.write_text(bomb(), encoding="utf-8")
    with pytest.raises(ValueError) as err:
        LOADERS[what](f)
    assert str(err.value) == f"{f}: line 3: {ALIASES}"


SHIPPED = sorted(
    [*(ROOT / "src" / "mafialab").rglob("*.yaml"), *(ROOT / "examples").glob("*.yaml")],
    key=lambda p: str(p),
)


def test_the_shipped_yaml_files_are_found() -> None:
    names = {p.name for p in SHIPPED}
    assert {"annotator_en.yaml", "published.yaml", "questions.yaml", "arena_season.yaml", "mafiascope7.yaml"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(ROOT)) for p in SHIPPED])
def test_every_shipped_yaml_file_loads_as_before(path: Path) -> None:
    assert read_config(path) == yaml.safe_load(path.read_text(encoding="utf-8"))


def test_the_package_data_loads_through_its_readers() -> None:
    pack = load_annotator_pack("en")
    assert pack.language and len(pack.cues["accuse"]) > 10
    assert set(load_published()) >= {"source", "table1", "table2"}
    assert load_reference("mafiascope")["name"] == "mafiascope"
    assert person_questions()["vote"]
    assert resources.files("mafialab.beliefshift").joinpath("annotator_en.yaml").is_file()
    assert load_season(ROOT / "examples" / "arena_season.yaml").games > 0
    assert load_models_yaml(ROOT / "examples" / "beliefshift_models.yaml")


# A "billion laughs" YAML file given to any command is refused at once: one ``error:`` line, code 2.


runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


REFUSED = "line 3: more than 100 alias expansions (YAML anchors); refused"


def bomb_yaml_bombs(levels: int = 9, width: int = 10) -> str:
    """``levels`` anchors, each a list referencing the previous one ``width`` times."""
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


COMMANDS = {
    "play --probes": (["play", "--agents", "scripted", "--probes", "{f}", "--out", "{tmp}/runs"], "--probes: "),
    "play --rules": (["play", "--agents", "scripted", "--rules", "{f}", "--out", "{tmp}/runs"], "--rules: "),
    "rules show": (["rules", "show", "{f}"], "NAME: "),
    "season plan": (["season", "plan", "{f}"], "FILE: "),
    "season run": (["season", "run", "{f}", "--out", "{tmp}/season"], ""),
    "beliefshift report --models": (
        ["beliefshift", "report", "{tmp}/results.jsonl", "--models", "{f}", "--out", "{tmp}/report"],
        "",
    ),
    "beliefshift freeze --prompts": (
        ["beliefshift", "freeze", "{tmp}/games", "{tmp}/ann.jsonl", "--prompts", "{f}", "--out", "{tmp}/bench.jsonl"],
        "",
    ),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_yaml_bomb_is_refused_with_one_error_line(tmp_path: Path, name: str) -> None:
    f = tmp_path / "bomb_yaml_bombs.yaml"
    f.write_text(bomb_yaml_bombs(), encoding="utf-8")
    (tmp_path / "results.jsonl").touch()
    (tmp_path / "ann.jsonl").touch()
    (tmp_path / "games" / "g1").mkdir(parents=True)
    (tmp_path / "games" / "g1" / "game.jsonl").touch()
    args, label = COMMANDS[name]
    res = runner.invoke(app, [a.format(f=f, tmp=tmp_path) for a in args])
    out = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert out.startswith("error: ") and out.count("error:") == 1, res.output
    assert f"{label}{f}: {REFUSED}" in out, res.output
    assert "Traceback" not in res.output


_TEXTS = [
    "a: &x {b: [1, 2.5, null, yes, '3']}\nc: *x\nd:\n  <<: *x\n  e: \"\\u00e9\\t\"\n",
    "- |\n  two\n  lines\n- >-\n  folded\n  text\n- !!str 12\n- 0x1f\n- 2020-01-02\n",
    "plain: caf\u00e9 \u2028 end\nlist: [a, b, {c: d}]\n",
    "a: [1, 2",
    "a:\tb: c",
    "key: 'unterminated",
    "a: *undefined",
    "- a\nb: c",
]


@pytest.mark.parametrize("text", _TEXTS)
def test_libyaml_parsing_gives_the_pure_python_loader_s_data_and_messages(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def parse() -> tuple[str, Any]:
        try:
            return "data", parse_config_text(text, "doc.yaml")
        except ConfigError as err:
            return "error", str(err)

    assert config_load._CParser is not None  # PyYAML with libyaml, as the wheels ship it
    fast = parse()
    monkeypatch.setattr(config_load, "_CParser", None)
    assert fast == parse()
