"""Agents (layer ``agents``): the protocol, baselines, LLM agents and the spec registry.

An agent sees only the :class:`~mafialab.engine.PlayerView` the engine builds for its seat.
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab._language import BUILTIN_LANGUAGES as BUILTIN_LANGUAGES
from mafialab._language import LanguageData as LanguageData
from mafialab._language import (
    LanguageDataError,
    load_language_data,
)
from mafialab.agents._llm import AGENT_OPTIONS as AGENT_OPTIONS
from mafialab.agents._llm import FALLBACK_TEXT as FALLBACK_TEXT
from mafialab.agents._llm import (
    LLMAgent,
    make_llm_agent,
    model_spec_forms,
)
from mafialab.agents._llm import is_model_spec as is_model_spec
from mafialab.agents._llm import llm_factory as llm_factory
from mafialab.agents._prompts import BUILTIN_PACKS as BUILTIN_PACKS
from mafialab.agents._prompts import SHORT_CHARS as SHORT_CHARS
from mafialab.agents._prompts import (
    Persona,
    PromptPackError,
    Renderer,
    decision_schema,
)
from mafialab.agents._prompts import PromptPack as PromptPack
from mafialab.agents._prompts import load_prompt_pack as load_prompt_pack
from mafialab.agents._protocol import (
    Agent,
    AgentSpecError,
    make_agent,
    register_agent,
)
from mafialab.agents._protocol import AgentFactory as AgentFactory
from mafialab.agents._protocol import agent_names as agent_names
from mafialab.agents._protocol import agent_spec_forms as agent_spec_forms
from mafialab.agents._protocol import register_agent_resolver as register_agent_resolver
from mafialab.agents._random import (
    RandomAgent,
)
from mafialab.agents._random import random_factory as random_factory
from mafialab.agents._scripted import (
    ScriptedAgent,
)
from mafialab.agents._scripted import scripted_factory as scripted_factory
from mafialab.agents._specs import parse_seat_overrides as parse_seat_overrides
from mafialab.agents._specs import table_specs as table_specs
from mafialab.agents._specs import with_model_options as with_model_options
from mafialab.agents._textarena import is_textarena_spec, textarena_factory

register_agent("random", random_factory)
register_agent("scripted", scripted_factory)
register_agent_resolver(is_model_spec, llm_factory, model_spec_forms)
register_agent_resolver(is_textarena_spec, textarena_factory, ("textarena:MODULE.NAME",))

__all__ = [
    "Agent",
    "AgentSpecError",
    "LLMAgent",
    "LanguageDataError",
    "Persona",
    "PromptPackError",
    "RandomAgent",
    "Renderer",
    "ScriptedAgent",
    "decision_schema",
    "load_language_data",
    "make_agent",
    "make_llm_agent",
    "register_agent",
]
