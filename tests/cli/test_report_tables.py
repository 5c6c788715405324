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
    rep = compute_report(probed, "default", resamples=50, seed=0).model_dump(mode="json")
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


def test_every_table_keeps_its_values_and_header_words_whole_at_80_columns(probed, monkeypatch) -> None:
    text = _render(probed, monkeypatch)
    rep = compute_report(probed, "default", resamples=50, seed=0).model_dump(mode="json")
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    words = {"committed", "accuracy", "Unknown", "recall", "over-prediction", "pred/actual", "suspects", "majority"}
    words |= {"volatility", "top-suspect", "flips", "retest", "floor", "return", "McNemar", "probe/base"}
    for word in words:
        assert re.search(rf"(?<![\w/-]){re.escape(word)}(?![\w/-])", text), word
    for r, v in rep["first_order"].items():
        lo, hi = v["ci95"]["committed_accuracy"]
        assert f"{v['committed_accuracy']:.4f} ({v['committed_n']})" in text and f"[{lo:.3f}, {hi:.3f}]" in text, r
    for side, v in rep["second_order"].items():
        assert f"{v['predicted_suspects']}/{v['actual_suspects']}" in text, side
    dyn = rep["dynamics"]
    assert f"{dyn['volatility']:.4f} ({dyn['volatility_pairs']})" in text
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
    for word in ("correct_good", "policy", "perception", "gap", "luck"):  # a header may wrap at its space
        assert re.search(rf"(?<![\w/-]){word}(?![\w/-])", quad), word


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
    assert "\nwinners Village 2\n" in text  # named by the rule set, not {'town': 2}


def test_the_heading_is_whole_lines_at_80_columns(probed, monkeypatch) -> None:
    # piped, Rich wraps at 80 columns: the heading was one long line cut mid-phrase ("probe\nrecords")
    text = _render(probed, monkeypatch)
    rep = compute_report(probed, "default", resamples=50, seed=0).model_dump(mode="json")
    head = text.splitlines()[:3]
    assert head == [
        "2 games (method default, 50 resamples, seed 0)",
        f"winners {' '.join(head[1].split()[1:])}",
        f"probe records {rep['probe_records']}, parsed {rep['parsed']}",
    ]
    assert all(len(line) <= 80 for line in head)


def test_report_piped_starts_with_whole_lines_and_the_comparison_title_is_one_line(probed, tmp_path) -> None:
    runner = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"})
    root = probed[0].path.parent
    res = runner.invoke(app, ["report", str(root), "--resamples", "20"])
    assert res.exit_code == 0, res.output
    first = res.stdout.splitlines()[0]
    assert first == "2 games (method default, 20 resamples, seed 0)", res.stdout[:300]
    res = runner.invoke(app, ["report", str(root), str(root), "--resamples", "20"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    (title,) = [x for x in lines if "Side by side" in x]
    assert title.strip() == "Side by side (by directory)"
    assert "95% CI: bootstrap by game within each group" in lines
