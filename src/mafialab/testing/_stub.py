"""A tiny OpenAI-compatible server on 127.0.0.1 for tests, benchmarks and offline demos."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from mafialab.models import DIALECT_NAMES, DIALECTS, get_dialect

Responder = Callable[[dict[str, Any]], "str | dict[str, Any] | tuple[int, dict[str, Any]]"]
"""``f(request body) -> answer``: content text, a full completion JSON object, or
``(HTTP status, JSON body)`` for an error."""


def schema_instance(schema: dict[str, Any], salt: str = "") -> Any:
    """A deterministic value that satisfies ``schema`` (enum, string with maxLength, object).

    An enum value is picked by a hash of ``salt`` (so different prompts pick differently,
    the same prompt the same way).
    """
    if "enum" in schema:
        values = schema["enum"]
        h = int(hashlib.sha256(salt.encode()).hexdigest()[:8], 16)
        return values[h % len(values)]
    t = schema.get("type")
    if t == "object":
        props = schema.get("properties", {})
        return {k: schema_instance(v, salt + k) for k, v in props.items()}
    if t == "string":
        text = "I have no strong read yet; let us compare the votes."
        return text[: schema.get("maxLength", len(text))] or "ok"
    if t in ("integer", "number"):
        return schema.get("minimum", 0)
    if t == "boolean":
        return False
    if t == "array":
        return []
    return None


def default_responder(body: dict[str, Any], honours: Sequence[str] = DIALECT_NAMES) -> str:
    """Answer a valid instance of the request's JSON schema (prompt text as salt), or a line.

    The schema is looked for where each dialect in ``honours`` puts it (see
    :data:`~mafialab.models._dialects.DIALECTS`); a request whose schema sits anywhere else
    gets free text, as from a server that ignores an unknown field.
    """
    salt = json.dumps(body.get("messages", []), sort_keys=True)
    for dialect in DIALECTS:
        if dialect.name in honours:
            schema = dialect.schema_in(body)
            if isinstance(schema, dict):
                return json.dumps(schema_instance(schema, salt))
    return "I have nothing to add."


@dataclass(frozen=True)
class ServerEmulation:
    """How an emulated server treats each structured-output dialect.

    Attributes:
        honours: Dialects whose schema constrains the answer.
        rejects: Dialects answered with an HTTP error: ``{dialect: (status, message)}``.
            Fields of other dialects are ignored (free-text answer), as real servers do.
    """

    honours: tuple[str, ...]
    rejects: dict[str, tuple[int, str]] = field(default_factory=dict)


LLAMA_CPP_PYTHON_REJECTS_JSON_SCHEMA = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)
"""What llama-cpp-python 0.3's server answers (HTTP 500) to ``response_format.type: json_schema``."""

SERVERS: dict[str, ServerEmulation] = {
    "openai": ServerEmulation(("json_schema", "prompt")),
    "vllm": ServerEmulation(("json_schema", "structured_outputs", "prompt")),
    "vllm-0.6": ServerEmulation(("json_schema", "guided_json", "prompt")),
    "sglang": ServerEmulation(("json_schema", "prompt")),
    "llama-server": ServerEmulation(("json_schema", "json_object", "prompt")),
    "llama-cpp-python": ServerEmulation(
        ("json_object",), {"json_schema": (500, LLAMA_CPP_PYTHON_REJECTS_JSON_SCHEMA)}
    ),  # a small model: the schema in the prompt alone does not give valid JSON
    "ollama": ServerEmulation(("json_schema", "prompt")),
    "ollama-native-proxy": ServerEmulation(("format", "prompt")),
    "prompt-only": ServerEmulation(
        ("prompt",),
        {d: (400, "response_format is not supported") for d in ("json_schema", "json_object")},
    ),
}
"""Emulated servers for tests (``OpenAIStub(server=NAME)``), after each server's documented
request format (see ``docs/models.md``) and, for llama-cpp-python, recorded answers."""


def stub_embedding(text: str, dim: int = 8) -> list[float]:
    """The stub's embedding of ``text``: ``dim`` numbers in [-1, 1) from the SHA-256 of the text.

    Deterministic (the same text, the same vector), not normalised; it carries no meaning,
    only identity (different texts almost surely get different vectors).
    """
    digest = hashlib.sha256(text.encode()).digest()
    return [digest[i % len(digest)] / 128.0 - 1.0 for i in range(dim)]


STUB_LOGPROB = -4.0
"""Log-probability the stub gives a word its ``logprobs`` table does not list."""


def stub_completion(body: dict[str, Any], table: dict[str, float]) -> dict[str, Any]:
    """The stub's ``/v1/completions`` answer: words of the prompt scored from ``table``.

    The prompt is cut into words at spaces (a word's token text includes the space before
    it, as BPE tokenisers do); each word's ``token_logprob`` is ``table[word]`` or
    :data:`STUB_LOGPROB` (the first token's is ``null``, as servers give). With ``echo`` the
    prompt's tokens come first, then one generated token ``"."``; the shape is vLLM's
    documented legacy completions ``logprobs`` object (``tokens``, ``token_logprobs``,
    ``top_logprobs``, ``text_offset``).
    """
    prompt = str(body.get("prompt", ""))
    tokens: list[str] = []
    offsets: list[int] = []
    pos = 0
    for i, word in enumerate(prompt.split(" ")):
        tok = word if i == 0 else " " + word
        tokens.append(tok)
        offsets.append(pos)
        pos += len(tok)
    lps: list[float | None] = [None, *(table.get(t.strip(), STUB_LOGPROB) for t in tokens[1:])]
    if not body.get("echo"):
        tokens, offsets, lps = [], [], []
    tokens, offsets, lps = [*tokens, "."], [*offsets, len(prompt)], [*lps, -0.1]
    return {
        "id": "stub-completion",
        "object": "text_completion",
        "created": 0,
        "model": body.get("model", "stub"),
        "choices": [
            {
                "index": 0,
                "text": (prompt if body.get("echo") else "") + ".",
                "logprobs": {
                    "tokens": tokens,
                    "token_logprobs": lps,
                    "top_logprobs": [None if lp is None else {t: lp} for t, lp in zip(tokens, lps, strict=True)],
                    "text_offset": offsets,
                },
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": len(tokens) - 1, "completion_tokens": 1, "total_tokens": len(tokens)},
    }


def stub_top_logprobs(table: dict[str, float]) -> list[dict[str, Any]]:
    """The first token's ``top_logprobs`` a chat answer of the stub carries: ``table``'s best 20."""
    best = sorted(table.items(), key=lambda kv: -kv[1])[:20]
    return [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in best]


class OpenAIStub:
    """A minimal OpenAI-compatible server (chat, completions, embeddings) with a fixed latency per call.

    Embedding requests get :func:`stub_embedding` of each input after the same latency.
    Completion requests get :func:`stub_completion` (words scored from ``logprobs``), or
    ``completions(body)`` when given (a recorded answer); a chat request with ``logprobs``
    true gets the first token's ``top_logprobs`` (:func:`stub_top_logprobs`).

    Args:
        latency_s: Seconds each answer waits before it is sent (``asyncio.sleep``; calls
            overlap, like a batching server).
        responder: Builds each answer (default :func:`default_responder`).
        reject_schema: Answer HTTP 400 to any request with ``response_format`` (a server
            without JSON-schema support).
        server: Emulate a server's dialects (a key of :data:`SERVERS`: ``llama-cpp-python``,
            ``vllm``, ``ollama``, …); default: every dialect is honoured.
        rate_limit_first: Answer HTTP 429 to this many requests first.
        usage_cached: ``cached_tokens`` to report in ``prompt_tokens_details``.
        max_n: Choices one answer may hold: a request's ``n`` (default 1) is honoured up to
            this (``None``: any ``n``; ``1``: ``n`` ignored, as llama.cpp's server does).
            Choice ``i > 0`` is answered for the body with ``seed`` ``"<seed>/<i>"`` (so
            a seeded responder gives each choice its own answer).
        reject_n: Answer HTTP 400 to a request with ``n`` > 1 (a server that refuses it).
        logprobs: Log-probability per word (``{"Alex": -0.5, ...}``) for completion
            scoring and chat ``top_logprobs``.
        completions: ``f(body) -> JSON`` answering ``/v1/completions`` instead (a fixture);
            ``None`` with ``logprobs`` also ``None``: that route answers 404, as a
            chat-only server does.

    Attributes:
        requests: Every request body received, in order (chat and embedding requests).
        max_in_flight: Most requests being answered at once (any model, any route).
        max_in_flight_by_model: The same per ``model`` of the request body.
        choices_sent: Choices answered in all (one per request unless ``n`` was honoured).
        headers: Request headers (lower-case names) of every request, in order.
        base_url: ``http://127.0.0.1:<port>/v1`` once started.
    """

    def __init__(
        self,
        latency_s: float = 0.0,
        responder: Responder | None = None,
        *,
        reject_schema: bool = False,
        rate_limit_first: int = 0,
        usage_cached: int | None = None,
        server: str | None = None,
        max_n: int | None = None,
        reject_n: bool = False,
        logprobs: dict[str, float] | None = None,
        completions: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ):
        self.logprobs = logprobs
        self.completions = completions
        self.latency_s = latency_s
        self.max_n = max_n
        self.reject_n = reject_n
        self.choices_sent = 0
        if server is not None and server not in SERVERS:
            raise ValueError(f"server: expected one of {', '.join(SERVERS)}, got {server!r}")
        self.emulation = SERVERS[server] if server is not None else ServerEmulation(DIALECT_NAMES)
        self.responder = responder or (lambda body: default_responder(body, self.emulation.honours))
        self.reject_schema = reject_schema
        self.rate_limit_left = rate_limit_first
        self.usage_cached = usage_cached
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.in_flight_by_model: dict[str, int] = {}
        self.max_in_flight_by_model: dict[str, int] = {}
        self._server: asyncio.Server | None = None
        self._conns: set[asyncio.Task[None]] = set()
        self.base_url = ""

    async def start(self) -> str:
        """Listen on a free port of 127.0.0.1; returns :attr:`base_url`."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=1024)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.close()
            for t in list(self._conns):
                t.cancel()
            await asyncio.gather(*self._conns, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> OpenAIStub:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @contextlib.contextmanager
    def in_thread(self) -> Iterator[OpenAIStub]:
        """Run the server on its own event loop in a daemon thread (for synchronous callers)."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.start())
            ready.set()
            loop.run_forever()

        th = threading.Thread(target=run, daemon=True)
        th.start()
        ready.wait(10)
        try:
            yield self
        finally:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            th.join(10)
            loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._conns.add(task)
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                method, path, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                body_bytes = await reader.readexactly(int(headers.get("content-length", "0")))
                status, payload = await self._answer(method, path, headers, body_bytes)
                data = json.dumps(payload).encode()
                extra = "retry-after: 0\r\n" if status == 429 else ""
                head = f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n"
                writer.write((head + extra + "\r\n").encode() + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, asyncio.CancelledError):
            pass  # a closed connection or a stopped server ends the exchange
        finally:
            writer.close()
            if task is not None:
                self._conns.discard(task)

    def _chat_completion(
        self, body: dict[str, Any], choices: list[dict[str, Any]], usage: dict[str, Any]
    ) -> dict[str, Any]:
        """A ``chat.completion`` body answering ``body`` with ``choices`` and ``usage``."""
        return {
            "id": f"stub-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "stub"),
            "choices": choices,
            "usage": usage,
        }

    @contextlib.contextmanager
    def _counted(self, model: str) -> Iterator[None]:
        """Count one request in flight (overall and for ``model``) for the block."""
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        now = self.in_flight_by_model[model] = self.in_flight_by_model.get(model, 0) + 1
        self.max_in_flight_by_model[model] = max(self.max_in_flight_by_model.get(model, 0), now)
        try:
            yield
        finally:
            self.in_flight -= 1
            self.in_flight_by_model[model] -= 1

    async def _embeddings(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            return 400, {"error": {"message": "input: a string or a list of strings", "type": "invalid_request"}}
        with self._counted(str(body.get("model", ""))):
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
        tokens = sum(len(t) // 4 for t in inputs)
        return 200, {
            "object": "list",
            "model": body.get("model", "stub"),
            "data": [{"object": "embedding", "index": i, "embedding": stub_embedding(t)} for i, t in enumerate(inputs)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    async def _answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, Any]]:
        route = path.rstrip("/")
        scores = self.completions is not None or self.logprobs is not None
        if method != "POST" or not route.endswith(("/completions", "/embeddings")):
            return 404, {"error": {"message": f"no route {method} {path}"}}
        if not route.endswith("/chat/completions") and route.endswith("/completions") and not scores:
            return 404, {"error": {"message": f"no route {method} {path}"}}
        body = json.loads(raw or b"{}")
        self.requests.append(body)
        self.headers.append(headers)
        if route.endswith("/embeddings"):
            return await self._embeddings(body)
        if not route.endswith("/chat/completions"):
            with self._counted(str(body.get("model", ""))):
                if self.latency_s:
                    await asyncio.sleep(self.latency_s)
            if self.completions is not None:
                return 200, self.completions(body)
            return 200, stub_completion(body, self.logprobs or {})
        if body.get("logprobs") and self.logprobs is not None:
            top = stub_top_logprobs(self.logprobs)
            return 200, self._chat_completion(
                body,
                [
                    {
                        "index": 0,
                        "finish_reason": "length",
                        "message": {"role": "assistant", "content": top[0]["token"] if top else ""},
                        "logprobs": {"content": [{**top[0], "top_logprobs": top}] if top else []},
                    }
                ],
                {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            )
        with self._counted(str(body.get("model", ""))):
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            if self.rate_limit_left > 0:
                self.rate_limit_left -= 1
                return 429, {"error": {"message": "rate limited", "type": "rate_limit"}}
            if self.reject_schema and body.get("response_format"):
                return 400, {"error": {"message": "response_format is not supported", "type": "invalid_request"}}
            for name, (status, message) in self.emulation.rejects.items():
                if get_dialect(name).schema_in(body) is not None:
                    return status, {"error": {"message": message, "type": "invalid_request"}}
            n = body.get("n") or 1
            if self.reject_n and n > 1:
                return 400, {"error": {"message": "n > 1 is not supported", "type": "invalid_request"}}
            n = n if self.max_n is None else min(n, self.max_n)
            out = self.responder(body)
            more = (
                [self.responder({**body, "seed": f"{body.get('seed')}/{i}"}) for i in range(1, n)]
                if isinstance(out, str)
                else []
            )
        if isinstance(out, tuple):
            return out
        if isinstance(out, dict):
            self.choices_sent += 1
            return 200, out
        texts = [out, *(m for m in more if isinstance(m, str))]
        self.choices_sent += len(texts)
        prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
        completion = sum(max(1, len(t) // 4) for t in texts)
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if self.usage_cached is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.usage_cached}
        return 200, self._chat_completion(
            body,
            [
                {"index": i, "finish_reason": "stop", "message": {"role": "assistant", "content": t}}
                for i, t in enumerate(texts)
            ],
            usage,
        )
