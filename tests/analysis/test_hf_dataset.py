"""`export hf` writes a Hugging Face dataset folder `datasets` loads; `import hf` gives the same logs and reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from mafialab import __version__
from mafialab.analysis import export_hf, import_hf, log_tables
from mafialab.analysis._export import TABLE_SCHEMAS, TABLES
from mafialab.beliefshift import bench_tables, read_bench
from mafialab.cli import app
from mafialab.models import CallRecord
from mafialab.record import (
    CALLS_FILE,
    GAME_FILE,
    PROBES_FILE,
    ProbeRecord,
    import_mafiascope,
    iter_game_dirs,
    read_game,
    read_records,
)
from tests.helpers import freeze_scripted_bench

FIXTURES = Path(__file__).resolve().parents[1] / "data"
PARENT = FIXTURES / "viewer_branches" / "parent"  # a probed mafiascope7 game
FORK = next((FIXTURES / "viewer_branches" / "bif" / "forks").iterdir())  # a branch (its header names a parent)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Imported MafiaScope games (probes), a probed game, a branch, and a game with model calls."""
    root = tmp_path_factory.mktemp("hf") / "games"
    import_mafiascope(FIXTURES / "mafiascope" / "ru_clean", root / "ru")
    shutil.copytree(PARENT, root / "own" / "parent")
    shutil.copytree(FORK, root / "own" / "fork")
    shutil.copytree(FIXTURES / "logs-v1" / "v1-werewolf7", root / "calls")
    gid = read_game(root / "calls").game_id
    recs = [CallRecord(game_id=gid, seat=1, purpose="speak", model="m|x", decision=3, status="ok", prompt_tokens=10,
                       latency_ms=12, context={"cut": [1, 2]}, ts=1.5).model_dump(mode="json"),
            CallRecord(game_id=gid, seat=-1, purpose="preflight", model="m", status="error",
                       error="refused").model_dump(mode="json")]  # fmt: skip
    (root / "calls" / CALLS_FILE).write_text("".join(json.dumps(r) + "\n" for r in recs))
    freeze_scripted_bench(root / "bench")  # a werewolf7 game, its annotations and a belief-shift benchmark
    return root


@pytest.fixture(scope="module")
def dataset(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hfds") / "ds"
    export_hf(corpus, out, license="cc-by-4.0", extra=bench_tables(corpus))
    return out


def _front_matter(card: Path) -> dict[str, Any]:
    text = card.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_the_card_declares_each_table(dataset: Path, corpus: Path) -> None:
    meta = _front_matter(dataset / "README.md")
    tables = log_tables(corpus)
    assert meta["license"] == "cc-by-4.0"
    assert meta["mafialab_version"] == __version__
    assert [c["config_name"] for c in meta["configs"]] == [*TABLES, "beliefshift_benches", "beliefshift_items"]
    assert meta["configs"][0]["default"] is True
    assert meta["configs"][2]["data_files"] == [{"split": "train", "path": "events/*.parquet"}]
    _, items = read_bench(corpus / "bench" / "b.jsonl")
    assert meta["dataset_info"][-1]["splits"] == [{"name": "train", "num_examples": len(items)}]
    assert len(items) > 3 and f"| beliefshift_items | {len(items)} |" in (dataset / "README.md").read_text()
    for info in meta["dataset_info"][: len(TABLES)]:
        t = info["config_name"]
        assert [f["name"] for f in info["features"]] == [c for c, _ in TABLE_SCHEMAS[t]]
        assert info["splits"] == [{"name": "train", "num_examples": len(tables[t])}]
    assert dict(zip([f["name"] for f in meta["dataset_info"][0]["features"]],
                    [f["dtype"] for f in meta["dataset_info"][0]["features"]], strict=True))["seed"] == "int64"  # fmt: skip
    body = (dataset / "README.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    n_games = len(tables["games"])
    assert f"| games | {n_games} |" in body
    for rules_id, n in tables["games"].rules_id.value_counts().items():
        assert f"| {rules_id} | {n} |" in body
    assert "| m\\|x |" not in body  # the calls' model is not a seat's model; seats' models are listed
    for model, n in tables["seats"].model.value_counts().items():
        assert f"| {model} | {n} |" in body


def test_datasets_loads_every_table(
    dataset: Path, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    datasets = pytest.importorskip("datasets")
    tables = log_tables(corpus)
    for t in TABLES:
        files = sorted(str(p) for p in (dataset / t).glob("*.parquet"))
        by_files = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(tmp_path / "c1"))
        by_name = datasets.load_dataset(str(dataset), name=t, split="train", cache_dir=str(tmp_path / "c2"))
        for ds in (by_files, by_name):
            assert ds.column_names == [c for c, _ in TABLE_SCHEMAS[t]], t
            assert ds.num_rows == len(tables[t]), t
        assert by_name["game_id"] == [str(x) for x in tables[t].game_id], t
    items = datasets.load_dataset(str(dataset), name="beliefshift_items", split="train", cache_dir=str(tmp_path / "c4"))
    _, frozen = read_bench(corpus / "bench" / "b.jsonl")
    assert items["item_id"] == [i.item_id for i in frozen]
    assert [json.loads(o) for o in items["observers"]] == [[o.model_dump() for o in i.observers] for i in frozen]
    calls = datasets.load_dataset(str(dataset), name="calls", split="train", cache_dir=str(tmp_path / "c3"))
    assert sorted(calls["purpose"]) == ["preflight", "speak"]
    assert calls.features["prompt_tokens"].dtype == "int64"


def _logs(root: Path) -> dict[str, Any]:
    """Every game's records as read (clock fields kept; a null field as its default), by its path under ``root``."""
    out = {}
    for d in iter_game_dirs(root):
        g = read_game(d)
        files = {
            f: sorted((model.model_validate(r).model_dump() for r in read_records(d / f)), key=json.dumps)
            for f, model in ((PROBES_FILE, ProbeRecord), (CALLS_FILE, CallRecord))
            if (d / f).is_file()
        }
        out[d.relative_to(root).as_posix()] = (g.header.model_dump(), [e.model_dump() for e in g.events],
                                               g.status.model_dump() if g.status else None, files)  # fmt: skip
    return out


def test_export_then_import_gives_the_same_logs_and_reports(corpus: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    ds, back = tmp_path / "ds", tmp_path / "back"
    res = runner.invoke(app, ["export", "hf", str(corpus), "--out", str(ds)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["import", "hf", str(ds), "--out", str(back)])
    assert res.exit_code == 0, res.output
    assert f"imported {len(iter_game_dirs(corpus))} games and 1 benchmark file" in res.stdout
    assert read_bench(back / "bench" / "b.jsonl") == read_bench(corpus / "bench" / "b.jsonl")
    assert not (back / ".partial").exists()
    before, after = _logs(corpus), _logs(back)
    assert sorted(after) == sorted(before)
    for where, (header, events, status, files) in before.items():
        header["schema_version"] = after[where][0]["schema_version"]  # v1 logs are read migrated, written as now
        assert after[where] == (header, events, status, files), where
    reports = [json.loads(runner.invoke(app, ["report", str(d), "-f", "json", "--resamples", "100", "--seed", "5"]).stdout)
               for d in (corpus, back)]  # fmt: skip
    assert reports[0]["games"] == 5 and reports[0]["probe_records"] > 100
    assert reports[1] == reports[0]
    # and again: the dataset of the imported logs holds the same rows
    again = tmp_path / "again"
    export_hf(back, again)
    for t in TABLES:
        a = pq.read_table(ds / t).to_pylist()
        b = pq.read_table(again / t).to_pylist()
        assert sorted(a, key=json.dumps) == sorted(b, key=json.dumps), t


def test_nothing_is_overwritten(corpus: Path, dataset: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "README.md").write_text("mine")
    res = runner.invoke(app, ["export", "hf", str(corpus), "--out", str(taken)])
    assert res.exit_code != 0 and "README.md exists (use --force" in res.output
    assert (taken / "README.md").read_text() == "mine"
    res = runner.invoke(app, ["export", "hf", str(corpus), "--out", str(tmp_path / "x.parquet")])
    assert res.exit_code == 2 and "--out: " in res.output and "a Hugging Face dataset is a folder" in res.output
    # an update without --force: the card is written again, nothing read again
    res = runner.invoke(app, ["export", "hf", str(corpus), "--out", str(dataset)])
    assert res.exit_code == 0, res.output
    back = tmp_path / "back"
    import_hf(dataset, back)
    with pytest.raises(FileExistsError, match="exists; nothing is overwritten"):
        import_hf(dataset, back)
    res = runner.invoke(app, ["import", "hf", str(corpus), "--out", str(tmp_path / "b2")])
    assert res.exit_code != 0 and "not a dataset folder" in res.output
    assert (back / "calls" / GAME_FILE).is_file()
