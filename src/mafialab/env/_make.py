"""The constructors: :func:`env` (AEC) and :func:`parallel_env`; PettingZoo is imported only here."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mafialab.env._core import Rewards
from mafialab.rules import RuleSet

if TYPE_CHECKING:
    from mafialab.env._pettingzoo import MafiaEnv, MafiaParallelEnv

EXTRA_HINT = "mafialab.env needs PettingZoo, an optional extra: pip install 'mafialab[env]'"
"""The error when PettingZoo is missing."""


def _table(**kwargs: Any) -> Any:
    try:
        import pettingzoo  # noqa: F401
    except ImportError as err:
        raise ImportError(EXTRA_HINT) from err
    from mafialab.env._pettingzoo import _Table

    return _Table(**kwargs)


def env(
    rules: RuleSet | str | Path = "werewolf7",
    *,
    seed: int | None = None,
    out: str | Path | None = None,
    render_mode: str | None = None,
    rewards: Rewards | None = None,
    pack: str | Path = "en",
    agent_labels: Sequence[str] | None = None,
) -> MafiaEnv:
    """A mafialab game as a PettingZoo AEC environment (agents ``seat_0`` … ``seat_<n-1>``).

    Each step answers the decision the engine asks next, one seat at a time (decisions asked
    together, such as a night's actions or a secret vote, are asked in decision order; none
    sees another's answer). See ``docs/env.md`` for the spaces, the mask and the rewards.

    Args:
        rules: A rule set, or a name, versioned id or YAML path (as ``--rules``).
        seed: The first game's seed (the engine's; a :meth:`reset` without a seed plays the
            last game's seed plus one, and without any a seed is drawn and recorded).
        out: Parent directory of the logs: every game is written as ``play`` writes it
            (``<out>/<game id>/game.jsonl``), so ``report`` and ``view`` read RL episodes.
            ``None``: no log.
        render_mode: ``"ansi"`` (:meth:`render` returns the transcript), ``"human"`` (printed
            as the game goes) or ``None``.
        rewards: The reward scheme (default :class:`Rewards`: +1 to every seat of the
            winning team at the end, -1 to the others).
        pack: The prompt pack whose text observations use (the text an LLM seat reads).
        agent_labels: The roster's agent label per seat (default ``"env"``).

    Raises:
        ImportError: PettingZoo is not installed (``pip install 'mafialab[env]'``).
        RuleSetError: An unknown or invalid rule set.
        ValueError: A bad ``render_mode``, ``seed`` or ``agent_labels`` (the message names it), or a
            mission rule set (``resistance5``, ``avalon5``: the spaces are made for elimination games).
    """
    table = _table(
        rules=rules,
        seed=seed,
        out=out,
        render_mode=render_mode,
        rewards=rewards or Rewards(),
        pack=pack,
        agent_labels=agent_labels,
    )
    from mafialab.env._pettingzoo import MafiaEnv

    return MafiaEnv(table)


def parallel_env(
    rules: RuleSet | str | Path = "werewolf7",
    *,
    seed: int | None = None,
    out: str | Path | None = None,
    render_mode: str | None = None,
    rewards: Rewards | None = None,
    pack: str | Path = "en",
    agent_labels: Sequence[str] | None = None,
) -> MafiaParallelEnv:
    """The same game as a PettingZoo parallel environment: each step answers one batch.

    A batch is what the engine asks together: every seat with a pending decision answers it
    in one :meth:`step` (the night's actions, a secret vote), and a step of a speech or of a
    sequential vote has one acting seat. Actions of seats with nothing to decide are ignored.
    Arguments, spaces and rewards as for :func:`env`.

    Raises:
        ImportError: PettingZoo is not installed (``pip install 'mafialab[env]'``).
        RuleSetError: An unknown or invalid rule set.
        ValueError: A bad ``render_mode``, ``seed`` or ``agent_labels``, or a mission rule set.
    """
    table = _table(
        rules=rules,
        seed=seed,
        out=out,
        render_mode=render_mode,
        rewards=rewards or Rewards(),
        pack=pack,
        agent_labels=agent_labels,
    )
    from mafialab.env._pettingzoo import MafiaParallelEnv

    return MafiaParallelEnv(table)
