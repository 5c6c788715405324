"""Headless Debian chromium for the browser tests: Playwright drives the system browser, nothing downloads."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_browser(*, module: bool = False) -> None:
    """Skip (the calling test, or the whole module with ``module=True``) without chromium or playwright."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} not found: install Debian chromium (apt-get install chromium)", allow_module_level=module
        )
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("playwright is not installed: pip install -e '.[test]'", allow_module_level=module)


@contextmanager
def launch() -> Iterator[Browser]:
    """A headless chromium, closed on leaving the block."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()
