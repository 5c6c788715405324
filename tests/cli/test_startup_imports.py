"""A command loads only what it uses: ``mafialab --help`` no library package, ``play`` no analysis stack.

Each check runs a fresh interpreter and reads its ``sys.modules``: for ``--help`` when it
exits, for ``play`` at its first connection to the model server (an audit hook on
``socket.connect``), so what loads after the first model call (the metrics of the closing
summary) does not count. Timings are in ``benchmarks/startup.py``, not here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "100"}


def _loaded(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules} & set(packages))


@pytest.mark.parametrize(
    "package", ["mafialab.analysis", "mafialab.beliefshift", "mafialab.arena", "mafialab.counterfactual"]
)
def test_library_packages_load_scipy_and_statsmodels_only_when_a_statistic_needs_them(package: str) -> None:
    code = f"import sys, {package}; print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    proc = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert _loaded(proc.stdout.split(), ("scipy", "statsmodels", "pandas", "polars", "pyarrow")) == []
