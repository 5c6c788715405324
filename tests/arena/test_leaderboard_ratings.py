"""The season leaderboard's rating boards: games per rating, the overlap mark, GTE note, JSON."""

from __future__ import annotations

import json
from pathlib import Path

from mafialab.analysis import outcomes_from_json, rate_games
from mafialab.arena import SeasonIndex, render_markdown, terminal_tables
from mafialab.arena._leaderboard import OVERLAP_MARK, rating_tables

DATA = Path(__file__).resolve().parents[1] / "data" / "ratings"


def _index() -> SeasonIndex:
    games = outcomes_from_json(json.loads((DATA / "kaggle_results.json").read_text()))
    ratings = rate_games(games, resamples=200, seed=3)
    return SeasonIndex(
        season="s", rules_id="r", seed=3, games_planned=24, games_counted=24, replacements=0, leaderboard=[],
        games=[], discarded=[], judges=[], created=0.0, ratings=ratings, gte=None,
        gte_note="GTE needs `pip install 'mafialab[gte]'`",
    )  # fmt: skip


def test_rating_tables_show_games_and_overlap_marks() -> None:
    index = _index()
    assert index.ratings is not None
    tables = rating_tables(index)
    titles = [t[0] for t in tables]
    n_self = index.ratings.self_play_games
    assert titles == [
        f"{name} ({index.ratings.games_rated} games rated, {n_self} self-play left out)"
        for name in ("Ratings", "Ratings by side", "Ratings by role")
    ]
    for (_, head, rows), board in zip(tables, ("overall", "side", "role"), strict=True):
        want = index.ratings.boards[board]
        assert len(rows) == len(want)
        g = head.index("games")
        for cells, row in zip(rows, want, strict=True):
            assert cells[1] == row.agent and cells[g] == str(row.games)
            mu_cell = cells[head.index("OpenSkill μ")]
            assert mu_cell.startswith(f"{row.mu:.1f}")
            assert mu_cell.endswith(OVERLAP_MARK) == bool(row.mu_overlaps_next)
            if row.no_interval:
                assert "†" in mu_cell
    # the side board ranks within each side: rank 1 twice
    side_rows = tables[1][2]
    assert [r[0] for r in side_rows].count("1") == 2
    # the overall table has a GTE column, empty without the extra
    assert tables[0][1][-1] == "GTE" and {r[-1] for r in tables[0][2]} == {"–"}


def test_markdown_and_terminal_carry_the_boards_and_the_gte_note() -> None:
    index = _index()
    md = render_markdown(index)
    assert "## Ratings by side" in md and "## Ratings by role" in md
    assert "GTE needs `pip install 'mafialab[gte]'`" in md
    assert [t[0] for t in terminal_tables(index)][-3:] == [t[0] for t in rating_tables(index)]
    data = json.loads(index.model_dump_json())
    assert set(data["ratings"]["boards"]) == {"overall", "side", "role"}
    row = data["ratings"]["boards"]["side"][0]
    assert {"games", "elo", "elo_low", "elo_high", "mu", "mu_low", "mu_high", "mu_overlaps_next"} <= set(row)
    assert data["gte"] is None and data["gte_note"].startswith("GTE needs")
