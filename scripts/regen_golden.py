"""Regenerate the golden playthroughs in tests/golden/ (one seeded scripted game per rule set).

Usage: python scripts/regen_golden.py
Review the diff before committing: a change means the engine, a rule set or the scripted
agent changed behaviour. The playthroughs themselves come from :mod:`mafialab.testing`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from mafialab.testing import write_golden

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden"


def main() -> None:
    for path in asyncio.run(write_golden(GOLDEN)):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
