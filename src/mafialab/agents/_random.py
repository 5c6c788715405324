"""The uniformly random baseline agent."""

from __future__ import annotations

from mafialab.engine import Action, Decision, PlayerView, stream
from mafialab.rules import RuleSet

_LINES = (
    "I am still making up my mind.",
    "Nothing stands out to me yet.",
    "Let us hear from everyone first.",
    "I will vote with my gut today.",
)


class RandomAgent:
    """Uniformly random legal actions from the agent's own stream ``agent:<seat>``.

    Args:
        seat: The seat played.
        seed: The game seed.

    Setting ``seed`` restarts the stream from that seed: a copy given its own seed (a
    bifurcation resample, a retest repeat) draws reproducibly, whatever the order in which
    the copies are asked.
    """

    label = "random"

    def __init__(self, seat: int, seed: int):
        self.seat = seat
        self.seed = seed

    @property
    def seed(self) -> int:
        """The seed the agent's stream ``agent:<seat>`` started from."""
        return self._seed

    @seed.setter
    def seed(self, value: int) -> None:
        self._seed = value
        self._rng = stream(value, f"agent:{self.seat}")

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        """Pick a uniformly random legal target (or choice) and a stock line of text."""
        target = self._rng.choice(decision.options) if decision.wants_target else None
        text = self._rng.choice(_LINES) if decision.needs_text else None
        choice = self._rng.choice(decision.choices) if decision.choices else None
        return Action(decision=decision.id, seat=decision.seat, target=target, text=text, choice=choice)


def random_factory(spec: str, seat: int, rules: RuleSet, seed: int) -> RandomAgent:
    """Agent factory for the ``random`` spec."""
    return RandomAgent(seat, seed)
