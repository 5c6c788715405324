"""``beliefshift run --concurrency N`` keeps N calls in flight (the backend's limit follows)."""

from pathlib import Path

from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.testing import OpenAIStub


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
