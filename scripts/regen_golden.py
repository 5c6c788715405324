"""Regenerate the golden playthroughs in tests/golden/ (one seeded scripted game per rule set version).

Usage: python scripts/regen_golden.py
Review the diff before committing: a change means the engine, a rule set or the scripted
agent changed behaviour.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.record import GAME_FILE, read_records, strip_clock
from mafialab.rules import BUILTIN, BUILTIN_VERSIONS, RuleSet

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden"
SEED = 1
VOLATILE = ("ts", "software")


async def golden_records(rules: RuleSet, out: Path) -> list[dict]:
    """Play the golden game of ``rules`` into ``out`` and return its records without volatile fields."""
    agents = [make_agent("scripted", s, rules, SEED) for s in range(rules.n_seats)]
    res = await play_game(rules, agents, SEED, out=out)
    assert res.path is not None
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in strip_clock(read_records(res.path / GAME_FILE))]


def golden_name(rules: RuleSet) -> str:
    """File of a version's golden game: ``<name>.jsonl`` for the default version, else ``<id>.jsonl``."""
    return f"{rules.name}.jsonl" if BUILTIN.get(rules.name) == rules else f"{rules.id}.jsonl"


def main() -> None:
    import json

    GOLDEN.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    try:
        for rules in BUILTIN_VERSIONS.values():
            recs = asyncio.run(golden_records(rules, tmp))
            path = GOLDEN / golden_name(rules)
            path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
            print(f"wrote {path} ({len(recs)} records)")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
