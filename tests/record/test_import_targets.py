"""Where an import may write: never over its source or a native game; re-imports replace."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import GAME_FILE, import_mafiascope, read_game

GAME = "0a7f3c10-1111-4aaa-8aaa-000000000001"  # tests/data/mafiascope/en_demo


@pytest.fixture
def one_game(tmp_path: Path, mafiascope_dir: Path) -> Path:
    """A copy of one raw MafiaScope game under ``tmp_path/src``."""
    src = tmp_path / "src" / GAME
    shutil.copytree(mafiascope_dir / "en_demo" / GAME, src)
    return src


@pytest.fixture(scope="module")
def native(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding one native scripted werewolf7 game."""
    out = tmp_path_factory.mktemp("native")
    res = CliRunner().invoke(app, ["play", "-r", "werewolf7", "-a", "scripted", "-s", "5", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_import_into_its_own_source_is_refused_and_source_kept(one_game: Path) -> None:
    before = (one_game / GAME_FILE).read_bytes()
    rep = import_mafiascope(one_game.parent, one_game.parent)  # --out SRC: dst == src for every game
    assert rep.imported == []
    assert any("source game directory" in p for p in rep.problems)
    assert (one_game / GAME_FILE).read_bytes() == before
    assert not (one_game / "probes.jsonl").exists()


def test_import_never_overwrites_a_native_game(one_game: Path, native: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    game_dir = next(native.iterdir())
    shutil.copytree(game_dir, out / GAME)  # a native game where the import would go
    before = (out / GAME / GAME_FILE).read_bytes()
    rep = import_mafiascope(one_game, out)
    assert rep.imported == []
    assert any("not a MafiaScope import" in p for p in rep.problems)
    assert (out / GAME / GAME_FILE).read_bytes() == before


def test_reimport_replaces_an_earlier_import(one_game: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = import_mafiascope(one_game, out)
    second = import_mafiascope(one_game, out)
    assert len(first.imported) == len(second.imported) == 1
    log = read_game(out / GAME)
    assert log.header.source == "mafiascope" and len(log.events) == first.games[0].events


def test_import_of_dot_writes_under_the_game_name(
    one_game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(one_game)
    out = tmp_path / "out"
    rep = import_mafiascope(Path("."), out)
    assert len(rep.imported) == 1
    assert (out / GAME / GAME_FILE).is_file()
    assert not (out / GAME_FILE).exists()
