"""``beliefshift run --ray``: observation batches as Ray tasks write the results a local run writes."""

import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mafialab.beliefshift import read_results
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
