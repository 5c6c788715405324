"""Probe DSL: built-in batteries, MafiaScope introspection blocks, errors naming the field."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.probes import (
    CHAIN_MAX_CHARS,
    NOT_AVAILABLE,
    ProbeBatteryError,
    battery_from_dict,
    chain_text,
    load_battery,
    render_question,
    render_schema,
    resolve_battery,
)

STANDARD = ["role_assessment", "suspicion_ranking", "social_map", "personality_profile", "planned_action"]


def test_default_battery_covers_the_standard_probes_in_order():
    b = load_battery("default")
    assert [p.id for p in b.probes] == STANDARD
    assert b.probe("planned_action").when == "own_turn"
    assert all(b.probe(i).when == "always" for i in STANDARD[:4])
    assert all(p.json_schema is not None for p in b.probes)
    assert b.after_each_message and b.after_each_round and b.night_actions


def test_suspicion_battery_is_one_probe():
    b = load_battery("suspicion")
    assert [p.id for p in b.probes] == ["suspicion_ranking"]
    assert b.probes[0].json_schema == load_battery("default").probe("suspicion_ranking").json_schema


def test_none_resolves_to_no_battery():
    assert resolve_battery("none") is None
    assert resolve_battery(None) is None
    assert resolve_battery("default") is not None


@pytest.mark.parametrize("name", ["config_en_demo.yaml", "config_deepseek.yaml"])
def test_mafiascope_configs_load_unchanged(mafiascope_dir: Path, name: str):
    path = mafiascope_dir / "configs" / name
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))["introspection"]
    b = load_battery(path)
    assert b.source_format == "mafiascope"
    assert b.name == path.stem
    assert b.after_each_message is raw["after_each_message"]
    assert b.after_each_round is raw["after_each_round"]
    assert [p.id for p in b.probes] == [p["id"] for p in raw["probes"]]
    for spec, p in zip(b.probes, raw["probes"], strict=True):
        assert spec.question == p["question"]
        assert spec.max_tokens == p.get("max_tokens", 300)
        assert spec.when == p.get("when", "always")
        assert spec.json_schema is None
    # suspicion_ranking gives no max_tokens in either file: MafiaScope's default applies
    assert b.probe("suspicion_ranking").max_tokens == 300


def test_mafiascope_question_renders_like_str_format(mafiascope_dir: Path):
    b = load_battery(mafiascope_dir / "configs" / "config_en_demo.yaml")
    p = b.probe("social_map")
    values = {"player": "Casey", "players": "Casey, Indigo", "others": "Indigo", "roles": "", "mafia_team": "Mafia"}
    q = render_question(p, values, {"prev_role_assessment": '[{"player":"Indigo"}]'})
    expected = p.question.format(
        player="Casey", players="Casey, Indigo", prev_role_assessment='[{"player":"Indigo"}]', last_social_map="N/A"
    ).strip()
    assert q == expected
    assert '"toward_me": [{"player": "...", "attitude"' in q  # literal braces from {{ }}


def test_chained_text_is_inserted_verbatim_not_formatted():
    b = battery_from_dict({"probes": [{"id": "a", "question": "Before: {last_a} / {player}"}]})
    tricky = "{player} {0} {{x}}"
    q = render_question(b.probes[0], {"player": "Ann"}, {"last_a": tricky})
    assert q == "Before: {player} {0} {{x}} / Ann"


def test_chain_text():
    assert chain_text([{"player": "Ann", "score": 3}], "ignored") == '[{"player":"Ann","score":3}]'
    assert chain_text({"é": 1}, None) == '{"é":1}'
    assert chain_text(None, "  free text ") == "free text"
    # a 100 kB answer (a backend that ignores the token cap) is not carried whole into later questions
    long = chain_text({"text": "word " * 20_000}, None)
    assert len(long) == CHAIN_MAX_CHARS and long.startswith('{"text":"word word') and long.endswith("…")
    assert chain_text(None, "x" * CHAIN_MAX_CHARS) == "x" * CHAIN_MAX_CHARS
    assert chain_text(None, "") == NOT_AVAILABLE


def test_render_schema_expands_lists():
    schema = {
        "type": "array",
        "items": {"properties": {"player": {"enum": ["$players"]}, "r": {"enum": ["$roles", "x"]}}},
    }
    out = render_schema(schema, {"$players": ["Ann", "Bo"], "$roles": ["Mafia", "Unknown"]})
    assert out["items"]["properties"]["player"]["enum"] == ["Ann", "Bo"]
    assert out["items"]["properties"]["r"]["enum"] == ["Mafia", "Unknown", "x"]
    assert schema["items"]["properties"]["player"]["enum"] == ["$players"]  # input untouched


def _probe(**kw: object) -> dict[str, object]:
    return {"id": "p", "question": "Q {player}", **kw}


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"probes": [_probe(), _probe(id="q"), _probe(id="r", when="sometimes")]}, "probes[2].when: Input should be"),
        ({"probes": [{"id": "a"}]}, "probes[0].question: Field required"),
        (
            {"probes": [_probe(), {"id": "b", "qestion": "x"}]},
            "probes[1].qestion: unknown field 'qestion' (did you mean 'question'?)",
        ),
        ({"probes": [_probe(), _probe()]}, "probes[1].id: duplicate probe id 'p'"),
        ({"probes": [_probe(question="Hi {foo}")]}, "probes[0].question: unknown placeholder {foo}"),
        ({"probes": [_probe(question="Hi {}")]}, "probes[0].question: unknown placeholder {} (an empty field)"),
        ({"probes": [_probe(question="{prev_b}"), _probe(id="b")]}, "probes[0].question: {prev_b} needs a probe 'b'"),
        ({"probes": [_probe(question="{last_zz}")]}, "probes[0].question: {last_zz} names no probe"),
        ({"probes": [_probe(question='JSON: {"a": 1}')]}, "probes[0].question: unknown placeholder"),
        ({"probes": [_probe(question="open { brace")]}, "probes[0].question: not a valid template"),
        ({"probes": [_probe(schema={"type": "nope"})]}, "probes[0].schema.type: not a valid JSON schema"),
        ({"probes": [_probe(max_tokens=0)]}, "probes[0].max_tokens: Input should be greater than or equal to 1"),
        ({"probes": [_probe(id="has space")]}, "probes[0].id: String should match pattern"),
        ({"probes": []}, "probes: Tuple should have at least 1 item"),
        ({"probez": []}, "probez: unknown field 'probez' (did you mean 'probes'?)"),
        ([1, 2], "expected a probe battery (a mapping with a 'probes' list) at the top level, found a list"),
        (
            {"introspection": {"enabled": True, "probes": [_probe(when="round_end")]}},
            "introspection.probes[0].when: MafiaScope blocks allow always or own_turn",
        ),
        ({"introspection": {"probes": [_probe()], "colour": 1}}, "introspection.colour: unknown key"),
        ({"introspection": {"probes": [_probe(max_tokens="lots")]}}, "introspection.probes[0].max_tokens"),
    ],
)
def test_malformed_batteries_name_the_field(tmp_path: Path, doc: object, needle: str):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ProbeBatteryError) as exc:
        load_battery(path)
    assert str(exc.value).startswith(f"{path}: ")
    assert needle in str(exc.value)


def test_yaml_syntax_error_names_the_line(tmp_path: Path):
    path = tmp_path / "broken.yaml"
    path.write_text(
        textwrap.dedent("""\
        probes:
          - id: a
            question: "unterminated
        """),
        encoding="utf-8",
    )
    with pytest.raises(ProbeBatteryError, match=r"broken\.yaml: line \d+: not valid YAML"):
        load_battery(path)


def test_unknown_battery_name():
    with pytest.raises(ProbeBatteryError, match="neither a built-in battery"):
        load_battery("no-such-battery")


def test_disabled_mafiascope_block_runs_nothing(tmp_path: Path):
    path = tmp_path / "off.yaml"
    path.write_text(json.dumps({"introspection": {"enabled": False, "probes": [_probe()]}}), encoding="utf-8")
    assert load_battery(path).enabled is False
    assert resolve_battery(str(path)) is None


def test_own_battery_with_all_triggers(tmp_path: Path):
    doc = {
        "after_each_message": False,
        "after_night_action": True,
        "probes": [
            _probe(id="a", when="round_end"),
            _probe(id="b", when="night_action", question="{prev_a} {last_b} {others} {roles} {mafia_team}"),
        ],
    }
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    b = load_battery(path)
    assert [p.when for p in b.probes] == ["round_end", "night_action"]
    assert not b.after_each_message and b.night_actions
    assert b.probes[1].placeholders() == ["prev_a", "last_b", "others", "roles", "mafia_team"]


@pytest.mark.parametrize("value", ["5", "true", "1.5"])
def test_mafiascope_block_whose_probes_is_not_a_list(tmp_path: Path, value: str) -> None:
    p = tmp_path / "cfg.yaml"
    p.write_text(f"introspection:\n  enabled: true\n  probes: {value}\n")
    with pytest.raises(ProbeBatteryError, match=r"cfg\.yaml: introspection\.probes"):
        load_battery(p)


# ``--probes FILE`` errors: an empty file is called empty (as the config loader says it), and a


runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


@pytest.mark.parametrize("text", ["", "\n# nothing here\n"])
def test_an_empty_battery_file_says_the_file_is_empty(tmp_path: Path, text: str) -> None:
    f = tmp_path / "empty.yaml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ProbeBatteryError) as err:
        load_battery(f)
    assert str(err.value) == f"{f}: the file is empty (expected a probe battery: a mapping with a 'probes' list)"
    assert "NoneType" not in str(err.value)


def test_play_with_an_empty_probes_file_says_it_is_empty(tmp_path: Path) -> None:
    f = tmp_path / "empty.jsonl"
    f.write_text("", encoding="utf-8")
    res = runner.invoke(
        app, ["play", "--agents", "scripted", "--games", "1", "--out", str(tmp_path / "g"), "--probes", str(f)]
    )
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert (
        res.output
        == f"error: --probes: {f}: the file is empty (expected a probe battery: a mapping with a 'probes' list)\n"
    )


def test_a_probe_with_unknown_fields_is_named_by_its_fields() -> None:
    with pytest.raises(ProbeBatteryError) as err:
        battery_from_dict({"probes": [{"name": "x", "type": "nosuchkind"}]}, source="b.yaml")
    msg = str(err.value)
    assert "probes[0].type: unknown field 'type' (allowed: id, question, when, max_tokens, " in msg
    assert "probes[0].name: unknown field 'name' (allowed: " in msg
    assert "probes[0].id: Field required" in msg and "probes[0].question: Field required" in msg
    assert "Tuple should have" not in msg and "did you mean 'id'" not in msg


def test_an_empty_probe_list_still_says_it_needs_one() -> None:
    with pytest.raises(ProbeBatteryError, match=r"b.yaml: probes: Tuple should have at least 1 item"):
        battery_from_dict({"probes": []}, source="b.yaml")
