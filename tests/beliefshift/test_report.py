"""Aggregation of a tiny hand-made results file: every value computed by hand here."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
from pathlib import Path

import pytest
import yaml
from scipy.stats import t as student_t
from typer.testing import CliRunner

from mafialab.analysis import Stat, combine, diff_ci, mean_ci
from mafialab.beliefshift import ModelsFileError, build_report, load_models_yaml, read_all_results, write_report
from mafialab.beliefshift._io import write_jsonl
from mafialab.beliefshift._report import AVG_GROUP, ModelInfo, size_group
from mafialab.beliefshift._schema import ResultRecord
from mafialab.cli import app
from tests.beliefshift_fixtures import result

ROOT = Path(__file__).resolve().parents[2]


def half(values: list[float]) -> float:
    """95 % Student-t half-width, written out by hand."""
    return student_t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


# Model A (3B): four valid observations and one failed (out of scale).
A = [
    result("A", 1, "town", "mafia", "accuse", (-2, 1), (0, 2)),
    result("A", 2, "town", "town", "suspect", (0, -1), (-1, 1)),
    result("A", 3, "mafia", "town", "accuse", (2, 0), (1, -1)),
    result("A", 4, "mafia", "town", "accuse", (-3, 2), (0, 3)),
    result("A", 5, "town", "mafia", "accuse", None, None, cause="out_of_scale"),
]
# Model B (12B): two village suspicions of a wolf.
B = [
    result("B", 1, "town", "mafia", "suspect", (-1, 3), (0, 1)),
    result("B", 2, "town", "mafia", "suspect", (1, 2), (-2, 2)),
]
# Model C (30B): one village accusation.
C = [result("C", 1, "town", "mafia", "accuse", (0, 0), (0, 0))]
INFOS = {"A": ModelInfo("A", 3.0), "B": ModelInfo("B", 12.0), "C": ModelInfo("C", 30.0)}


@pytest.fixture()
def report(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", None, A)
    write_jsonl(tmp_path / "bc.jsonl", None, B + C)
    recs, problems = read_all_results([tmp_path / "a.jsonl", tmp_path / "bc.jsonl"])
    assert problems == []
    return build_report(recs, INFOS)


def close(s: Stat, mean: float, h: float | None = None, n: int | None = None) -> None:
    assert s.mean == pytest.approx(mean)
    if h is None:
        assert math.isnan(s.half)
    else:
        assert s.half == pytest.approx(h)
    if n is not None:
        assert s.n == n


def test_prior_discrimination_by_hand(report):
    qa = report.quantities["A"]
    wolves = [1, 2, -3]  # priors about true wolves: r1 target, r3 accuser, r4 accuser
    villagers = [-2, 0, -1, 0, 2]  # r1 accuser, r2 both, r3 target, r4 target
    close(qa["prior.wolf"], 0.0, half(wolves), 3)
    close(qa["prior.village"], -0.2, half(villagers), 5)
    va, vb = statistics.variance(wolves) / 3, statistics.variance(villagers) / 5
    df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 4)
    close(qa["prior.separation"], 0.2, student_t.ppf(0.975, df) * math.sqrt(va + vb), 8)
    qb = report.quantities["B"]
    close(qb["prior.wolf"], 2.5, half([3, 2]), 2)
    close(qb["prior.village"], 0.0, half([-1, 1]), 2)


def test_table1_table2_cells_by_hand(report):
    qa = report.quantities["A"]
    close(qa["t1.village.suspect.target"], 1.0, None, 1)
    close(qa["t1.village.accuse.target"], 2.0, None, 1)
    close(qa["t1.wolf.accuse.target"], 1.0, half([-1, 3]), 2)
    close(qa["t1.wolf.accuse.accuser"], 0.5, half([1, 0]), 2)
    assert qa["t1.wolf.suspect.target"].n == 0
    # trust bins by the prior about the accuser: r1 -2 trust, r2 0 neutral, r3 +2 distrust, r4 -3 trust
    close(qa["t2.village.trust.target"], 2.0, None, 1)
    close(qa["t2.village.neutral.accuser"], -1.0, None, 1)
    close(qa["t2.wolf.distrust.target"], -1.0, None, 1)
    close(qa["t2.wolf.trust.target"], 3.0, None, 1)
    assert qa["t2.wolf.neutral.target"].n == 0
    # correctness: only r1 targets a true wolf
    close(qa["t2c.correct.village.trust.target"], 2.0, None, 1)
    assert qa["t2c.incorrect.village.trust.target"].n == 0
    close(qa["t2c.incorrect.wolf.trust.accuser"], 0.0, None, 1)
    qb = report.quantities["B"]
    close(qb["t1.village.suspect.target"], 1.5, half([1, 2]), 2)
    close(qb["t1.village.suspect.accuser"], -1.0, half([0, -2]), 2)


def test_distributions_by_hand(report):
    qa = report.quantities["A"]
    priors = {"-3": 1, "-2": 1, "-1": 1, "0": 2, "+1": 1, "+2": 2, "+3": 0}  # of 8
    shifts = {"-3": 0, "-2": 0, "-1": 2, "0": 2, "+1": 2, "+2": 1, "+3": 1}  # of 8
    for lv, c in priors.items():
        assert qa[f"dist.prior.{lv}"].mean == pytest.approx(100 * c / 8)
    for lv, c in shifts.items():
        assert qa[f"dist.shift.{lv}"].mean == pytest.approx(100 * c / 8)
    # the failed record is not a 0: 8 priors from 4 valid observations
    assert qa["dist.prior.0"].n == 8


def test_groups_average_model_means(report):
    assert report.groups == {"<5B": ["A"], "10-<30B": ["B"], ">=30B": ["C"], AVG_GROUP: ["A", "B", "C"]}
    g = report.group_quantities
    close(g["<5B"]["prior.wolf"], 0.0, half([1, 2, -3]), 1)
    # Avg. over A (0, CI) B (2.5, CI) and C (0, n=1: no CI) -> mean of means, no CI
    close(g[AVG_GROUP]["prior.wolf"], (0 + 2.5 + 0) / 3, None, 3)
    # village suspicion target: only A (1.0) and B (1.5) have values
    close(g[AVG_GROUP]["t1.village.suspect.target"], 1.25, None, 2)
    # a cell with CIs in every model: wolves' priors of A and B only (C has a single prior -> no CI)
    s = combine([report.quantities["A"]["prior.wolf"], report.quantities["B"]["prior.wolf"]])
    close(s, 1.25, math.sqrt(half([1, 2, -3]) ** 2 + half([3, 2]) ** 2) / 2, 2)


def test_completion_and_spearman(report):
    comp = report.tables["completion"]
    row_a = next(r for r in comp.rows if r[0] == "A")
    cols = comp.columns
    assert row_a[cols.index("observations")] == 5
    assert row_a[cols.index("valid")] == 4
    assert row_a[cols.index("completion %")] == pytest.approx(80.0)
    assert row_a[cols.index("out_of_scale")] == 1
    assert row_a[cols.index("params (B)")] == 3.0
    sp = {r[0]: r for r in report.tables["spearman"].rows}
    # prior about villagers: A -0.2, B 0.0, C 0.0 against sizes 3, 12, 30 -> ranks (1, 2.5, 2.5)
    rho = 1.5 / (math.sqrt(2) * math.sqrt(1.5))
    assert sp["prior.village"][1] == 3
    assert sp["prior.village"][2] == pytest.approx(rho)
    # exact p over the 3! orderings of the y ranks (-1, .5, .5 centred) against x (-1, 0, 1):
    # dot products 1.5, 1.5, 0, 0, -1.5, -1.5 -> 4 of 6 at least as extreme as |rho|
    assert sp["prior.village"][3] == pytest.approx(4 / 6)
    # a quantity only two models have cannot be correlated
    assert sp["t1.village.suspect.target"][1] == 2 and math.isnan(sp["t1.village.suspect.target"][2])


def test_tables_render_well_formed(report, tmp_path):
    t1 = report.tables["table1_groups"]
    md = t1.to_markdown()
    lines = [x for x in md.splitlines() if x.startswith("|")]
    assert len(lines) == 2 + len(t1.rows)
    assert {x.count("|") for x in lines} == {len(t1.columns) + 1}
    assert "| village | Avg. | 2 | 1.25 | 1.00 | -1.00 | 0.00 |" in md  # per cell: models with values, averaged
    tex = t1.to_latex()
    assert tex.count("\\\\") == 1 + len(t1.rows) and "\\begin{tabular}{lllllll}" not in tex
    rows = list(csv.reader(io.StringIO(t1.to_csv())))
    assert rows[0][:4] == ["accuser", "group", "n", "target Sus."]
    assert all(len(r) == len(rows[0]) for r in rows)
    files = write_report(report, tmp_path / "rep")
    names = {p.name for p in files}
    for stem in ("table1_models", "table2_groups", "table2_correctness_models", "table9_groups", "spearman"):
        assert {f"{stem}.md", f"{stem}.tex", f"{stem}.csv"} <= names
    png = (tmp_path / "rep" / "prior_discrimination.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_village_avg_row_values(report):
    # hand check of the Avg. village row: target Acc. averages A (2.0) and C (0.0); B has no accusation
    q = report.group_quantities[AVG_GROUP]
    close(q["t1.village.accuse.target"], 1.0, None, 2)
    close(q["t1.village.accuse.accuser"], 0.0, None, 2)
    close(q["t1.village.suspect.accuser"], (-1.0 + -1.0) / 2, None, 2)


def test_stats_helpers_by_hand():
    close(mean_ci([1.0, 2.0, 4.0]), 7 / 3, half([1, 2, 4]), 3)
    s = diff_ci([1.0, 2.0], [0.0, 0.0, 3.0])
    va, vb = statistics.variance([1, 2]) / 2, statistics.variance([0, 0, 3]) / 3
    df = (va + vb) ** 2 / (va**2 / 1 + vb**2 / 2)
    close(s, 0.5, student_t.ppf(0.975, df) * math.sqrt(va + vb), 5)
    assert mean_ci([]).n == 0


def test_without_models_yaml_each_model_is_its_own_group(tmp_path):
    r = build_report(A + B)
    assert r.groups == {"A": ["A"], "B": ["B"], AVG_GROUP: ["A", "B"]}


@pytest.mark.parametrize(("p", "g"), [(1, "<5B"), (4.9, "<5B"), (5, "5-<10B"), (9.5, "5-<10B"), (10, "10-<30B"),
                                      (29.9, "10-<30B"), (30, ">=30B"), (120, ">=30B")])  # fmt: skip
def test_size_groups(p, g):
    assert size_group(p) == g


def test_example_models_yaml_matches_the_paper():
    infos = load_models_yaml(ROOT / "examples" / "beliefshift_models.yaml")
    assert len(infos) == 40  # 29 checkpoints, reasoning on/off where both exist
    counts: dict[str, int] = {}
    for m in infos.values():
        assert m.params_b is not None and m.reasoning in ("on", "off")
        counts[size_group(m.params_b)] = counts.get(size_group(m.params_b), 0) + 1
    assert counts == {"<5B": 12, "5-<10B": 8, "10-<30B": 9, ">=30B": 11}
    checkpoints = {lab.rsplit(":", 1)[0] for lab in infos}
    assert len(checkpoints) == 29


def test_models_yaml_errors_name_the_field(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text(yaml.safe_dump({"models": [{"label": "x", "params_b": "big"}]}))
    with pytest.raises(ModelsFileError, match=r"models\[0\]\.params_b"):
        load_models_yaml(p)
    p.write_text(yaml.safe_dump({"models": [{"label": "x", "reasoning": "maybe"}]}))
    with pytest.raises(ModelsFileError, match=r"models\[0\]\.reasoning"):
        load_models_yaml(p)
    p.write_text("models: [{label: x, params_b: 3, reasoning: on, group: frontier}]")
    assert load_models_yaml(p)["x"] == ModelInfo("x", 3.0, "on", "frontier")


def test_cluster_bootstrap_ci_option():
    # two games; the interval of a mean over game-level resamples lies between the game means
    recs = [
        result("M", 1, "town", "mafia", "accuse", (0, 1), (0, 1)),
        result("M", 2, "town", "mafia", "accuse", (0, 3), (0, 3)),
        result("M", 3, "town", "mafia", "accuse", (0, 3), (0, 3)),
    ]
    recs[0] = recs[0].model_copy(update={"game_id": "g1"})
    rep = build_report(recs, ci="cluster")
    s = rep.quantities["M"]["t1.village.accuse.target"]
    assert s.mean == pytest.approx(7 / 3) and s.n == 3
    # resamples can only give game means 1 (g1 alone), 3 (g alone) or mixtures: bounds within [1, 3]
    assert 0 < s.half <= max(7 / 3 - 1, 3 - 7 / 3) + 1e-9
    sep = rep.quantities["M"]["prior.separation"]
    assert sep.mean == pytest.approx(7 / 3 - 0.0)
    assert "cluster bootstrap" in rep.tables["table1_models"].notes[1]
    t = build_report(recs, ci="t").quantities["M"]["t1.village.accuse.target"]
    assert t.half == pytest.approx(half([1, 3, 3]))


def test_results_of_different_benchmarks_are_flagged():
    other = [r.model_copy(update={"bench_id": "other"}) for r in B]
    rep = build_report(A + other)
    assert rep.benches == ["hand", "other"]
    assert "different benchmarks" in rep.tables["table1_groups"].notes[0]
    assert "different benchmarks" not in build_report(A + B).tables["table1_groups"].notes[0]


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


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({"prior": {"accuser": 7, "target": 0}}, "prior.accuser: 7 is outside the scale -3..+3"),
        ({"shift": {"accuser": 0, "target": -4}}, "shift.target: -4 is outside the scale -3..+3"),
        ({"shift": None}, "shift: missing in an observation marked ok"),
    ],
)
def test_report_refuses_off_scale_or_missing_ratings(tmp_path: Path, edit: dict, field: str) -> None:
    # a hand-edited results line used to crash `report` with a ValueError traceback (7) or be
    # scored silently; now it is a clear error naming the line and the field
    good = result("m", 1, "town", "mafia", "accuse", (0, 1), (1, 1))
    bad = result("m", 2, "town", "mafia", "accuse", (0, 1), (1, 1)).model_dump(mode="json") | edit
    path = tmp_path / "res.jsonl"
    path.write_text(good.model_dump_json() + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["beliefshift", "report", str(path), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 2, res.output
    assert f"res.jsonl:2: invalid result record ({field})" in " ".join(res.output.split())
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_independent_shifts_may_reach_six() -> None:
    base = result("m", 1, "town", "mafia", "accuse", (-3, -3), (3, 3)).model_dump(mode="json")
    ind = base | {"protocol": "independent", "posterior": {"accuser": 3, "target": 3}}
    rec = ResultRecord.model_validate(ind | {"shift": {"accuser": 6, "target": 6}})
    assert rec.shift is not None and rec.shift.target == 6
    with pytest.raises(ValueError, match=re.escape("shift.accuser: 7 is outside the scale -6..+6")):
        ResultRecord.model_validate(ind | {"shift": {"accuser": 7, "target": 6}})
    with pytest.raises(ValueError, match="posterior: missing in an observation marked ok"):
        ResultRecord.model_validate(ind | {"posterior": None})
    # a failed observation may lack its ratings
    assert not ResultRecord.model_validate(base | {"ok": False, "cause": "empty", "shift": None}).ok


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_models_yaml_params_b_must_be_finite(tmp_path: Path, value: str) -> None:
    # YAML's .nan / .inf passed the "> 0" check (.inf became a >=30B model, .nan a sized one)
    path = tmp_path / "models.yaml"
    path.write_text(f"models:\n  - {{label: a, params_b: {value}}}\n", encoding="utf-8")
    with pytest.raises(ModelsFileError, match=r"models\[0\]\.params_b: must be a finite number > 0"):
        load_models_yaml(path)
