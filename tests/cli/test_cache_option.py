"""``--cache`` of ``report`` and ``view`` names a folder: a file there is refused before any work."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app

GAME = Path(__file__).resolve().parents[1] / "data" / "viewer_branches" / "parent"


@pytest.mark.parametrize("command", [["report", str(GAME)], ["view", str(GAME), "--out", "SITE"]])
def test_a_file_given_as_the_cache_folder_is_refused(command: list[str], tmp_path: Path) -> None:
    cache = tmp_path / "cache.txt"
    cache.write_text("mine\n", encoding="utf-8")
    args = [str(tmp_path / "site") if a == "SITE" else a for a in command]
    res = CliRunner().invoke(app, [*args, "--cache", str(cache)])
    assert res.exit_code == 2, res.output
    assert "--cache" in res.output and "file" in res.output
    assert cache.read_text(encoding="utf-8") == "mine\n"
    assert not (tmp_path / "site").exists()
