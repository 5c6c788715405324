"""The ``openai`` backend: any OpenAI-compatible server through the official async SDK."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
import weakref
from collections.abc import AsyncGenerator
from typing import Any

from mafialab._jsonrepair import parse_json
from mafialab.models._dialects import (
    DIALECT_NAMES,
    DIALECTS,
    DialectChoice,
    answer_problem,
    get_dialect,
    next_dialect,
    probe_request,
)
from mafialab.models._pool import DEFAULT_OPENAI_CONCURRENCY, InFlightLimit, call_priority
from mafialab.models._protocol import (
    ChatRequest,
    ChatResponse,
    ModelSpecError,
    Usage,
    concurrent_n,
    estimate_tokens,
    require,
    sample_seed,
)
from mafialab.models._scoring import (
    TOP_LOGPROBS_MAX,
    ChoiceScores,
    echo_logprob,
    plain_transcript,
    top_logprob_scores,
)

log = logging.getLogger(__name__)

_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)

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
    "max_n",
    "scoring",
}

SCORING_MODES = ("completions", "top_logprobs", "none")
"""How the ``openai`` backend scores given answers (``logprob`` probes): ``/v1/completions``
with ``echo`` and ``logprobs`` (vLLM, SGLang, llama-cpp-python's server), a chat answer's
first-token ``top_logprobs`` (single-token candidates only), or not at all."""


def _default_http_client(openai: Any, timeout: float) -> Any:
    """The SDK's aiohttp-based client (one per event loop), or ``None`` (the SDK's httpx client).

    ``openai.DefaultAioHttpClient`` is the SDK's documented transport for many concurrent
    calls; it needs the ``aiohttp`` extra of ``openai`` (the class raises ``RuntimeError``
    without it; SDKs before 1.87 lack it).
    """
    factory = getattr(openai, "DefaultAioHttpClient", None)
    if factory is None:
        return None
    try:
        return factory(timeout=timeout)
    except (RuntimeError, ImportError):
        return None


async def _close_at_loop_end(client: Any) -> AsyncGenerator[None, None]:
    """Yield once, then close ``client`` when the loop closes this generator (its shutdown)."""
    try:
        yield
    finally:
        await client.close()


def _transport_error(err: Exception, openai: Any) -> str:
    """``"<SDK error class>: <message>"`` of a call that got no HTTP answer.

    The aiohttp transport reports every lost connection (refused, unreachable, closed by
    the server) as a connect timeout (its exception map prefers ``ConnectTimeout`` to
    ``ConnectError``); such an error is named as the httpx transport names it
    (``APIConnectionError: Connection error.``), so the error does not depend on the
    transport. Real timeouts stay ``APITimeoutError``.
    """
    cause = err.__cause__.__cause__ if err.__cause__ is not None else None
    from_aiohttp = type(cause).__module__.startswith("aiohttp")
    if isinstance(err, openai.APITimeoutError) and from_aiohttp and not isinstance(cause, TimeoutError):
        return "APIConnectionError: Connection error."
    return f"{type(err).__name__}: {err}"


class OpenAIModel:
    """A model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    JSON schemas travel in a structured-output *dialect* (:data:`~mafialab.models._dialects.DIALECTS`:
    ``json_schema``, ``json_object``, ``structured_outputs``, ``guided_json``, ``format``,
    ``prompt``). With ``json_mode="auto"`` the preflight (:meth:`negotiate`) tries them in
    that order with one tiny game-shaped request each and keeps the first that returns
    schema-valid JSON; a later call whose error names the dialect's field (HTTP 4xx/5xx,
    e.g. ``response_format``) moves to the next dialect once and is retried. Reasoning text
    returned apart (``reasoning_content`` or ``reasoning`` fields, or a leading ``<think>``
    block) is kept in :attr:`ChatResponse.reasoning`, never in ``text``. A rate limit (HTTP
    429) is retried with exponential backoff (``Retry-After`` honoured). The API key is read
    from the environment variable ``api_key_env`` and never logged or recorded.

    Args:
        model: Model name sent to the server (``gpt-4o-mini``, ``Qwen/Qwen3-8B``).
        base_url: Server URL ending in ``/v1`` (default: the SDK's, i.e. OpenAI).
        api_key_env: Environment variable holding the API key (default ``OPENAI_API_KEY``);
            for a custom ``base_url`` a missing key is replaced by ``"EMPTY"``.
        max_tokens: Default generation cap for requests that give none.
        temperature: Default temperature for requests that give none.
        extra: Extra request fields sent as-is (``{"reasoning_effort": "low"}``,
            ``{"chat_template_kwargs": {"enable_thinking": False}}``).
        max_concurrency: Calls in flight at once (>= 1; default
            :data:`DEFAULT_OPENAI_CONCURRENCY`, sized for a batching server such as vLLM or
            SGLang). Waiting calls are admitted game calls first, probe calls after
            (:class:`~mafialab.models.InFlightLimit`).
        timeout: Seconds before a call fails as a transport error.
        context_window: Context size in tokens, if known (used to shorten prompts).
        json_mode: ``auto`` (probe at preflight, switch on a dialect error) or a dialect
            name (``json_schema``, ``json_object``, ``structured_outputs``, ``guided_json``,
            ``format``, ``prompt``; ``schema`` means ``json_schema``), used as given.
        rate_limit_retries: Retries of a 429 answer before giving up.
        backoff_s: First backoff in seconds (doubled on each retry).
        http_client: An ``httpx.AsyncClient`` to use (tests); default the SDK's aiohttp
            transport (``openai.DefaultAioHttpClient``, the SDK's ``aiohttp`` extra) where it is
            installed, else the SDK's own httpx client. With a few dozen calls in flight the
            aiohttp transport spends about a quarter less CPU per call than httpx's connection
            pool (``benchmarks/throughput.py``).
        max_n: Answers one request may ask for with the server's ``n`` (:meth:`chat_n`,
            resamples); ``1`` never sends ``n``.
        scoring: How :meth:`score_choices` reads log-probabilities (``logprob`` probes):
            ``completions`` (default; ``POST /v1/completions`` with ``echo`` and
            ``logprobs``, one request per candidate), ``top_logprobs`` (a chat server's
            first-token alternatives, at most 20: only single-token candidates) or ``none``
            (a server that cannot score; a ``logprob`` battery is refused before the game).

    Attributes:
        max_concurrency: The in-flight limit in use.
        dialect: The dialect the next call uses (for ``auto``: ``json_schema`` until the
            preflight or a dialect error says otherwise).
        choice: The preflight's :class:`DialectChoice`, once :meth:`negotiate` ran.
        n_supported: ``False`` once the server refused ``n > 1`` or answered it with one
            choice (llama.cpp's server ignores ``n``): later :meth:`chat_n` calls are
            concurrent single calls. ``None`` until a request with ``n > 1`` was answered.

    Raises:
        ModelSpecError: Missing API key for the default (remote) endpoint, or a bad option
            (an unknown ``json_mode`` is named with the known ones).
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
        max_concurrency: int = DEFAULT_OPENAI_CONCURRENCY,
        timeout: float = 120.0,
        context_window: int | None = None,
        json_mode: str = "auto",
        rate_limit_retries: int = 5,
        backoff_s: float = 1.0,
        http_client: Any = None,
        max_n: int = 16,
        scoring: str = "completions",
    ):
        self._openai = require("openai", "openai", "openai")
        self.model = model
        self.name = f"openai/{model}"
        self.base_url = base_url
        self.context_window = context_window
        self.json_mode = "auto" if json_mode == "auto" else get_dialect(json_mode).name
        self.dialect = DIALECTS[0].name if self.json_mode == "auto" else self.json_mode
        self.choice: DialectChoice | None = None
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.extra = dict(extra or {})
        self.timeout = float(timeout)
        self.rate_limit_retries = int(rate_limit_retries)
        self.backoff_s = float(backoff_s)
        if int(max_n) < 1:
            raise ModelSpecError(f"max_n: must be >= 1, got {max_n}")
        self.max_n = int(max_n)
        if scoring not in SCORING_MODES:
            raise ModelSpecError(f"scoring: expected one of {', '.join(SCORING_MODES)}, got {scoring!r}")
        self.scoring = scoring
        self.scoring_refusal = (
            f"{self.name} was configured with scoring=none (the server gives no log-probabilities)"
            if scoring == "none"
            else None
        )
        self.n_supported: bool | None = None
        # one limit per server and model: cluster-wide under Ray (cluster_limits)
        self._limit = InFlightLimit(int(max_concurrency), key=f"openai|{base_url or 'api.openai.com'}|{model}")
        self.max_concurrency = self._limit.limit
        self._negotiating = InFlightLimit(1)
        self._http_client = http_client
        # per event loop: its SDK client, and the async generator that closes it (or None)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )
        # credentials last: a bad option is reported as such, not hidden behind a missing key
        key = os.environ.get(api_key_env)
        if not key:
            if base_url is None:
                raise ModelSpecError(f"api_key_env: environment variable {api_key_env} is not set")
            key = "EMPTY"
        self._key = key

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIModel({self.model!r}, base_url={self.base_url!r})"

    async def _client(self) -> Any:
        """The SDK client of the running event loop (made at its first call there).

        A client made here with the SDK's aiohttp transport is closed when its loop shuts down
        (``asyncio.run`` and pytest-asyncio close a loop's async generators first): a
        suspended async generator holds it and closes it in its ``finally``, so no aiohttp
        session is left unclosed (aiohttp reports one as an error when it is collected).
        """
        loop = asyncio.get_running_loop()
        held = self._clients.get(loop)
        if held is None:
            own = None if self._http_client is not None else _default_http_client(self._openai, self.timeout)
            client = self._openai.AsyncOpenAI(
                api_key=self._key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,
                http_client=self._http_client or own,
            )
            closer = _close_at_loop_end(client) if own is not None else None
            held = self._clients[loop] = (client, closer)
            if closer is not None:
                await closer.asend(None)  # first iterated here: the loop closes it at shutdown
        return held[0]

    async def _create(self, payload: dict[str, Any]) -> Any:
        """``POST /chat/completions`` with ``payload`` as the JSON body (``extra_body`` merged in).

        Uses the SDK's documented low-level ``client.post`` instead of
        ``chat.completions.create``: the latter walks every message of the request to apply
        its type annotations (about 5 ms of CPU per call on a probed game's long prompts,
        which delays the game's own calls), work a plain JSON body does not need. Errors
        (``RateLimitError``, ``APIStatusError`` …) are the SDK's, as with ``create``; the
        result is the answer's JSON as the server sent it (``cast_to=object``: the SDK's
        ``ChatCompletion`` models cost 0.1-0.3 ms of CPU per call to build, and
        :meth:`_responses` reads four fields of it).
        """
        body = dict(payload)
        extra = body.pop("extra_body", None)
        if extra:
            body.update(extra)  # as the SDK merges extra_body: its fields win
        return await (await self._client()).post("/chat/completions", body=body, cast_to=object)

    async def score_choices(
        self, request: ChatRequest, candidates: list[str], first_token: bool = False
    ) -> ChoiceScores:
        """Log-probability of each candidate as the answer after ``request.messages``.

        ``scoring="completions"``: one ``POST /completions`` per candidate (concurrently) with
        the prompt :func:`~mafialab.models._scoring.plain_transcript` of the messages, a
        space and the candidate, ``echo: true``, ``logprobs: 1``, ``max_tokens: 1``,
        ``temperature: 0``; the candidate's score is the sum of the echoed prompt tokens'
        ``token_logprobs`` after the transcript (:func:`~mafialab.models._scoring.echo_logprob`).
        ``scoring="top_logprobs"``: one chat request (``logprobs: true``, ``top_logprobs:
        20``, ``max_tokens: 1``); every candidate must be one of the first token's
        alternatives (:func:`~mafialab.models._scoring.top_logprob_scores`), else the
        answer is an error naming the first one missing.

        Returns:
            The scores, or ``error`` set (never raised).
        """
        t0 = time.perf_counter()
        scoring = "first_token" if first_token or self.scoring == "top_logprobs" else "sequence"
        base = ChoiceScores(candidates=list(candidates), scoring=scoring, method=self.scoring, model=self.name)
        try:
            async with self._limit(call_priority(request)):
                if self.scoring == "top_logprobs":
                    logprobs, usage = await self._score_top(request, candidates)
                else:
                    logprobs, usage = await self._score_echo(request, candidates, first_token)
        except self._openai.APIStatusError as err:
            why = f"HTTP {err.status_code}: {_message(err)}"
            return base.model_copy(update={"error": why, "latency_s": time.perf_counter() - t0})
        except (self._openai.OpenAIError, ValueError, KeyError, TypeError) as err:
            why = f"{type(err).__name__}: {err}"
            return base.model_copy(update={"error": why, "latency_s": time.perf_counter() - t0})
        return base.model_copy(update={"logprobs": logprobs, "usage": usage, "latency_s": time.perf_counter() - t0})

    async def _score_echo(
        self, request: ChatRequest, candidates: list[str], first_token: bool
    ) -> tuple[list[float], Usage]:
        client = await self._client()
        prefix = plain_transcript(request.messages)

        async def one(candidate: str) -> tuple[float, int]:
            prompt = f"{prefix} {candidate}"
            body = {
                "model": self.model,
                "prompt": prompt,
                "max_tokens": 1,
                "temperature": 0,
                "echo": True,
                "logprobs": 1,
                **self.extra,
            }
            got = await client.post("/completions", body=body, cast_to=object)
            choice = got["choices"][0]
            lp = echo_logprob(choice.get("logprobs") or {}, len(prefix), len(prompt), first_token)
            return lp, int((got.get("usage") or {}).get("prompt_tokens") or 0)

        got = await asyncio.gather(*(one(c) for c in candidates))
        return [g[0] for g in got], Usage(prompt_tokens=sum(g[1] for g in got))

    async def _score_top(self, request: ChatRequest, candidates: list[str]) -> tuple[list[float], Usage]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in request.messages],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": TOP_LOGPROBS_MAX,
            **self.extra,
        }
        got = await (await self._client()).post("/chat/completions", body=body, cast_to=object)
        content = ((got["choices"][0].get("logprobs") or {}).get("content")) or []
        if not content:
            raise ValueError("the answer has no logprobs.content (the server gives no top_logprobs)")
        usage = got.get("usage") or {}
        return top_logprob_scores(content[0].get("top_logprobs") or [], candidates), Usage(
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )

    def _payload(self, request: ChatRequest, dialect: str, n: int = 1) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": [m.model_dump() for m in request.messages]}
        if n > 1:
            body["n"] = n
        max_tokens = request.max_tokens or self.max_tokens
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        temperature = request.temperature if request.temperature is not None else self.temperature
        if temperature is not None:
            body["temperature"] = temperature
        if request.seed is not None:
            body["seed"] = request.seed
        if self.extra:
            body["extra_body"] = dict(self.extra)
        if request.json_schema is not None:
            body = get_dialect(dialect).apply(body, request.json_schema)
        return body

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send one request; errors come back in :attr:`ChatResponse.error`, never raised.

        With ``json_mode="auto"``, an HTTP error whose message names the current dialect's
        field switches the backend to the next dialect and retries this call once.
        """
        resp, _ = await self._send(request, self.dialect, switch=self.json_mode == "auto")
        return resp

    async def chat_n(self, request: ChatRequest, n: int) -> list[ChatResponse]:
        """``n`` answers to ``request``, ``max_n`` per request with the server's ``n`` parameter.

        A request carries the seed :func:`~mafialab.models.sample_seed` of its first sample
        (a single call for sample ``i`` the seed of sample ``i``). A server that refuses
        ``n > 1`` (HTTP 4xx other than 429) or answers it with a single choice (llama.cpp's
        server ignores ``n``) is asked the remaining samples as concurrent single calls, and so are later calls
        (:attr:`n_supported` becomes ``False``; a warning is logged once). A request that
        fails otherwise (transport error, HTTP 5xx) gives an error response for each of its
        samples. The usage of a request is reported on its first answer (the others carry
        zero usage), so sums over answers stay right.

        Returns:
            Exactly ``n`` responses in sample order; errors are returned, never raised.

        Raises:
            ValueError: ``n`` < 1.
        """
        if n < 1:
            raise ValueError(f"n: at least 1 sample, got {n}")
        out: list[ChatResponse] = []
        while len(out) < n:
            need, start = n - len(out), len(out)
            if need == 1 or self.max_n == 1 or self.n_supported is False:
                return out + await concurrent_n(self, request, need, first=start)
            req = request if start == 0 else request.model_copy(update={"seed": sample_seed(request.seed, start)})
            k = min(need, self.max_n)
            got, status = await self._send_n(req, self.dialect, switch=self.json_mode == "auto", n=k)
            if got[0].error is not None and status is not None and 400 <= status < 500 and status != 429:
                self._refuse_n(f"HTTP {status} to n = {k}: {got[0].error[:120]}")
                continue
            if got[0].error is None and len(got) == 1:
                self._refuse_n(f"one choice for n = {k}")
                out.append(got[0])
                continue
            if got[0].error is None:
                self.n_supported = True
            out += got[:k]
            if got[0].error is not None:  # the whole request failed: each of its samples failed
                out += [got[0].model_copy() for _ in range(k - 1)]
        return out[:n]

    def _refuse_n(self, why: str) -> None:
        if self.n_supported is not False:
            log.warning(
                "%s: the server does not draw n answers per request (%s); using concurrent calls", self.name, why
            )
        self.n_supported = False

    async def _send(self, request: ChatRequest, dialect: str, *, switch: bool) -> tuple[ChatResponse, int | None]:
        """One call in ``dialect``; returns the response and the HTTP status of a failed call."""
        got, status = await self._send_n(request, dialect, switch=switch)
        return got[0], status

    async def _send_n(
        self, request: ChatRequest, dialect: str, *, switch: bool, n: int = 1
    ) -> tuple[list[ChatResponse], int | None]:
        """One request for ``n`` answers in ``dialect``.

        Returns a response per choice (one error response when the request failed) and the
        HTTP status of a failed request.
        """
        oa = self._openai
        t0 = time.perf_counter()
        attempt = 0
        async with self._limit(call_priority(request)):
            while True:
                try:
                    completion = await self._create(self._payload(request, dialect, n))
                except oa.RateLimitError as err:
                    if attempt >= self.rate_limit_retries:
                        return [self._error(f"rate limited (HTTP 429) after {attempt} retries", "rate_limit", t0)], 429
                    await asyncio.sleep(self._retry_after(err, attempt))
                    attempt += 1
                    continue
                except oa.APIStatusError as err:
                    message = _message(err)
                    nxt = next_dialect(dialect)
                    if switch and request.json_schema is not None and nxt and get_dialect(dialect).blamed_by(message):
                        log.warning(
                            "%s: the server refused structured-output dialect %s (HTTP %s: %s); switching to %s",
                            self.name, dialect, err.status_code, message[:120], nxt.name,
                        )  # fmt: skip
                        if self.dialect == dialect:
                            self.dialect = nxt.name
                        dialect = self.dialect
                        switch = False  # once per call
                        continue
                    return [self._error(f"HTTP {err.status_code}: {message}", "http", t0)], err.status_code
                except (oa.APIConnectionError, oa.APITimeoutError) as err:
                    return [self._error(_transport_error(err, oa), "transport", t0)], None
                except oa.OpenAIError as err:  # response validation and the like
                    return [self._error(f"{type(err).__name__}: {err}", "transport", t0)], None
                return self._responses(completion, request, t0), None

    async def negotiate(self, max_tokens: int | None = None) -> DialectChoice:
        """Choose the structured-output dialect (the preflight; once per backend).

        Sends :func:`~mafialab.models._dialects.probe_request` (a two-name vote schema at
        ``max_tokens``) in each dialect of the ``auto`` order, or only in the configured
        one, until an answer validates against the schema; the first such dialect is used
        for every later call. Stops at once when the server does not answer at all
        (transport error, HTTP 401/403/404, rate limit). The result is cached: later calls
        (other games of the run) reuse it without a request.

        Args:
            max_tokens: The run's generation cap for a targeted decision (``None``: the
                backend's default).

        Returns:
            The :class:`DialectChoice` (``dialect is None`` when no dialect gave a usable
            answer; the backend then keeps the first dialect the server accepted).
        """
        async with self._negotiating():
            if self.choice is not None:
                return self.choice
            request = probe_request(max_tokens)
            schema = request.json_schema or {}
            names = DIALECT_NAMES if self.json_mode == "auto" else (self.json_mode,)
            tried: list[tuple[str, str]] = []
            accepted: str | None = None
            chosen: str | None = None
            reachable = True
            for name in names:
                resp, status = await self._send(request, name, switch=False)
                problem = answer_problem(resp, schema)
                tried.append((name, problem or "ok"))
                if problem is None:
                    chosen = name
                    break
                if resp.error_kind in ("transport", "rate_limit") or status in (401, 403, 404):
                    reachable = False
                    break
                if accepted is None and resp.error_kind != "http":
                    accepted = name
            choice = DialectChoice(self.name, chosen, tuple(tried), reachable, max_tokens)
            self.dialect = chosen or accepted or self.dialect
            if reachable:
                self.choice = choice
            log.info("%s", choice.line())
            return choice

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

    def _responses(self, completion: Any, request: ChatRequest, t0: float) -> list[ChatResponse]:
        """A response per choice, in ``index`` order; the request's usage goes on the first.

        ``completion`` is the answer's JSON (a ``chat.completion`` object); a field it lacks
        reads as unset, and an answer that is not an object has no choices.
        """
        latency = time.perf_counter() - t0
        choices = _field(completion, "choices")
        if not choices or not isinstance(choices, list):
            return [
                ChatResponse(error="no choices in the answer", error_kind="empty", latency_s=latency, model=self.name)
            ]
        choices = sorted(choices, key=lambda c: _field(c, "index") or 0)
        usage = Usage()
        got = _field(completion, "usage")
        if got is not None:
            details = _field(got, "prompt_tokens_details")
            usage = Usage(
                prompt_tokens=_field(got, "prompt_tokens") or 0,
                completion_tokens=_field(got, "completion_tokens") or 0,
                cached_tokens=_field(details, "cached_tokens"),
            )
        return [self._response(c, request, latency, usage if i == 0 else Usage()) for i, c in enumerate(choices)]

    def _response(self, choice: Any, request: ChatRequest, latency: float, usage: Usage) -> ChatResponse:
        msg = _field(choice, "message")
        text = _field(msg, "content") or ""
        reasoning = _field(msg, "reasoning_content") or _field(msg, "reasoning")  # servers' own fields
        m = _THINK.match(text)
        if m:
            reasoning = (reasoning + "\n" if reasoning else "") + m.group(1).strip()
            text = text[m.end() :]
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
            parsed, _ = parse_json(resp.text)  # the valid text, not the raw one
            if parsed is None:
                kind = "length" if _field(choice, "finish_reason") == "length" else "schema"
                return resp.model_copy(update={"error": f"answer is not JSON ({kind})", "error_kind": kind})
            resp = resp.with_parsed(parsed)
        return resp


def _field(obj: Any, key: str) -> Any:
    """``obj[key]`` of a JSON object, ``None`` when ``obj`` is not an object or lacks ``key``."""
    return obj.get(key) if isinstance(obj, dict) else None


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
