"""Sharing backends between agents, and limiting calls in flight per backend."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from mafialab.models._protocol import ChatModel, get_model


class InFlightLimit:
    """At most ``limit`` calls in flight, per event loop (an ``asyncio.Semaphore`` per loop).

    A backend object may outlive one ``asyncio.run`` (tests, notebooks); a semaphore is bound
    to the loop that first waits on it, so one is kept per running loop.

    Args:
        limit: Calls allowed in flight at once (>= 1).

    Raises:
        ValueError: If ``limit`` < 1.
    """

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError(f"max_concurrency: must be >= 1, got {limit}")
        self.limit = limit
        self._sems: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(self) -> asyncio.Semaphore:
        """The semaphore of the running loop."""
        loop = asyncio.get_running_loop()
        sem = self._sems.get(loop)
        if sem is None:
            sem = self._sems[loop] = asyncio.Semaphore(self.limit)
        return sem


class ModelPool:
    """Backends shared by every agent that names the same model string and options.

    Seven seats played by ``local/smollm2`` load the weights once and share one lock; seven
    seats played by ``openai/x`` share one HTTP client and one in-flight limit.
    """

    def __init__(self) -> None:
        self._models: dict[str, ChatModel] = {}

    def get(self, spec: str, **options: Any) -> ChatModel:
        """The shared backend for ``spec`` with ``options`` (built on first use).

        Raises:
            ModelSpecError: Malformed model string, unknown provider or option.
            ImportError: The backend's optional dependency is missing.
        """
        key = spec + "|" + repr(sorted(options.items()))
        model = self._models.get(key)
        if model is None:
            model = self._models[key] = get_model(spec, **options)
        return model

    def clear(self) -> None:
        """Forget every shared backend (they are garbage-collected when unused)."""
        self._models.clear()


DEFAULT_POOL = ModelPool()
"""The pool agents use unless given another."""
