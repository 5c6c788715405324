"""Long commands print plain progress lines when their output is not a terminal.

Redirected to a file, ``play`` printed nothing for 15 minutes: the Rich bar is drawn only on
a terminal. The one progress helper (:func:`mafialab.cli._app.progress_bar`) now prints a
plain line on stderr at most every 5 seconds (phase, game, percent) and a last one at the
end. The clock is a fake one: nothing here waits."""

from __future__ import annotations

import asyncio
import io
import itertools
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress
from typer.testing import CliRunner

from mafialab.agents import _protocol, make_agent
from mafialab.cli import _app, app
from mafialab.cli._play import _play_many
from mafialab.engine import Decision
from mafialab.record import PriceTable
from mafialab.rules import load_rules
from tests.helpers import scripted_play


class _Clock:
    """A clock that moves only when told (seconds)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def plain(monkeypatch) -> io.StringIO:
    """stdout is a file (no bar); stderr is written into the returned buffer."""
    buf = io.StringIO()
    monkeypatch.setattr(_app, "console", Console(file=io.StringIO(), force_terminal=False, width=200))
    monkeypatch.setattr(_app, "err_console", Console(file=buf, force_terminal=False, width=200))
    return buf


def test_at_most_one_line_every_5_seconds_of_the_clock_then_a_last_line(plain: io.StringIO) -> None:
    clock = _Clock()
    with _app.progress_bar(get_time=clock) as bar:
        games = bar.add_task("games", total=4)
        phase = bar.add_task("seed 7: setup", total=None, phase=True)
        for step in range(1, 41):  # 40 updates 0.5 s apart: 20 s in all
            clock.now = 100.0 + step * 0.5
            if step % 10 == 0:
                bar.advance(games)
            bar.update(phase, description=f"seed 7: day {step // 10 + 1} (5 alive)")
        clock.now = 121.0
    lines = plain.getvalue().splitlines()
    # at 5, 10, 15 and 20 s of the clock, then the last line when the work ended
    assert lines == [
        "progress 0:00:05: games 1/4 (25 %); seed 7: day 1 (5 alive)",
        "progress 0:00:10: games 2/4 (50 %); seed 7: day 2 (5 alive)",
        "progress 0:00:15: games 3/4 (75 %); seed 7: day 3 (5 alive)",
        "progress 0:00:20: games 4/4 (100 %); seed 7: day 4 (5 alive)",
        "progress 0:00:21: games 4/4 (100 %); seed 7: day 5 (5 alive)",
    ]


def test_work_shorter_than_5_seconds_prints_no_line(plain: io.StringIO) -> None:
    clock = _Clock()
    with _app.progress_bar(get_time=clock) as bar:
        task = bar.add_task("building", total=3)
        for _ in range(3):
            clock.now += 1.0
            bar.advance(task)
    assert plain.getvalue() == ""


def test_a_count_without_total_and_a_quiet_bar(plain: io.StringIO) -> None:
    clock = _Clock()
    with _app.progress_bar(get_time=clock) as bar:
        task = bar.add_task("probes", total=None)
        clock.now += 6
        bar.advance(task, 12)
    with _app.progress_bar(get_time=clock, quiet=True) as bar:  # a person types at this terminal
        task = bar.add_task("games", total=1)
        clock.now += 60
        bar.advance(task)
    # one line: the last line is not printed again when it says what the line before said
    assert plain.getvalue().splitlines() == ["progress 0:00:06: probes 12"]


def test_the_last_line_is_printed_once(plain: io.StringIO) -> None:
    """Redirected, the last line came twice (the 5-second line, then the same line when the bar stopped)."""
    clock = _Clock()
    with _app.progress_bar(get_time=clock) as bar:
        task = bar.add_task("games", total=2)
        clock.now += 5
        bar.advance(task)
        clock.now += 5
        bar.advance(task)
    assert plain.getvalue().splitlines() == [
        "progress 0:00:05: games 1/2 (50 %)",
        "progress 0:00:10: games 2/2 (100 %)",
    ]


def test_a_count_is_not_shown_before_it_counts(plain: io.StringIO) -> None:
    """Lines read "probes; seed 1: day 1": a count shown as a bare name before its first result."""
    clock = _Clock()
    with _app.progress_bar(get_time=clock) as bar:
        probes = bar.add_task("probes", total=None)
        phase = bar.add_task("seed 1: setup", total=None, phase=True)
        clock.now += 5
        bar.update(phase, description="seed 1: day 1 (7 alive)")
        clock.now += 5
        bar.advance(probes, 3)
    assert plain.getvalue().splitlines() == [
        "progress 0:00:05: seed 1: day 1 (7 alive)",
        "progress 0:00:10: probes 3; seed 1: day 1 (7 alive)",
    ]
    plain.truncate(0)
    plain.seek(0)
    with _app.progress_bar(get_time=clock) as bar:  # only an empty count: no line at all
        task = bar.add_task("games imported", total=None)
        clock.now += 6
        bar.update(task)
    assert plain.getvalue() == ""


def test_a_heartbeat_line_after_30_seconds_without_one(plain: io.StringIO) -> None:
    """A 62-second phase printed no line: nothing advanced, so nothing asked for one."""
    clock = _Clock()
    with _app.progress_bar(get_time=clock) as bar:
        assert isinstance(bar, _app._Bar)
        bar.add_task("samples and forks", total=None)
        bar.add_task("seed 2: night 1 (7 alive)", total=None, phase=True)
        clock.now += 29
        assert not bar.heartbeat()  # not yet 30 s
        clock.now += 1
        assert bar.heartbeat()
        clock.now += 20
        assert not bar.heartbeat()  # 20 s after the heartbeat line
        clock.now += 12
        assert bar.heartbeat()
    assert plain.getvalue().splitlines() == [
        "progress 0:00:30: samples and forks (none yet); seed 2: night 1 (7 alive)",
        "progress 0:01:02: samples and forks (none yet); seed 2: night 1 (7 alive)",
    ]


def test_a_redirected_play_of_3_games_prints_progress_lines(tmp_path: Path, monkeypatch) -> None:
    ticks = iter(range(0, 10**6))
    monkeypatch.setattr(_app, "_clock", lambda: float(next(ticks)), raising=False)  # one second a look at the clock
    runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
    res = runner.invoke(app, scripted_play(tmp_path, "--seed", "5", "--games", "3"))
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("progress ")]
    assert len(lines) >= 3, res.stderr
    assert "games 0/3 (0 %)" in lines[0]
    assert any("seed " in ln and (" day " in ln or " night " in ln) for ln in lines)  # the phase of a game
    assert "games 3/3 (100 %)" in lines[-1]  # the last line: every game done
    secs = [
        sum(int(x) * f for x, f in zip(ln.split()[1].rstrip(":").split(":"), (3600, 60, 1), strict=True))
        for ln in lines
    ]
    assert all(b - a >= 5 for a, b in itertools.pairwise(secs[:-1]))  # throttled (the last line aside)
    assert "progress " not in res.stdout  # the summary on stdout stays clean


@pytest.fixture
def ticking(monkeypatch) -> None:
    """The progress clock moves one second each time it is read."""
    ticks = itertools.count()
    monkeypatch.setattr(_app, "_clock", lambda: float(next(ticks)), raising=False)


def _progress(res) -> list[str]:
    assert res.exit_code == 0, res.output
    return [ln for ln in res.stderr.splitlines() if ln.startswith("progress ")]


def test_import_report_and_export_print_progress_lines(tmp_path: Path, mafiascope_dir: Path, ticking) -> None:
    runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
    games = tmp_path / "games"
    lines = _progress(
        runner.invoke(app, ["import", "mafiascope", str(mafiascope_dir / "en_demo"), "--out", str(games)])
    )
    n = len(list(games.rglob("game.jsonl")))
    assert n >= 2 and lines and lines[-1].endswith(f"games imported {n}/{n} (100 %)")
    lines = _progress(runner.invoke(app, ["report", str(games), "--no-cache"]))
    assert lines and lines[-1].endswith(f"games: games read {n}")
    lines = _progress(runner.invoke(app, ["export", "parquet", str(games), "--out", str(tmp_path / "pq")]))
    assert lines and lines[-1].endswith(f"games read {n}/{n} (100 %)")


# ``play``'s per-game progress label names the phase being played while its decisions are asked.


class _Watching:
    """A scripted seat that notes the game's progress label each time it is asked to decide."""

    def __init__(self, inner, progress: Progress, seen: list[tuple[str, int, str]]):
        self._inner, self._progress, self._seen = inner, progress, seen
        self.label = inner.label

    def __getattr__(self, name):
        return getattr(self._inner, name)

    async def decide(self, d: Decision, view):
        labels = [t.description for t in self._progress.tasks if t.description.startswith("seed ")]
        self._seen.append((d.phase, d.round, " | ".join(labels)))
        return await self._inner.decide(d, view)


@pytest.mark.parametrize("rules_id", ["werewolf7", "mafiascope7", "arena12"])
def test_the_label_shows_the_phase_whose_decisions_are_being_asked(tmp_path: Path, monkeypatch, rules_id) -> None:
    rules = load_rules(rules_id)
    progress = Progress(console=Console(file=io.StringIO(), width=120), disable=True)
    seen: list[tuple[str, int, str]] = []
    monkeypatch.setitem(
        _protocol._FACTORIES,
        "watching",
        lambda spec, seat, rs, seed: _Watching(make_agent("scripted", seat, rs, seed), progress, seen),
    )
    with progress:
        asyncio.run(_play_many(rules, ["watching"] * rules.n_seats, [4], tmp_path, progress, 1, PriceTable()))
    assert seen and {p for p, _, _ in seen} >= {"night", "day"}
    first_phase, first_round, first_label = seen[0]
    assert (first_phase, first_round) == (("intro", 0) if rules.intro_day else ("night", 1))
    assert "setup" not in first_label  # the first decisions were shown as "setup" before
    for phase, rnd, label in seen:
        assert label.startswith(f"seed 4: {phase} {rnd} ("), (phase, rnd, label)
