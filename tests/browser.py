"""Headless Debian chromium for the browser tests: Playwright drives the system browser, nothing downloads."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

from mafialab.testing import CHROMIUM, CHROMIUM_ARGS


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
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        try:
            yield b
        finally:
            b.close()


@contextmanager
def page_with_errors(browser: Browser) -> Iterator[tuple[Page, list[str]]]:
    """A 1400×1000 page of a fresh context and the console errors, warnings and page errors it logs."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    try:
        yield pg, errors
    finally:
        ctx.close()
