"""Seasons people can read and trust: 80-column tables, whole names, roster warnings, probes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from rich.cells import cell_len
from typer.testing import CliRunner

from mafialab.arena import load_season, season_warnings, terminal_game_rows, write_index
from mafialab.cli import app
from mafialab.record import PROBES_FILE
from mafialab.rules import load_rules

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "arena_season.yaml"
runner = CliRunner()


def _lines(output: str) -> list[str]:
    return output.splitlines()


def _season(tmp_path: Path, **changes: object) -> Path:
    cfg = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    cfg.update(changes)
    path = tmp_path / "season.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("s") / "season"
    res = runner.invoke(app, ["season", "run", str(EXAMPLE), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_the_leaderboard_reads_at_80_columns_with_whole_names(played: Path) -> None:
    res = runner.invoke(app, ["season", "leaderboard", str(played)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = _lines(res.output)
    assert max(cell_len(ln) for ln in lines) <= 80
    assert "…" not in res.output  # nothing cut short
    for name in ("scripted-a", "scripted-b", "random-a", "random-b"):
        assert any(f" {name} " in ln for ln in lines), name  # whole, on one line
    # every table closes its right border: nothing wider than the screen was cropped
    assert all(ln.rstrip()[-1] in "┓┃┩│┘" for ln in lines if ln.startswith(("┏", "┃", "┡", "│", "└")))
    assert "† no interval" in " ".join(res.output.split()) or "[" in res.output


def test_the_games_table_names_winners_as_the_rule_set_does(played: Path) -> None:
    index = write_index(played)
    rules = load_rules(index.rules_id)
    played_games = [g for g in index.games if g.winner is not None]
    assert played_games
    head, rows = terminal_game_rows(index)
    md = runner.invoke(app, ["season", "leaderboard", str(played), "--markdown"]).output
    for g in played_games:
        name = rules.lexicon.team_name(g.winner)
        assert g.winner_name == name
        (row,) = [r for r in rows if r[0] == g.game_id]
        assert row[head.index("winner")].startswith(name)
        assert f"| {g.game_id} | {g.seed} | {name} |" in md


def test_markdown_stays(played: Path) -> None:
    res = runner.invoke(app, ["season", "leaderboard", str(played), "--markdown"])
    assert res.exit_code == 0 and "| # | entry | games | win rate |" in res.output


def test_the_plan_reads_at_80_columns_and_warns_about_a_small_roster() -> None:
    res = runner.invoke(app, ["season", "plan", str(EXAMPLE)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert max(cell_len(ln) for ln in _lines(res.output)) <= 80 and "…" not in res.output
    flat = " ".join(res.output.split())
    assert "warning: roster: 4 entries at a 12-seat table" in flat and "all entries share the same outcomes" in flat
    for name in ("scripted-a", "scripted-b", "random-a", "random-b"):
        assert name in res.output
    assert res.output.count("*") >= 3 * 3  # three mafia seats per game, marked


def test_a_roster_larger_than_the_table_gets_no_warning(tmp_path: Path) -> None:
    roster = [{"agent": "scripted" if i % 2 else "random", "name": f"entry-{i:02d}"} for i in range(14)]
    cfg = load_season(_season(tmp_path, roster=roster))
    assert season_warnings(cfg) == []
    assert season_warnings(load_season(EXAMPLE))  # 4 entries at 12 seats


def test_seasons_can_probe(tmp_path: Path) -> None:
    path = _season(tmp_path, probes="suspicion", games=1)
    res = runner.invoke(app, ["season", "run", str(path), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    (game,) = (tmp_path / "out" / "games").iterdir()
    assert (game / PROBES_FILE).stat().st_size > 0
    rep = runner.invoke(app, ["report", str(tmp_path / "out" / "games"), "-f", "json", "--resamples", "20"])
    assert rep.exit_code == 0 and '"suspicion_ranking"' in rep.stdout


def test_a_bad_battery_in_a_season_file_names_the_field(tmp_path: Path) -> None:
    res = runner.invoke(app, ["season", "plan", str(_season(tmp_path, probes="no-such-battery"))])
    assert res.exit_code == 2 and "probes" in res.output and "Traceback" not in res.output
