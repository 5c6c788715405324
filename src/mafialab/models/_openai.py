"""The ``openai`` backend: any OpenAI-compatible server through the official async SDK."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import time
import weakref
from typing import Any, Literal

from mafialab.models._json import parse_json
from mafialab.models._pool import InFlightLimit
from mafialab.models._protocol import ChatRequest, ChatResponse, ModelSpecError, Usage, estimate_tokens, require

log = logging.getLogger(__name__)

_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)

PROMPT_SCHEMA_NOTE = "Reply with only a JSON object (no prose, no code fence) that follows this JSON schema:\n{schema}"
"""Appended to the last user message when the server does not accept ``response_format``."""

_OPTIONS = {
    "base_url",
    "api_key_env",
    "max_tokens",
    "temperature",
    "extra",
    "max_concurrency",
    "timeout",
    "context_window",
    "json_mode",
    "rate_limit_retries",
    "backoff_s",
    "http_client",
}


class OpenAIModel:
    """A model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    JSON schemas are sent as ``response_format={"type": "json_schema", ...}``; if the server
    rejects that (HTTP 400/422), the schema is put into the prompt instead and the backend
    remembers to do so for later calls (``json_mode="prompt"``). Reasoning text returned
    apart (``reasoning_content`` or ``reasoning`` fields, or a leading ``<think>`` block) is
    kept in :attr:`ChatResponse.reasoning`, never in ``text``. A rate limit (HTTP 429) is
    retried with exponential backoff (``Retry-After`` honoured). The API key is read from the
    environment variable ``api_key_env`` and never logged or recorded.

    Args:
        model: Model name sent to the server (``gpt-4o-mini``, ``Qwen/Qwen3-8B``).
        base_url: Server URL ending in ``/v1`` (default: the SDK's, i.e. OpenAI).
        api_key_env: Environment variable holding the API key (default ``OPENAI_API_KEY``);
            for a custom ``base_url`` a missing key is replaced by ``"EMPTY"``.
        max_tokens: Default generation cap for requests that give none.
        temperature: Default temperature for requests that give none.
        extra: Extra request fields sent as-is (``{"reasoning_effort": "low"}``,
            ``{"chat_template_kwargs": {"enable_thinking": False}}``).
        max_concurrency: Calls in flight at once (>= 1).
        timeout: Seconds before a call fails as a transport error.
        context_window: Context size in tokens, if known (used to shorten prompts).
        json_mode: ``auto`` (try ``response_format``, fall back to the prompt), ``schema`` or
            ``prompt``.
        rate_limit_retries: Retries of a 429 answer before giving up.
        backoff_s: First backoff in seconds (doubled on each retry).
        http_client: An ``httpx.AsyncClient`` to use (tests); default the SDK's own.

    Raises:
        ModelSpecError: Missing API key for the default (remote) endpoint, or a bad option.
        ImportError: The ``openai`` package is not installed.
    """

    calls_network = True
    counts_tokens = False

    def count_tokens(self, text: str) -> int:
        """Estimated tokens of ``text`` (the server's tokenizer is not reachable offline)."""
        return estimate_tokens(text)

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra: dict[str, Any] | None = None,
        max_concurrency: int = 16,
        timeout: float = 120.0,
        context_window: int | None = None,
        json_mode: Literal["auto", "schema", "prompt"] = "auto",
        rate_limit_retries: int = 5,
        backoff_s: float = 1.0,
        http_client: Any = None,
    ):
        self._openai = require("openai", "openai", "openai")
        self.model = model
        self.name = f"openai/{model}"
        self.base_url = base_url
        self.context_window = context_window
        key = os.environ.get(api_key_env)
        if not key:
            if base_url is None:
                raise ModelSpecError(f"api_key_env: environment variable {api_key_env} is not set")
            key = "EMPTY"
        self._key = key
        if json_mode not in ("auto", "schema", "prompt"):
            raise ModelSpecError(f"json_mode: expected auto, schema or prompt, got {json_mode!r}")
        self.json_mode = json_mode
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.extra = dict(extra or {})
        self.timeout = float(timeout)
        self.rate_limit_retries = int(rate_limit_retries)
        self.backoff_s = float(backoff_s)
        self._limit = InFlightLimit(int(max_concurrency))
        self._http_client = http_client
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIModel({self.model!r}, base_url={self.base_url!r})"

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._openai.AsyncOpenAI(
                api_key=self._key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,
                http_client=self._http_client,
            )
            self._clients[loop] = client
        return client

    def _payload(self, request: ChatRequest, schema_mode: str) -> dict[str, Any]:
        messages = [m.model_dump() for m in request.messages]
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        max_tokens = request.max_tokens or self.max_tokens
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        temperature = request.temperature if request.temperature is not None else self.temperature
        if temperature is not None:
            body["temperature"] = temperature
        if request.seed is not None:
            body["seed"] = request.seed
        if request.json_schema is not None:
            if schema_mode == "schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": request.json_schema, "strict": True},
                }
            else:
                note = PROMPT_SCHEMA_NOTE.format(schema=json.dumps(request.json_schema, ensure_ascii=False))
                last = next(i for i in range(len(messages) - 1, -1, -1) if messages[i]["role"] != "assistant")
                messages[last] = {**messages[last], "content": messages[last]["content"] + "\n\n" + note}
        if self.extra:
            body["extra_body"] = self.extra
        return body

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send one request; errors come back in :attr:`ChatResponse.error`, never raised."""
        oa = self._openai
        t0 = time.perf_counter()
        schema_mode = "prompt" if self.json_mode == "prompt" else "schema"
        attempt = 0
        async with self._limit():
            while True:
                try:
                    completion = await self._client().chat.completions.create(**self._payload(request, schema_mode))
                except oa.RateLimitError as err:
                    if attempt >= self.rate_limit_retries:
                        return self._error(f"rate limited (HTTP 429) after {attempt} retries", "rate_limit", t0)
                    await asyncio.sleep(self._retry_after(err, attempt))
                    attempt += 1
                    continue
                except (oa.BadRequestError, oa.UnprocessableEntityError) as err:
                    if request.json_schema is not None and schema_mode == "schema" and self.json_mode == "auto":
                        log.info(
                            "%s: server rejected response_format (%s); schema goes into the prompt", self.name, err
                        )
                        schema_mode = "prompt"
                        self.json_mode = "prompt"
                        continue
                    return self._error(f"HTTP {err.status_code}: {_message(err)}", "http", t0)
                except oa.APIStatusError as err:
                    return self._error(f"HTTP {err.status_code}: {_message(err)}", "http", t0)
                except (oa.APIConnectionError, oa.APITimeoutError) as err:
                    return self._error(f"{type(err).__name__}: {err}", "transport", t0)
                except oa.OpenAIError as err:  # response validation and the like
                    return self._error(f"{type(err).__name__}: {err}", "transport", t0)
                return self._response(completion, request, t0)

    def _retry_after(self, err: Any, attempt: int) -> float:
        try:
            header = err.response.headers.get("retry-after")
            if header is not None:
                return min(60.0, float(header))
        except (AttributeError, ValueError):
            pass
        return self.backoff_s * (2**attempt)

    def _error(self, error: str, kind: str, t0: float) -> ChatResponse:
        return ChatResponse(error=error, error_kind=kind, latency_s=time.perf_counter() - t0, model=self.name)

    def _response(self, completion: Any, request: ChatRequest, t0: float) -> ChatResponse:
        latency = time.perf_counter() - t0
        if not completion.choices:
            return ChatResponse(
                error="no choices in the answer", error_kind="empty", latency_s=latency, model=self.name
            )
        choice = completion.choices[0]
        msg = choice.message
        text = msg.content or ""
        extra = msg.model_extra or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        m = _THINK.match(text)
        if m:
            reasoning = (reasoning + "\n" if reasoning else "") + m.group(1).strip()
            text = text[m.end() :]
        usage = Usage()
        if completion.usage is not None:
            details = getattr(completion.usage, "prompt_tokens_details", None)
            usage = Usage(
                prompt_tokens=completion.usage.prompt_tokens or 0,
                completion_tokens=completion.usage.completion_tokens or 0,
                cached_tokens=getattr(details, "cached_tokens", None) if details is not None else None,
            )
        resp = ChatResponse(
            text=text,
            reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
            usage=usage,
            latency_s=latency,
            model=self.name,
        )
        if not text.strip():
            return resp.model_copy(update={"error": "empty answer", "error_kind": "empty"})
        if request.json_schema is not None:
            parsed, _ = parse_json(text)
            if parsed is None:
                kind = "length" if choice.finish_reason == "length" else "schema"
                return resp.model_copy(update={"error": f"answer is not JSON ({kind})", "error_kind": kind})
            resp = resp.model_copy(update={"parsed": parsed})
        return resp


def _message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and "message" in inner:
            return str(inner["message"])[:300]
    return str(getattr(err, "message", err))[:300]


def openai_factory(model: str, **options: Any) -> OpenAIModel:
    """Factory for ``openai/<model>`` model strings (options: see :class:`OpenAIModel`).

    Raises:
        ModelSpecError: An unknown option (the message names it) or a missing API key.
    """
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ModelSpecError(f"openai: unknown option {unknown[0]!r} (known: {', '.join(sorted(_OPTIONS))})")
    return OpenAIModel(model, **options)
