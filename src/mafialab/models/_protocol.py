"""One async protocol for chat-model backends, and the backend registry."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mafialab._text import valid_utf8, valid_utf8_value
from mafialab._words import count

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 3.0
"""Characters per token assumed when a backend has no tokenizer (``counts_tokens`` false).

Conservative for English text under BPE tokenizers, which average about 4 characters per
token, so an estimate that fits a context window leaves some room."""


def estimate_tokens(text: str) -> int:
    """Token estimate without a tokenizer: ``ceil(len(text) / CHARS_PER_TOKEN)`` (>= 0)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


class ChatMessage(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class ChatRequest(BaseModel):
    """A chat call.

    Attributes:
        messages: The conversation, system message first.
        json_schema: JSON schema the answer must follow (constrained decoding where the
            backend supports it), or ``None`` for free text.
        max_tokens: Generation cap in tokens (``None``: the backend's default).
        temperature: Sampling temperature (``None``: the backend's default).
        seed: Sampling seed, where the backend supports one.
        purpose: What the call is for: ``speak``, ``vote``, ``night_action``, ``mafia_chat``,
            ``probe``, ``judge``, ``annotate``, ``elicit``, ``preflight`` … (accounting and
            the mock backend's per-purpose queues key on it).
        meta: Free-form tags (seat, game id, probe id) for accounting; never sent.
    """

    model_config = ConfigDict(extra="forbid")

    messages: list[ChatMessage]
    json_schema: dict[str, Any] | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0)
    seed: int | None = None
    purpose: str = "chat"
    meta: dict[str, Any] = Field(default_factory=dict)


class Usage(BaseModel):
    """Token usage of one call (``cached_tokens``: prompt tokens served from a prefix cache)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None


class ChatResponse(BaseModel):
    """Result of a chat call. A failed call has ``error`` set and is never played as a move.

    Attributes:
        text: Answer text ("" on error).
        parsed: The answer parsed as JSON when a schema was requested and parsing worked.
        reasoning: Reasoning text when the server returns it separately.
        usage: Token usage.
        latency_s: Wall-clock seconds of the call.
        error: Error description, or ``None`` on success.
        error_kind: ``transport``, ``rate_limit``, ``length``, ``schema``, ``empty`` or ``None``.
        model: Model name that answered.
        replaced_chars: Characters of the answer UTF-8 cannot encode (lone surrogates such
            as U+D800, which JSON allows as an escape) that were replaced with U+FFFD (>= 0).

    Text from outside enters here: on construction, every character UTF-8 cannot encode in
    ``text``, ``parsed`` (strings and keys at any depth), ``reasoning`` and ``error`` becomes
    U+FFFD (:func:`mafialab._text.valid_utf8`), so an answer can always be logged, and the
    number replaced is added to ``replaced_chars``: the larger count of ``text`` and
    ``parsed`` (the parsed value is read from the text: a character is not counted twice),
    plus those of ``reasoning`` and ``error``.
    """

    text: str = ""
    parsed: Any = None
    reasoning: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    error: str | None = None
    error_kind: str | None = None
    model: str = ""
    replaced_chars: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _valid_utf8(self) -> ChatResponse:
        self.text, in_text = valid_utf8(self.text)
        self.parsed, in_parsed = valid_utf8_value(self.parsed)
        more = max(in_text, in_parsed)
        if self.reasoning is not None:
            self.reasoning, n = valid_utf8(self.reasoning)
            more += n
        if self.error is not None:
            self.error, n = valid_utf8(self.error)
            more += n
        self.replaced_chars += more
        return self

    def with_parsed(self, parsed: Any) -> ChatResponse:
        """A copy with ``parsed`` set, made valid like a new answer's (replacements added to ``replaced_chars``).

        Backends parse :attr:`text` (already valid) after building the response; a JSON escape
        of a lone surrogate in it still parses into one, which is replaced here.
        """
        value, n = valid_utf8_value(parsed)
        return self.model_copy(update={"parsed": value, "replaced_chars": self.replaced_chars + n})

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.error is None


@runtime_checkable
class ChatModel(Protocol):
    """A chat-model backend.

    Attributes:
        name: Model string (``provider/model``).
        context_window: Context size in tokens, or ``None`` if unknown.
        calls_network: Whether calls reach a server over the network (a game preflights
            such a backend with one cheap call before it starts). ``False`` for in-process
            backends (the embedded model, the mock).
        counts_tokens: Whether :meth:`count_tokens` uses the model's own tokenizer (exact
            prompt sizing); ``False`` when it returns :func:`estimate_tokens`.

    Several answers to one request (resamples) go through :func:`complete_n`: a backend
    may add ``async chat_n(request, n) -> list[ChatResponse]`` and ``max_n`` (answers per
    request) to draw them in one request; without them the answers are concurrent
    :meth:`chat` calls.
    """

    name: str
    context_window: int | None
    calls_network: bool
    counts_tokens: bool

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text``: exact when ``counts_tokens``, else :func:`estimate_tokens`."""
        ...

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer one request. Errors are returned in ``ChatResponse.error``, not raised."""
        ...


def sample_seed(seed: int | None, index: int) -> int | None:
    """The seed of sample ``index`` of a request drawn ``n`` times (:func:`complete_n`).

    Sample 0 keeps the request's seed (so ``n = 1`` is the plain call); sample ``i > 0`` gets
    ``sha256("<seed>:<i>")`` folded to ``0 .. 2**31 - 1``. ``None`` (no seed) stays ``None``.
    """
    if seed is None or index == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}:{index}".encode()).digest()[:4], "big") % (2**31)


async def concurrent_n(model: ChatModel, request: ChatRequest, n: int, first: int = 0) -> list[ChatResponse]:
    """``n`` answers to ``request`` as ``n`` concurrent :meth:`ChatModel.chat` calls.

    Sample ``i`` (counted from ``first``: samples ``first .. first + n - 1`` of the request)
    is sent with seed :func:`sample_seed` ``(request.seed, i)``. An exception
    raised by the backend becomes an error response of that sample (``error_kind``
    ``transport``); :class:`~mafialab.models.MockExhausted` (a test scripted too few
    outputs) is raised.

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"n: at least 1 sample, got {n}")
    idx = range(first, first + n)
    reqs = [request if i == 0 else request.model_copy(update={"seed": sample_seed(request.seed, i)}) for i in idx]
    got = await asyncio.gather(*(model.chat(r) for r in reqs), return_exceptions=True)
    out: list[ChatResponse] = []
    for r in got:
        if isinstance(r, ChatResponse):
            out.append(r)
        elif type(r).__name__ == "MockExhausted" or not isinstance(r, Exception):
            raise r
        else:
            out.append(ChatResponse(error=f"{type(r).__name__}: {r}", error_kind="transport", model=model.name))
    return out


async def complete_n(model: ChatModel, request: ChatRequest, n: int) -> list[ChatResponse]:
    """``n`` independent answers to one request (resamples of a frozen context).

    A backend that can draw several answers in one request has a method
    ``chat_n(request, n) -> list[ChatResponse]`` (the ``openai`` backend sends the
    server's ``n``); every other backend gets :func:`concurrent_n`. ``chat_n`` is optional,
    so a backend written to :class:`ChatModel` alone keeps working.

    Args:
        model: The backend.
        request: The request (its ``seed`` seeds sample 0; see :func:`sample_seed`).
        n: Answers wanted (>= 1).

    Returns:
        Exactly ``n`` responses, in sample order; failed samples carry ``error`` (never raised).

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"n: at least 1 sample, got {n}")
    chat_n = getattr(model, "chat_n", None)
    if callable(chat_n):
        out = list(await chat_n(request, n))
        if len(out) != n:  # a backend bug must not lose or invent samples
            raise RuntimeError(f"{model.name}: chat_n returned {count(len(out), 'answer')} for n = {n}")
        return out
    return await concurrent_n(model, request, n)


def max_samples_per_request(model: ChatModel) -> int:
    """How many answers one request of ``model`` may carry: its ``max_n`` when it has ``chat_n``, else 1."""
    if not callable(getattr(model, "chat_n", None)):
        return 1
    value = getattr(model, "max_n", 1)
    return value if isinstance(value, int) and value >= 1 else 1


class ModelSpecError(ValueError):
    """A model string or its options could not be resolved; the message names the field."""


BackendFactory = Callable[..., ChatModel]
"""``factory(model: str, **options) -> ChatModel`` where ``model`` is the part after the provider."""

_BACKENDS: dict[str, str | BackendFactory] = {}
_REQUIRES: dict[str, tuple[tuple[str, str], ...]] = {}
_DESCRIPTIONS: dict[str, str] = {}
_CONCURRENCY: dict[str, tuple[int | None, bool]] = {}


def register_backend(
    provider: str,
    factory: str | BackendFactory,
    *,
    requires: Sequence[tuple[str, str]] = (),
    description: str = "",
    max_concurrency: int | None = None,
    concurrency_option: bool = False,
) -> None:
    """Register a backend for ``provider``.

    Args:
        provider: Prefix of model strings (``openai``, ``local``, ``mock``).
        factory: The factory, or a lazy reference ``"module:attribute"`` imported on first
            use, so optional SDKs load only when their backend is used.
        requires: ``(import name, pip requirement)`` pairs the backend needs; checked by
            :func:`backend_status` without importing them.
        description: One line for ``mafialab models list``.
        max_concurrency: The backend's default limit of calls in flight (``None``: no limit).
        concurrency_option: Whether the backend takes a ``max_concurrency`` option (so a
            caller's concurrency setting can raise its limit, see :func:`get_model`).
    """
    _BACKENDS[provider] = factory
    _CONCURRENCY[provider] = (max_concurrency, concurrency_option)
    _REQUIRES[provider] = tuple(requires)
    _DESCRIPTIONS[provider] = description


@dataclass(frozen=True)
class BackendStatus:
    """Whether a registered backend is usable on this machine.

    Attributes:
        provider: Provider prefix.
        usable: Whether its requirements are importable.
        detail: What is installed, or the ``pip install`` line that is missing.
        description: One-line description given at registration.
        max_concurrency: Default limit of calls in flight (``None``: unlimited).
        concurrency_option: Whether model strings may set ``max_concurrency``.
    """

    provider: str
    usable: bool
    detail: str
    description: str
    max_concurrency: int | None = None
    concurrency_option: bool = False


def backend_status() -> list[BackendStatus]:
    """Status of every registered backend, sorted by provider (imports nothing heavy)."""
    out = []
    for provider in backend_names():
        missing = [pip for mod, pip in _REQUIRES.get(provider, ()) if importlib.util.find_spec(mod) is None]
        if missing:
            detail = "missing: pip install " + " ".join(missing)
        else:
            detail = ", ".join(mod for mod, _ in _REQUIRES.get(provider, ())) or "built in"
        cap, option = _CONCURRENCY.get(provider, (None, False))
        out.append(BackendStatus(provider, not missing, detail, _DESCRIPTIONS.get(provider, ""), cap, option))
    return out


def backend_names() -> list[str]:
    """Registered providers."""
    return sorted(_BACKENDS)


def resolve_backend(provider: str) -> BackendFactory:
    """The factory for ``provider`` (importing a lazy reference).

    Raises:
        ModelSpecError: Unknown provider.
        ImportError: The backend's optional dependency is missing (message says what to install).
    """
    ref = _BACKENDS.get(provider)
    if ref is None:
        raise ModelSpecError(unknown_provider_message(provider))
    if isinstance(ref, str):
        module, _, attr = ref.partition(":")
        ref = getattr(importlib.import_module(module), attr)
        _BACKENDS[provider] = ref
    return ref


def unknown_provider_message(provider: str, spec: str | None = None) -> str:
    """The one wording of a model string whose provider is not registered (every model option uses it).

    ``'foo/bar': unknown model provider 'foo' (providers: bus, local, mock, openai; see
    `mafialab models list`)``; without ``spec`` the message starts at ``unknown``.
    """
    return (
        f"{spec!r}: " if spec is not None else ""
    ) + f"unknown model provider {provider!r} (providers: {', '.join(backend_names())}; see `mafialab models list`)"


def require(module: str, pip_name: str, backend: str) -> Any:
    """Import an optional dependency of a backend.

    Raises:
        ImportError: With the ``pip install`` line when ``module`` is missing.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"the {backend} backend needs {pip_name}: pip install {pip_name}") from err


def parse_model_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split a model string ``provider/model?key=value&key=value`` into model and options.

    The one parser of model strings (agents, judges, annotators, the belief-shift bench).
    Option values are read as JSON where they parse (``max_tokens=64``,
    ``extra={"a":1}``), else kept as strings (``base_url=http://x``).

    Args:
        spec: The model string.

    Returns:
        ``("provider/model", options)``.

    Raises:
        ModelSpecError: No ``provider/model`` part, a provider that is not registered
            (:func:`unknown_provider_message`), no model name after a known provider, a
            malformed query, or an option given twice (``?timeout=1&timeout=2``; the message
            quotes ``spec``).
    """
    model, _, query = spec.partition("?")
    provider, sep, name = model.partition("/")
    if not sep or not provider:
        raise ModelSpecError(f"model: expected provider/model (e.g. openai/gpt-4o-mini), got {spec!r}")
    if provider not in _BACKENDS:
        raise ModelSpecError(unknown_provider_message(provider, spec))
    if not name:
        raise ModelSpecError(
            f"{spec!r}: the model string names no model after {provider + '/'!r} "
            f"(e.g. {provider}/NAME; `mafialab models list` shows each provider's form)"
        )
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise ModelSpecError(f"model: malformed options in {spec!r} (expected ?key=value&key=value)") from None
    options: dict[str, Any] = {}
    for key, value in pairs:
        if key in options:
            raise ModelSpecError(f"model: option {key!r} is given twice in {spec!r}; give it once")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return model, options


def get_model(spec: str, *, concurrency: int | None = None, **options: Any) -> ChatModel:
    """Build a backend from a model string ``provider/model[?key=value&...]``.

    Args:
        spec: The model string (:func:`parse_model_spec`).
        concurrency: Calls the caller means to keep in flight (a ``--concurrency`` or
            ``--parallel`` option), so that option is the real limit: a backend that takes
            ``max_concurrency`` gets at least this many slots. When ``spec`` or ``options``
            set ``max_concurrency`` explicitly, that cap holds (a smaller one is logged as a
            warning). Backends without the option (the embedded model: one call at a
            time; the mock: unlimited) are unchanged.
        **options: Backend options; they override options given in ``spec``.

    Raises:
        ModelSpecError: Malformed string, unknown provider or option.
        ImportError: The backend's optional dependency is missing.
    """
    model, given = parse_model_spec(spec)
    provider, _, name = model.partition("/")
    merged = {**given, **options}
    factory = resolve_backend(provider)
    cap, option = _CONCURRENCY.get(provider, (None, False))
    if concurrency is not None and option:
        explicit = merged.get("max_concurrency")
        if explicit is None:
            merged["max_concurrency"] = max(int(concurrency), cap or 1)
        elif isinstance(explicit, int) and explicit < concurrency:
            log.warning(
                "%s: max_concurrency=%d in the model string caps the %d calls in flight asked for",
                model, explicit, concurrency,
            )  # fmt: skip
    return factory(name, **_checked_options(model, factory, merged))


_OPTION_RANGES: dict[str, tuple[float, bool, str]] = {
    "timeout": (0, True, "seconds > 0"),
    "backoff_s": (0, False, "seconds >= 0"),
    "max_concurrency": (1, False, "an integer >= 1"),
    "max_n": (1, False, "an integer >= 1"),
    "max_tokens": (1, False, "an integer >= 1"),
    "context_window": (1, False, "an integer >= 1"),
    "n_threads": (1, False, "an integer >= 1"),
    "rate_limit_retries": (0, False, "an integer >= 0"),
    "temperature": (0, False, "a number >= 0"),
    "repeat_penalty": (0, True, "a number > 0"),
}
"""Lowest values of numeric backend options: ``name -> (bound, exclusive, wording)``."""


def _checked_options(model: str, factory: BackendFactory, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with numeric strings converted where the backend's parameter is an int or a float.

    Every numeric value must be finite (``nan``, ``inf`` are refused) and within the range of
    its option (:data:`_OPTION_RANGES`: ``timeout`` > 0 seconds, ``max_concurrency`` >= 1 …).
    A backend whose signature cannot be read, or that takes ``**kwargs``, gets the options as
    they are (it checks them itself).

    Raises:
        ModelSpecError: An option the backend does not take, or a value that is not a number
            where the backend takes one, or a number out of range (naming the option and
            the value).
    """
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return options
    params = sig.parameters
    check_unknown = True
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        # a registration function passing ``**options`` on to the backend class it returns: read that class
        ret = sig.return_annotation
        cls = getattr(factory, "__globals__", {}).get(ret.strip()) if isinstance(ret, str) else ret
        if not inspect.isclass(cls):
            return options
        params = inspect.signature(cls).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return options
        check_unknown = False  # the registration function may take options of its own
    known = [k for k, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    out = dict(options)
    for key, value in options.items():
        if key not in params:
            if not check_unknown:
                continue
            raise ModelSpecError(f"{model}: unknown option {key!r} (known: {', '.join(known) or 'none'})")
        if not isinstance(value, str | float | int) or isinstance(value, bool):
            continue
        ann = params[key].annotation
        names = {a.strip() for a in ann.split("|")} if isinstance(ann, str) else {getattr(ann, "__name__", "")}
        wanted = {t for t in (int, float) if t.__name__ in names}
        if not wanted:
            continue
        kind = "an integer" if int in wanted and float not in wanted else "a number"
        if not (isinstance(value, float) and float in wanted) and not (isinstance(value, int) and int in wanted):
            try:
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError(value)  # an int option given 2.5 would be cut to 2 without a word
                out[key] = int(value) if int in wanted else float(value)
            except (ValueError, OverflowError):
                raise ModelSpecError(f"{model}: option {key}={value!r}: expected {kind}") from None
        number = out[key]
        if not math.isfinite(number):
            raise ModelSpecError(f"{model}: option {key}={value!r}: expected a finite number")
        bound, exclusive, wording = _OPTION_RANGES.get(key, (-math.inf, False, ""))
        if number < bound or (exclusive and number == bound):
            raise ModelSpecError(f"{model}: option {key}={value!r}: expected {wording}")
    return out
