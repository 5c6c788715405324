"""Two directories holding one game id: the report keeps both, as separate games, and warns."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from mafialab.analysis import compute_report, load_games
from mafialab.cli import app


def _two_copies(tmp_path: Path) -> tuple[Path, str]:
    res = CliRunner().invoke(app, ["play", "-a", "scripted", "-s", "4", "-o", str(tmp_path / "src")])
    assert res.exit_code == 0, res.output
    (game,) = [p for p in (tmp_path / "src").iterdir() if p.is_dir()]
    for part in ("x", "y"):
        shutil.copytree(game, tmp_path / "logs" / part / game.name)
    return tmp_path / "logs", game.name


def test_both_copies_are_read_and_bootstrapped_apart(tmp_path: Path) -> None:
    logs, gid = _two_copies(tmp_path)
    warnings: list[str] = []
    games = load_games(logs, warnings=warnings)
    assert [g.game_id for g in games] == [gid, gid]
    assert len({g.root for g in games}) == 2
    (w,) = warnings
    assert str(logs / "x" / gid) in w and str(logs / "y" / gid) in w
    assert compute_report(games, resamples=10).model_dump(mode="json")["games"] == 2


def test_report_prints_the_warning(tmp_path: Path) -> None:
    logs, gid = _two_copies(tmp_path)
    res = CliRunner().invoke(app, ["report", str(logs), "--resamples", "10"])
    assert res.exit_code == 0, res.output
    assert f"game id '{gid}' is in both" in res.output


def test_report_and_view_print_the_warning_once(tmp_path: Path) -> None:
    # in a real process nothing captures logging: a warning both logged and printed showed twice
    logs, gid = _two_copies(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "300", "NO_COLOR": "1"}
    for args in (["report", str(logs), "--resamples", "10"], ["view", str(logs), "-o", str(tmp_path / "s"), "-j", "1"]):
        res = subprocess.run([sys.executable, "-m", "mafialab", *args], capture_output=True, text=True, env=env)
        assert res.returncode == 0, res.stderr
        said = " ".join((res.stdout + res.stderr).split())
        assert said.count(f"game id '{gid}' is in") == 1, said


def test_the_rule_is_one_definition() -> None:
    """RepeatedIds: the first folder keeps its root, a later copy is ``<id>@<path>``, a branch keeps its root."""
    from mafialab.analysis import RepeatedIds

    ids = RepeatedIds()
    assert ids.see("g1", "a/g1", "g1", False) == ("g1", None)
    assert ids.see("g1", "a/g1", "g1", False) == ("g1", None)  # the same folder again is no copy
    root, msg = ids.see("g1", "b/g1", "g1", False)
    assert root == "g1@b/g1"
    assert msg == "game id 'g1' is in both a/g1 and b/g1; both kept as separate games"
    assert ids.see("g1", "c/g1", "p0", True) == (
        "p0",
        "game id 'g1' is in both a/g1 and c/g1; both kept as separate games",
    )
    assert ids.see("g2", "b/g2", "g2", False) == ("g2", None)
