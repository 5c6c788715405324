"""The ``bus`` backend: a seat's chat calls served by a worker through a model-bus hub.

The hub (``mafialab bus serve``, :mod:`mafialab.remote`) speaks MafiaScope's bus protocol:
the engine side posts ``{model, messages, max_tokens, kind, timeout}`` to ``POST /generate``
and waits for ``{"text"}`` (with ``replaced_chars`` when the hub replaced characters UTF-8
cannot encode: added to the call's count); a worker anywhere long-polls the hub for jobs of its routing
keys. A worker gets chat messages and returns free text, so a JSON schema travels in the
prompt (the ``prompt`` structured-output dialect) and the agent reads the move leniently.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
import weakref
from typing import Any

import httpx

from mafialab._json import loads_finite
from mafialab._words import noun_for
from mafialab.models._dialects import get_dialect
from mafialab.models._pool import InFlightLimit, call_priority
from mafialab.models._protocol import ChatRequest, ChatResponse, ModelSpecError, estimate_tokens

BUS_OPTIONS = ("base_url", "token_env", "timeout", "max_tokens", "context_window", "max_concurrency", "http_client")
"""Options of a ``bus/<routing-key>?...`` model string."""

DEFAULT_BUS_TIMEOUT_S = 120.0
"""Seconds the hub waits for a worker's answer before the call fails (the seat then retries
or falls back)."""


class BusModel:
    """A chat model served through a bus hub under one routing key.

    Args:
        key: The routing key (the part after ``bus/``); workers register for it (or ``*``).
        base_url: The hub's URL, e.g. ``http://127.0.0.1:8766``.
        token_env: Environment variable holding the hub's shared bearer token (none: no
            ``Authorization`` header). The token is never logged or recorded.
        timeout: Seconds the hub waits for a worker (> 0); the HTTP call waits 5 s longer.
        max_tokens: Default generation cap for requests that give none.
        context_window: Context size in tokens, if known (used to shorten prompts).
        max_concurrency: Calls in flight at once (>= 1).
        http_client: An ``httpx.AsyncClient`` to use (tests); default one per call.

    Raises:
        ModelSpecError: Missing ``base_url``, a bad ``timeout``, or a ``token_env`` that names
            an unset variable (the message names the option).
    """

    calls_network = True
    counts_tokens = False

    def __init__(
        self,
        key: str,
        *,
        base_url: str | None = None,
        token_env: str | None = None,
        timeout: float = DEFAULT_BUS_TIMEOUT_S,
        max_tokens: int | None = None,
        context_window: int | None = None,
        max_concurrency: int = 64,
        http_client: httpx.AsyncClient | None = None,
    ):
        if not base_url or not isinstance(base_url, str):
            raise ModelSpecError(f"base_url: the bus/{key} model needs the hub's URL (bus/{key}?base_url=http://...)")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < math.inf:
            raise ModelSpecError(f"timeout: expected seconds > 0, got {timeout!r}")
        self.key = key
        self.name = f"bus/{key}"
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.max_tokens = max_tokens
        self.context_window = context_window
        # one limit per hub and routing key: cluster-wide under Ray (cluster_limits)
        self._limit = InFlightLimit(int(max_concurrency), key=f"bus|{self.base_url}|{key}")
        self.max_concurrency = self._limit.limit
        self._client = http_client
        # one connection pool per event loop (a client is bound to the loop it first ran in)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )
        # credentials last: a bad option is reported as such, not hidden behind a missing token
        self._token: str | None = None
        if token_env:
            token = os.environ.get(str(token_env))
            if not token:
                raise ModelSpecError(f"token_env: environment variable {token_env} is not set")
            self._token = token

    def __repr__(self) -> str:  # never shows the token
        return f"BusModel({self.key!r}, base_url={self.base_url!r})"

    def count_tokens(self, text: str) -> int:
        """Estimated tokens of ``text`` (the worker's tokenizer is unknown here)."""
        return estimate_tokens(text)

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The engine-side body for ``request``: the schema written into the prompt, kind marked.

        ``kind`` is ``"probe"`` for probe calls (``purpose == "probe"``), else ``"generate"``.
        """
        body: dict[str, Any] = {"messages": [m.model_dump() for m in request.messages]}
        if request.json_schema is not None:
            body = get_dialect("prompt").apply(body, request.json_schema)
        return {
            "model": self.key,
            "messages": body["messages"],
            "max_tokens": request.max_tokens or self.max_tokens,
            "kind": "probe" if request.purpose == "probe" else "generate",
            "timeout": self.timeout,
        }

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Post the call to the hub and wait for a worker's text (errors returned, not raised)."""
        t0 = time.perf_counter()
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        async with self._limit(call_priority(request)):
            try:
                r = await self._post(self._client or self._loop_client(), request, headers)
            except httpx.HTTPError as err:
                return self._error(f"bus hub {self.base_url}: {type(err).__name__}: {err}", "transport", t0)
        if r.status_code != 200:
            try:
                detail = r.json().get("detail", r.text)
            except ValueError:
                detail = r.text
            kind = "rate_limit" if r.status_code == 429 else "transport"
            return self._error(f"bus hub HTTP {r.status_code}: {str(detail)[:300]}", kind, t0)
        try:
            answer = r.json()
            text = answer["text"]
        except (ValueError, KeyError, TypeError):
            return self._error("bus hub: answer without a text field", "transport", t0)
        hub_replaced = answer.get("replaced_chars", 0)  # the hub made the worker's text valid UTF-8
        if not isinstance(hub_replaced, int) or isinstance(hub_replaced, bool) or hub_replaced < 0:
            hub_replaced = 0
        if not isinstance(text, str):
            return self._error("bus hub: text is not a string", "transport", t0)
        if not text.strip():
            return self._error("bus worker returned empty text", "empty", t0)
        parsed = None
        if request.json_schema is not None:
            try:
                parsed = loads_finite(text)
            except (ValueError, RecursionError):
                parsed = None  # left to the agent's lenient reading
        return ChatResponse(
            text=text, parsed=parsed, latency_s=time.perf_counter() - t0, model=self.name, replaced_chars=hub_replaced
        )

    def _loop_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = httpx.AsyncClient(timeout=self.timeout + 5.0)
        return client

    async def _post(self, client: httpx.AsyncClient, request: ChatRequest, headers: dict[str, str]) -> httpx.Response:
        return await client.post(
            f"{self.base_url}/generate",
            json=self.payload(request),
            headers=headers,
            timeout=self.timeout + 5.0,
        )

    def _error(self, error: str, kind: str, t0: float) -> ChatResponse:
        return ChatResponse(error=error, error_kind=kind, latency_s=time.perf_counter() - t0, model=self.name)


def bus_factory(model: str, **options: Any) -> BusModel:
    """Factory for ``bus/<routing-key>?base_url=...&token_env=...`` model strings.

    Raises:
        ModelSpecError: An unknown option (the message lists the known ones), or a bad value.
    """
    unknown = sorted(set(options) - set(BUS_OPTIONS))
    if unknown:
        raise ModelSpecError(
            f"bus/{model}: unknown {noun_for(len(unknown), 'option')} {unknown} (known: {', '.join(BUS_OPTIONS)})"
        )
    return BusModel(model, **options)
