"""Building a site over earlier output: logs kept, foreign data refused, old builds replaced."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import GAME_FILE


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    (dst / GAME_FILE).write_bytes((src / GAME_FILE).read_bytes())
    return dst


def test_out_over_logs_in_data_keeps_the_logs(game_dir: Path, tmp_path: Path) -> None:
    # logs live in runs/data/<game>; `view runs --out runs` used to rmtree runs/data first
    g = _copy(game_dir, tmp_path / "runs" / "data" / "g1")
    before = (g / GAME_FILE).read_bytes()
    res = CliRunner().invoke(app, ["view", str(tmp_path / "runs"), "--out", str(tmp_path / "runs")])
    assert res.exit_code == 2, res.output
    assert "--out" in res.output and "Traceback" not in res.output
    assert (g / GAME_FILE).read_bytes() == before


def test_out_with_foreign_data_dir_is_refused(game_dir: Path, tmp_path: Path) -> None:
    logs = _copy(game_dir, tmp_path / "logs" / "g1").parent
    keep = tmp_path / "home" / "data" / "thesis.txt"
    keep.parent.mkdir(parents=True)
    keep.write_text("precious")
    res = CliRunner().invoke(app, ["view", str(logs), "--out", str(tmp_path / "home")])
    assert res.exit_code == 2, res.output
    assert "not an earlier viewer build" in res.output
    assert keep.read_text() == "precious"


def test_a_users_own_page_in_out_is_refused(game_dir: Path, tmp_path: Path) -> None:
    logs = _copy(game_dir, tmp_path / "logs" / "g1").parent
    page = tmp_path / "home" / "index.html"
    page.parent.mkdir()
    page.write_text("<p>my homepage</p>")
    res = CliRunner().invoke(app, ["view", str(logs), "--out", str(tmp_path / "home")])
    assert res.exit_code == 2, res.output
    assert "index.html exists and is not from an earlier viewer build" in " ".join(res.output.split())
    assert page.read_text() == "<p>my homepage</p>" and not (tmp_path / "home" / "data").exists()


def test_an_earlier_build_is_still_replaced(game_dir: Path, tmp_path: Path) -> None:
    logs = _copy(game_dir, tmp_path / "logs" / "g1").parent
    site = tmp_path / "site"
    for _ in range(2):
        res = CliRunner().invoke(app, ["view", str(logs), "--out", str(site), "--jobs", "1"])
        assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (site / "data").iterdir()) == [
        "g",
        "index.js",
        "manifest.json",
        "pages",
        "s",
        "templates.js",
    ]
    assert len(list((site / "data" / "g").iterdir())) == 1


def test_view_says_what_it_will_replace(game_dir: Path, tmp_path: Path) -> None:
    logs = _copy(game_dir, tmp_path / "runs" / "g1").parent
    first = CliRunner().invoke(app, ["view", str(logs), "--out", str(tmp_path / "site")])
    assert first.exit_code == 0 and "note:" not in first.output
    again = CliRunner().invoke(app, ["view", str(logs), "--out", str(tmp_path / "site")])
    assert again.exit_code == 0, again.output
    assert "holds an earlier viewer build" in " ".join(again.output.split())
    # the logs folder itself as the site folder is the command's own input: refused, nothing written
    beside = CliRunner().invoke(app, ["view", str(logs), "--out", str(logs)])
    flat = " ".join(beside.output.split())
    assert beside.exit_code == 2 and f"error: --out: {logs} is the input DIR" in flat, flat
    assert sorted(p.name for p in logs.iterdir()) == ["g1"] and (logs / "g1" / GAME_FILE).is_file()
