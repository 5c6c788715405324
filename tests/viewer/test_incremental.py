"""`mafialab view` again over a folder that changed: only new or changed games are built, the site as from scratch."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE
from mafialab.viewer import _build, build_site
from mafialab.viewer._build import site_rows
from tests.viewer_games import play_probed


def _replicate(src: Path, dst: Path, new_id: str) -> Path:
    """A copy of a probed game under a fresh game id (every record's id replaced)."""
    dst.mkdir(parents=True)
    old = json.loads((src / GAME_FILE).read_text(encoding="utf-8").splitlines()[0])["game_id"]
    for name in (GAME_FILE, PROBES_FILE, CALLS_FILE):
        if (src / name).is_file():
            (dst / name).write_text((src / name).read_text(encoding="utf-8").replace(old, new_id), encoding="utf-8")
    return dst


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("src")
    return asyncio.run(play_probed(root, 1, "mafiascope7"))


def _files(site: Path) -> dict[str, bytes]:
    data = site / "data"
    return {p.relative_to(data).as_posix(): p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file()}


def _same_site(a: Path, b: Path) -> None:
    fa, fb = _files(a), _files(b)
    assert sorted(fa) == sorted(fb)
    for name in fa:
        assert fa[name] == fb[name], name


def _corpus(probed: Path, logs: Path, n: int) -> Path:
    """``logs`` holding ``n`` copies of the probed game, ``g<i>/`` with id ``game-<i>``."""
    for i in range(n):
        _replicate(probed, logs / f"g{i}", f"game-{i}")
    return logs


def _same_as_fresh(logs: Path, site: Path, fresh: Path) -> None:
    """``site``, built up incrementally, equals a fresh build of ``logs`` into ``fresh``."""
    build_site(logs, fresh, jobs=1)
    _same_site(site, fresh)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The game ids :func:`mafialab.viewer.build_game` is called for (the per-game builder)."""
    calls: list[str] = []
    real = _build.build_game

    def counted(glog, *a, **kw):  # type: ignore[no-untyped-def]
        calls.append(glog.header.game_id)
        return real(glog, *a, **kw)

    monkeypatch.setattr(_build, "build_game", counted)
    return calls


def test_a_rebuild_builds_only_the_new_game_and_equals_a_fresh_build(
    probed: Path, tmp_path: Path, built: list[str]
) -> None:
    logs = _corpus(probed, tmp_path / "logs", 3)
    site = tmp_path / "site"
    first = build_site(logs, site, jobs=1)
    assert sorted(built) == ["game-0", "game-1", "game-2"] and first.reused == 0
    old = {p: p.stat().st_mtime_ns for p in (site / "data" / "s").rglob("*.js")}
    built.clear()
    _replicate(probed, logs / "g3", "game-3")
    again = build_site(logs, site, jobs=1)
    assert built == ["game-3"]  # test fails before: every game was built again
    assert again.built == ["game-3"] and again.reused == 3 and again.games == [f"game-{i}" for i in range(4)]
    assert all(p.stat().st_mtime_ns == t for p, t in old.items())  # the other games' files were not written
    _same_as_fresh(logs, site, tmp_path / "fresh")


def test_a_changed_game_is_rebuilt_and_a_removed_one_disappears(probed: Path, tmp_path: Path, built: list[str]) -> None:
    logs = _corpus(probed, tmp_path / "logs", 3)
    site = tmp_path / "site"
    build_site(logs, site, jobs=1)
    files = {r["id"]: r["file"] for r in site_rows(site)}
    built.clear()
    probes = logs / "g1" / PROBES_FILE
    probes.write_text("\n".join(probes.read_text(encoding="utf-8").splitlines()[:-5]) + "\n", encoding="utf-8")
    shutil.rmtree(logs / "g2")
    s = build_site(logs, site, jobs=1)
    assert built == ["game-1"] and s.built == ["game-1"] and s.reused == 1 and s.removed == 1
    assert [r["id"] for r in site_rows(site)] == ["game-0", "game-1"]
    assert not (site / "data" / "g" / f"{files['game-2']}.js").exists()
    assert not (site / "data" / "s" / files["game-2"]).exists()
    _same_as_fresh(logs, site, tmp_path / "fresh")


def test_a_manifest_of_another_version_rebuilds_everything(probed: Path, tmp_path: Path, built: list[str]) -> None:
    logs = _corpus(probed, tmp_path / "logs", 2)
    site = tmp_path / "site"
    build_site(logs, site, jobs=1)
    manifest = site / "data" / _build.MANIFEST
    m = json.loads(manifest.read_text(encoding="utf-8"))
    manifest.write_text(json.dumps({**m, "site_version": 0}), encoding="utf-8")
    built.clear()
    build_site(logs, site, jobs=1)
    assert sorted(built) == ["game-0", "game-1"]
    manifest.write_text("{not json", encoding="utf-8")
    built.clear()
    build_site(logs, site, jobs=1)
    assert sorted(built) == ["game-0", "game-1"]


def test_view_caches_summaries_where_told(probed: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    _replicate(probed, logs / "g0", "game-0")
    cache = tmp_path / "cache"
    res = CliRunner().invoke(app, ["view", str(logs), "-o", str(tmp_path / "a"), "--cache", str(cache), "-j", "1"])
    assert res.exit_code == 0, res.output  # test fails before: no such option
    assert len(list(cache.rglob("*.json"))) == 1
    default = tmp_path / "xdg"
    res = CliRunner().invoke(
        app,
        ["view", str(logs), "-o", str(tmp_path / "b"), "--no-cache", "-j", "1"],
        env={"XDG_CACHE_HOME": str(default)},
    )
    assert res.exit_code == 0, res.output
    assert not default.exists()
    _same_site(tmp_path / "a", tmp_path / "b")


def _index(site: Path) -> dict:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    return json.loads(text[len('MAFIALAB_DATA("index","index",') : -len(");\n")])


RETESTS = Path(__file__).parents[1] / "data" / "viewer_branches" / "retest" / "retest.jsonl"


def test_new_retest_answers_rebuild_every_game(probed: Path, tmp_path: Path, built: list[str]) -> None:
    # a game page's belief dynamics carry the retest floor: the retest files are part of every game's key
    logs = _corpus(probed, tmp_path / "logs", 2)
    site = tmp_path / "site"
    build_site(logs, site, jobs=1)
    built.clear()
    (logs / "retest").mkdir()
    shutil.copy(RETESTS, logs / "retest" / "retest.jsonl")
    build_site(logs, site, jobs=1)
    assert sorted(built) == ["game-0", "game-1"]
    built.clear()
    assert build_site(logs, site, jobs=1).reused == 2 and built == []
