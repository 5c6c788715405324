"""Agents (layer ``agents``): the protocol, baselines and the spec registry.

An agent sees only the :class:`~mafialab.engine.PlayerView` the engine builds for its seat.
"""

from mafialab.agents._protocol import (
    Agent,
    AgentFactory,
    AgentSpecError,
    agent_names,
    make_agent,
    register_agent,
    register_agent_resolver,
)
from mafialab.agents._random import RandomAgent, random_factory
from mafialab.agents._scripted import ScriptedAgent, scripted_factory

register_agent("random", random_factory)
register_agent("scripted", scripted_factory)

__all__ = [
    "Agent",
    "AgentFactory",
    "AgentSpecError",
    "RandomAgent",
    "ScriptedAgent",
    "agent_names",
    "make_agent",
    "register_agent",
    "register_agent_resolver",
]
