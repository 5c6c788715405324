"""Named random streams derived from the game seed."""

from __future__ import annotations

import hashlib
import random

STREAMS = ("deal", "speaking_order", "tie_break", "fallback")
"""Streams the engine draws from. Agents derive their own streams with :func:`derive_seed`."""


def derive_seed(seed: int, stream: str) -> int:
    """Derive a 64-bit seed for ``stream`` from the game ``seed`` (SHA-256; stable across runs)."""
    digest = hashlib.sha256(f"mafialab:{seed}:{stream}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def stream(seed: int, name: str) -> random.Random:
    """Return a fresh ``random.Random`` for the named stream of game ``seed``."""
    return random.Random(derive_seed(seed, name))
