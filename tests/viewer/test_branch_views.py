"""Branch data of the site: trees, batch outcomes, comparisons, sensitivity, bifurcation, dynamics.

Built from the committed fixture ``tests/data/viewer_branches`` (``scripts/make_branch_fixture.py``);
every number must equal what the command line prints for the same data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.analysis import retest_floor
from mafialab.cli import app
from mafialab.counterfactual import rate, read_batches
from mafialab.record import read_game, read_retests
from mafialab.viewer import build_site
from mafialab.viewer._build import site_rows
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "data" / "viewer_branches"


def read_js(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    head = "MAFIALAB_DATA("
    assert text.startswith(head)
    kind_end = text.index(",", len(head))
    key_end = text.index(",", text.index('"', kind_end + 2) + 1)
    return json.loads(text[key_end + 1 : -3])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(FIXTURE, out, jobs=1)
    return out


@pytest.fixture(scope="module")
def index(site: Path) -> dict[str, Any]:
    return read_js(site / "data" / "index.js")


@pytest.fixture(scope="module")
def branches(site: Path, index: dict[str, Any]) -> dict[str, Any]:
    row = next(r for r in site_rows(site) if r["id"] == "parent")
    assert row["branches"]["batches"] == len([b for b in index["batches"] if b["parent"] == "parent"])
    return read_js(site / "data" / "b" / f"{row['file']}.js")


def test_batches_match_the_branches_on_disk(index: dict[str, Any]) -> None:
    on_disk = {b.batch: b for b in read_batches(FIXTURE)}
    assert {b["batch"] for b in index["batches"]} == set(on_disk)
    for b in index["batches"]:
        d = on_disk[b["batch"]]
        assert sorted(b["games"]) == sorted(d.games) and b["replicas"] == len(d.games) and b["n"] == d.n
        assert b["town"] == rate(d.wins("town"), d.n) and b["mafia"] == rate(d.wins("mafia"), d.n)
        assert b["step"] == d.step and b["intervention"] == d.intervention
    kinds = {b["intervention"]["type"] for b in index["batches"]}
    assert kinds == {"resample", "inject", "belief"}
    # the fixture is not degenerate: outcomes differ between batches
    assert len({b["town"]["p"] for b in index["batches"]}) > 1


def test_branch_rows_mark_the_fork_and_share_the_prefix(site: Path) -> None:
    parent = read_game(FIXTURE / "parent")
    rows = [r for r in site_rows(site) if r["parent"]]
    assert len(rows) == 23 and all(r["parent"]["game_id"] == "parent" for r in rows)
    for r in rows[:6]:
        p = r["parent"]
        d = next(x for x in FIXTURE.rglob("game.jsonl") if read_game(x.parent).game_id == r["id"]).parent
        branch = read_game(d)
        fs = p["fork_seq"]
        assert fs is not None
        shared = [e.model_dump(exclude={"ts"}) for e in branch.events if e.seq < fs]
        assert shared == [e.model_dump(exclude={"ts"}) for e in parent.events if e.seq < fs]
        at_fork = next(e for e in branch.events if e.seq == fs)
        assert at_fork.decision >= p["step"]  # type: ignore[union-attr]


def test_comparisons_equal_fork_compare_json(branches: dict[str, Any], tmp_path: Path) -> None:
    comps = branches["comparisons"]
    n = len(branches["batches"])
    assert len(comps) == n * (n - 1) // 2
    key = next(k for k, v in comps.items() if v["difference"]["town"]["diff"] not in (None, 0.0))
    a, b = key.split("|")
    res = CliRunner().invoke(
        app, ["fork", "compare", str(FIXTURE), str(FIXTURE), "--batch-a", a, "--batch-b", b, "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(json.dumps(comps[key])) == json.loads(res.stdout)


def test_sensitivity_pools_resample_batches_per_step(branches: dict[str, Any], index: dict[str, Any]) -> None:
    sens = branches["sensitivity"]
    resampled = [b for b in index["batches"] if b["intervention"]["type"] == "resample"]
    assert [p["step"] for p in sens] == sorted({b["step"] for b in resampled}) and len(sens) >= 2
    for p in sens:
        bs = [b for b in resampled if b["step"] == p["step"]]
        assert p["n"] == sum(b["n"] for b in bs)
        assert p["town"] == rate(sum(b["town"]["k"] for b in bs), p["n"])


def test_bifurcation_panel_equals_bifurcate_report_json(branches: dict[str, Any]) -> None:
    res = CliRunner().invoke(app, ["bifurcate", "report", str(FIXTURE / "bif"), "--format", "json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    (bif,) = branches["bifurcations"]
    assert bif["pooled"] == rep["pooled"]
    assert [p["report"] for p in bif["points"]] == rep["points"]
    (point,) = bif["points"]
    variants = point["variants"]
    assert len(variants) == rep["points"][0]["forks"] == 4
    assert sum(bool(v["flipped"]) for v in variants) == rep["points"][0]["flips"]
    assert any("<img" in (v["text"] or "") for v in variants)  # kept verbatim; the page escapes it
    assert all(v["fork_id"] for v in variants)


def test_dynamics_per_round_with_the_retest_floor(site: Path) -> None:
    row = next(r for r in site_rows(site) if r["id"] == "parent")
    g = read_js(site / "data" / "g" / f"{row['file']}.js")
    d = g["dynamics"]
    assert d["rounds"] and sum(r["flip_pairs"] for r in d["rounds"]) == d["all"]["flip_pairs"] > 0
    assert sum(r["volatility_pairs"] for r in d["rounds"]) == d["all"]["volatility_pairs"]
    assert all(r["flip_rate"] is None or 0 <= r["flip_rate"] <= 1 for r in d["rounds"])
    floor = retest_floor(read_retests([FIXTURE / "retest" / "retest.jsonl"]))
    assert floor is not None and d["retest"] == floor
    assert g["decision_seq"] and all(isinstance(v, int) for v in g["decision_seq"].values())


def test_intervention_label_names_a_team_vote_choice() -> None:
    from mafialab.viewer._branches import intervention_label

    iv = {"type": "inject", "target": None, "text": None, "no_vote": False, "choice": "reject"}
    assert intervention_label(iv) == "inject: choice reject"
    assert intervention_label({**iv, "choice": None}) == "inject: (empty)"
