"""The ``mock`` backend: replays scripted outputs, registered like a real backend."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mafialab._json import loads_finite
from mafialab.models._protocol import ChatRequest, ChatResponse, ModelSpecError, estimate_tokens
from mafialab.models._scoring import ChoiceScores

MockOutput = str | dict[str, Any] | list[Any] | ChatResponse | Exception
"""One scripted output: text, a JSON value (serialised), a full response, or an exception
(turned into an error response)."""


class MockExhausted(RuntimeError):
    """The mock ran out of scripted outputs (a test asked for more calls than it scripted)."""


class MockModel:
    """Replays scripted outputs in order; fails loudly when they run out.

    Args:
        outputs: A list of outputs (one queue for every call), a mapping from purpose to a
            list (one queue per purpose, e.g. ``{"speak": [...], "probe": [...]}``; a
            ``"*"`` key serves purposes without their own queue), or a callable
            ``f(request) -> output``.
        name: Model name reported in responses.
        context_window: Reported context window.
        calls_network: Whether to act like a server reached over the network (so games
            preflight it with a call like any remote backend).
        scripted: Whether ``outputs`` is the caller's script. ``False`` only for the default
            answerer of a bare ``mock/NAME`` string (:func:`mock_factory` with no
            ``outputs``), which answers ``"{}"`` to every call, so every game decision
            falls back; the game preflight refuses such a seat unless degraded play is
            allowed (:func:`~mafialab.harness.preflight`). A mock whose answerer is
            replaced after it was built (a test swapping in its own function) is scripted.
        logprobs: How :meth:`score_choices` scores given answers (``logprob`` probes): a
            mapping candidate -> log-probability (unlisted candidates get -10), or a
            callable ``f(request, candidates) -> list of log-probabilities``; ``None``: the
            mock cannot score (a ``logprob`` battery is refused before the game).

    Attributes:
        requests: Every request received, in order (for assertions).
        scripted: See the argument (read-only: ``True`` once the answerer given at
            construction has been replaced).

    Raises:
        ModelSpecError: ``outputs`` is a string (not a list, mapping or callable).
        MockExhausted: From :meth:`chat` when a queue is empty.
    """

    def __init__(
        self,
        outputs: Iterable[MockOutput] | Mapping[str, Iterable[MockOutput]] | Callable[[ChatRequest], MockOutput],
        name: str = "mock/mock",
        context_window: int | None = 8192,
        calls_network: bool = False,
        scripted: bool = True,
        logprobs: Mapping[str, float] | Callable[[ChatRequest, list[str]], list[float]] | None = None,
    ):
        self.name = name
        self._logprobs = logprobs
        self.scoring_refusal = None if logprobs is not None else f"{name} was given no logprobs to score answers with"
        self.scored: list[tuple[ChatRequest, list[str]]] = []
        self.calls_network = calls_network
        self._scripted = scripted
        self.context_window = context_window
        self.requests: list[ChatRequest] = []
        self._fn: Callable[[ChatRequest], MockOutput] | None = None
        self._queues: dict[str, deque[MockOutput]] = {}
        if isinstance(outputs, str | bytes):
            # a string is iterable but one character per call is never meant (e.g. malformed JSON
            # in ``mock/x?outputs=[...``, which the spec parser keeps as a string)
            raise ModelSpecError(
                f"outputs: expected a list, a mapping purpose -> list, or a callable; got the string {outputs[:60]!r}"
            )
        if callable(outputs):
            self._fn = outputs
        elif isinstance(outputs, Mapping):
            self._queues = {k: deque(v) for k, v in outputs.items()}
        else:
            self._queues = {"*": deque(outputs)}
        self._answerer_at_init = self._fn

    @property
    def scripted(self) -> bool:
        """Whether this mock answers from a caller's script (see the class docstring)."""
        return self._scripted or self._fn is not self._answerer_at_init

    counts_tokens = False
    """The mock has no tokenizer: :meth:`count_tokens` estimates."""

    def count_tokens(self, text: str) -> int:
        """Estimated tokens of ``text`` (:func:`~mafialab.models.estimate_tokens`)."""
        return estimate_tokens(text)

    def remaining(self, purpose: str = "*") -> int:
        """Outputs left in a queue."""
        return len(self._queues.get(purpose, ()))

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Return the next scripted output for ``request.purpose``."""
        self.requests.append(request)
        if self._fn is not None:
            out = self._fn(request)
        else:
            q = self._queues.get(request.purpose)
            if q is None:
                q = self._queues.get("*")
            if not q:
                raise MockExhausted(f"mock: no scripted output left for purpose {request.purpose!r}")
            out = q.popleft()
        return _to_response(out, self.name, request)

    async def score_choices(
        self, request: ChatRequest, candidates: list[str], first_token: bool = False
    ) -> ChoiceScores:
        """Scores from ``logprobs`` (recorded in :attr:`scored`); an error when none were given."""
        self.scored.append((request, list(candidates)))
        scoring = "first_token" if first_token else "sequence"
        base = ChoiceScores(candidates=list(candidates), scoring=scoring, method="mock", model=self.name)
        if self._logprobs is None:
            return base.model_copy(update={"error": self.scoring_refusal})
        if callable(self._logprobs):
            values = [float(x) for x in self._logprobs(request, list(candidates))]
        else:
            values = [float(self._logprobs.get(c, -10.0)) for c in candidates]
        return base.model_copy(update={"logprobs": values})


def _to_response(out: MockOutput, name: str, request: ChatRequest) -> ChatResponse:
    if isinstance(out, ChatResponse):
        return out
    if isinstance(out, Exception):
        return ChatResponse(error=f"{type(out).__name__}: {out}", error_kind="transport", model=name)
    text = out if isinstance(out, str) else json.dumps(out)
    parsed = None
    if request.json_schema is not None:
        try:
            parsed = loads_finite(text)
        except (ValueError, RecursionError):  # as a real backend: unparsable text is left to the agent
            parsed = None
    return ChatResponse(text=text, parsed=parsed, model=name)


def mock_factory(model: str, **options: Any) -> MockModel:
    """Factory for ``mock/<name>`` model strings.

    The mock answers ``"{}"`` to everything unless ``outputs`` is given in ``options``; such
    a mock is built with ``scripted=False`` (every game decision it plays falls back, so the
    game preflight refuses it without ``allow_degraded``). Any ``outputs``, hostile ones
    included (fuzzing), make it scripted: the preflight never spends a scripted answer.

    Raises:
        ModelSpecError: An option the mock does not take (``mock/x?max_tokens=3``), named with
            the ones it does.
    """
    scripted = "outputs" in options
    outputs = options.pop("outputs", _answer_empty_object)
    unknown = sorted(set(options) - set(_MOCK_OPTIONS))
    if unknown:
        known = ", ".join(sorted({"outputs", *_MOCK_OPTIONS}))
        raise ModelSpecError(f"mock/{model}: unknown option {unknown[0]!r} (known: {known})")
    return MockModel(outputs, name=f"mock/{model}", scripted=scripted, **options)


def _answer_empty_object(request: ChatRequest) -> MockOutput:
    """The default answerer of an unscripted mock: ``"{}"`` to every request."""
    return "{}"


_MOCK_OPTIONS = ("context_window", "calls_network", "logprobs")
"""Options of :class:`MockModel` a model string may set (besides ``outputs``)."""
