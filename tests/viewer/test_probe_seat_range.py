"""A probe record for a seat the roster does not have is named (file, line, seat), not dropped silently."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import PROBES_FILE, iter_game_dirs
from mafialab.viewer import build_site
from mafialab.viewer._build import read_probes


def test_a_probe_record_for_a_seat_out_of_range_is_reported_and_left_out(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["play", "--agents", "scripted", "--probes", "suspicion", "--out", str(tmp_path / "r")]
    )
    assert res.exit_code == 0, res.output
    (d,) = iter_game_dirs(tmp_path / "r")
    path = d / PROBES_FILE
    lines = path.read_text().splitlines()
    rec = json.loads(lines[5])
    rec["seat"] = 99
    lines[5] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    problems: list[str] = []
    probes = read_probes(d, problems, 7)
    assert problems == [f"{path}:6: invalid probe record (seat 99 is out of range: the roster has seats 0-6)"]
    assert len(probes) == len(lines) - 1 and all(p.seat < 7 for p in probes)
    assert len(read_probes(d, [])) == len(lines)  # without the roster's size nothing is checked
    summary = build_site(tmp_path / "r", tmp_path / "site", jobs=1)
    assert summary.games and (d / PROBES_FILE).read_text().splitlines()[5] == lines[5]  # the file is kept
    page = next((tmp_path / "site" / "data" / "g").glob("*.js")).read_text()
    assert "seat 99 is out of range" in page  # the game's notes say so
