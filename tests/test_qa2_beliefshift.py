"""QA2 regressions for ``mafialab beliefshift``: small-sample Spearman p-values."""

from __future__ import annotations

import math

import pytest

from mafialab.beliefshift import ModelInfo, build_report
from tests.beliefshift_fixtures import result


def test_spearman_p_is_exact_for_a_few_models() -> None:
    # four models whose mean prior about the (wolf) target rises with size: rho = 1.
    # scipy's t approximation gives p = 0 here; the exact two-sided p is the share of the
    # 4! = 24 orderings with |rho| = 1 (identity and reversal): 2 / 24.
    sizes = {"m2": 2.0, "m8": 8.0, "m20": 20.0, "m70": 70.0}
    recs = [
        result(label, i, "town", "mafia", "accuse", (0, prior), (1, 1))
        for i, (label, prior) in enumerate(zip(sizes, (-1, 0, 1, 2), strict=True))
    ]
    infos = {k: ModelInfo(label=k, params_b=v) for k, v in sizes.items()}
    rep = build_report(recs, infos)
    sp = {r[0]: r for r in rep.tables["spearman"].rows}
    assert sp["prior.wolf"][1] == 4
    assert sp["prior.wolf"][2] == pytest.approx(1.0)
    assert sp["prior.wolf"][3] == pytest.approx(2 / 24)
    # a quantity equal in every model has no correlation at all
    assert math.isnan(sp["prior.village"][2]) and math.isnan(sp["prior.village"][3])
