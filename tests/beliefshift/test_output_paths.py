"""Belief-shift commands refuse unusable ``--out`` paths before doing any work."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.beliefshift._io import write_jsonl
from mafialab.cli import app
from tests.beliefshift_fixtures import result


def test_report_out_that_is_a_file_names_the_option(tmp_path: Path) -> None:
    # was "error: <path>: File exists" from deep in the writer, after all tables were built
    res_file = tmp_path / "res.jsonl"
    res_file.write_text(result("m", 1, "town", "mafia", "accuse", (0, 1), (1, 1)).model_dump_json() + "\n")
    taken = tmp_path / "taken"
    taken.write_text("keep me")
    res = CliRunner().invoke(app, ["beliefshift", "report", str(res_file), "--out", str(taken)])
    assert res.exit_code == 2, res.output
    assert "--out:" in res.output and "is a file; give a folder" in " ".join(res.output.split())
    assert taken.read_text() == "keep me"


@pytest.mark.parametrize("cmd", ["annotate", "freeze", "run"])
def test_out_that_is_a_directory_is_refused_first(bench: Path, tmp_path: Path, cmd: str) -> None:
    # annotate/freeze did all the work (a model annotator: every call) and then failed naming
    # "<out>.tmp", leaving that file behind
    root = bench.parent
    d = tmp_path / "adir"
    d.mkdir()
    args = {
        "annotate": [str(root / "logs")],
        "freeze": [str(root / "logs"), str(root / "ann.jsonl")],
        "run": [str(bench), "--model", "mock/x"],
    }[cmd]
    res = CliRunner().invoke(app, ["beliefshift", cmd, *args, "--out", str(d)])
    assert res.exit_code == 2, res.output
    assert "--out:" in res.output and "is a folder; give a file name" in " ".join(res.output.split())
    assert list(tmp_path.iterdir()) == [d] and list(d.iterdir()) == []


def test_write_jsonl_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        write_jsonl(tmp_path, None, [])
    assert list(tmp_path.iterdir()) == []
