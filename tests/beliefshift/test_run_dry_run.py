"""``beliefshift run --dry-run``: observations and calls to make, and a time from measured latency.

The latency comes from the results already in OUT (a slice run first with ``--limit``); a new
OUT has none, and the line says how to get one. Nothing left to ask is said as such.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from mafialab.beliefshift import read_bench
from mafialab.cli import app
from mafialab.testing import OpenAIStub

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
