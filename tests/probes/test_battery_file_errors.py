"""``--probes FILE`` errors: an empty file is called empty (as the config loader says it), and a
bad probe is named by its own bad fields, never by the length of the list it was dropped from."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.probes import ProbeBatteryError, battery_from_dict, load_battery

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
