"""``mafialab/beliefshift`` on Inspect gives the numbers of ``mafialab beliefshift run`` + ``report``."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model
from typer.testing import CliRunner

from mafialab.beliefshift import RunOptions, build_report, read_all_results, read_bench, read_results, run_bench
from mafialab.cli import app
from mafialab.models import MockModel
from tests.inspect.conftest import inspect_answers, mafialab_answers

TABLES = ("completion", "prior_discrimination_models", "table1_models", "table2_models", "table9_models")


@pytest.fixture(scope="module")
def both(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same scripted answers through ``run_bench`` and through the Inspect task (log as .eval and .json)."""
    root = tmp_path_factory.mktemp("inspect-both")
    header, items = read_bench(bench)
    ours = root / "results.jsonl"
    asyncio.run(run_bench(header, items, MockModel(mafialab_answers), ours, RunOptions(label="m", concurrency=3)))
    model = get_model("mockllm/model", custom_outputs=inspect_answers, memoize=False)
    logs = inspect_eval(
        "mafialab/beliefshift",
        model=model,
        task_args={"bench": str(bench), "protocol": "anchored", "label": "m"},
        log_dir=str(root / "logs"),
        log_format="eval",
        display="none",
        max_samples=4,
    )
    assert len(logs) == 1 and logs[0].status == "success", logs[0].error
    eval_path = Path(logs[0].location)
    json_path = root / "copy.json"
    write_eval_log(read_eval_log(str(eval_path)), str(json_path), format="json")
    return {"ours": ours, "eval": eval_path, "json": json_path}


def test_one_sample_per_item_and_observer(both: dict[str, Path], bench: Path) -> None:
    header, items = read_bench(bench)
    log = read_eval_log(str(both["eval"]))
    assert log.eval.task == "mafialab/beliefshift"
    assert log.samples is not None and len(log.samples) == header.n_observations
    ids = {s.id for s in log.samples}
    assert ids == {f"{it.item_id}/o{o.seat}" for it in items for o in it.observers}


def test_inspect_log_and_results_file_give_the_same_tables(both: dict[str, Path]) -> None:
    ours, _ = read_all_results([both["ours"]])
    for kind in ("eval", "json"):
        theirs, problems = read_all_results([both[kind]])
        assert problems == []
        assert len(theirs) == len(ours)
        a, b = build_report(ours), build_report(theirs)
        for name in TABLES:
            assert a.tables[name].to_markdown() == b.tables[name].to_markdown(), (kind, name)
    rep = build_report(ours)
    q = rep.quantities["m"]
    # not an empty comparison: some observations failed (non-JSON answers), most did not,
    # and Table 1 and Table 2 have cells with values
    n_ok = sum(r.ok for r in ours)
    assert 0 < n_ok < len(ours)
    assert {r.cause for r in ours if not r.ok} == {"non_json"}
    assert all(c.attempts == 3 for r in ours if not r.ok for c in r.calls if not c.ok)
    assert sum(not math.isnan(q[k].mean) for k in q if k.startswith("t1.")) >= 4
    assert sum(not math.isnan(q[k].mean) for k in q if k.startswith("t2.")) >= 4


def test_eval_metrics_are_the_report_model_row(both: dict[str, Path]) -> None:
    ours, _ = read_all_results([both["ours"]])
    q = build_report(ours).quantities["m"]
    log = read_eval_log(str(both["eval"]), header_only=True)
    assert log.results is not None
    metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    assert metrics["completion"] == pytest.approx(sum(r.ok for r in ours) / len(ours))
    checked = 0
    for key, stat in q.items():
        if key.split(".")[0] in ("t1", "t2", "prior") and "t2c" not in key:
            if math.isnan(stat.mean):
                assert key not in metrics
            else:
                assert metrics[key] == pytest.approx(stat.mean), key
                checked += 1
    assert checked >= 10


def test_scores_carry_per_observation_values(both: dict[str, Path]) -> None:
    log = read_eval_log(str(both["eval"]))
    assert log.samples is not None
    for s in log.samples:
        score = s.scores["beliefshift_scorer"]  # type: ignore[index]
        rec = score.metadata["result"]  # type: ignore[index]
        assert score.value["ok"] == (1.0 if rec["ok"] else 0.0)  # type: ignore[index]
        if rec["ok"]:
            assert score.value["shift_target"] == rec["shift"]["target"]  # type: ignore[index]
            assert score.value["prior_accuser"] == rec["prior"]["accuser"]  # type: ignore[index]
            # the transcript is the shift conversation: system, history + prior question, the
            # model's prior, the message + shift question, the shift answer
            assert [m.role for m in s.messages] == ["system", "user", "assistant", "user", "assistant"]
            assert s.messages[-1].text == rec["calls"][-1]["text"]
        else:
            assert "non_json" in score.explanation  # type: ignore[operator]


def test_report_command_prints_the_same_tables_from_an_inspect_log(both: dict[str, Path], tmp_path: Path) -> None:
    runner = CliRunner()
    outputs = []
    for kind in ("ours", "eval", "json"):
        res = runner.invoke(app, ["beliefshift", "report", str(both[kind]), "--out", str(tmp_path / kind)])
        assert res.exit_code == 0, res.output
        outputs.append(res.output.replace(str(tmp_path / kind), "OUT"))
        assert (tmp_path / kind / "table1_models.csv").read_text() == (
            (tmp_path / "ours" / "table1_models.csv").read_text()
        )
    assert outputs[0] == outputs[1] == outputs[2]
    assert "(groups; paper Table 1)" in outputs[0] and "(groups; paper Table 2)" in outputs[0]


def test_report_refuses_a_log_of_another_task(tmp_path: Path, both: dict[str, Path]) -> None:
    log = read_eval_log(str(both["eval"]))
    log.eval.task = "other/task"
    bad = tmp_path / "other.json"
    write_eval_log(log, str(bad), format="json")
    res = CliRunner().invoke(app, ["beliefshift", "report", str(bad), "--out", str(tmp_path / "r")])
    assert res.exit_code != 0
    assert "not of mafialab/beliefshift" in res.output


def test_results_file_is_not_taken_for_an_inspect_log(both: dict[str, Path]) -> None:
    header, recs, _ = read_results(both["ours"])
    assert header is not None and header.label == "m"
    again, problems = read_all_results([both["ours"]])
    assert [r.item_id for r in again] == [r.item_id for r in recs] and problems == []


def test_bad_protocol_is_refused(bench: Path) -> None:
    from mafialab.inspect import beliefshift

    with pytest.raises(ValueError, match="protocol"):
        beliefshift(bench=str(bench), protocol="sideways")
