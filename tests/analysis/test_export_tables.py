"""`export parquet`: games and seats tables; imported games' calls table keeps its columns."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from mafialab.analysis import log_tables
from mafialab.cli import app
from mafialab.models import CallRecord
from mafialab.record import import_mafiascope, read_game


def test_games_and_seats_tables(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["play", "-a", "scripted", "--seat", "2=random", "-k", "2", "-o", str(tmp_path / "runs")]
    )
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["export", "parquet", str(tmp_path / "runs"), "--out", str(tmp_path / "pq")])
    assert res.exit_code == 0, res.output
    games = pd.read_parquet(tmp_path / "pq" / "games")
    seats = pd.read_parquet(tmp_path / "pq" / "seats")
    assert len(games) == 2 and set(games.columns) >= {"game_id", "rules_id", "seed", "winner", "rounds", "reason",
                                                       "source"}  # fmt: skip
    for row in games.itertuples():
        log = read_game(tmp_path / "runs" / row.path)
        end = next(e for e in log.events if e.kind == "game_end")
        assert (row.winner, row.rounds, row.reason, row.seed) == (end.winner, end.rounds, end.reason, log.header.seed)
        assert row.winner_name == log.header.rules.lexicon.team_name(end.winner)  # werewolf7: Village / Werewolves
        assert row.winner_name in ("Village", "Werewolves")
        mine = seats[seats.game_id == row.game_id].sort_values("seat")
        assert list(mine.role) == [s.role for s in log.header.roster]
        assert list(mine.survived) == [s in end.alive for s in range(len(log.header.roster))]
    assert set(seats.agent) == {"scripted", "random"} and len(seats) == 2 * 7


def test_imported_games_keep_the_calls_columns(mafiascope_dir: Path, tmp_path: Path) -> None:
    import_mafiascope(mafiascope_dir / "ru_clean", tmp_path / "ru")
    tables = log_tables(tmp_path / "ru")
    assert len(tables["calls"]) == 0
    assert list(tables["calls"].columns) == list(dict.fromkeys(["game_id", *CallRecord.model_fields]))
    CliRunner().invoke(app, ["export", "parquet", str(tmp_path / "ru"), "--out", str(tmp_path / "pq")])
    calls = pd.read_parquet(tmp_path / "pq" / "calls")
    assert len(calls) == 0 and "purpose" in calls.columns and "prompt_tokens" in calls.columns
    assert len(pd.read_parquet(tmp_path / "pq" / "games")) == len(tables["games"]) > 0
