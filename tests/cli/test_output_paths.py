"""Every command that writes somewhere refuses a wrong ``--out`` before any work, naming the option.

A file where a folder is wanted, a folder where a file is wanted, a path under a file and a
place that cannot be written each get ``error: --out: …`` (never the system's ``[Errno N]``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})

# commands whose --out (or --plots) is a folder: the arguments before it (inputs need not exist:
# the output is checked first)
FOLDER_OUT = {
    "play": (["play", "--agents", "scripted"], "--out"),
    "view": (["view", "."], "--out"),
    "report --plots": (["report", "."], "--plots"),
    "import mafiascope": (["import", "mafiascope", "."], "--out"),
    "season run": (["season", "run", "season.yaml"], "--out"),
    "fork run": (["fork", "run", "game", "--at", "1"], "--out"),
    "fork sweep": (["fork", "sweep", "game", "-n", "1"], "--out"),
    "bifurcate run": (["bifurcate", "run", "game", "--points", "1"], "--out"),
    "retest": (["retest", "game"], "--out"),
    "export parquet": (["export", "parquet", "."], "--out"),
    "beliefshift report": (["beliefshift", "report", "r.jsonl"], "--out"),
}
# commands whose --out is a file
FILE_OUT = {
    "beliefshift annotate": ["beliefshift", "annotate", "."],
    "beliefshift freeze": ["beliefshift", "freeze", ".", "ann.jsonl"],
    "beliefshift run": ["beliefshift", "run", "bench.jsonl"],
    "export tgn": ["export", "tgn", "."],
}


def _run(tmp_path: Path, args: list[str]) -> tuple[int, str]:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = runner.invoke(app, args)
    finally:
        os.chdir(cwd)
    return res.exit_code, " ".join(res.output.split())


@pytest.mark.parametrize("name", sorted(FOLDER_OUT))
def test_a_file_given_for_an_output_folder_is_refused_by_name(tmp_path: Path, name: str) -> None:
    args, option = FOLDER_OUT[name]
    (tmp_path / "notes.txt").write_text("mine\n")
    code, out = _run(tmp_path, [*args, option, "notes.txt"])
    assert code == 2, out
    assert f"error: {option}: notes.txt is a file; give a folder" in out or "give a directory or a FILE.parquet" in out
    assert "Errno" not in out
    assert (tmp_path / "notes.txt").read_text() == "mine\n"
    code, out = _run(tmp_path, [*args, option, "notes.txt/sub"])
    assert code == 2, out
    assert f"error: {option}: notes.txt/sub cannot be created: notes.txt is a file, not a folder" in out


@pytest.mark.parametrize("name", sorted(FILE_OUT))
def test_a_folder_given_for_an_output_file_is_refused_by_name(tmp_path: Path, name: str) -> None:
    args = FILE_OUT[name]
    (tmp_path / "results.csv").mkdir()
    code, out = _run(tmp_path, [*args, "--out", "results.csv"])
    assert code == 2, out
    assert "error: --out: results.csv is a folder; give a file name" in out
    (tmp_path / "notes.txt").write_text("mine\n")
    code, out = _run(tmp_path, [*args, "--out", "notes.txt/a.csv"])
    assert code == 2, out
    assert "error: --out: notes.txt/a.csv cannot be created: notes.txt is a file, not a folder" in out
    assert "Errno" not in out


def test_an_output_folder_that_cannot_be_written_is_refused_before_playing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    # a read-only disk (or a folder of another user): access(2) says no for writing
    monkeypatch.setattr(
        os,
        "access",
        lambda p, mode, **kw: (
            False if mode & os.W_OK and Path(p).resolve() == locked.resolve() else real_access(p, mode, **kw)
        ),
    )
    code, out = _run(tmp_path, ["play", "--agents", "scripted", "--out", "locked/runs"])
    assert code == 2, out
    assert "error: --out: cannot write the folder locked/runs: locked is not writable" in out
    code, out = _run(tmp_path, ["play", "--agents", "scripted", "--out", "locked"])
    assert code == 2, out
    assert "error: --out: cannot write into the folder locked: it is not writable" in out
    assert list(locked.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into any folder")
def test_a_read_only_folder_is_refused_by_name(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        code, out = _run(tmp_path, ["play", "--agents", "scripted", "--out", "locked/runs"])
    finally:
        locked.chmod(0o700)
    assert code == 2, out
    assert "--out: cannot write the folder locked/runs" in out
