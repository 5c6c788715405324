"""The agent protocol and the registry of agent specs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from mafialab.engine import Action, Decision, PlayerView
from mafialab.rules import RuleSet


@runtime_checkable
class Agent(Protocol):
    """Anything that plays a seat.

    Attributes:
        label: Public, human-readable spec of the agent (``"scripted"``, ``"openai/gpt-4o"``).
    """

    label: str

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        """Answer ``decision`` given the player's ``view`` (only what the seat may see).

        An agent may return an illegal action; the harness then retries or falls back.
        """
        ...


AgentFactory = Callable[[str, int, RuleSet, int], Agent]
"""``factory(spec, seat, rules, seed) -> Agent``; ``seed`` is the game seed."""


class AgentSpecError(ValueError):
    """An agent spec could not be resolved; the message names the spec."""


_FACTORIES: dict[str, AgentFactory] = {}
_RESOLVERS: list[tuple[Callable[[str], bool], AgentFactory]] = []


def register_agent(name: str, factory: AgentFactory) -> None:
    """Register a factory for the exact agent spec ``name`` (``"scripted"``, ``"random"``)."""
    _FACTORIES[name] = factory


def register_agent_resolver(matches: Callable[[str], bool], factory: AgentFactory) -> None:
    """Register a factory for every spec that ``matches`` accepts (e.g. model strings)."""
    _RESOLVERS.append((matches, factory))


def agent_names() -> list[str]:
    """Exact agent specs registered so far."""
    return sorted(_FACTORIES)


def make_agent(spec: str, seat: int, rules: RuleSet, seed: int) -> Agent:
    """Build the agent for ``spec`` at ``seat``.

    Raises:
        AgentSpecError: If no factory accepts ``spec``.
    """
    factory = _FACTORIES.get(spec)
    if factory is None:
        factory = next((f for m, f in _RESOLVERS if m(spec)), None)
    if factory is None:
        known = ", ".join(agent_names()) or "none"
        provider, sep, _ = spec.partition("/")
        if sep and provider:  # a model string: the models layer's one parser words what is wrong
            _check_model_string(spec)
        raise AgentSpecError(f"unknown agent spec {spec!r} (known: {known}, or a model string provider/model)")
    return factory(spec, seat, rules, seed)


def _check_model_string(spec: str) -> None:
    """Raise :class:`AgentSpecError` with :func:`mafialab.models.parse_model_spec`'s message for ``spec``.

    An unknown provider or a provider with no model name reads as it does for every other
    model option (``--judge``, ``--model``, ``--annotator``).
    """
    from mafialab.models import ModelSpecError, parse_model_spec

    try:
        parse_model_spec(spec)
    except ModelSpecError as err:
        raise AgentSpecError(str(err)) from None
