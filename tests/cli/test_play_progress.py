"""``play``'s per-game progress label names the phase being played while its decisions are asked."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress

from mafialab.agents import _protocol, make_agent
from mafialab.cli._play import _play_many
from mafialab.engine import Decision
from mafialab.record import PriceTable
from mafialab.rules import load_rules


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
