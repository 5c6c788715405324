"""`export parquet` streams game by game into a dataset folder per table, with one schema per table."""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mafialab.analysis import _export as export_module
from mafialab.analysis import export_parquet, log_tables
from mafialab.analysis._export import EXTRA_COLUMN, MANIFEST_FILE, TABLE_SCHEMAS, TABLES
from mafialab.models import CallRecord
from mafialab.record import (
    CALLS_FILE,
    GAME_FILE,
    PROBES_FILE,
    LogFormatError,
    ProbeRecord,
    import_mafiascope,
    iter_call_records,
    iter_game_dirs,
    iter_probe_records,
    read_game,
)
from mafialab.rules import winner_name
from tests.helpers import copy_game

FIXTURES = Path(__file__).resolve().parents[1] / "data"
PARENT = FIXTURES / "viewer_branches" / "parent"  # a probed mafiascope7 game, 38 KB


def _old_tables(root: Path) -> dict[str, pd.DataFrame]:
    """The tables as the in-memory export built them before it streamed (the reference).

    DataFrames of dict rows, object columns then cast to ``string`` as ``export_parquet`` did
    before writing; a probe record's fields outside the schema were columns of their own.
    """
    games, seats, events, probes, calls = [], [], [], [], []  # type: ignore[var-annotated]
    for d in iter_game_dirs(root):
        lg = read_game(d)
        h, gid = lg.header, lg.game_id
        end = next((e for e in reversed(lg.events) if e.kind == "game_end"), None)
        dead = {e.seat for e in lg.events if e.kind == "elimination"}
        won = end.winner if end is not None else None
        games.append(
            {"game_id": gid, "path": d.relative_to(root).as_posix(), "rules_id": h.rules_id, "seed": h.seed,
             "winner": won, "winner_name": winner_name(won, h.rules) if won is not None else None,
             "rounds": end.rounds if end else None, "reason": end.reason if end else None, "source": h.source,
             "parent": h.parent.game_id if h.parent is not None else None,
             "degraded": bool(lg.status is not None and lg.status.degraded),
             "probes": h.meta.get("probes") if isinstance(h.meta.get("probes"), str) else None,
             "n_seats": len(h.roster), "header": h.model_dump_json(),
             "status": lg.status.model_dump_json() if lg.status is not None else None}
        )  # fmt: skip
        agents = h.meta.get("agents") if isinstance(h.meta.get("agents"), dict) else {}
        for st in sorted(h.roster, key=lambda x: x.seat):
            desc = agents.get(str(st.seat))
            model = desc.get("model") if isinstance(desc, dict) else None
            seats.append(
                {"game_id": gid, "seat": st.seat, "name": st.name, "role": st.role, "team": st.team, "agent": st.agent,
                 "model": model if isinstance(model, str) else st.agent,
                 "survived": st.seat not in dead if end is not None else None}
            )  # fmt: skip
        for ev in lg.events:
            data = ev.model_dump(mode="json")
            vis = data.pop("visibility")
            row = {k: data.pop(k, None) for k in ("seq", "round", "phase", "kind", "ts", "seat", "target")}
            text = data.pop("text", None)
            if text is None:
                text = data.pop("statement", None)
            events.append(
                {"game_id": gid, **row, "public": vis["public"], "teams": ",".join(vis["teams"]),
                 "seats": ",".join(str(s) for s in vis["seats"]), "text": text,
                 "data": json.dumps(data, ensure_ascii=False, sort_keys=True)}
            )  # fmt: skip
        for name, bucket, reader in ((PROBES_FILE, probes, iter_probe_records), (CALLS_FILE, calls, iter_call_records)):
            if (d / name).is_file():
                for _, rec in reader(d, game_id=gid):
                    if name == CALLS_FILE and rec.get("kind", "call") != "call":
                        continue
                    flat = {k: json.dumps(v, ensure_ascii=False, sort_keys=True) if isinstance(v, (dict, list))
                            else v for k, v in rec.items()}  # fmt: skip
                    bucket.append({"game_id": gid, **flat})

    def frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
        extra = [k for r in rows for k in r if k not in columns]
        return pd.DataFrame(rows, columns=list(dict.fromkeys([*columns, *extra])))

    tables = {
        "games": frame(games, [c for c, _ in TABLE_SCHEMAS["games"]]),
        "seats": frame(seats, [c for c, _ in TABLE_SCHEMAS["seats"]]),
        "events": frame(events, [c for c, _ in TABLE_SCHEMAS["events"]]),
        "probes": frame(probes, ["game_id", *ProbeRecord.model_fields]),
        "calls": frame(calls, ["game_id", *CallRecord.model_fields]),
    }
    return {n: df.astype({c: "string" for c in df.columns if df[c].dtype == object}) for n, df in tables.items()}


def _cells(s: pd.Series) -> list[Any]:
    return [None if pd.isna(v) else v for v in s.astype(object)]


def _assert_same_as_before(old: dict[str, pd.DataFrame], new: dict[str, pd.DataFrame]) -> None:
    """``new`` (read back from the streamed export) holds what ``old`` held, column by column.

    The differences are the fixed schema's: a column whose cells were all null had the dtype
    ``string`` before and has its declared type now; a boolean column with nulls was text
    ("True"/"False") and is boolean now; fields outside a record's schema are in ``extra``.
    """
    for name in TABLES:
        o, n = old[name], new[name]
        declared = [c for c, _ in TABLE_SCHEMAS[name]]
        assert list(n.columns) == declared, name
        assert len(n) == len(o), name
        for col in o.columns:
            if col not in declared:  # a field outside the record's schema: in `extra` now
                packed = [json.loads(x).get(col) if x is not None else None for x in _cells(n[EXTRA_COLUMN])]
                assert [json.loads(x) if isinstance(x, str) and x[:1] in "[{" else x for x in packed] == [
                    json.loads(x) if isinstance(x, str) and x[:1] in "[{" else x for x in _cells(o[col])
                ], (name, col)
                continue
            want = _cells(o[col])
            if name == "calls" and col == "game_id":  # an empty id (a call before the harness knew it)
                want = [g if c else g2 for c, g, g2 in zip(want, want, _cells(n.game_id), strict=True)]
            kind = dict(TABLE_SCHEMAS[name])[col]
            if o[col].isna().all() or (kind == "bool" and o[col].isna().any()):
                assert [None if v is None else str(v) for v in _cells(n[col])] == want, (name, col)
                continue
            assert str(n[col].dtype) == str(o[col].dtype), (name, col, n[col].dtype, o[col].dtype)
            assert _cells(n[col]) == want, (name, col)


def _read_dataset(out: Path) -> dict[str, pd.DataFrame]:
    return {name: pd.read_parquet(out / name) for name in TABLES}


def _with_calls(src: Path, dst: Path) -> Path:
    """A copy of game ``src`` with a ``calls.jsonl`` of varied records (old ones lacking fields too)."""
    shutil.copytree(src, dst)
    gid = read_game(dst).game_id
    recs = [
        CallRecord(game_id=gid, seat=1, purpose="speak", model="m", decision=3, status="ok", prompt_tokens=10,
                   cached_tokens=4, latency_ms=12, context={"cut": [1, 2]}, ts=1.5).model_dump(mode="json"),
        CallRecord(game_id="", seat=-1, purpose="preflight", model="m", status="error",
                   error="refused").model_dump(mode="json"),
    ]  # fmt: skip
    old = {k: v for k, v in recs[0].items() if k not in ("replaced_chars", "cached_tokens")}  # before those fields
    summary = {"kind": "call_summary", "calls": 3}
    (dst / CALLS_FILE).write_text("".join(json.dumps(r) + "\n" for r in [*recs, old, summary]))
    return dst


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("corpora")
    out = {"viewer_branches": FIXTURES / "viewer_branches", "logs-v1": FIXTURES / "logs-v1"}
    for name in ("ru_clean", "en_demo", "corpus_v2", "game_family_showcase", "traps"):
        import_mafiascope(FIXTURES / "mafiascope" / name, base / name)
        out[name] = base / name
    _with_calls(PARENT, base / "calls" / "parent")
    _with_calls(FIXTURES / "logs-v1" / "v1-werewolf7", base / "calls" / "v1")
    out["calls"] = base / "calls"
    return out


@pytest.mark.parametrize(
    "corpus",
    ["viewer_branches", "logs-v1", "ru_clean", "en_demo", "corpus_v2", "game_family_showcase", "traps", "calls"],
)
def test_streamed_tables_read_back_as_the_in_memory_export_wrote_them(
    corpora: dict[str, Path], corpus: str, tmp_path: Path
) -> None:
    root = corpora[corpus]
    written = export_parquet(root, tmp_path / "out")
    assert written == [tmp_path / "out" / name for name in TABLES]
    assert all(p.is_dir() and [c.name for c in p.iterdir()] == ["part-00000.parquet"] for p in written)
    assert sorted(c.name for c in (tmp_path / "out").iterdir()) == sorted([*TABLES, MANIFEST_FILE])  # no partial
    new = _read_dataset(tmp_path / "out")
    _assert_same_as_before(_old_tables(root), new)
    in_memory = log_tables(root)
    for name in TABLES:  # the library's frames have the dtypes of the export read back
        pd.testing.assert_frame_equal(in_memory[name], new[name])


def test_the_shared_corpus_reads_back_as_before(mafiascope_real: Path, tmp_path: Path) -> None:
    for name in ("ru_clean", "en_demo", "corpus_v2", "ablation_demand", "bifurcation_guided"):
        import_mafiascope(mafiascope_real / name, tmp_path / "logs" / name)
    export_parquet(tmp_path / "logs", tmp_path / "out")
    new = _read_dataset(tmp_path / "out")
    assert len(new["games"]) > 400 and len(new["probes"]) >= 6000
    _assert_same_as_before(_old_tables(tmp_path / "logs"), new)


def test_a_table_keeps_its_schema_when_no_game_has_its_fields(corpora: dict[str, Path], tmp_path: Path) -> None:
    export_parquet(corpora["ru_clean"], tmp_path / "a")  # imported: no calls, no schema_ok
    export_parquet(corpora["calls"], tmp_path / "b")
    import pyarrow.parquet as pq

    for name in TABLES:
        a, b = (pq.read_schema(next((tmp_path / x / name).iterdir())) for x in "ab")
        assert a.names == b.names == [c for c, _ in TABLE_SCHEMAS[name]] and a.types == b.types
    calls = pd.read_parquet(tmp_path / "a" / "calls")
    assert len(calls) == 0 and str(calls.prompt_tokens.dtype) == "int64" and str(calls.cost_usd.dtype) == "float64"


def test_the_stacked_file_holds_every_table(corpora: dict[str, Path], tmp_path: Path) -> None:
    root = corpora["calls"]
    assert export_parquet(root, tmp_path / "one.parquet") == [tmp_path / "one.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.parquet"]
    one = pd.read_parquet(tmp_path / "one.parquet")
    assert one.columns[-1] == "table" and set(one.table) == set(TABLES)
    export_parquet(root, tmp_path / "out")
    for name, want in _read_dataset(tmp_path / "out").items():
        got = one[one.table == name][list(want.columns)].reset_index(drop=True)
        assert [_cells(got[c]) for c in got.columns] == [_cells(want[c]) for c in want.columns], name


def _replicate(n: int, root: Path, game: Path = PARENT) -> Path:
    """``n`` copies of the probed fixture ``game`` under ``root``, each with its own game id."""
    copy_game(game, root, range(n))
    return root


def _peak(root: Path, out: Path) -> int:
    tracemalloc.start()
    try:
        export_parquet(root, out)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_corpus(corpora: dict[str, Path], tmp_path: Path) -> None:
    # the larger English demo game (157 probe answers, 280 KB of logs)
    game = corpora["en_demo"] / "0a7f3c10-1111-4aaa-8aaa-000000000001"
    small, large = _replicate(20, tmp_path / "small", game), _replicate(200, tmp_path / "large", game)
    _peak(small, tmp_path / "warm")  # imports and first-use caches out of the way
    p20, p200 = _peak(small, tmp_path / "o20"), _peak(large, tmp_path / "o200")
    # no game's rows are held; the manifest keeps about 2 KB a game (path, id, hash, row ranges)
    assert p200 <= 1.2 * p20 + 180 * 4096, (p20, p200)
    assert len(pd.read_parquet(tmp_path / "o200" / "games")) == 200
    n_probes = len((game / PROBES_FILE).read_text().splitlines())
    assert len(pd.read_parquet(tmp_path / "o200" / "probes", columns=["game_id"])) == 200 * n_probes


def test_part_files_and_row_groups_follow_the_games(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow.parquet as pq

    root = _replicate(5, tmp_path / "logs")
    export_parquet(root, tmp_path / "whole")
    monkeypatch.setattr(export_module, "GAMES_PER_FILE", 2)
    monkeypatch.setattr(export_module, "ROW_GROUP_BYTES", 1)  # a row group per game
    export_parquet(root, tmp_path / "parts")
    parts = sorted((tmp_path / "parts" / "probes").iterdir())
    assert [p.name for p in parts] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    assert [pq.ParquetFile(p).num_row_groups for p in parts] == [2, 2, 1]
    for name in TABLES:
        pd.testing.assert_frame_equal(
            pd.read_parquet(tmp_path / "parts" / name), pd.read_parquet(tmp_path / "whole" / name)
        )


def test_an_unreadable_game_is_left_out_and_named(tmp_path: Path) -> None:
    root = _replicate(2, tmp_path / "logs")
    (root / "broken").mkdir()
    (root / "broken" / GAME_FILE).write_text('{"kind": "speech"}\n')
    skipped: list[str] = []
    export_parquet(root, tmp_path / "out", skipped=skipped)
    assert len(skipped) == 1 and skipped[0].startswith(f"{root / 'broken' / GAME_FILE}: line 1 is 'speech'")
    assert sorted(pd.read_parquet(tmp_path / "out" / "games").game_id) == ["copy-00000", "copy-00001"]
    with pytest.raises(LogFormatError, match="broken"):  # without `skipped`, the first such game stops it
        export_parquet(root, tmp_path / "strict")
    assert list((tmp_path / "strict").iterdir()) == []  # and nothing is left written
    only = tmp_path / "only"
    shutil.copytree(root / "broken", only / "broken")
    with pytest.raises(LogFormatError, match="none of the 1 game"):
        export_parquet(only, tmp_path / "none", skipped=[])
    assert list((tmp_path / "none").iterdir()) == []


def test_force_replaces_an_earlier_export_of_either_layout(tmp_path: Path) -> None:
    export_parquet(_replicate(3, tmp_path / "three"), tmp_path / "out")
    one = _replicate(1, tmp_path / "one")
    with pytest.raises(FileExistsError):
        export_parquet(one, tmp_path / "out")
    export_parquet(one, tmp_path / "out", overwrite=True)  # no stale part of the earlier export stays
    assert len(pd.read_parquet(tmp_path / "out" / "games")) == 1
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "games.parquet").write_text("an export of an earlier version\n")
    with pytest.raises(FileExistsError) as err:
        export_parquet(one, tmp_path / "old")
    assert err.value.filename is None and str(tmp_path / "old" / "games.parquet") in str(err.value)
    export_parquet(one, tmp_path / "old", overwrite=True)
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == sorted([*TABLES, MANIFEST_FILE])


def test_a_table_folder_holding_other_files_is_never_removed(tmp_path: Path) -> None:
    (tmp_path / "out" / "games").mkdir(parents=True)
    (tmp_path / "out" / "games" / "notes.txt").write_text("mine\n")
    with pytest.raises(FileExistsError, match="holds other files"):
        export_parquet(_replicate(1, tmp_path / "logs"), tmp_path / "out", overwrite=True)
    assert (tmp_path / "out" / "games" / "notes.txt").read_text() == "mine\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["games"]


def test_duckdb_and_polars_read_the_dataset(corpora: dict[str, Path], tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    export_parquet(corpora["ru_clean"], tmp_path / "out")
    probes = pd.read_parquet(tmp_path / "out" / "probes")
    want = probes.groupby("probe_id").size().sort_index()
    sql = f"SELECT probe_id, count(*) FROM '{tmp_path}/out/probes/*.parquet' GROUP BY probe_id ORDER BY probe_id"
    assert duckdb.sql(sql).fetchall() == list(want.items())
    got = pl.scan_parquet(tmp_path / "out" / "probes" / "*.parquet").group_by("probe_id").len().sort("probe_id")
    assert got.collect().rows() == list(want.items())


def test_a_value_of_another_type_is_left_null_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = _replicate(1, tmp_path / "logs")
    probes = root / "copy-00000" / PROBES_FILE
    recs = [json.loads(x) for x in probes.read_text().splitlines()]
    recs[0]["latency_ms"] = "fast"  # a damaged record
    probes.write_text("".join(json.dumps(r) + "\n" for r in recs))
    export_parquet(root, tmp_path / "out")
    got = pd.read_parquet(tmp_path / "out" / "probes")
    assert pd.isna(got.latency_ms[0]) and got.latency_ms[1:].tolist() == [r["latency_ms"] for r in recs[1:]]
    assert f"{root / 'copy-00000'}: probes column 'latency_ms': 'fast' is not int, left null" in caplog.text
