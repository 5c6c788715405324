"""A ``probes.jsonl`` or ``calls.jsonl`` holding another game's records is refused by name.

Found by a review of issue 29: a ``probes.jsonl`` copied from another game (another game id)
into a game's folder was scored as if it were this game's (4,710 foreign records went into
F1-F4 with no warning). Every record carrying a game id is now checked against the header's
by the one reader per file kind (:mod:`mafialab.record`): a record of another game is skipped
and named (file, line, both ids), never scored, in every command that reads the file.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.analysis import log_tables
from mafialab.arena._leaderboard import read_calls
from mafialab.cli import app
from mafialab.counterfactual._fork import _copy_prefix_probes
from mafialab.record import CALLS_FILE, PROBES_FILE, VERDICTS_FILE, read_game, read_verdicts
from mafialab.viewer import build_site
from mafialab.viewer._build import site_rows

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
F1_F4 = ("first_order", "calibration", "second_order", "vote_coupling")


@pytest.fixture(scope="module")
def two_games(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two probed games (default battery) with different ids."""
    out = tmp_path_factory.mktemp("foreign")
    for seed in (1, 2):
        res = runner.invoke(app, ["play", "-a", "scripted", "-p", "default", "-s", str(seed), "-o", str(out / "runs")])
        assert res.exit_code == 0, res.output
    a, b = sorted((out / "runs").iterdir())
    assert read_game(a).game_id != read_game(b).game_id
    return a, b


def _copy(game: Path, dst: Path, *, probes: bool = True) -> Path:
    """``game``'s files under ``dst/<its name>`` (``probes.jsonl`` left out unless ``probes``)."""
    g = dst / game.name
    g.mkdir(parents=True)
    for f in game.iterdir():
        if f.is_file() and (probes or f.name != PROBES_FILE):
            shutil.copy(f, g / f.name)
    return g


def _report(root: Path, caplog: pytest.LogCaptureFixture) -> tuple[dict[str, Any], str]:
    """``report --format json`` of ``root`` and the warnings it logged (one line each)."""
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        res = runner.invoke(app, ["report", str(root), "--format", "json", "--resamples", "20"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), "\n".join(r.getMessage() for r in caplog.records)


def _ids(a: Path, b: Path) -> tuple[str, str]:
    return read_game(a).game_id, read_game(b).game_id


def test_report_refuses_a_probes_file_copied_from_another_game(
    two_games: tuple[Path, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = two_games
    ida, idb = _ids(a, b)
    g = _copy(a, tmp_path / "copied", probes=False)
    shutil.copy(b / PROBES_FILE, g / PROBES_FILE)
    without = _copy(a, tmp_path / "without", probes=False)
    got, err = _report(g.parent, caplog)
    want, _ = _report(without.parent, caplog)
    assert want["probe_records"] == 0 and got["probe_records"] == 0
    for key in F1_F4:
        assert got[key] == want[key], key
    n = len((b / PROBES_FILE).read_text().splitlines())
    assert f"{g / PROBES_FILE}:1: record of game '{idb}', not of this game '{ida}'; skipped" in err
    left_out = (
        f"{g / PROBES_FILE}: every record ({n:,}) is of game '{idb}', not of this game '{ida}': the file is left out"
    )
    assert left_out in err


def test_report_scores_only_this_games_probes_of_a_mixed_file(
    two_games: tuple[Path, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = two_games
    ida, idb = _ids(a, b)
    g = _copy(a, tmp_path / "mixed")
    with (g / PROBES_FILE).open("a", encoding="utf-8") as fh:
        fh.write((b / PROBES_FILE).read_text(encoding="utf-8"))
    got, err = _report(g.parent, caplog)
    want, _ = _report(a, caplog)
    assert got["probe_records"] == want["probe_records"] > 0
    assert got["first_order"] != {}
    for key in F1_F4:
        assert got[key] == want[key], key
    n_own = len((a / PROBES_FILE).read_text().splitlines())
    assert f"{g / PROBES_FILE}:{n_own + 1}: record of game '{idb}', not of this game '{ida}'; skipped" in err
    assert "the file is left out" not in err


def _calls(game_id: str, n: int, tokens: int) -> str:
    call = {"kind": "call", "game_id": game_id, "seat": 0, "purpose": "speak", "model": "m", "status": "ok"}
    return "".join(
        json.dumps({**call, "decision": i, "prompt_tokens": tokens, "completion_tokens": tokens, "ts": float(i)}) + "\n"
        for i in range(n)
    )


def test_report_cost_figures_leave_out_another_games_calls(
    two_games: tuple[Path, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = two_games
    ida, idb = _ids(a, b)
    own = _copy(a, tmp_path / "own")
    (own / CALLS_FILE).write_text(_calls(ida, 3, 100) + _calls("", 1, 100), encoding="utf-8")  # "": an old log's
    mixed = _copy(a, tmp_path / "mixed")
    (mixed / CALLS_FILE).write_text(_calls(ida, 3, 100) + _calls(idb, 5, 7000) + _calls("", 1, 100), encoding="utf-8")
    want, _ = _report(own.parent, caplog)
    got, err = _report(mixed.parent, caplog)
    assert want["instrument"]["pooled"]["game_calls"] == 4
    assert want["instrument"]["pooled"]["tokens"]["game"] == {"prompt": 400, "completion": 400}
    assert got["instrument"] == want["instrument"]
    assert f"{mixed / CALLS_FILE}:4: record of game '{idb}', not of this game '{ida}'; skipped" in err
    assert f"{mixed / CALLS_FILE}: 5 records of game '{idb}', not of this game '{ida}', skipped" in err


def _data(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(re.search(r"MAFIALAB_DATA\(\"[^\"]*\",\"?[^,]*\"?,(.*)\);\s*$", text, re.S).group(1))


def test_view_refuses_a_probes_file_copied_from_another_game(two_games: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = two_games
    ida, idb = _ids(a, b)
    g = _copy(a, tmp_path / "copied" / "corpus", probes=False)  # one corpus name: the sites compare
    shutil.copy(b / PROBES_FILE, g / PROBES_FILE)
    without = _copy(a, tmp_path / "without" / "corpus", probes=False)
    build_site(g.parent, tmp_path / "site", jobs=1)
    build_site(without.parent, tmp_path / "site0", jobs=1)
    got, want = _data(tmp_path / "site" / "data" / "index.js"), _data(tmp_path / "site0" / "data" / "index.js")
    (row,) = site_rows(tmp_path / "site")
    (row0,) = site_rows(tmp_path / "site0")
    assert row["probes"] == row0["probes"] == 0
    assert got["corpus_metrics"] == want["corpus_metrics"] and got["calibration"] == want["calibration"]
    game = _data(next((tmp_path / "site" / "data" / "g").iterdir()))
    text = " ".join(n["text"] for n in game["notes"] if n["code"] == "problems")
    assert f"{g / PROBES_FILE}:1: record of game '{idb}', not of this game '{ida}'; skipped" in text


def test_export_parquet_leaves_out_another_games_probes(
    two_games: tuple[Path, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = two_games
    ida, idb = _ids(a, b)
    g = _copy(a, tmp_path / "mixed")
    with (g / PROBES_FILE).open("a", encoding="utf-8") as fh:
        fh.write((b / PROBES_FILE).read_text(encoding="utf-8"))
    with caplog.at_level(logging.WARNING):
        got = log_tables(g.parent)["probes"]
    want = log_tables(a)["probes"]
    assert len(got) == len(want) > 0
    assert set(got["game_id"]) == {ida}
    assert any(f"record of game '{idb}', not of this game '{ida}'; skipped" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        res = runner.invoke(app, ["export", "parquet", str(g.parent), "--out", str(tmp_path / "pq")])
    assert res.exit_code == 0, res.output
    assert any(f"{g / PROBES_FILE}:" in r.getMessage() and idb in r.getMessage() for r in caplog.records)


def test_fork_copies_only_the_parents_own_probes(two_games: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = two_games
    g = _copy(a, tmp_path / "mixed")
    with (g / PROBES_FILE).open("a", encoding="utf-8") as fh:
        fh.write((b / PROBES_FILE).read_text(encoding="utf-8"))
    plog = read_game(g)
    n_own = _copy_prefix_probes(read_game(a), tmp_path / "own", "branch", 10**6)
    n = _copy_prefix_probes(plog, tmp_path / "branch", "branch", 10**6)
    assert n == n_own > 0
    assert (tmp_path / "branch" / PROBES_FILE).read_bytes() == (tmp_path / "own" / PROBES_FILE).read_bytes()


def test_leaderboard_calls_and_verdicts_leave_out_another_games(two_games: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = two_games
    ida, idb = _ids(a, b)
    g = _copy(a, tmp_path / "g")
    (g / CALLS_FILE).write_text(_calls(ida, 2, 10) + _calls(idb, 3, 10), encoding="utf-8")
    assert len(read_calls(g)) == 2
    verdict = {"kind": "verdict", "judge": "j", "status": "missing", "error": "x", "schema_version": 2}
    lines = [{**verdict, "game_id": idb}, {**verdict, "game_id": ida, "judge": "k"}]
    (g / VERDICTS_FILE).write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    problems: list[str] = []
    assert [v.judge for v in read_verdicts(g, problems)] == ["k"]
    assert problems == [f"{g / VERDICTS_FILE}:1: record of game '{idb}', not of this game '{ida}'; skipped"]
