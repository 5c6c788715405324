"""``beliefshift run --ray``: observation batches as Ray tasks write the results a local run writes."""

import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mafialab.beliefshift import RunOptions, read_bench, read_results, run_bench_ray
from mafialab.cli import app
from mafialab.testing import OpenAIStub


def _rows(path: Path) -> list[tuple[Any, ...]]:
    header, recs, _ = read_results(path)
    assert header is not None
    return sorted((r.item_id, r.observer.seat, r.ok, r.cause, str(r.prior), str(r.shift)) for r in recs)


def test_ray_batches_give_the_local_results(bench: Path, tmp_path: Path, ray_local: Any) -> None:
    runner = CliRunner()
    with OpenAIStub().in_thread() as stub:
        base = ["beliefshift", "run", str(bench), "--model", f"openai/stub?base_url={stub.base_url}", "--retries", "0",
                "--limit", "6"]  # fmt: skip
        local = runner.invoke(app, [*base, "--out", str(tmp_path / "local.jsonl")])
        assert local.exit_code == 0, local.output
        fanned = runner.invoke(app, [*base, "--ray", "local", "--out", str(tmp_path / "ray.jsonl")])
        assert fanned.exit_code == 0, fanned.output
        again = runner.invoke(app, [*base, "--ray", "local", "--out", str(tmp_path / "ray.jsonl")])
        assert again.exit_code == 0, again.output
    rows = _rows(tmp_path / "local.jsonl")
    assert rows and rows == _rows(tmp_path / "ray.jsonl")  # a rerun resumed: nothing added
    valid = [re.search(r"(\d+)/(\d+) observations valid", r.output) for r in (local, fanned, again)]
    assert all(valid) and len({m.groups() for m in valid if m}) == 1


def test_ray_batches_share_one_limit_for_the_backend(bench: Path, tmp_path: Path, ray_local: Any) -> None:
    header, items = read_bench(bench)
    with OpenAIStub(latency_s=0.2).in_thread() as stub:
        spec = f"openai/limited?base_url={stub.base_url}&max_concurrency=2"
        # four batches on two workers, each worker eliciting up to 8 observations at once
        summary = run_bench_ray(header, items[:8], spec, tmp_path / "r.jsonl", RunOptions(retries=0, concurrency=8),
                                address="local", batch_size=sum(len(i.observers) for i in items[:8]) // 4 or 1)  # fmt: skip
    assert summary.done > 4 and len(stub.requests) >= summary.done
    assert stub.max_in_flight == 2  # the two workers together, not 2 each
