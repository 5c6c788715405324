"""The headless browser our browser tests, viewer benchmark and screenshot script drive."""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium (``apt-get install chromium``); Playwright drives it, so no browser downloads."""

CHROMIUM_ARGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""Command-line switches for :data:`CHROMIUM`: headless, no sandbox (containers run as root),
and no background traffic (update checks, sync, QUIC), so a page load makes only the requests
the page itself makes."""
