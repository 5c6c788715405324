"""A bounded hostile-input run: the cases of issue 28 in about 20 games and a short HTTP fuzz of each server.

The benchmarks (``benchmarks/fuzz.py --games 2000``, ``benchmarks/http_fuzz.py``) run the same
generators at scale; these tests keep a small, seeded share of them in every suite run.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tracemalloc
from pathlib import Path

import pytest

from mafialab.probes import load_battery
from mafialab.rules import BUILTIN, load_rules

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fuzz
import http_fuzz


@pytest.mark.parametrize("rules", list(BUILTIN.values()), ids=lambda r: r.name)
def test_games_with_lone_surrogates_and_bare_nan_lose_nothing(rules, tmp_path: Path):
    replaced = 0
    for seed in range(7):  # 21 games over the three rule sets
        check, _ = asyncio.run(fuzz.play_one(rules, 100 + seed, tmp_path, "suspicion"))
        assert check.crashed is None, check.crashed
        assert check.problems == [], check.problems[:5]  # nothing torn or lost, every probe call recorded
        assert check.probes > 0 and check.fallbacks > 0
        calls = (tmp_path / check.game_id / "calls.jsonl").read_text(encoding="utf-8").splitlines()
        replaced += sum(json.loads(c).get("replaced_chars", 0) for c in calls)
    assert replaced > 0  # the surrogates arrived, were replaced with U+FFFD and counted


def _bomb(depth: int = 9, width: int = 10) -> str:
    """The billion-laughs pattern: each anchor lists the previous one ``width`` times."""
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, depth):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("load", [load_battery, load_rules], ids=["battery", "rules"])
def test_a_yaml_bomb_is_refused_before_it_grows(load, tmp_path: Path):
    path = tmp_path / "bomb.yaml"
    path.write_text("name: bomb\n" + _bomb(), encoding="utf-8")
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"bomb\.yaml") as err:
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "alias" in str(err.value)
    assert peak < 50 * 1024 * 1024  # a 1e9-element expansion was never built


@pytest.mark.parametrize("server", sorted(http_fuzz.SERVERS))
def test_short_http_fuzz_of_each_server(server: str):
    res = http_fuzz.run(40, seed=7, big_mb=4, servers=(server,))
    (row,) = res["servers"]
    assert row["requests"] >= 20
    assert row["first_problems"] == []
    assert not any(k.endswith(":500") or k.endswith(":None") for k in row["statuses"])
