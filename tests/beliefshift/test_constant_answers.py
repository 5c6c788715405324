"""A model answering 0/0 to every prior and shift is flagged: its valid answers are not informative.

Every answer is on the scale and parses, so each observation is valid; but one value over
every observation measures nothing. ``beliefshift run`` and ``beliefshift report`` count such
a run's completion as 0 % and say why (definition: ``docs/metrics.md``, quality signals).
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

from typer.testing import CliRunner

from mafialab.beliefshift import read_bench
from mafialab.beliefshift._schema import LABELS
from mafialab.cli import app
from mafialab.models import ChatRequest, MockModel, register_backend

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def _zero(req: ChatRequest) -> dict[str, str]:
    return {n: "0" for n in req.json_schema["properties"]}


def _varied(req: ChatRequest) -> dict[str, str]:
    h = hashlib.sha256(req.messages[-1].content.encode()).digest()
    return {n: LABELS[h[i] % 7] for i, n in enumerate(req.json_schema["properties"])}


def _register() -> None:
    register_backend("mockconst", lambda model, **kw: MockModel(_zero, name=f"mockconst/{model}"))
    register_backend("mockvaried", lambda model, **kw: MockModel(_varied, name=f"mockvaried/{model}"))


def test_a_model_answering_zero_everywhere_is_flagged_in_run_and_report(bench: Path, tmp_path: Path) -> None:
    _register()
    header, _ = read_bench(bench)
    n = header.n_observations
    assert n >= 10
    res = runner.invoke(
        app, ["beliefshift", "run", str(bench), "--model", "mockconst/z", "--out", str(tmp_path / "z.jsonl")]
    )
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"{n}/{n} observations valid, 0 informative (0.0 % completion)" in out
    assert f"answers do not vary (every prior 0/0, every shift 0/0 over {n} valid observations)" in out
    assert "completion below the 95 % target" in out
    res = runner.invoke(
        app, ["beliefshift", "run", str(bench), "--model", "mockvaried/v", "--out", str(tmp_path / "v.jsonl")]
    )
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"{n}/{n} observations valid, {n} informative (100.0 % completion)" in out
    assert "do not vary" not in out
    res = runner.invoke(
        app,
        ["beliefshift", "report", str(tmp_path / "z.jsonl"), str(tmp_path / "v.jsonl"), "--out", str(tmp_path / "r")],
    )
    assert res.exit_code == 0, res.output
    assert "Answers that do not vary (flagged, not informative): mockconst/z (every prior 0/0, every shift 0/0)" in (
        " ".join(res.output.split())
    )
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO((tmp_path / "r" / "completion.csv").read_text()))}
    assert (rows["mockconst/z"]["valid"], rows["mockconst/z"]["informative"]) == (str(n), "0")
    assert float(rows["mockconst/z"]["completion %"]) == 0.0
    assert float(rows["mockvaried/v"]["completion %"]) == 100.0
