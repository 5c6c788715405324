"""Fixtures shared by the beliefshift tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import freeze_scripted_bench


@pytest.fixture(scope="package")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen benchmark of two native scripted werewolf7 games (rules annotator)."""
    return freeze_scripted_bench(tmp_path_factory.mktemp("bs"), games=2)
