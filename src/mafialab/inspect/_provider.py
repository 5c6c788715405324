"""mafialab's chat-model backends as the Inspect model provider ``mafialab/``."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from mafialab.models import ChatMessage as MafialabMessage
from mafialab.models import ChatModel, ChatRequest, get_model


class MafialabModelAPI(ModelAPI):
    """Inspect model API over a mafialab backend: ``--model mafialab/<provider>/<model>``.

    ``mafialab/local/smollm2`` evaluates the embedded model offline; ``mafialab/openai/...``
    goes through mafialab's OpenAI-compatible backend (its structured-output dialects);
    ``mafialab/mock/NAME -M outputs=[...]`` replays scripted answers (tests, smoke runs).
    Options after ``?`` in the model string and Inspect's ``-M key=value`` model args are
    the backend's options. The request's ``response_schema`` becomes mafialab's
    ``json_schema``; usage is reported as the backend counts it (no tokenizer download).

    Raises:
        mafialab.models.ModelSpecError: Unknown provider or option (names the field).
        ImportError: The backend's optional dependency is missing (says what to install).
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.chat_model: ChatModel = get_model(model_name, **model_args)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """Answer with one call of the mafialab backend (an error is the output's ``error``)."""
        schema = config.response_schema.json_schema.model_dump(exclude_none=True) if config.response_schema else None
        req = ChatRequest(
            messages=[_message(m) for m in input],
            json_schema=schema,
            max_tokens=config.max_tokens,
            temperature=config.temperature,
            seed=config.seed,
            purpose="inspect",
        )
        resp = await self.chat_model.chat(req)
        out = ModelOutput.from_content(
            model=self.model_name,
            content=resp.text,
            stop_reason="max_tokens" if resp.error_kind == "length" else "stop",
            error=resp.error,
        )
        out.usage = ModelUsage(
            input_tokens=resp.usage.prompt_tokens,
            output_tokens=resp.usage.completion_tokens,
            total_tokens=resp.usage.prompt_tokens + resp.usage.completion_tokens,
            input_tokens_cache_read=resp.usage.cached_tokens,
        )
        return out


def _message(m: ChatMessage) -> MafialabMessage:
    role = m.role if m.role in ("system", "user", "assistant") else "user"
    return MafialabMessage(role=role, content=m.text)  # type: ignore[arg-type]


@modelapi(name="mafialab")
def mafialab_provider() -> type[ModelAPI]:
    """The ``mafialab/`` Inspect model provider (:class:`MafialabModelAPI`)."""
    return MafialabModelAPI
