"""Fixtures shared by the viewer tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import GAME_FILE
from tests.browser import launch, require_browser


@pytest.fixture(scope="package")
def game_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One native scripted werewolf7 game (no probes)."""
    out = tmp_path_factory.mktemp("g")
    res = CliRunner().invoke(app, ["play", "-r", "werewolf7", "-a", "scripted", "-s", "3", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return next(out.glob(f"*/{GAME_FILE}")).parent


@pytest.fixture(scope="module")
def site(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The static viewer built from the module's ``logs`` fixture (a module may define its own ``site``)."""
    from mafialab.viewer import build_site

    out = tmp_path_factory.mktemp("site")
    build_site(logs, out)
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless chromium for the module's browser tests (skips without chromium or playwright)."""
    require_browser()
    with launch() as b:
        yield b
