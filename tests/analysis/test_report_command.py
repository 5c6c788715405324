"""`mafialab report` formats and plots, `mafialab export` parquet and tgn."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from mafialab.analysis import OutputExistsError, export_parquet
from mafialab.analysis._export import TGN_COLUMNS
from mafialab.cli import app
from mafialab.record import GAME_FILE, PROBES_FILE, import_mafiascope, read_game
from tests.helpers import write_game_dir


@pytest.fixture(scope="module")
def ru(tmp_path_factory: pytest.TempPathFactory, mafiascope_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("ru")
    import_mafiascope(mafiascope_dir / "ru_clean", out)
    return out


def test_report_csv_and_json_agree(ru: Path) -> None:
    runner = CliRunner()
    j = json.loads(runner.invoke(app, ["report", str(ru), "-f", "json", "--resamples", "100", "--seed", "5"]).stdout)
    res = runner.invoke(app, ["report", str(ru), "-f", "csv", "--resamples", "100", "--seed", "5"])
    assert res.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    get = {(r["section"], r["group"], r["name"]): r for r in rows}
    r = get[("first_order", "round 1", "committed_accuracy")]
    assert float(r["value"]) == pytest.approx(j["first_order"]["1"]["committed_accuracy"])
    assert float(r["ci_lo"]) == pytest.approx(j["first_order"]["1"]["ci95"]["committed_accuracy"][0])
    assert int(get[("summary", "", "games")]["value"]) == j["games"] == 2
    assert j["seed"] == 5 and j["resamples"] == 100
    lo, hi = j["calibration"]["ci95"]["ece"]
    assert lo <= j["calibration"]["ece"] <= hi


def test_report_table_and_plots(ru: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(ru), "--resamples", "50", "--plots", str(tmp_path / "p")])
    assert res.exit_code == 0, res.output
    assert "F1 first-order" in res.stdout and "F4 vote coupling" in res.stdout
    for name in ("reliability.png", "by_round.png"):
        data = (tmp_path / "p" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_report_errors(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "with no game.jsonl in it or below" in " ".join(res.output.split())
    assert "Traceback" not in res.output
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "game.jsonl").write_text('{"kind": "speech"}\n')
    res = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "game_start" in res.output


def test_export_parquet(ru: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["export", "parquet", str(ru), "--out", str(tmp_path / "pq")])
    assert res.exit_code == 0, res.output
    events = pd.read_parquet(tmp_path / "pq" / "events")
    probes = pd.read_parquet(tmp_path / "pq" / "probes")
    calls = pd.read_parquet(tmp_path / "pq" / "calls")
    games = sorted(p for p in ru.iterdir() if p.is_dir())
    assert len(events) == sum(len(read_game(g).events) for g in games)
    n_probes = sum(len((g / PROBES_FILE).read_text().splitlines()) for g in games)
    assert len(probes) == n_probes and len(calls) == 0
    speech = events[events.kind == "speech"].iloc[0]
    assert speech.public and isinstance(speech.text, str) and speech.text
    chat = events[events.kind == "mafia_chat"].iloc[0]
    assert not chat.public and chat.teams == "mafia"
    lines = [json.loads(x) for x in (games[0] / PROBES_FILE).read_text().splitlines()]
    i, first = next((i, r) for i, r in enumerate(lines) if r["answer_parsed"] is not None)
    row = probes.iloc[i]
    assert json.loads(row.answer_parsed) == first["answer_parsed"] and row.answer_raw == first["answer_raw"]
    res = CliRunner().invoke(app, ["export", "parquet", str(ru), "--out", str(tmp_path / "one.parquet")])
    one = pd.read_parquet(tmp_path / "one.parquet")
    assert res.exit_code == 0 and (one.table == "probes").sum() == n_probes


def test_export_parquet_never_replaces_a_file_without_force(ru: Path, tmp_path: Path) -> None:
    kept = tmp_path / "kept.parquet"
    kept.write_text("precious\n")
    (tmp_path / "pq").mkdir()
    (tmp_path / "pq" / "games.parquet").write_text("earlier export\n")
    for out in (kept, tmp_path / "pq"):
        res = CliRunner().invoke(app, ["export", "parquet", str(ru), "--out", str(out)])
        assert res.exit_code == 2 and "exists (use --force to replace it)" in res.output
    assert kept.read_text() == "precious\n"
    assert (tmp_path / "pq" / "games.parquet").read_text() == "earlier export\n"
    assert not (tmp_path / "pq" / "events.parquet").exists()  # checked before anything is written
    # the library names the file and its own parameter; the option names are the CLI's words
    with pytest.raises(OutputExistsError) as err:
        export_parquet(ru, tmp_path / "pq")
    assert err.value.path == tmp_path / "pq" / "games.parquet" and "--" not in str(err.value)
    res = CliRunner().invoke(app, ["export", "parquet", str(ru), "--out", str(kept), "--force"])
    assert res.exit_code == 0 and len(pd.read_parquet(kept)) > 0


def test_export_tgn(ru: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["export", "tgn", str(ru)])
    assert res.exit_code == 0
    df = pd.read_csv(io.StringIO(res.stdout))
    assert tuple(df.columns) == TGN_COLUMNS
    assert set(df.label.str.split(":").str[0]) == {"role", "suspicion", "attitude"}
    assert (df.source != df.target).all()
    roles = df[df.label.str.startswith("role:")]
    assert roles.weight.between(0, 1).all()
    assert (df.groupby("game_id").time.apply(lambda t: t.is_monotonic_increasing)).all()
    res = CliRunner().invoke(app, ["export", "tgn", str(ru), "--out", str(tmp_path / "e.parquet")])
    assert res.exit_code == 0 and len(pd.read_parquet(tmp_path / "e.parquet")) == len(df)


@pytest.mark.parametrize("rules", ["werewolf7", "mafiascope7"])
def test_probed_play_game_produces_a_report(tmp_path: Path, rules: str) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["play", "--rules", rules, "--agents", "scripted", "--probes", "default",
                              "--seed", "3", "--out", str(tmp_path)])  # fmt: skip
    assert res.exit_code == 0, res.output
    (game,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    n_records = len((game / PROBES_FILE).read_text().splitlines())
    for method in ("default", "mafiascope"):
        out = runner.invoke(app, ["report", str(tmp_path), "-f", "json", "-m", method, "--resamples", "50"])
        assert out.exit_code == 0, out.output
        rep = json.loads(out.stdout)
        assert rep["games"] == 1 and rep["probe_records"] == n_records
        # the hidden team is recognised under the rule set's own role names (Werewolf)
        assert sum(v["recall_n"] for v in rep["first_order"].values()) > 0
        assert rep["calibration"]["n"] > 0 and rep["second_order"]["all"]["pairs"] > 0
        # scripted agents vote for the top of their own suspicion ranking
        top1 = rep["vote_coupling"]["innocents"]["top1"]
        assert top1["n"] > 0 and top1["rate"] == 1.0


def test_report_accepts_the_game_jsonl_file_itself(game_lines: list[dict], tmp_path: Path):
    d = write_game_dir(tmp_path, game_lines)
    res = CliRunner().invoke(app, ["report", str(d / GAME_FILE), "-f", "json", "--resamples", "5"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["games"] == 1


def test_report_rejects_a_negative_bootstrap_seed(game_lines: list[dict], tmp_path: Path):
    d = write_game_dir(tmp_path, game_lines)
    res = CliRunner().invoke(app, ["report", str(d), "--seed", "-1", "--resamples", "5"])
    assert res.exit_code == 2
    assert "--seed" in res.output
    assert isinstance(res.exception, SystemExit)  # a usage error, not numpy's ValueError
