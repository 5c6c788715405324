"""Keep a long driver's start-up heap out of the garbage collector's full passes."""

from __future__ import annotations

import gc
import importlib
import logging
from collections.abc import Sequence

log = logging.getLogger(__name__)

CLIENT_MODULES = ("openai",)
"""Modules imported before the heap is frozen: the model client every ``openai/...`` backend
(and the embedder) uses, so its large module heap is frozen even when a command builds its
backends later (a season's games, a fork's branches)."""

_FROZEN = False


def freeze_startup_heap(modules: Sequence[str] = CLIENT_MODULES) -> bool:
    """Move what start-up built into the collector's permanent generation (once per process).

    By the time a long command (``play``, ``season run``/``resume``, ``beliefshift run`` and
    ``annotate``, ``fork run`` and ``sweep``, ``bifurcate run``, ``judge``, ``retest``)
    starts its work, the process holds a large, long-lived heap: the modules of the model
    client, pydantic models, prompt packs, the rule set. Every full (generation 2)
    collection walks all of it, stalling the event loop (game calls and probes alike) for
    tens to hundreds of milliseconds at a time (``benchmarks/gc_pauses.py`` measures it).
    This imports ``modules`` (those that are installed), runs a young-generation collection
    and calls :func:`gc.freeze`; objects created later are collected as before. Frozen
    objects are never freed, so call it once start-up is done, not in a loop; later calls
    do nothing.

    Args:
        modules: Modules to import first (a missing one is skipped).

    Returns:
        ``True`` if this call froze the heap, ``False`` if an earlier call had.
    """
    global _FROZEN
    if _FROZEN:
        return False
    _FROZEN = True
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            log.debug("freeze_startup_heap: %s is not installed; not imported", name)
    gc.collect(1)
    gc.freeze()
    return True
