"""`export parquet` into a folder it exported before reads only the games added or changed since."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from mafialab.analysis import OutputExistsError, export_parquet
from mafialab.analysis import _export as export_module
from mafialab.analysis._export import MANIFEST_FILE, TABLES
from mafialab.cli import app
from mafialab.models import CallRecord
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE
from tests.helpers import copy_game

PARENT = Path(__file__).resolve().parents[1] / "data" / "viewer_branches" / "parent"  # a probed mafiascope7 game


def _add_games(root: Path, ids: range) -> None:
    """Copies of the probed fixture game under ``root`` with the game ids ``copy-<i>``, each with a calls.jsonl."""
    copy_game(PARENT, root, ids)
    for i in ids:
        gid = f"copy-{i:05d}"
        call = CallRecord(game_id=gid, seat=i % 7, purpose="speak", model=f"m{i}", status="ok", prompt_tokens=i)
        (root / gid / CALLS_FILE).write_text(json.dumps(call.model_dump(mode="json")) + "\n")


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    """Every table of the export in ``out``, rows in game order (a game's rows in their order)."""
    return {
        name: pd.read_parquet(out / name).sort_values("game_id", kind="stable").reset_index(drop=True)
        for name in TABLES
    }


def _assert_same_as_from_scratch(root: Path, out: Path, scratch: Path) -> None:
    export_parquet(root, scratch)
    got, want = _tables(out), _tables(scratch)
    for name in TABLES:
        pd.testing.assert_frame_equal(got[name], want[name], obj=name)


def _mtimes(out: Path) -> dict[str, int]:
    return {f"{p.parent.name}/{p.name}": p.stat().st_mtime_ns for name in TABLES for p in (out / name).iterdir()}


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders of the games the export reads from their logs (the per-game step), in order."""
    seen: list[str] = []
    real = export_module._game_batches

    def counted(game_dir: Path, root: Path):  # type: ignore[no-untyped-def]
        seen.append(game_dir.name)
        return real(game_dir, root)

    monkeypatch.setattr(export_module, "_game_batches", counted)
    monkeypatch.setattr(export_module, "GAMES_PER_FILE", 2)
    return seen


def test_added_games_are_the_only_ones_read(tmp_path: Path, reads: list[str]) -> None:
    root, out = tmp_path / "logs", tmp_path / "out"
    _add_games(root, range(5))
    export_parquet(root, out)
    assert reads == [f"copy-{i:05d}" for i in range(5)]
    assert sorted(p.name for p in (out / "probes").iterdir()) == [f"part-{i:05d}.parquet" for i in range(3)]
    before = _mtimes(out)
    reads.clear()
    _add_games(root, range(5, 7))
    counts: dict[str, int] = {}
    export_parquet(root, out, counts=counts)  # no overwrite: an export of this folder is updated
    assert reads == ["copy-00005", "copy-00006"]
    assert counts == {"games": 7, "read": 2, "unchanged": 5, "parts_written": 2, "parts_removed": 0}
    after = _mtimes(out)
    for name in TABLES:  # parts 0 and 1 are full and untouched; 2 is filled up (copy-00005), 3 is new
        for part in ("part-00000.parquet", "part-00001.parquet"):
            assert after[f"{name}/{part}"] == before[f"{name}/{part}"], (name, part)
        assert f"{name}/part-00003.parquet" in after and f"{name}/part-00003.parquet" not in before
    assert sorted(p.name for p in out.iterdir()) == sorted([*TABLES, MANIFEST_FILE])  # no staging folder left
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    assert manifest["root"] == root.resolve().as_posix() and manifest["complete"] is True
    where = {g["path"]: (g["part"], g["rows"]["calls"]) for g in manifest["games"]}
    assert where == {"copy-00000": (0, [0, 1]), "copy-00001": (0, [1, 1]), "copy-00002": (1, [0, 1]),
                     "copy-00003": (1, [1, 1]), "copy-00004": (2, [0, 1]), "copy-00005": (2, [1, 1]),
                     "copy-00006": (3, [0, 1])}  # fmt: skip
    _assert_same_as_from_scratch(root, out, tmp_path / "scratch")
    reads.clear()
    export_parquet(root, out)  # nothing changed: nothing is read or written
    assert reads == [] and _mtimes(out) == after


def test_a_changed_game_has_its_new_rows_and_nothing_else_is_read(tmp_path: Path, reads: list[str]) -> None:
    root, out = tmp_path / "logs", tmp_path / "out"
    _add_games(root, range(5))
    export_parquet(root, out)
    before = _mtimes(out)
    probes = root / "copy-00003" / PROBES_FILE
    recs = [json.loads(x) for x in probes.read_text().splitlines()]
    recs = recs[:-2]  # two records fewer
    recs[0]["answer_raw"] = "changed"
    probes.write_text("".join(json.dumps(r) + "\n" for r in recs))
    reads.clear()
    export_parquet(root, out)
    assert reads == ["copy-00003"]
    got = pd.read_parquet(out / "probes")
    mine = got[got.game_id == "copy-00003"]
    assert len(mine) == len(recs) and mine.answer_raw.iloc[0] == "changed"
    assert (got.answer_raw == "changed").sum() == 1  # the old rows are gone
    after = _mtimes(out)
    for name in TABLES:  # copy-00003 was in part 1 (with copy-00002, copied over, not re-read)
        assert after[f"{name}/part-00000.parquet"] == before[f"{name}/part-00000.parquet"]
        assert after[f"{name}/part-00002.parquet"] == before[f"{name}/part-00002.parquet"]
    _assert_same_as_from_scratch(root, out, tmp_path / "scratch")


def test_a_removed_game_has_no_rows_left(tmp_path: Path, reads: list[str]) -> None:
    root, out = tmp_path / "logs", tmp_path / "out"
    _add_games(root, range(5))
    export_parquet(root, out)
    shutil.rmtree(root / "copy-00001")
    shutil.rmtree(root / "copy-00004")  # the only game of part 2: the part goes
    reads.clear()
    counts: dict[str, int] = {}
    export_parquet(root, out, counts=counts)
    assert reads == []
    assert counts == {"games": 3, "read": 0, "unchanged": 3, "parts_written": 1, "parts_removed": 1}
    for name in TABLES:
        got = pd.read_parquet(out / name)
        assert sorted(set(got.game_id)) == ["copy-00000", "copy-00002", "copy-00003"], name
        assert sorted(p.name for p in (out / name).iterdir()) == ["part-00000.parquet", "part-00001.parquet"]
    _assert_same_as_from_scratch(root, out, tmp_path / "scratch")


@pytest.mark.parametrize(
    ("damage", "logged"),
    [
        ("garbage", "cannot be read"),
        ("unfinished", "an earlier run was stopped part-way"),
        ("version", "has format version 0"),
        ("part removed", "does not list the part files"),
        ("part changed", "changed since"),
    ],
)
def test_an_unusable_manifest_is_logged_and_the_export_rebuilt(
    tmp_path: Path, reads: list[str], caplog: pytest.LogCaptureFixture, damage: str, logged: str
) -> None:
    root, out = tmp_path / "logs", tmp_path / "out"
    _add_games(root, range(3))
    export_parquet(root, out)
    manifest = out / MANIFEST_FILE
    m = json.loads(manifest.read_text())
    if damage == "garbage":
        manifest.write_text('{"root": ')
    elif damage in ("unfinished", "version"):
        m.update({"complete": False} if damage == "unfinished" else {"version": 0})
        manifest.write_text(json.dumps(m))
    elif damage == "part removed":
        (out / "probes" / "part-00001.parquet").unlink()
    else:
        shutil.copy(out / "games" / "part-00000.parquet", out / "probes" / "part-00000.parquet")
    _add_games(root, range(3, 4))
    reads.clear()
    export_parquet(root, out)  # no overwrite needed: a rebuild of what mafialab wrote there
    assert reads == [f"copy-{i:05d}" for i in range(4)]
    assert f"{manifest} " in caplog.text and logged in caplog.text and "rebuilt whole" in caplog.text
    assert json.loads(manifest.read_text())["complete"] is True
    _assert_same_as_from_scratch(root, out, tmp_path / "scratch")


def test_an_export_of_another_folder_is_refused_unless_forced(tmp_path: Path, reads: list[str]) -> None:
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    _add_games(a, range(2))
    _add_games(b, range(2, 3))
    export_parquet(a, out)
    before = _mtimes(out)
    with pytest.raises(OutputExistsError) as err:
        export_parquet(b, out)
    assert err.value.other_root == a.resolve() and err.value.path == out
    assert _mtimes(out) == before
    reads.clear()
    export_parquet(a, out, overwrite=True)  # --force: rebuilt from scratch, every game read
    assert reads == ["copy-00000", "copy-00001"]
    export_parquet(b, out, overwrite=True)
    assert list(pd.read_parquet(out / "games").game_id) == ["copy-00002"]
    assert json.loads((out / MANIFEST_FILE).read_text())["root"] == b.resolve().as_posix()


def test_an_unreadable_game_is_named_again_but_not_read_again(
    tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = tmp_path / "logs", tmp_path / "out"
    _add_games(root, range(2))
    (root / "broken").mkdir()
    (root / "broken" / GAME_FILE).write_text('{"kind": "speech"}\n')
    first: list[str] = []
    export_parquet(root, out, skipped=first)
    assert len(first) == 1 and first[0].startswith(str(root / "broken" / GAME_FILE))
    reads.clear()
    again: list[str] = []
    export_parquet(root, out, skipped=again)
    assert reads == [] and again == first
    monkeypatch.setattr(export_module, "__version__", "99.0")  # another mafialab may read it: tried again
    export_parquet(root, out, skipped=again)
    assert reads == ["broken"] and again == [*first, *first]
    reads.clear()
    (root / "broken" / GAME_FILE).write_text(
        (root / "copy-00000" / GAME_FILE).read_text().replace("copy-00000", "fixed")
    )
    export_parquet(root, out, skipped=again)
    assert reads == ["broken"] and sorted(pd.read_parquet(out / "games").game_id) == [
        "copy-00000",
        "copy-00001",
        "fixed",
    ]


def test_the_command_updates_its_own_export_without_force(tmp_path: Path) -> None:
    root, out = tmp_path / "logs", tmp_path / "out"
    _add_games(root, range(2))
    runner = CliRunner()
    res = runner.invoke(app, ["export", "parquet", str(root), "--out", str(out)])
    assert res.exit_code == 0, res.output
    _add_games(root, range(2, 3))
    res = runner.invoke(app, ["export", "parquet", str(root), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "1 game read, 2 unchanged; 1 part written, 0 removed" in " ".join(res.output.split())
    assert len(pd.read_parquet(out / "games")) == 3
    other = tmp_path / "other"
    _add_games(other, range(1))
    res = runner.invoke(app, ["export", "parquet", str(other), "--out", str(out)])
    assert res.exit_code == 2
    assert f"holds an export of {root.resolve().as_posix()}, not of DIRECTORY" in " ".join(res.output.split())
