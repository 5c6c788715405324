"""Identical resamples are one variant: kept once, forked once, with the number of samples it stands for.

Bifurcation used to keep (and fork) five identical variants when 50 resamples all gave the
same answer; the published method keeps the most dissimilar variants covering every
distinct target, so identical texts are one variant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mafialab.counterfactual import Sample, plan_points, run_bifurcation, select_variants
from mafialab.record import read_bifurcation, read_game
from mafialab.testing import OpenAIStub, schema_instance
from mafialab.viewer._branches import bifurcation_payloads
from tests.helpers import play_probed_parent, stub_bifurcation


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A probed mafiascope7 game played by scripted agents (seed 3)."""
    return play_probed_parent(tmp_path_factory.mktemp("parents"))


def _unit_rows(n: int) -> np.ndarray:
    """``n`` unit rows at distinct angles (embeddings of distinct texts)."""
    ang = np.radians(np.linspace(0, 170, n))
    return np.stack([np.cos(ang), np.sin(ang)], axis=1)


def test_fifty_identical_samples_are_one_variant() -> None:
    same = [Sample(i, "I vote Bo.", "Bo") for i in range(50)]
    emb = np.vstack([_unit_rows(1), np.tile(_unit_rows(2)[1], (50, 1))])
    # identical to the factual answer: the factual variant alone
    assert select_variants(emb, "Bo", same, keep=5, factual_text="I  vote Bo.") == [(0, "factual")]
    # another answer, 50 times: the factual variant and that answer once
    assert select_variants(emb, "Bo", same, keep=5, factual_text="Bo did it. I vote Bo.") == [
        (0, "factual"),
        (1, "farthest"),
    ]


def test_copies_are_skipped_by_coverage_and_farthest_selection() -> None:
    samples = [
        Sample(0, "a", "Cy"),  # row 1: new target
        Sample(1, "a", "Cy"),  # row 2: a copy of row 1
        Sample(2, "a", "Bo"),  # row 3: the same text with another target is another answer
        Sample(3, "b", "Bo"),  # row 4
        Sample(4, "b", "Bo"),  # row 5: a copy of row 4
    ]
    emb = _unit_rows(6)
    emb[2], emb[5] = emb[1], emb[4]  # copies embed alike
    assert select_variants(emb, "Bo", samples, keep=6, factual_text="f") == [
        (0, "factual"),
        (1, "target_coverage"),
        (4, "farthest"),
        (3, "farthest"),
    ]


def _same_answer(body: dict[str, Any]) -> str:
    """Every resample gives the same answer (whatever the seed)."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    return json.dumps(schema_instance(schema, "always the same")) if schema else "I have nothing to add."


async def test_a_run_whose_resamples_are_identical_forks_each_distinct_answer_once(
    parent: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bif"
    log = read_game(parent)
    point = plan_points(log, "innocent-votes")[0]
    async with OpenAIStub(responder=_same_answer) as stub:
        kw = stub_bifurcation(stub, resamples=12, keep=5)
        res = await run_bifurcation(log, str(point.step.id), out, **kw)
    assert res.samples == 12 and not res.errors
    assert res.forks == 2  # the factual answer and the one resampled answer, not 5 forks
    exp = read_bifurcation(out)
    (p,) = exp.points
    assert sum(p.target_counts.values()) == 12 and len(p.target_counts) == 1
    forks = sorted(exp.forks, key=lambda f: f.variant_idx)
    assert [(f.source, f.count) for f in forks] == [("factual", 0), ("sampled", 12)]  # not 5 forks
    assert len({f.fork_id for f in forks}) == 2
    assert len(list((out / "forks").iterdir())) == 2  # one fork game (one batch) per distinct answer
    (panel,) = bifurcation_payloads([out], tmp_path)
    (vp,) = panel["points"]
    assert [(v["variant_idx"], v["count"]) for v in vp["variants"]] == [(0, 0), (1, 12)]
