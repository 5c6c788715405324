"""Chat-model backends (layer ``models``): one async protocol; backends register lazily."""

from mafialab.models._mock import MockExhausted, MockModel, MockOutput, mock_factory
from mafialab.models._protocol import (
    BackendFactory,
    ChatMessage,
    ChatModel,
    ChatRequest,
    ChatResponse,
    ModelSpecError,
    Usage,
    backend_names,
    get_model,
    register_backend,
    resolve_backend,
)

register_backend("mock", mock_factory)

__all__ = [
    "BackendFactory",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "MockExhausted",
    "MockModel",
    "MockOutput",
    "ModelSpecError",
    "Usage",
    "backend_names",
    "get_model",
    "mock_factory",
    "register_backend",
    "resolve_backend",
]
