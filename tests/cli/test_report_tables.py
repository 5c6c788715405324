"""``mafialab report`` at 80 columns: values and headers whole; no empty tables for probe-less games."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import mafialab.cli._report as report_cli
from mafialab.analysis import compute_report, load_games
from mafialab.cli import app


def _play(out: Path, *extra: str) -> list:
    res = CliRunner().invoke(app, ["play", "--agents", "scripted", "--games", "2", "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return load_games(out)


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> list:
    return _play(tmp_path_factory.mktemp("probed"), "--probes", "default")


def _render(games: list, monkeypatch: pytest.MonkeyPatch, width: int = 80) -> str:
    buf = io.StringIO()
    monkeypatch.setattr(report_cli, "console", Console(file=buf, width=width, no_color=True, highlight=False))
    rep = compute_report(games, "default", resamples=50, seed=0)
    report_cli._print_tables(rep, [g.rules for g in games])
    return buf.getvalue()


def _section(text: str, title: str, end: str) -> str:
    start = text.index(title)
    return text[start : text.index(end, start)]


def test_the_cost_tables_fit_80_columns_with_every_value_and_header_whole(probed, monkeypatch) -> None:
    text = _render(probed, monkeypatch)
    assert max(len(line) for line in text.splitlines()) <= 80
    rep = compute_report(probed, "default", resamples=50, seed=0)
    ins = rep["instrument"]
    cost = _section(text, "Instrument: cost", "calls: game + probe calls")
    answers = _section(text, "Instrument: probe answers", "lost: unusable answers")
    for part in (cost, answers):
        assert "…" not in part
    for head in ("game", "calls", "game tokens", "probe tokens"):
        assert re.search(rf"[┃│ ]\s*{re.escape(head)}\s*[┃│ ]", cost), head
    for head in ("raw", "repaired", "unusable", "lost"):
        assert f" {head} " in answers, head
    rows = [("pooled", ins["pooled"]), *((g["game_id"], g) for g in ins["games"])]
    assert len(rows) == 3
    for gid, row in rows:
        (line,) = [x for x in cost.splitlines() if f" {gid} " in x]  # the whole id, on one line
        assert f" {row['game_calls']}+{row['probe_calls']}" in line
        assert f" {row['multiplier']:.1f} " in line
        (line,) = [x for x in answers.splitlines() if f" {gid} " in x]
        a = row["probe_answers"]
        assert re.search(rf"\s{a['raw']}\s.*\s{a['repaired']}\s.*\s{a['unusable']}\s", line), line


def test_f4_and_quadrant_tables_keep_every_value_whole_at_80_columns(probed, monkeypatch) -> None:
    text = _render(probed, monkeypatch)
    rep = compute_report(probed, "default", resamples=50, seed=0)
    f4 = _section(text, "F4 vote coupling", "Instrument: cost")
    assert "…" not in f4
    for side, v in rep["vote_coupling"].items():
        for pred, x in v["increment"].items():
            if x["n"]:
                pat = rf"[\s│]{pred}[\s│]+{x['n']}[\s│]+{x['probe_hits']}/{x['baseline_hits']}[\s│]"
                assert re.search(pat, f4), (side, pred)
        for pred, x in v["baselines"].items():
            if x["n"]:
                assert f"transcript: {pred}" in f4 and f"{x['hits']}/{x['n']}" in f4
    quad = text[text.index("Innocent day votes by quadrant") :]
    assert "…" not in quad
    for head in ("correct_good", "policy gap", "perception gap", "luck"):
        assert head in quad


def test_a_report_of_games_without_probes_says_so_in_one_line_instead_of_empty_tables(tmp_path, monkeypatch) -> None:
    games = _play(tmp_path / "plain")
    text = _render(games, monkeypatch)
    assert text.count("no probe records in these games") == 1
    assert "not computed" not in text  # not one reason per metric: the one line says it
    for title in ("F1 ", "F2 ", "F3 ", "F4 against", "Instrument: probe answers", "by quadrant", "Belief dynamics"):
        assert title not in text, title
    assert " 0/0 " not in text  # no row without a vote
    assert "Instrument: cost" in text  # what the games cost is still shown
    assert "transcript: most_mentioned" in text  # and the transcript baselines, which need no probe
    assert "winners Village 2;" in " ".join(text.split())  # named by the rule set, not {'town': 2}
