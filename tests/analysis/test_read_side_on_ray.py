"""``report``, ``view`` and ``export parquet`` with ``--ray``: per-game work as Ray tasks, the local output."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import mafialab.harness
from mafialab.analysis import SummaryCache, iter_summaries
from mafialab.cli import app
from mafialab.harness import RAY_HINT
from mafialab.record import GAME_FILE, LogFormatError, import_mafiascope, iter_game_dirs
from mafialab.viewer import corpus_metrics

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, mafiascope_dir: Path) -> Path:
    """Probed games of two rule sets and three agent kinds, fork branches, an imported corpus, a broken game."""
    root = tmp_path_factory.mktemp("corpus")
    for sub, args in (("ww", ["-a", "scripted", "-k", "2"]),
                      ("ms", ["-r", "mafiascope7", "-a", "scripted", "--seat", "0=random", "-k", "2"])):  # fmt: skip
        res = runner.invoke(app, ["play", "-p", "default", "-o", str(root / sub), *args])
        assert res.exit_code == 0, res.output
    shutil.copytree(DATA / "viewer_branches" / "parent", root / "branched" / "parent")
    shutil.copytree(DATA / "viewer_branches" / "forks", root / "branched" / "forks")
    import_mafiascope(mafiascope_dir / "en_demo", root / "en_demo")
    (root / "broken").mkdir()
    (root / "broken" / GAME_FILE).write_text('{"kind": "speech"}\n', encoding="utf-8")
    return root


@pytest.fixture
def counted_jobs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of tasks each ``ray_map`` call submitted (one entry per call)."""
    calls: list[int] = []
    real = mafialab.harness.ray_map

    def spy(fn: Any, jobs: Any, **kwargs: Any) -> Iterator[Any]:
        n = [0]

        def counted() -> Iterator[Any]:
            for job in jobs:
                n[0] += 1
                yield job

        calls.append(0)
        try:
            yield from real(fn, counted(), **kwargs)
        finally:
            calls[-1] = n[0]

    monkeypatch.setattr(mafialab.harness, "ray_map", spy)
    return calls


def _report(*args: str) -> str:
    res = runner.invoke(app, ["report", *args, "-f", "json", "--resamples", "50", "--seed", "2"])
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.mark.parametrize("by", [(), ("--by", "model,role")])
def test_report_on_ray_is_the_local_report(
    ray_local: Any, corpus: Path, tmp_path: Path, counted_jobs: list[int], by: tuple[str, ...]
) -> None:
    local = _report(str(corpus), "--no-cache", *by)
    assert counted_jobs == []
    on_ray = _report(str(corpus), "--no-cache", "--ray", "local", *by)
    assert on_ray == local  # byte for byte, in the order of the game directories
    games = len(iter_game_dirs(corpus))
    assert counted_jobs == [games]  # every game (the broken one too) went to a worker
    if not by:
        assert json.loads(local)["games"] >= 7


def test_report_on_ray_reads_cache_hits_itself_and_stores_what_workers_return(
    ray_local: Any, corpus: Path, tmp_path: Path, counted_jobs: list[int]
) -> None:
    cache = tmp_path / "cache"
    local = _report(str(corpus), "--no-cache")
    first = _report(str(corpus), "--cache", str(cache), "--ray", "local")
    games = len(iter_game_dirs(corpus))
    stored = sorted(cache.rglob("*.json"))
    assert first == local and counted_jobs == [games] and len(stored) == games - 1  # the broken one: no summary
    again = _report(str(corpus), "--cache", str(cache), "--ray", "local")
    assert again == local and counted_jobs == [games, 1]  # only the broken game is sent again
    assert sorted(cache.rglob("*.json")) == stored


def test_summaries_on_ray_equal_local_ones_and_skip_the_same_games(ray_local: Any, corpus: Path) -> None:
    def run(ray: str | None) -> tuple[list[Any], list[str], list[str]]:
        skipped: list[str] = []
        left: list[str] = []
        got = list(iter_summaries(corpus, skipped=skipped, left_out=left, ray=ray, seat_keys=("agent",)))
        return got, skipped, left

    local, on_ray = run(None), run("local")
    assert on_ray == local
    assert len(local[1]) == 1 and "broken" in local[1][0] and len(local[2]) >= 1
    with pytest.raises(LogFormatError, match="no valid game_start header"):  # without skipped: the first raises
        list(iter_summaries(corpus, ray="local"))


def test_corrupt_cache_entry_is_recomputed_on_the_driver(ray_local: Any, corpus: Path, tmp_path: Path) -> None:
    cache = SummaryCache(tmp_path / "c")
    local = list(iter_summaries(corpus / "ww", cache=cache))
    for p in cache.folder.rglob("*.json"):
        p.write_text("{not json", encoding="utf-8")
    again = SummaryCache(tmp_path / "c")
    assert list(iter_summaries(corpus / "ww", cache=again, ray="local")) == local
    assert again.misses == len(local) and again.hits == 0
    assert [s.key for s in iter_summaries(corpus / "ww", cache=again, ray="local")] == [s.key for s in local]
    assert again.hits == len(local)


def _tables(out: Path) -> dict[str, Any]:
    return {t.name: pq.read_table(t).to_pydict() for t in sorted(out.iterdir()) if t.is_dir()}


def test_export_parquet_on_ray_writes_the_local_files(
    ray_local: Any, corpus: Path, tmp_path: Path, counted_jobs: list[int]
) -> None:
    res = runner.invoke(app, ["export", "parquet", str(corpus), "-o", str(tmp_path / "local")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["export", "parquet", str(corpus), "-o", str(tmp_path / "ray"), "--ray", "local"])
    assert res.exit_code == 0, res.output
    assert "skipped:" in res.output and "broken" in res.output  # the unreadable game, named as locally
    assert counted_jobs == [len(iter_game_dirs(corpus))]
    local, on_ray = _tables(tmp_path / "local"), _tables(tmp_path / "ray")
    assert sorted(local) == ["calls", "events", "games", "probes", "seats"]
    assert on_ray == local and len(local["events"]["game_id"]) > 1000
    manifests = [(tmp_path / d / "_manifest.json").read_text(encoding="utf-8") for d in ("local", "ray")]
    assert manifests[0].replace(str(tmp_path / "local"), "") == manifests[1].replace(str(tmp_path / "ray"), "")
    for a in sorted((tmp_path / "local").rglob("*.parquet")):  # the same part files, in the same order
        b = tmp_path / "ray" / a.relative_to(tmp_path / "local")
        assert pq.read_table(b).equals(pq.read_table(a)), a
    res = runner.invoke(app, ["export", "parquet", str(corpus), "-o", str(tmp_path / "one.parquet"), "--ray", "local"])
    assert res.exit_code == 0, res.output
    runner.invoke(app, ["export", "parquet", str(corpus), "-o", str(tmp_path / "two.parquet")])
    assert pq.read_table(tmp_path / "one.parquet").equals(pq.read_table(tmp_path / "two.parquet"))


def test_view_corpus_figures_on_ray_are_the_local_ones(ray_local: Any, corpus: Path, counted_jobs: list[int]) -> None:
    dirs = iter_game_dirs(corpus)
    first = [d for d in dirs if {"ww", "broken"} & set(d.parts)]  # with an unreadable game
    corpora = {"a": first, "b": [d for d in dirs if d not in first]}
    for include in (False, True):
        local = corpus_metrics(corpora, include_branches=include)
        on_ray = corpus_metrics(corpora, include_branches=include, ray="local")
        assert on_ray == local
        assert local["available"] and all("error" not in c for c in local["corpora"].values())
        kinds = [g["kind"] for g in local["calibration_groups"]]
        assert kinds.count("all") == 1 and kinds.count("corpus") == 2 and kinds.count("model") >= 2
    assert counted_jobs == [len(corpora["a"]), len(corpora["b"])] * 2


def test_view_on_ray_builds_the_local_site_data(ray_local: Any, corpus: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["view", str(corpus / "branched"), "-j", "1", "-o", str(tmp_path / "local")])
    assert res.exit_code == 0, res.output
    args = ["view", str(corpus / "branched"), "-j", "1"]
    res = runner.invoke(app, [*args, "-o", str(tmp_path / "ray"), "--ray", "local"])
    assert res.exit_code == 0, res.output
    index = [(tmp_path / w / "data" / "index.js").read_text(encoding="utf-8") for w in ("local", "ray")]
    assert index[0] == index[1] and '"corpus_metrics"' in index[0]


@pytest.mark.parametrize(
    "args",
    [
        ["report", "{corpus}", "--no-cache"],
        ["export", "parquet", "{corpus}", "-o", "{out}"],
        ["view", "{corpus}", "-o", "{out}"],
    ],
)
def test_without_ray_the_option_says_what_to_install(
    args: list[str], corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    out = tmp_path / "out"
    argv = [a.format(corpus=corpus / "ww", out=out) for a in args]
    res = runner.invoke(app, [*argv, "--ray", "auto"])
    assert res.exit_code != 0 and RAY_HINT in res.output, res.output
    assert not out.exists()  # nothing written


def test_report_on_ray_agrees_on_a_shared_mafiascope_corpus(
    ray_local: Any, mafiascope_real: Path, tmp_path: Path
) -> None:
    import_mafiascope(mafiascope_real / "en_demo", tmp_path / "en_demo")
    local = _report(str(tmp_path / "en_demo"), "--no-cache", "-m", "mafiascope")
    assert _report(str(tmp_path / "en_demo"), "--no-cache", "-m", "mafiascope", "--ray", "local") == local
    assert json.loads(local)["games"] >= 3
