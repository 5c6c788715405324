"""``beliefshift agreement``'s inputs: a labels file's errors in the labels format, swapped or empty files.

A labels line with ``round: "one"`` and no ``labels`` used to be taken for an annotation file
("invalid record record (message_id: Field required ...)"); it names the labels file, line
and fields. Each error is one line, exit code 2, no traceback.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.beliefshift import (
    BeliefShiftFormatError,
    RulesAnnotator,
    annotate_games,
    load_logs,
    read_annotations,
    read_labels,
    write_annotations,
)
from mafialab.beliefshift._agreement import file_kind
from mafialab.cli import app
from tests.beliefshift_fixtures import play_native

runner = CliRunner(env={"COLUMNS": "300", "NO_COLOR": "1"})
GOOD = {"game_id": "g", "round": 1, "speaker": "A", "labels": []}


@pytest.fixture(scope="module")
def ann(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("agree_inputs")
    play_native(out, range(1))
    res = asyncio.run(annotate_games(load_logs([out]), RulesAnnotator()))
    write_annotations(out / "ann.jsonl", res)
    return out / "ann.jsonl"


def _write(path: Path, *lines: object) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def _agreement(a: Path, b: Path) -> tuple[int, str]:
    res = runner.invoke(app, ["beliefshift", "agreement", str(a), str(b)])
    assert "Traceback" not in res.output and not isinstance(res.exception, (ValueError, KeyError, TypeError))
    return res.exit_code, res.output


def test_a_bad_first_labels_line_is_reported_in_the_labels_format(ann: Path, tmp_path: Path) -> None:
    lab = _write(tmp_path / "labels.jsonl", {"game_id": "g", "round": "one", "speaker": "A"})
    assert file_kind(lab) == "labels"
    code, out = _agreement(lab, ann)
    assert code == 2 and out.count("\n") == 1, out
    assert out.startswith(f"error: ANN_A: {lab}:1: invalid labels line (round: "), out
    assert "got 'one'" in out and "labels: missing" in out
    assert "message_id" not in out and "record record" not in out


def test_every_bad_field_is_named(tmp_path: Path) -> None:
    lab = _write(
        tmp_path / "l.jsonl", GOOD, {**GOOD, "speaker": "B", "rnd": 2, "labels": [{"target": "C", "cat": "x"}]}
    )
    with pytest.raises(BeliefShiftFormatError) as err:
        read_labels(lab)
    msg = str(err.value)
    assert msg.startswith(f"{lab}:2: invalid labels line (")
    assert "rnd: unknown field (a labels line has game_id, round, speaker, labels, note)" in msg
    assert "labels.0.cat: unknown field (a label has target, category)" in msg
    assert "labels.0.category: missing" in msg


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_an_empty_labels_file_says_it_is_empty(ann: Path, tmp_path: Path, content: str) -> None:
    lab = tmp_path / "labels.jsonl"
    lab.write_text(content, encoding="utf-8")
    assert file_kind(lab) == "empty"
    code, out = _agreement(lab, ann)
    assert code == 2 and out == f"error: ANN_A: {lab} is empty (expected a labels file or ANN.jsonl)\n", out
    code, out = _agreement(ann, lab)
    assert code == 2 and out == f"error: ANN_B: {lab} is empty (expected ANN.jsonl)\n", out


@pytest.mark.parametrize("content", ["# Notes\n\nnot json at all\n", '[1, 2]\n"text"\n{broken\n'])
def test_a_file_with_no_json_object_line_is_refused_in_one_line(ann: Path, tmp_path: Path, content: str) -> None:
    # a README given by mistake printed one 'not valid JSON' warning per line, then 'share no scanned message'
    other = tmp_path / "notes.md"
    other.write_text(content, encoding="utf-8")
    want = "has no JSON-object line: expected {}ANN.jsonl (one JSON object per line)\n"
    code, out = _agreement(other, ann)
    assert code == 2 and out == f"error: ANN_A: {other} " + want.format("a labels file or "), out
    code, out = _agreement(ann, other)
    assert code == 2 and out == f"error: ANN_B: {other} " + want.format(""), out


def test_a_torn_first_line_is_left_to_the_reader(ann: Path, tmp_path: Path) -> None:
    torn = tmp_path / "torn.jsonl"
    torn.write_text('{"kind": "annot\n' + ann.read_text(encoding="utf-8"), encoding="utf-8")
    code, out = _agreement(ann, torn)
    assert "has no JSON-object line" not in out, out
    assert code == 2 and out.startswith(f"error: ANN_B: {torn}:1: not valid JSON (") and out.count("\n") == 1, out


def _labels_of(ann: Path) -> list[dict[str, object]]:
    """A labels file equal to the annotation file ``ann``."""
    res = read_annotations(ann)
    assert res.header is not None
    rosters = res.header.rosters
    recs = {
        m.message_id: {"game_id": m.game_id, "round": m.round, "speaker": rosters[m.game_id][m.seat], "labels": []}
        for m in res.header.scanned
    }
    for a in res.annotations:
        recs[a.message_id]["labels"].append({"target": a.target.name, "category": a.category})  # type: ignore[attr-defined]
    return list(recs.values())


@pytest.mark.parametrize("which", ["labels", "annotations"])
def test_a_garbage_line_in_either_file_is_refused_with_its_line(ann: Path, tmp_path: Path, which: str) -> None:
    lab = _write(tmp_path / "labels.jsonl", *_labels_of(ann))
    bad = lab if which == "labels" else _write(tmp_path / "ann.jsonl", ann.read_text(encoding="utf-8").rstrip("\n"))
    lines = bad.read_text(encoding="utf-8").splitlines()
    bad.write_text("\n".join([*lines[:2], "garbage", *lines[2:]]) + "\n", encoding="utf-8")
    code, out = _agreement(lab, bad if which == "annotations" else ann)
    assert code == 2 and out.count("\n") == 1, out
    label = "ANN_A" if which == "labels" else "ANN_B"
    assert out == f"error: {label}: {bad}:3: not valid JSON (Expecting value at column 1)\n", out


def test_read_annotations_refuses_an_unreadable_line(ann: Path, tmp_path: Path) -> None:
    bad = _write(tmp_path / "ann.jsonl", ann.read_text(encoding="utf-8").rstrip("\n"), "[1]")
    n = len(bad.read_text(encoding="utf-8").splitlines())
    with pytest.raises(BeliefShiftFormatError, match=rf"ann.jsonl:{n}: not a JSON object"):
        read_annotations(bad)


@pytest.mark.parametrize(
    ("edit", "want"),
    [
        (lambda L: L[1].update(speaker="Zed"), ":2: speaker: 'Zed' is not a player of game "),
        (lambda L: L[0]["labels"].append({"target": "Zed", "category": "accuse"}), ":1: labels.0.target: 'Zed' is not a player of game "),
        (lambda L: L[2]["labels"].append({"target": L[2]["speaker"], "category": "suspect"}), ":3: labels.0.target: "),
    ],
)  # fmt: skip
def test_a_name_that_is_no_player_of_the_game_is_refused(ann: Path, tmp_path: Path, edit: object, want: str) -> None:
    lines = _labels_of(ann)
    for x in lines[:3]:
        x["labels"] = []
    edit(lines)  # type: ignore[operator]
    lab = _write(tmp_path / "labels.jsonl", *lines)
    code, out = _agreement(lab, ann)
    assert code == 2 and out.count("\n") == 1 and out.startswith(f"error: ANN_A: {lab}{want}"), out
    assert ("is the speaker" in out) if want.endswith("target: ") else ("(players: Alex, " in out), out


def test_left_out_messages_are_named_by_line(ann: Path, tmp_path: Path) -> None:
    lines = _labels_of(ann)
    lines += [{"game_id": f"nosuch{i}", "round": 1, "speaker": "Alex", "labels": []} for i in range(5)]
    lab = _write(tmp_path / "labels.jsonl", *lines)
    code, out = _agreement(lab, ann)
    k = len(lines) - 5
    assert code == 0, out
    flat = " ".join(out.split())
    assert "note: 5 labelled messages not scanned in the annotation file" in flat, out
    assert f"left out: {lab}:{k + 1}, {lab}:{k + 2}, {lab}:{k + 3} and 2 more" in flat, out


def test_a_file_of_neither_kind_says_what_was_expected(ann: Path, tmp_path: Path) -> None:
    foo = _write(tmp_path / "foo.jsonl", {"foo": 1})
    code, out = _agreement(foo, ann)
    assert code == 2 and out.count("\n") == 1, out
    assert out.startswith(f"error: ANN_A: {foo}:1: neither a labels line nor an annotation record (fields: foo); ")
    assert 'expected a labels file (lines like {"game_id": ' in out and "Field required" not in out
    code, out = _agreement(ann, foo)
    assert code == 2 and out.startswith(f"error: ANN_B: {foo}:1: neither") and "a labels file" not in out, out


def test_read_labels_refuses_a_file_without_a_message(tmp_path: Path) -> None:
    with pytest.raises(BeliefShiftFormatError, match="the labels file is empty"):
        read_labels(_write(tmp_path / "l.jsonl", " "))


def test_swapped_arguments_say_which_file_looks_like_which(ann: Path, tmp_path: Path) -> None:
    lab = _write(tmp_path / "labels.jsonl", GOOD)
    assert (file_kind(lab), file_kind(ann)) == ("labels", "annotations")
    code, out = _agreement(ann, lab)
    assert code == 2 and out.count("\n") == 1, out
    assert out.startswith("error: ANN_A and ANN_B look swapped: ")
    assert f"{lab} (ANN_B) looks like a labels file and {ann} (ANN_A) like an annotation file" in out


def test_two_labels_files_say_the_second_must_be_an_annotation_file(tmp_path: Path) -> None:
    lab = _write(tmp_path / "labels.jsonl", GOOD)
    code, out = _agreement(lab, lab)
    assert code == 2 and out.startswith(f"error: ANN_B: {lab} looks like a labels file"), out


def test_an_annotation_file_without_kind_is_not_a_doubled_record(tmp_path: Path) -> None:
    bad = _write(tmp_path / "ann.jsonl", {"message_id": "m"})
    assert file_kind(bad) == "annotations"
    with pytest.raises(BeliefShiftFormatError) as err:
        read_annotations(bad)
    assert "record record" not in str(err.value) and f"{bad}:1: invalid record (" in str(err.value)


def test_a_later_line_of_another_format_is_named_not_a_pydantic_dump(ann: Path, tmp_path: Path) -> None:
    b = _write(tmp_path / "ann.jsonl", ann.read_text(encoding="utf-8").rstrip("\n"), {"foo": 1})
    n = len(b.read_text(encoding="utf-8").splitlines())
    code, out = _agreement(ann, b)
    assert code == 2 and out.count("\n") == 1, out
    assert out.startswith(
        f"error: ANN_B: {b}:{n}: not an annotation record (fields: foo; expected kind, message_id, "
    ), out
    assert "Field required" not in out and "more)" not in out
