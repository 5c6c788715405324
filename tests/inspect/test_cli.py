"""The tasks as an Inspect user runs them: ``inspect eval mafialab/...`` in a subprocess (entry point)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from typer.testing import CliRunner

from mafialab.beliefshift import read_bench
from mafialab.cli import app


def test_the_package_registers_its_inspect_entry_point() -> None:
    eps = {ep.name: ep.value for ep in entry_points(group="inspect_ai")}
    assert eps.get("mafialab") == "mafialab.inspect._registry"


def test_inspect_eval_cli_runs_the_benchmark_and_report_reads_its_log(bench: Path, tmp_path: Path) -> None:
    _, items = read_bench(bench)
    first = items[0]
    assert len(first.observers) == 2
    a, t = first.accuser.name, first.target.name
    answers = [{a: "+1", t: "-2"}, {a: "0", t: "+3"}, {a: "-1", t: "+2"}, {a: "+2", t: "-1"}]
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs"), "INSPECT_DISPLAY": "none"}
    cmd = [
        sys.executable, "-m", "inspect_ai", "eval", "mafialab/beliefshift",
        "--model", "mafialab/mock/script", "-M", f"outputs={json.dumps(answers)}",
        "-T", f"bench={bench}", "-T", "protocol=anchored", "-T", "label=script",
        "--limit", "2", "--max-samples", "1", "--log-format", "eval",
    ]  # fmt: skip
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    logs = sorted((tmp_path / "logs").glob("*.eval"))
    assert len(logs) == 1
    # the same answers through `mafialab beliefshift run` (first item = its two observers)
    spec = f"mock/script?outputs={json.dumps(answers)}"
    runner = CliRunner()
    ours = tmp_path / "ours.jsonl"
    r = runner.invoke(
        app,
        ["beliefshift", "run", str(bench), "--model", spec, "--label", "script", "--limit", "1",
         "--concurrency", "1", "--out", str(ours)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    printed = []
    for i, src in enumerate((ours, logs[0])):
        r = runner.invoke(app, ["beliefshift", "report", str(src), "--out", str(tmp_path / f"r{i}")])
        assert r.exit_code == 0, r.output
        printed.append(r.output.replace(str(tmp_path / f"r{i}"), "OUT"))
    assert printed[0] == printed[1]
    table1 = (tmp_path / "r1" / "table1_models.csv").read_text()
    assert table1 == (tmp_path / "r0" / "table1_models.csv").read_text()
    completion = (tmp_path / "r1" / "completion.csv").read_text()
    assert "100.0" in completion  # both observations valid: the tables are not empty


def test_mafialab_imports_without_inspect_and_says_how_to_install_it(bench: Path, tmp_path: Path) -> None:
    log = tmp_path / "x.eval"
    log.write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    code = f"""
import sys
sys.modules["inspect_ai"] = None  # as if the extra were not installed
import mafialab, mafialab.cli, mafialab.beliefshift, mafialab.harness, mafialab.analysis
from mafialab._api_docs import PACKAGES
try:
    import mafialab.inspect
except ImportError as err:
    print("HINT:", err)
from mafialab.beliefshift import read_all_results
try:
    read_all_results([{str(log)!r}])
except ImportError as err:
    print("REPORT:", err)
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "HINT: mafialab.inspect needs Inspect AI" in res.stdout and "pip install 'mafialab[inspect]'" in res.stdout
    assert "REPORT:" in res.stdout and "pip install 'mafialab[inspect]'" in res.stdout.split("REPORT:")[1]
