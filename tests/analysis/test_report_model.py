"""The report is one typed model (``analysis.Report``): its JSON is today's, key for key, and its rows feed both
the CSV and the viewer's corpus tables.

The frozen outputs under ``tests/data/report`` were printed by ``mafialab report`` before the
report was typed (commit 89dd114; see their README): the model must print them byte for byte.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from mafialab.analysis import Report, compute_report, find_retests, load_games, report_rows
from mafialab.cli import app
from mafialab.record import import_mafiascope, read_retests
from mafialab.viewer._corpus import RESAMPLES, corpus_metrics

DATA = Path(__file__).parents[1] / "data"
FROZEN = DATA / "report"
BRANCHES = DATA / "viewer_branches"
FIXTURES = DATA / "mafiascope"


@pytest.fixture(scope="module")
def ru_clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ru") / "ru_clean"
    import_mafiascope(FIXTURES / "ru_clean", out)
    return out


def _cli(*args: str) -> str:
    res = CliRunner().invoke(app, ["report", *args, "--resamples", "50", "--no-cache"])
    assert res.exit_code == 0, res.output
    return res.stdout


def _frozen(name: str) -> str:
    return (FROZEN / name).read_text(encoding="utf-8")


def test_report_json_is_the_frozen_output_byte_for_byte(ru_clean: Path) -> None:
    assert _cli(str(BRANCHES), "--include-branches", "--format", "json") == _frozen(
        "viewer_branches.include-branches.json"
    )
    assert _cli(str(ru_clean), "--method", "mafiascope", "--format", "json") == _frozen("ru_clean.mafiascope.json")
    assert _cli(str(ru_clean), "--method", "mafiascope", "--format", "csv") == _frozen("ru_clean.mafiascope.csv")


def test_compute_report_returns_the_model_whose_dump_is_the_frozen_json(ru_clean: Path) -> None:
    rep = compute_report(load_games(ru_clean), "mafiascope", resamples=50)
    assert isinstance(rep, Report)
    want = json.loads(_frozen("ru_clean.mafiascope.json"))
    assert rep.model_dump(mode="json") == want
    assert list(rep.model_dump(mode="json")) == list(want)  # the documented order, too
    retests = read_retests(find_retests(BRANCHES))  # as `report DIR` finds them
    rep = compute_report(load_games(BRANCHES, include_branches=True), resamples=50, retests=retests)
    assert rep.model_dump(mode="json") == json.loads(_frozen("viewer_branches.include-branches.json"))
    # typed attributes read the same numbers as the JSON keys
    assert rep.dynamics.retest is not None and rep.dynamics.retest.pairs == 9
    assert (
        rep.inclusion.branches == 23
        and rep.vote_coupling.innocents.top1.n == rep.model_dump()["vote_coupling"]["innocents"]["top1"]["n"]
    )


def test_a_frozen_report_validates_back_into_the_same_model() -> None:
    for name in ("viewer_branches.include-branches.json", "ru_clean.mafiascope.json"):
        data = json.loads(_frozen(name))
        assert Report.model_validate(data).model_dump(mode="json") == data


def _error_locations(data: dict[str, Any]) -> list[tuple[str | int, ...]]:
    with pytest.raises(ValidationError) as err:
        Report.model_validate(data)
    return [e["loc"] for e in err.value.errors()]


def test_the_model_refuses_an_unknown_key_and_a_wrong_type_naming_the_field() -> None:
    good = json.loads(_frozen("ru_clean.mafiascope.json"))
    bad = copy.deepcopy(good)
    bad["calibration"]["ece_ci"] = [0.1, 0.2]  # a key the format does not have (the viewer's old name)
    assert _error_locations(bad) == [("calibration", "ece_ci")]
    bad = copy.deepcopy(good)
    bad["first_order"]["1"]["committed_n"] = "many"
    assert _error_locations(bad) == [("first_order", "1", "committed_n")]
    bad = copy.deepcopy(good)
    bad["vote_coupling"]["mafia"]["top1"]["ci95"] = [0.1]  # an interval is [lo, hi]
    assert _error_locations(bad) == [("vote_coupling", "mafia", "top1", "ci95")]
    bad = copy.deepcopy(good)
    del bad["inclusion"]["rule"]
    assert _error_locations(bad) == [("inclusion", "rule")]


def test_the_viewer_corpus_rows_are_the_csv_rows(ru_clean: Path) -> None:
    dirs = sorted(p for p in ru_clean.iterdir() if (p / "game.jsonl").is_file())
    block = corpus_metrics({"ru": dirs})["corpora"]["ru"]
    rep = compute_report(load_games(ru_clean), resamples=RESAMPLES)
    csv = {(r.section, r.group, r.name): r for r in report_rows(rep)}
    shown = block["metrics"]
    assert len(shown) == 3 * len(rep.first_order) + 2 + 9 + 2 * (3 + 3)  # F1 per round, F2, F3, F4 with baselines
    for row in shown:
        want = csv[(row["section"], row["group"], row["key"])]
        assert (row["value"], row["ci"], row["n"]) == (want.value, want.ci, want.n), row["name"]
        assert want.csv_fields()["ci_lo"] == (None if row["ci"] is None else row["ci"][0])
    # the viewer's calibration chart is the report's calibration block
    chart = {k: v for k, v in block["calibration"].items() if k != "small_bin"}
    assert chart == rep.calibration.model_dump(mode="json")


def test_real_recordings_round_trip_and_feed_the_same_rows(mafiascope_real: Path, tmp_path: Path) -> None:
    import_mafiascope(mafiascope_real / "en_demo", tmp_path / "en_demo")
    rep = compute_report(load_games(tmp_path / "en_demo"), "mafiascope", resamples=50)
    data = rep.model_dump(mode="json")
    assert Report.model_validate(data) == rep
    rows = [r.csv_fields() for r in report_rows(rep)]
    assert rows[0] == {"section": "summary", "group": "", "name": "games", "value": rep.games, "ci_lo": None,
                       "ci_hi": None}  # fmt: skip
    assert json.loads(_cli(str(tmp_path / "en_demo"), "--method", "mafiascope", "--format", "json")) == data
