"""QA regressions: bad input and output paths never lose recorded data, and fail cleanly."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import GAME_FILE, import_mafiascope, read_game
from mafialab.rules import WEREWOLF7, RuleSetError, load_rules

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


def test_rules_file_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_bytes(b"\xff\xfe name: x\n")
    with pytest.raises(RuleSetError, match=r"bad\.yaml.*UTF-8"):
        load_rules(p)


def test_changed_builtin_must_not_keep_the_builtin_id(tmp_path: Path) -> None:
    p = tmp_path / "r.yaml"
    p.write_text("extends: werewolf7\nround_cap: 2\n")
    with pytest.raises(RuleSetError, match=r"name: 'werewolf7' version 1 .*werewolf7-v1"):
        load_rules(p)
    p.write_text("extends: werewolf7\nname: ww-short\nround_cap: 2\n")
    r = load_rules(p)
    assert (r.id, r.round_cap) == ("ww-short-v1", 2)
    # an unchanged copy (what `rules show` prints) and cosmetic seat names stay the built-in
    p.write_text(yaml.safe_dump(WEREWOLF7.model_dump(mode="json"), sort_keys=False))
    assert load_rules(p) == WEREWOLF7
    names = ["P" + str(i) for i in range(WEREWOLF7.n_seats)]
    p.write_text("extends: werewolf7\nseat_names: [" + ", ".join(names) + "]\n")
    assert load_rules(p).id == WEREWOLF7.id


def test_tgn_export_refuses_a_log_path(native: Path) -> None:
    game = next(native.iterdir()) / GAME_FILE
    before = game.read_bytes()
    res = CliRunner().invoke(app, ["export", "tgn", str(native), "-o", str(game)])
    assert res.exit_code == 2
    assert "--out" in res.output
    assert game.read_bytes() == before


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mafialab", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_unwritable_outputs_fail_cleanly(native: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("keep me\n")
    for args in (
        ["play", "-a", "random", "-o", str(a_file)],
        ["report", str(native), "--resamples", "5", "--plots", str(a_file)],
        ["export", "parquet", str(native), "-o", str(a_file)],
    ):
        res = _cli(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert "Traceback" not in res.stderr
        assert "error:" in res.stderr and str(a_file) in res.stderr.replace("\n", "")
    assert a_file.read_text() == "keep me\n"


def test_version_and_short_help() -> None:
    from mafialab import __version__

    runner = CliRunner()
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"mafialab {__version__}"
    for args in (["-h"], ["play", "-h"], ["report", "-h"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 0 and "Usage: mafialab" in res.stdout, args


def test_extends_takes_a_versioned_id_and_rejects_non_names(tmp_path: Path) -> None:
    p = tmp_path / "r.yaml"
    p.write_text("extends: werewolf7-v1\nname: wwx\nround_cap: 3\n")
    r = load_rules(p)
    assert (r.id, r.round_cap, r.roles) == ("wwx-v1", 3, WEREWOLF7.roles)
    p.write_text("extends: [1]\n")  # unhashable: used to raise TypeError
    with pytest.raises(RuleSetError, match="extends"):
        load_rules(p)
