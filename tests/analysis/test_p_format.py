"""One rule prints a p-value everywhere: three decimals, scientific notation below 0.001."""

from __future__ import annotations

import json
import math

from typer.testing import CliRunner

from mafialab.analysis import fmt_p
from mafialab.cli import app
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "data" / "viewer_branches"
runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_small_p_is_never_zero() -> None:
    assert fmt_p(1.0830e-05) == "1.083e-05"
    assert fmt_p(0.0009995) == "9.995e-04"
    assert fmt_p(0.001) == "0.001"
    assert fmt_p(0.04321) == "0.043"
    assert fmt_p(1.0) == "1.000"
    assert fmt_p(None) == "-" and fmt_p(math.nan) == "-" and fmt_p(None, missing="–") == "–"


def test_fork_compare_prints_p_by_the_rule() -> None:
    # branch folders are named <parent>~<batch>-<replica>
    batches = sorted({p.name.split("~")[1].split("-")[0] for p in (FIXTURE / "forks").glob("parent~*")})
    args = ["fork", "compare", str(FIXTURE), str(FIXTURE), "--batch-a", batches[0], "--batch-b", batches[-1]]
    want = json.loads(runner.invoke(app, [*args, "--format", "json"]).stdout)
    text = " ".join(runner.invoke(app, args).stdout.split())
    for team in ("town", "mafia"):
        p = want["difference"][team]["fisher_p"]
        assert f"Fisher exact p = {fmt_p(p)} (two-sided)" in text
