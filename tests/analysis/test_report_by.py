"""Compare, don't pool: `report --by`, several directories side by side, published figures beside ours."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import compute_report, group_games, load_games, load_reference
from mafialab.cli import app
from mafialab.record import import_mafiascope

runner = CliRunner()


def _play(out: Path, *args: str) -> None:
    res = runner.invoke(app, ["play", "-p", "default", "-o", str(out), *args])
    assert res.exit_code == 0, res.output


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    _play(root / "ww", "-a", "scripted", "-k", "3")
    _play(root / "ms", "-r", "mafiascope7", "-a", "scripted", "--seat", "0=random", "-k", "2")
    return root


def _json(*args: str) -> dict:
    res = runner.invoke(app, ["report", *args, "-f", "json", "--resamples", "100"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_by_rules_gives_one_report_per_rule_set_bootstrapped_within_it(mixed: Path) -> None:
    cmp = _json(str(mixed), "--by", "rules")
    assert cmp["by"] == ["rules"]
    groups = {g["group"]: g for g in cmp["groups"]}
    assert sorted(groups) == ["rules=mafiascope7-v1", "rules=werewolf7-v1"]
    assert groups["rules=werewolf7-v1"]["games"] == 3 and groups["rules=mafiascope7-v1"]["games"] == 2
    alone = compute_report(load_games(mixed / "ww"), resamples=100).model_dump(
        mode="json"
    )  # the same games, on their own
    ww = groups["rules=werewolf7-v1"]["report"]
    assert ww["calibration"]["ci95"] == alone["calibration"]["ci95"]
    assert ww["first_order"] == alone["first_order"]


def test_by_agent_splits_the_observers_of_one_game(mixed: Path) -> None:
    games = load_games(mixed / "ms")
    groups = group_games(games, ["agent"])
    assert sorted(groups) == ["agent=random", "agent=scripted"]
    assert all(len(gs) == 2 for gs in groups.values())  # every game has both kinds of seat
    total = sum(len(g.probes) for g in games)
    assert sum(len(g.probes) for g in groups["agent=scripted"]) == total  # the random agent answers no probe
    assert sum(len(g.probes) for g in groups["agent=random"]) == 0
    assert all(
        voter in {n for n, a in g.agents.items() if a == "random"}
        for g in groups["agent=random"]
        for _, voter in g.votes
    )


def test_csv_and_table_show_every_group(mixed: Path) -> None:
    res = runner.invoke(app, ["report", str(mixed), "--by", "rules,team", "-f", "csv", "--resamples", "50"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert list(rows[0]) == ["by", "section", "group", "name", "value", "ci_lo", "ci_hi"]
    assert {r["by"] for r in rows} == {
        f"rules={r}, team={t}" for r in ("mafiascope7-v1", "werewolf7-v1") for t in ("mafia", "town")
    }
    res = runner.invoke(app, ["report", str(mixed), "--by", "rules", "--resamples", "50"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "Side by side" in res.output and "rules=werewolf7-v1" in res.output and "F2 ECE" in res.output
    # the pooled report's F4-against-the-transcript rows are not dropped from the grouped table
    assert "F4 transcript most mentioned" in res.output and "F4 transcript most accused" in res.output
    assert max(len(line) for line in res.output.splitlines()) <= 80


def test_a_pooled_mix_is_named_in_one_line(mixed: Path) -> None:
    res = runner.invoke(app, ["report", str(mixed), "--resamples", "50"])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "warning: pooled over 2 rule sets (mafiascope7-v1, werewolf7-v1) and 2 models (random, scripted)" in flat
    res = runner.invoke(app, ["report", str(mixed / "ww"), "--resamples", "50"])
    assert "pooled over" not in res.output


def test_several_directories_side_by_side(mixed: Path) -> None:
    cmp = _json(str(mixed / "ww"), str(mixed / "ms"))
    assert [g["group"] for g in cmp["groups"]] == [str(mixed / "ww"), str(mixed / "ms")]
    assert [g["games"] for g in cmp["groups"]] == [3, 2]


def test_bad_keys_and_missing_directories_are_named(mixed: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["report", str(mixed), "--by", "colour"])
    assert res.exit_code == 2 and "--by: unknown key 'colour'" in res.output
    res = runner.invoke(app, ["report", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "does not exist" in res.output
    res = runner.invoke(app, ["report", str(mixed), "--reference", "other"])
    assert res.exit_code == 2 and "--reference: unknown 'other'" in res.output


def test_published_mafiascope_figures_ship_with_their_source() -> None:
    ref = load_reference("mafiascope")
    assert "MafiaScope" in ref["source"] and ref["method"] == "mafiascope"
    en = ref["corpora"]["en_demo"]
    assert en["calibration"]["ece"] == 0.1638 and en["calibration"]["n"] == 1654
    assert en["first_order"]["round 1"]["committed_n"] == 1160
    assert en["vote_coupling"]["innocents top1"] == {"hits": 13, "n": 20, "rate": 0.65}


def test_reference_column_beside_an_imported_corpus(mafiascope_dir: Path, tmp_path: Path) -> None:
    import_mafiascope(mafiascope_dir / "en_demo", tmp_path / "en_demo")
    res = runner.invoke(app, ["report", str(tmp_path / "en_demo"), "--reference", "mafiascope", "--resamples", "50"],
                        env={"COLUMNS": "200"})  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "mafiascope en_demo (published)" in res.output and "ru_clean (published)" not in res.output
    assert "0.164" in res.output  # the published ECE, beside ours
    cmp = _json(str(tmp_path / "en_demo"), "--reference", "mafiascope")
    assert cmp["reference"]["corpora"]["en_demo"]["calibration"]["ece"] == 0.1638


def test_on_the_real_en_demo_our_mafiascope_method_equals_the_published_column(
    mafiascope_real: Path, tmp_path: Path
) -> None:
    import_mafiascope(mafiascope_real / "en_demo", tmp_path / "en_demo")
    cmp = _json(str(tmp_path / "en_demo"), "--reference", "mafiascope", "--method", "mafiascope")
    ours, pub = cmp["groups"][0]["report"], cmp["reference"]["corpora"]["en_demo"]
    assert ours["calibration"]["n"] == pub["calibration"]["n"]
    assert round(ours["calibration"]["ece"], 4) == pub["calibration"]["ece"]
    for r, v in pub["first_order"].items():
        assert ours["first_order"][r.split()[-1]]["committed_n"] == v["committed_n"]
