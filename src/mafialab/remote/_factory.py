"""The agent factory of seat specs played from outside the process (``remote``, ``human-web``, ``human``).

Its own module, above both kinds of seat: :mod:`mafialab.remote._seats` (HTTP seats) and
:mod:`mafialab.remote._human` (the terminal seat, which builds on the former) never import it.
"""

from __future__ import annotations

from typing import Any

from mafialab.remote._human import HumanTerminalAgent, ProbedHumanTerminalAgent
from mafialab.remote._seats import ProbedRemoteAgent, RemoteAgent, parse_seat_spec
from mafialab.rules import RuleSet


def seat_factory(spec: str, seat: int, rules: RuleSet, seed: int) -> Any:
    """Agent factory for ``remote``, ``human-web`` and ``human`` specs (registered with ``register_agent_resolver``).

    Returns:
        A :class:`RemoteAgent` (a :class:`ProbedRemoteAgent` with ``probe=1``), or a
        :class:`~mafialab.remote.HumanTerminalAgent` for ``human`` (probed with ``probe=1``).

    Raises:
        SeatSpecError: A malformed spec.
    """
    parsed = parse_seat_spec(spec)
    if parsed.kind == "human":
        human = ProbedHumanTerminalAgent if parsed.probe else HumanTerminalAgent
        return human(seat, rules, seed, parsed)
    cls = ProbedRemoteAgent if parsed.probe else RemoteAgent
    return cls(seat, rules, seed, parsed)
