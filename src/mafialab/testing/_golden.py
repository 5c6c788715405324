"""Golden playthroughs: one seeded scripted game per rule set, committed and diffed.

After OpenSpiel's ``integration_tests/playthroughs``: a fresh run of the same seed must match
the committed records exactly (clock and software fields aside); any difference means the
engine, a rule set or the scripted agent changed behaviour.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.record import GAME_FILE, read_records, strip_clock
from mafialab.rules import BUILTIN, BUILTIN_VERSIONS, RuleSet

GOLDEN_SEED = 1
"""Seed of every golden playthrough."""

VOLATILE = ("ts", "software")
"""Record fields left out of the comparison (wall clock, package version)."""


async def golden_records(rules: RuleSet, out: Path | None = None) -> list[dict[str, Any]]:
    """Play the golden game of ``rules`` and return its records without volatile fields.

    The game is seed :data:`GOLDEN_SEED` with the ``scripted`` agent in every seat.

    Args:
        rules: Rule set to play.
        out: Directory to write the game log under; a temporary directory when ``None``.

    Returns:
        The ``game.jsonl`` records in order, clock fields stripped and :data:`VOLATILE`
        fields removed.
    """
    if out is None:
        with tempfile.TemporaryDirectory() as tmp:
            return await golden_records(rules, Path(tmp))
    agents = [make_agent("scripted", s, rules, GOLDEN_SEED) for s in range(rules.n_seats)]
    res = await play_game(rules, agents, GOLDEN_SEED, out=out)
    if res.path is None:  # pragma: no cover - play_game always writes when out is given
        raise RuntimeError("the golden game wrote no log")
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in strip_clock(read_records(res.path / GAME_FILE))]


def read_golden(path: Path) -> list[dict[str, Any]]:
    """Read a committed golden playthrough (one JSON object a line).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        json.JSONDecodeError: a line is not JSON.
    """
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def golden_diff(expected: Sequence[dict[str, Any]], fresh: Sequence[dict[str, Any]]) -> str | None:
    """Where a fresh playthrough departs from the golden one, or ``None`` when they match.

    Returns:
        A one-line description naming the first differing record (index, kind and fields),
        or the length difference.
    """
    for i, (a, b) in enumerate(zip(expected, fresh, strict=False)):
        if a != b:
            keys = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            return f"record {i} ({a.get('kind', '?')}) differs in {', '.join(keys)}"
    if len(expected) != len(fresh):
        return f"{len(expected)} golden records, {len(fresh)} fresh"
    return None


def golden_name(rules: RuleSet) -> str:
    """File name of a rule set's golden playthrough.

    ``<name>.jsonl`` for the default version of a built-in (so the files of existing rule
    sets never move when a version is added), ``<id>.jsonl`` (``werewolf7-v2.jsonl``) otherwise.
    """
    return f"{rules.name}.jsonl" if BUILTIN.get(rules.name) == rules else f"{rules.id}.jsonl"


async def write_golden(directory: Path, rule_sets: Iterable[RuleSet] | None = None) -> list[Path]:
    """Regenerate golden playthroughs as ``<directory>/<golden_name(rules)>``.

    Args:
        directory: Where to write (created if missing).
        rule_sets: Rule sets to play; every built-in rule set version when ``None``.

    Returns:
        The files written.
    """
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for rules in BUILTIN_VERSIONS.values() if rule_sets is None else rule_sets:
        recs = await golden_records(rules)
        path = directory / golden_name(rules)
        path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs), encoding="utf-8")
        written.append(path)
    return written
