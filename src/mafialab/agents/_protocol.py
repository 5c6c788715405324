"""The agent protocol and the registry of agent specs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
_RESOLVERS: list[tuple[Callable[[str], bool], AgentFactory, Callable[[], Sequence[str]]]] = []


def register_agent(name: str, factory: AgentFactory) -> None:
    """Register a factory for the exact agent spec ``name`` (``"scripted"``, ``"random"``)."""
    _FACTORIES[name] = factory


def register_agent_resolver(
    matches: Callable[[str], bool],
    factory: AgentFactory,
    forms: Sequence[str] | Callable[[], Sequence[str]] = (),
) -> None:
    """Register a factory for every spec that ``matches`` accepts (e.g. model strings).

    Args:
        matches: Whether a spec is one of this factory's.
        factory: Builds the agent.
        forms: The specs it accepts in words, for the message of an unknown spec
            (``("remote", "human", "human-web")``), or a function giving them when the
            message is written (a list that grows as providers register).
    """
    _RESOLVERS.append((matches, factory, forms if callable(forms) else (lambda: tuple(forms))))


def agent_names() -> list[str]:
    """Exact agent specs registered so far."""
    return sorted(_FACTORIES)


def agent_spec_forms() -> list[str]:
    """Every kind of agent spec registered so far, in words: exact names, then each resolver's forms.

    E.g. ``["random", "scripted", "a model string PROVIDER/MODEL (PROVIDER: bus, local, mock,
    openai)", "remote", "human", "human-web"]`` once :mod:`mafialab.remote` is imported (it
    registers the seat specs). The one list that an unknown spec's message names.
    """
    return [*agent_names(), *(form for _, _, forms in _RESOLVERS for form in forms())]


def make_agent(spec: str, seat: int, rules: RuleSet, seed: int) -> Agent:
    """Build the agent for ``spec`` at ``seat``.

    Raises:
        AgentSpecError: If no factory accepts ``spec``; the message lists
            :func:`agent_spec_forms`.
    """
    factory = _FACTORIES.get(spec)
    if factory is None:
        factory = next((f for m, f, _ in _RESOLVERS if m(spec)), None)
    if factory is None:
        forms = agent_spec_forms()
        words = [f for f in forms if " " not in f]  # names (random, human); phrases (a model string …) last
        phrases = [f for f in forms if " " in f]
        known = ", ".join(words) + (f"{', ' if words else ''}or {' or '.join(phrases)}" if phrases else "")
        provider, sep, _ = spec.partition("/")
        if sep and provider:  # a model string: the models layer's one parser words what is wrong
            _check_model_string(spec)
        raise AgentSpecError(f"unknown agent spec {spec!r} (known: {known or 'none'})")
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
