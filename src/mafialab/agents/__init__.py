"""Agents (layer ``agents``): the protocol, baselines, LLM agents and the spec registry.

An agent sees only the :class:`~mafialab.engine.PlayerView` the engine builds for its seat.
"""

from mafialab._language import BUILTIN_LANGUAGES, LanguageData, LanguageDataError, load_language_data
from mafialab.agents._llm import (
    AGENT_OPTIONS,
    FALLBACK_TEXT,
    LLMAgent,
    is_model_spec,
    llm_factory,
    make_llm_agent,
    model_spec_forms,
)
from mafialab.agents._prompts import (
    BUILTIN_PACKS,
    SHORT_CHARS,
    Persona,
    PromptPack,
    PromptPackError,
    Renderer,
    decision_schema,
    load_prompt_pack,
)
from mafialab.agents._protocol import (
    Agent,
    AgentFactory,
    AgentSpecError,
    agent_names,
    agent_spec_forms,
    make_agent,
    register_agent,
    register_agent_resolver,
)
from mafialab.agents._random import RandomAgent, random_factory
from mafialab.agents._scripted import ScriptedAgent, scripted_factory
from mafialab.agents._specs import parse_seat_overrides, table_specs, with_model_options
from mafialab.agents._textarena import is_textarena_spec, textarena_factory

register_agent("random", random_factory)
register_agent("scripted", scripted_factory)
register_agent_resolver(is_model_spec, llm_factory, model_spec_forms)
register_agent_resolver(is_textarena_spec, textarena_factory, ("textarena:MODULE.NAME",))

__all__ = [
    "parse_seat_overrides",
    "table_specs",
    "with_model_options",
    "AGENT_OPTIONS",
    "BUILTIN_LANGUAGES",
    "BUILTIN_PACKS",
    "FALLBACK_TEXT",
    "SHORT_CHARS",
    "Agent",
    "AgentFactory",
    "AgentSpecError",
    "LLMAgent",
    "LanguageData",
    "LanguageDataError",
    "Persona",
    "PromptPack",
    "PromptPackError",
    "RandomAgent",
    "Renderer",
    "ScriptedAgent",
    "agent_names",
    "agent_spec_forms",
    "decision_schema",
    "is_model_spec",
    "llm_factory",
    "load_language_data",
    "load_prompt_pack",
    "make_agent",
    "make_llm_agent",
    "random_factory",
    "register_agent",
    "register_agent_resolver",
    "scripted_factory",
]
