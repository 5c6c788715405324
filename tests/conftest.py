"""Shared test configuration: --runslow, the shared data directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MAFIALAB_SHARED", ROOT.parent / "shared"))
MAFIASCOPE = SHARED / "data" / "mafiascope"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: needs --runslow")
    for item in items:
        if "slow" in item.keywords and "smoke" not in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def mafiascope_dir() -> Path:
    """The shared MafiaScope recordings (``../shared/data/mafiascope``)."""
    if not MAFIASCOPE.is_dir():
        pytest.fail(f"shared data not found at {MAFIASCOPE}; set MAFIALAB_SHARED")
    return MAFIASCOPE
