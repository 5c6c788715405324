"""A line repeated word for word in ``probes.jsonl`` or ``calls.jsonl`` is read once and named.

Found by a new user: a duplicated probe line made ``report`` count 98 probe records where the
game has 97, and a duplicated call line added a call and its tokens to the cost table, with no
warning. ``game.jsonl`` already named a repeated ``seq``; the probe and call readers now skip a
line equal to an earlier one, as ``file:line: repeated line (line M is the same; kept that
one)``. Two records that differ in any field (a clock field, a retry) are both kept.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import CALLS_FILE, PROBES_FILE, iter_call_records, iter_probe_records

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("repeated_records")
    res = runner.invoke(app, ["play", "--agents", "scripted", "--probes", "suspicion", "--out", str(out / "r")])
    assert res.exit_code == 0, res.output
    return next((out / "r").iterdir())


def _copy(game: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in game.iterdir():
        if f.is_file():
            (dst / f.name).write_bytes(f.read_bytes())
    return dst


def _probe_count(game: Path) -> str:
    res = runner.invoke(app, ["report", str(game), "--format", "json", "--resamples", "10"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["probe_records"]


def test_a_duplicated_probe_line_is_counted_once_and_named(probed: Path, tmp_path: Path) -> None:
    g = _copy(probed, tmp_path / "dup")
    lines = (g / PROBES_FILE).read_text().splitlines(keepends=True)
    (g / PROBES_FILE).write_text("".join([*lines[:10], lines[9], *lines[10:]]))
    problems: list[str] = []
    records = list(iter_probe_records(g, problems=problems))
    assert len(records) == len(lines)
    assert problems == [f"{g / PROBES_FILE}:11: repeated line (line 10 is the same; kept that one)"]
    assert _probe_count(g) == _probe_count(probed)


def test_records_that_differ_in_a_clock_field_are_both_kept(probed: Path, tmp_path: Path) -> None:
    g = _copy(probed, tmp_path / "calls")
    call = {"kind": "call", "seat": 0, "purpose": "game", "ts": 1.0, "latency_s": 0.5}
    later = {**call, "ts": 2.0}
    text = "".join(json.dumps(x) + "\n" for x in (call, call, later))
    (g / CALLS_FILE).write_text(text)
    problems: list[str] = []
    records = [obj for _, obj in iter_call_records(g, problems=problems)]
    assert [r["ts"] for r in records] == [1.0, 2.0]
    assert problems == [f"{g / CALLS_FILE}:2: repeated line (line 1 is the same; kept that one)"]
