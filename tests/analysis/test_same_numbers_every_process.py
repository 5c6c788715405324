"""A metric's value does not depend on the process computing it (string hashing changes set order).

``report --ray`` pools summaries computed in other processes, and two runs of ``report`` are
two processes: both must give the same bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
from mafialab.analysis._dynamics import l1_common_support
names = [f"P{i}" for i in range(12)]
a = {n: (i + 1) / 7.3 for i, n in enumerate(names)}
b = {n: (12 - i) / 3.1 for i, n in enumerate(reversed(names))}
print(repr(l1_common_support(a, b)))
"""


def test_suspicion_distance_is_the_same_under_every_hash_seed() -> None:
    got = set()
    for seed in range(3):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
        got.add(out.stdout.strip())
    assert len(got) == 1, got
