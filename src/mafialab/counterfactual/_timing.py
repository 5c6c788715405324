"""How long model calls take, measured in a recorded game's ``calls.jsonl`` (for ``--dry-run`` estimates)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from mafialab._words import count
from mafialab.models import parse_model_spec
from mafialab.record import CALLS_FILE, GameLog, iter_call_records, person_seats


@dataclass(frozen=True)
class CallTiming:
    """Seconds per model call, as measured, and where the measure comes from.

    Attributes:
        seconds_per_call: Mean latency of the measured calls in seconds; ``None`` when no
            call was measured (then no time can be estimated).
        calls: How many calls were measured (each attempt is a call).
        basis: Where the measure comes from, in words (``mean 4.02 s of 412 calls of seat 3
            in the parent's calls.jsonl``), or why there is none.
    """

    seconds_per_call: float | None
    calls: int
    basis: str

    def seconds(self, calls: float) -> float | None:
        """Seconds ``calls`` calls take one after the other (``None`` when unmeasured)."""
        return None if self.seconds_per_call is None else calls * self.seconds_per_call


def _calls_models(spec: str) -> bool:
    """Whether an agent spec is played by a model (``provider/model…``), not ``scripted``, ``random``, …."""
    return "/" in spec.split("?", 1)[0]


def call_timing(plog: GameLog, *, seats: Collection[int] | None = None, spec: str | None = None) -> CallTiming:
    """The mean latency of a recorded game's model calls, read from its ``calls.jsonl``.

    Args:
        plog: The game (its folder holds ``calls.jsonl``).
        seats: Only the calls of these seats (``None``: every seat's).
        spec: An agent spec given instead of the game's own (``--agents``, ``--sampler``): only
            the calls of its model (``openai/gpt-4o`` of ``openai/gpt-4o?base_url=…``). A
            spec that is no model (``scripted``), or ``seats`` all played by no model in the
            game's roster, make no calls: 0 s each.

    Returns:
        The timing; ``seconds_per_call`` is ``None`` when the game holds no such call.
    """
    where = f"the parent's {CALLS_FILE}"
    model: str | None = None
    if spec is not None:
        if not _calls_models(spec):
            return CallTiming(0.0, 0, f"{spec} agents make no model calls")
        model = parse_model_spec(spec)[0]
    else:
        roster = [s.agent for s in plog.header.roster if seats is None or s.seat in seats]
        if roster and not any(_calls_models(a) for a in roster):
            kinds = ", ".join(sorted(set(roster)))
            return CallTiming(0.0, 0, f"{kinds} agents make no model calls")
    if not (plog.path / CALLS_FILE).is_file():
        return CallTiming(None, 0, f"no measured latency: the parent has no {CALLS_FILE}")
    persons = person_seats(plog.header.meta.get("agents"))
    latencies = [
        int(c.get("latency_ms") or 0)
        for _, c in iter_call_records(plog.path, game_id=plog.game_id, warn=False)
        if c.get("kind", "call") == "call"
        and c.get("seat") not in persons
        and (seats is None or c.get("seat") in seats)
        and (model is None or c.get("model") == model)
    ]
    whose = f" of {model}" if model is not None else ""
    if seats is not None:
        whose += f" of seat {', '.join(map(str, sorted(seats)))}"
    if not latencies:
        return CallTiming(None, 0, f"no measured latency: {where} holds no call{whose}")
    mean = sum(latencies) / len(latencies) / 1000
    return CallTiming(mean, len(latencies), f"mean {mean:.2f} s of {count(len(latencies), 'call')}{whose} in {where}")
