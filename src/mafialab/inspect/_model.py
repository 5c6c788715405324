"""A mafialab :class:`~mafialab.models.ChatModel` backed by Inspect AI's model API."""

from __future__ import annotations

import logging
import time
from typing import Any

from inspect_ai.model import ChatMessage as InspectMessage
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema

from mafialab.models import ChatMessage, ChatRequest, ChatResponse, Usage, estimate_tokens, parse_json

log = logging.getLogger(__name__)


class InspectChatModel:
    """Plays an Inspect :class:`~inspect_ai.model.Model` behind mafialab's chat protocol.

    Every request becomes one ``model.generate(...)`` call, so Inspect's model strings,
    limits, retries, caching and transcript apply: the eval log shows every call a seat,
    a probe or the belief-shift elicitation made. A request's ``json_schema`` becomes a
    ``response_schema`` (structured output where the provider supports it), ``max_tokens``,
    ``temperature`` and ``seed`` become the generate config.

    Answers map to :class:`~mafialab.models.ChatResponse` as the built-in backends do: an
    exception or ``output.error`` is a ``transport`` error (never text); no text is
    ``empty``; a schema-bound answer that hit the generation cap and is not JSON is
    ``length``; other text is returned as it came (``parsed`` set when it is JSON), and
    mafialab's parsers judge it. Reasoning blocks go to ``reasoning``.

    Args:
        model: The Inspect model (``get_model()`` for the model under evaluation, or
            ``get_model(role=...)``).
        context_window: Context window in tokens for prompt shortening (``None``: unknown,
            no shortening).

    Attributes:
        name: ``provider/model`` as Inspect names it (e.g. ``openai/gpt-4o``).
        requests: Every request sent, in order.
        outputs: Every :class:`~inspect_ai.model.ModelOutput` received, in order.
    """

    calls_network = False  # Inspect owns connection checks and retries; no mafialab preflight
    counts_tokens = False

    def __init__(self, model: Model, context_window: int | None = None) -> None:
        self.model = model
        self.name = str(model)
        self.context_window = context_window
        self.requests: list[ChatRequest] = []
        self.outputs: list[ModelOutput] = []

    def count_tokens(self, text: str) -> int:
        """Estimated tokens of ``text`` (:func:`~mafialab.models.estimate_tokens`)."""
        return estimate_tokens(text)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Answer ``request`` with one Inspect generate call (errors returned, never raised)."""
        t0 = time.perf_counter()
        self.requests.append(request)
        config = GenerateConfig(
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            seed=request.seed,
            response_schema=_response_schema(request.json_schema),
        )
        try:
            out = await self.model.generate([to_inspect_message(m) for m in request.messages], config=config)
        except Exception as err:  # a provider that raises after Inspect's own retries
            log.warning("%s: generate failed: %s: %s", self.name, type(err).__name__, err)
            return ChatResponse(
                error=f"{type(err).__name__}: {err}",
                error_kind="transport",
                latency_s=time.perf_counter() - t0,
                model=self.name,
            )
        self.outputs.append(out)
        return _response(out, request, self.name, time.perf_counter() - t0)


def to_inspect_message(m: ChatMessage) -> InspectMessage:
    """An Inspect chat message with the role and text of a mafialab one."""
    if m.role == "system":
        return ChatMessageSystem(content=m.content)
    if m.role == "assistant":
        return ChatMessageAssistant(content=m.content)
    return ChatMessageUser(content=m.content)


def _response_schema(schema: dict[str, Any] | None) -> ResponseSchema | None:
    if schema is None:
        return None
    return ResponseSchema(name="answer", json_schema=JSONSchema.model_validate(schema))


def _response(out: ModelOutput, request: ChatRequest, name: str, latency: float) -> ChatResponse:
    reasoning = None
    if out.choices:
        content = out.message.content
        if isinstance(content, list):
            parts = [c.reasoning for c in content if isinstance(c, ContentReasoning) and c.reasoning]
            reasoning = "\n".join(parts) or None
    usage = Usage()
    if out.usage is not None:
        usage = Usage(
            prompt_tokens=out.usage.input_tokens,
            completion_tokens=out.usage.output_tokens,
            cached_tokens=out.usage.input_tokens_cache_read,
        )
    resp = ChatResponse(text=out.completion, reasoning=reasoning, usage=usage, latency_s=latency, model=name)
    if out.error is not None:
        return resp.model_copy(update={"error": out.error, "error_kind": "transport"})
    if not out.completion.strip():
        return resp.model_copy(update={"error": "empty answer", "error_kind": "empty"})
    if request.json_schema is not None:
        parsed, _ = parse_json(resp.text)
        if parsed is None and out.stop_reason in ("max_tokens", "model_length"):
            return resp.model_copy(
                update={"error": "generation cap hit before the answer closed", "error_kind": "length"}
            )
        resp = resp.with_parsed(parsed)
    return resp
