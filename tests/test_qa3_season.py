"""QA3 regressions for the season CLI."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from mafialab.cli import app

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "arena_season.yaml"


def test_leaderboard_markdown_is_not_wrapped(tmp_path: Path) -> None:
    out = tmp_path / "season"
    runner = CliRunner()
    run = runner.invoke(app, ["season", "run", str(EXAMPLE), "--out", str(out)])
    assert run.exit_code == 0, run.output
    res = runner.invoke(app, ["season", "leaderboard", str(out), "--markdown"])
    assert res.exit_code == 0, res.output
    table_lines = [ln for ln in res.output.splitlines() if ln.startswith("|")]
    assert len(table_lines) >= 2 + 4 + 2 + 3  # leaderboard (head, rule, 4 entries), games (head, rule, 3)
    for ln in table_lines:
        assert ln.endswith("|"), ln  # a table row wrapped at the terminal width breaks the Markdown
    # every table row printed is exactly a row of the leaderboard.md written beside the index
    written = {ln for ln in (out / "leaderboard.md").read_text().splitlines() if ln.startswith("|")}
    assert set(table_lines) <= written
