"""``beliefshift run``: its dry run (observations, calls, time), concurrency and output paths."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.beliefshift import read_bench
from mafialab.beliefshift._io import write_jsonl
from mafialab.cli import app
from mafialab.testing import OpenAIStub
from tests.beliefshift_fixtures import result

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


def test_dry_run_counts_calls_and_times_them_from_the_results_in_out(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    _, items = read_bench(bench)
    total = sum(len(i.observers) for i in items)
    first = len(items[0].observers)
    with OpenAIStub().in_thread() as stub:
        model = f"openai/stub?base_url={stub.base_url}"
        args = ["beliefshift", "run", str(bench), "--model", model, "--retries", "1", "--out", str(out)]
        res = runner.invoke(app, [*args, "--dry-run"])
        assert res.exit_code == 0, res.output
        assert f"{total} of {total} observations to elicit, {2 * total} calls (up to {4 * total} with every retry)" in (
            res.stdout
        )
        assert "time unknown" in res.stdout and "run a slice first (--limit N, the same --out)" in res.stdout
        assert not out.exists() and not stub.requests  # nothing asked, nothing written
        res = runner.invoke(app, [*args, "--limit", "1"])
        assert res.exit_code == 0, res.output
    # every call of the slice recorded as taking 2 s
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    for rec in lines:
        for c in rec.get("calls", []):
            c["latency_s"], c["attempts"] = 2.0, 1
    out.write_text("".join(json.dumps(r) + "\n" for r in lines))
    res = runner.invoke(app, [*args, "--dry-run"])
    assert res.exit_code == 0, res.output
    todo = total - first
    assert f"{todo} of {total} observations to elicit, {2 * todo} calls" in res.stdout
    secs = 2 * todo * 2.0
    assert re.search(r"time about \d+ (s|min) \(calls one after another\)", res.stdout)
    assert f"{round(secs / 60)} min" in res.stdout or f"{round(secs)} s" in res.stdout
    assert f"Time basis: mean 2.00 s of {2 * first} calls of openai/stub already in r.jsonl" in res.stdout
    res = runner.invoke(app, [*args, "--limit", "1", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "nothing to run: every observation already has a valid result in r.jsonl" in res.stdout


# ``beliefshift run --concurrency N`` keeps N calls in flight (the backend's limit follows).


def test_concurrency_option_is_the_real_limit(bench: Path, tmp_path: Path) -> None:
    with OpenAIStub(latency_s=0.3).in_thread() as stub:
        res = CliRunner().invoke(
            app,
            [
                "beliefshift", "run", str(bench), "--model", f"openai/stub?base_url={stub.base_url}",
                "--concurrency", "20", "--retries", "0", "--out", str(tmp_path / "r.jsonl"),
            ],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert 16 < stub.max_in_flight <= 20


# Belief-shift commands refuse unusable ``--out`` paths before doing any work.


def test_report_out_that_is_a_file_names_the_option(tmp_path: Path) -> None:
    # was "error: <path>: File exists" from deep in the writer, after all tables were built
    res_file = tmp_path / "res.jsonl"
    res_file.write_text(result("m", 1, "town", "mafia", "accuse", (0, 1), (1, 1)).model_dump_json() + "\n")
    taken = tmp_path / "taken"
    taken.write_text("keep me")
    res = CliRunner().invoke(app, ["beliefshift", "report", str(res_file), "--out", str(taken)])
    assert res.exit_code == 2, res.output
    assert "--out:" in res.output and "is a file; give a folder" in " ".join(res.output.split())
    assert taken.read_text() == "keep me"


@pytest.mark.parametrize("cmd", ["annotate", "freeze", "run"])
def test_out_that_is_a_directory_is_refused_first(bench: Path, tmp_path: Path, cmd: str) -> None:
    # annotate/freeze did all the work (a model annotator: every call) and then failed naming
    # "<out>.tmp", leaving that file behind
    root = bench.parent
    d = tmp_path / "adir"
    d.mkdir()
    args = {
        "annotate": [str(root / "logs")],
        "freeze": [str(root / "logs"), str(root / "ann.jsonl")],
        "run": [str(bench), "--model", "mock/x"],
    }[cmd]
    res = CliRunner().invoke(app, ["beliefshift", cmd, *args, "--out", str(d)])
    assert res.exit_code == 2, res.output
    assert "--out:" in res.output and "is a folder; give a file name" in " ".join(res.output.split())
    assert list(tmp_path.iterdir()) == [d] and list(d.iterdir()) == []


def test_write_jsonl_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        write_jsonl(tmp_path, None, [])
    assert list(tmp_path.iterdir()) == []
