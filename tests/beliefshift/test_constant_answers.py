"""A model answering 0/0 to every prior and shift is flagged: its valid answers are not informative.

Every answer is on the scale and parses, so each observation is valid; but one value over
every observation measures nothing. ``beliefshift run`` and ``beliefshift report`` count such
a run's completion as 0 % and say why (definition: ``docs/metrics.md``, quality signals).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from pathlib import Path

from typer.testing import CliRunner

from mafialab._quality import CONSTANT_MIN_ANSWERS
from mafialab.analysis import Stat
from mafialab.beliefshift import read_bench
from mafialab.beliefshift._schema import LABELS
from mafialab.beliefshift._tables import fmt_cell
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


def test_too_few_answers_to_judge_constancy_get_a_note_and_no_zero_interval(bench: Path, tmp_path: Path) -> None:
    """4 valid observations all 0/0: not flagged (under 10), but a note says they are too few to judge,
    and intervals over equal answers are not printed as ``0.00 ± 0.00``."""
    _register()
    res = runner.invoke(
        app,
        ["beliefshift", "run", str(bench), "--model", "mockconst/z", "--limit", "2", "--out", str(tmp_path / "z.jsonl")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    m = re.search(r"(\d+)/(\d+) observations valid, (\d+) informative", out)
    assert m is not None and m.group(1) == m.group(2) == m.group(3)
    n = int(m.group(1))
    assert 0 < n < CONSTANT_MIN_ANSWERS
    assert "do not vary" not in out  # too few to flag
    assert (
        f"note: too few valid observations ({n} < {CONSTANT_MIN_ANSWERS}) to judge whether the answers vary; "
        "completion counts them as informative" in out
    )
    res = runner.invoke(app, ["beliefshift", "report", str(tmp_path / "z.jsonl"), "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert f"Too few valid observations (under {CONSTANT_MIN_ANSWERS}) to judge whether the answers vary" in out
    assert f"mockconst/z ({n})" in out
    md = "".join(p.read_text(encoding="utf-8") for p in sorted((tmp_path / "r").glob("*.md")))
    assert md and "± 0.00" not in md and "0.00 ± 0.00" not in out
    assert "or every response is the same value (zero variance)" in md + out


def test_an_interval_over_equal_values_is_no_interval() -> None:
    assert fmt_cell(Stat(0.0, 0.0, 2)) == "0.00"  # two identical answers: zero variance, no interval
    assert fmt_cell(Stat(1.5, math.nan, 1)) == "1.50"  # one answer
    assert fmt_cell(Stat(1.5, 0.25, 4)) == "1.50 ± 0.25"
