"""`mafialab report` from per-game summaries: cached by content, same numbers, memory by games not records."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import (
    DEFAULT,
    SummaryCache,
    compute_report,
    load_games,
    report,
    summarise_game,
)
from mafialab.analysis._summary import summary_key
from mafialab.cli import app
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE, import_mafiascope

runner = CliRunner()


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two rule sets of probed scripted games (one seat of mafiascope7 a random agent)."""
    root = tmp_path_factory.mktemp("probed")
    for sub, args in (("ww", ["-a", "scripted", "-k", "2"]),
                      ("ms", ["-r", "mafiascope7", "-a", "scripted", "--seat", "0=random", "-k", "2"])):  # fmt: skip
        res = runner.invoke(app, ["play", "-p", "default", "-o", str(root / sub), *args])
        assert res.exit_code == 0, res.output
    return root


@pytest.fixture(scope="module")
def en_demo(tmp_path_factory: pytest.TempPathFactory, mafiascope_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("en_demo")
    import_mafiascope(mafiascope_dir / "en_demo", out)
    return out


def _listing(root: Path) -> list[tuple[str, int, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*"))


def _report(*args: str) -> str:
    res = runner.invoke(app, ["report", *args, "-f", "json", "--resamples", "60", "--seed", "3"])
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.mark.parametrize("by", [(), ("--by", "model,role"), ("--by", "rules,team")])
def test_report_json_is_identical_without_the_cache_and_from_it(probed: Path, tmp_path: Path, by: tuple) -> None:
    before = _listing(probed)
    cache = tmp_path / "cache"
    plain = _report(str(probed), "--no-cache", *by)
    first = _report(str(probed), "--cache", str(cache), *by)
    stored = _listing(cache)
    second = _report(str(probed), "--cache", str(cache), *by)
    assert plain == first == second
    assert len([p for p in stored if p[0].endswith(".json")]) == 4  # one summary per game
    assert _listing(cache) == stored  # the second run read the cache and wrote nothing
    assert _listing(probed) == before  # the input folder is only read
    rep = json.loads(plain)
    if not by:  # the library's own path over GameData gives the same numbers
        assert rep["games"] == 4 and rep["probe_records"] > 0
        mine = compute_report(load_games(probed), resamples=60, seed=3).model_dump(mode="json")
        assert json.loads(json.dumps(mine)) == {k: v for k, v in rep.items()}


@pytest.mark.parametrize("method", ["mafiascope", "default"])
def test_mafiascope_corpus_is_identical_from_the_cache(en_demo: Path, tmp_path: Path, method: str) -> None:
    cache = tmp_path / "cache"
    plain = _report(str(en_demo), "-m", method, "--no-cache")
    assert plain == _report(str(en_demo), "-m", method, "--cache", str(cache))
    assert plain == _report(str(en_demo), "-m", method, "--cache", str(cache))
    assert json.loads(plain)["games"] == 2


def test_published_figures_come_back_from_the_cache(mafiascope_real: Path, tmp_path: Path) -> None:
    import_mafiascope(mafiascope_real / "en_demo", tmp_path / "en_demo")
    cache = tmp_path / "cache"
    plain = _report(str(tmp_path / "en_demo"), "-m", "mafiascope", "--no-cache")
    assert plain == _report(str(tmp_path / "en_demo"), "-m", "mafiascope", "--cache", str(cache))
    assert plain == _report(str(tmp_path / "en_demo"), "-m", "mafiascope", "--cache", str(cache))
    rep = json.loads(plain)  # MafiaScope's published en_demo figures (analysis/reference/mafiascope.yaml)
    assert rep["calibration"]["n"] == 1654 and rep["first_order"]["1"]["committed_n"] == 1160
    assert rep["vote_coupling"]["innocents"]["top1"]["hits"] == 13
    assert rep["vote_coupling"]["innocents"]["top1"]["n"] == 20


def test_the_cache_is_hit_then_invalidated_by_a_changed_log(probed: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    for d in sorted((probed / "ms").iterdir()):
        (corpus / d.name).mkdir(parents=True)
        for name in (GAME_FILE, PROBES_FILE, CALLS_FILE):
            if (d / name).is_file():
                (corpus / d.name / name).write_bytes((d / name).read_bytes())
    cache = SummaryCache(tmp_path / "cache")
    first = report(corpus, resamples=30, cache=cache)
    assert (cache.hits, cache.misses) == (0, 2)
    assert report(corpus, resamples=30, cache=cache) == first
    assert (cache.hits, cache.misses) == (2, 2)
    # one probe answer removed from one game: that game alone is recomputed, its numbers change
    game = sorted(corpus.iterdir())[0]
    lines = (game / PROBES_FILE).read_text().splitlines(keepends=True)
    (game / PROBES_FILE).write_text("".join(lines[:-40]))
    changed = report(corpus, resamples=30, cache=cache)
    assert (cache.hits, cache.misses) == (3, 3)
    assert changed.probe_records == first.probe_records - 40
    assert changed == report(corpus, resamples=30)  # as computed without any cache


def test_added_games_are_the_only_ones_summarised(probed: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    games = sorted(p.parent for p in probed.rglob(GAME_FILE))
    cache = SummaryCache(tmp_path / "cache")

    def add(d: Path) -> None:
        (corpus / d.name).mkdir(parents=True)
        for name in (GAME_FILE, PROBES_FILE, CALLS_FILE):
            if (d / name).is_file():
                (corpus / d.name / name).write_bytes((d / name).read_bytes())

    for d in games[:2]:
        add(d)
    report(corpus, resamples=20, cache=cache)
    for d in games[2:]:
        add(d)
    grown = report(corpus, resamples=20, cache=cache)
    assert (cache.hits, cache.misses) == (2, len(games))
    assert grown == report(corpus, resamples=20) and grown.games == len(games)


def test_a_corrupt_cache_entry_is_logged_and_rewritten(
    probed: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = SummaryCache(tmp_path / "cache")
    ms = probed / "ms"
    good = report(ms, resamples=20, cache=cache)
    entry = next(iter(sorted((tmp_path / "cache").rglob("*.json"))))
    entry.write_text('{"key": "torn')
    with caplog.at_level("WARNING"):
        assert report(ms, resamples=20, cache=cache) == good
    assert "corrupt cached summary" in caplog.text and str(entry) in caplog.text
    assert json.loads(entry.read_text())["key"] == entry.stem  # rewritten whole
    assert report(ms, resamples=20, cache=cache) == good


def test_the_default_cache_is_the_users_cache_folder(probed: Path, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    res = runner.invoke(app, ["report", str(probed / "ww"), "-f", "json", "--resamples", "20"],
                        env={"XDG_CACHE_HOME": str(xdg)})  # fmt: skip
    assert res.exit_code == 0, res.output
    assert len(list((xdg / "mafialab" / "summaries").rglob("*.json"))) == 2
    res = runner.invoke(app, ["report", str(probed / "ww"), "--no-cache", "-f", "json", "--resamples", "20"],
                        env={"XDG_CACHE_HOME": str(tmp_path / "other")})  # fmt: skip
    assert res.exit_code == 0, res.output
    assert not (tmp_path / "other").exists()


def _replicate(src: Path, dst: Path, new_id: str, probes: int | None = None) -> None:
    """A copy of the game in ``src`` under a fresh id (its first ``probes`` probe records only, when given)."""
    dst.mkdir(parents=True)
    old_id = json.loads((src / GAME_FILE).read_text().splitlines()[0])["game_id"]
    for name in (GAME_FILE, PROBES_FILE, CALLS_FILE):
        if (src / name).is_file():
            lines = (src / name).read_text().splitlines(keepends=True)
            if name == PROBES_FILE and probes is not None:
                lines = lines[:probes]
            (dst / name).write_text("".join(lines).replace(old_id, new_id))


def _corpus_peak(probed: Path, root: Path, n: int) -> tuple[int, dict]:
    """Peak traced allocation of ``report`` over ``n`` probed games streamed one at a time.

    ``n - 1`` small copies (40 probe records each) are already summarised in the cache; the
    last game, a whole probed game, is summarised from its logs, so the peak holds one game's
    records beside what the aggregation keeps of every game before it.
    """
    src = sorted((probed / "ms").iterdir())[0]
    cache = SummaryCache(root / "cache")
    games = root / "games"
    first = None
    for i in range(n - 1):
        d = games / f"g{i:04d}"
        _replicate(src, d, f"copy-{i:04d}", probes=40)
        if first is None:
            first = summarise_game(d, DEFAULT)
        assert first.stats is not None
        gid = f"copy-{i:04d}"
        stats = first.stats.model_copy(update={"instrument": {**first.stats.instrument, "game_id": gid}})
        key = summary_key(d, DEFAULT)
        cache.store(first.model_copy(update={"key": key, "game_id": gid, "root": gid, "path": str(d), "stats": stats}))
    _replicate(src, games / "z-whole", "whole")
    tracemalloc.start()
    try:
        rep = report(games, resamples=20, cache=cache)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert cache.misses == 1 and cache.hits == n - 1
    return peak, rep


def test_corpus_memory_grows_with_games_not_records(probed: Path, tmp_path: Path) -> None:
    _corpus_peak(probed, tmp_path / "warm", 3)  # imports, compiled patterns, language data: once
    small, rep20 = _corpus_peak(probed, tmp_path / "20", 20)
    large, rep200 = _corpus_peak(probed, tmp_path / "200", 200)
    assert rep20.games == 20 and rep200.games == 200
    assert rep200.probe_records == 199 * 40 + rep20.probe_records - 19 * 40
    assert large <= 1.2 * small, (small, large)


def test_summaries_need_no_write_access_to_the_corpus(probed: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:  # root ignores permissions: the listings above check the folder is untouched
        before = _listing(probed)
        report(probed, resamples=20, cache=SummaryCache(tmp_path / "c"))
        assert _listing(probed) == before
        return
    ro = tmp_path / "ro"
    for d in sorted((probed / "ww").iterdir()):
        _replicate(d, ro / d.name, d.name)
    for p in sorted(ro.rglob("*"), reverse=True):
        p.chmod(0o555 if p.is_dir() else 0o444)
    ro.chmod(0o555)
    try:
        assert report(ro, resamples=20, cache=SummaryCache(tmp_path / "c")).games == 2
    finally:
        for p in [ro, *ro.rglob("*")]:
            p.chmod(0o755)
