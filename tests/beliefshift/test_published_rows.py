"""`beliefshift report --published`: the published group rows of Tables 1 and 2 beside a new model's."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from mafialab.analysis import Stat
from mafialab.beliefshift import add_published, build_report, read_all_results
from mafialab.beliefshift._io import write_jsonl
from mafialab.beliefshift._report import load_published
from mafialab.cli import app
from tests.beliefshift_fixtures import result

MINE = [
    result("new-model", 1, "town", "mafia", "accuse", (-2, 1), (0, 2)),
    result("new-model", 2, "mafia", "town", "suspect", (1, 0), (2, -1)),
]


def _report(tmp_path: Path):  # type: ignore[no-untyped-def]
    write_jsonl(tmp_path / "r.jsonl", None, MINE)
    recs, problems = read_all_results([tmp_path / "r.jsonl"])
    assert problems == []
    return build_report(recs, None)


def test_published_rows_sit_beside_the_new_models_rows(tmp_path: Path) -> None:
    rep = _report(tmp_path)
    before = {k: len(t.rows) for k, t in rep.tables.items()}
    assert add_published(rep) == 2 * (12 + 12)  # 12 rows each in Tables 1 and 2, per group and per model
    t1 = rep.tables["table1_models"]
    assert len(t1.rows) == before["table1_models"] + 12
    assert any(r[1] == "new-model" for r in t1.rows)
    row = next(r for r in t1.rows if r[0] == "village" and r[1] == "published ≥30B")
    assert row[2] == 11 and row[3] == Stat(0.62, 0.03, 11)  # target Sus., as published
    frontier = next(r for r in rep.tables["table2_groups"].rows if r[0] == "wolf" and r[1] == "published frontier")
    assert frontier[3].mean == 0.81 and frontier[-1].mean == 0.87
    assert any("published" in n for n in t1.notes)


def test_the_published_numbers_ship_with_their_source() -> None:
    pub = load_published()
    assert "Tables 1 and 2" in pub["source"]
    avg = next(r for r in pub["table1"]["rows"] if r["accuser"] == "wolf" and r["group"] == "Avg.")
    assert avg["models"] == 40 and avg["values"][0] == [0.30, 0.02]


def test_cli_published_option(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "r.jsonl", None, MINE)
    res = CliRunner().invoke(
        app, ["beliefshift", "report", str(tmp_path / "r.jsonl"), "--published", "--out", str(tmp_path / "rep")]
    )
    assert res.exit_code == 0, res.output
    assert "published ≤4B" in res.output and "new-model" in (tmp_path / "rep" / "table1_models.md").read_text()
    assert "published frontier" in (tmp_path / "rep" / "table1_models.md").read_text()
