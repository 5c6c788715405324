"""mafialab games as PettingZoo environments (layer ``env``; optional extra ``mafialab[env]``).

``env(rules=...)`` builds an AEC environment (one seat acts at a time, as the engine asks),
``parallel_env(rules=...)`` a parallel one (one step per batch of simultaneous decisions).
Agents are seats; an observation is the seat's view (the engine's one visibility function)
as the text an LLM seat reads, plus a structured dict (decision kind, phase, round, role,
alive seats, the mask of legal choices); an action is ``{"choice": seat or nobody, "text":
speech}``. Games are logged as ``play`` logs them, so ``report`` and ``view`` read RL
episodes. See ``docs/env.md``.

This package imports without PettingZoo; :func:`env` and :func:`parallel_env` raise
:class:`ImportError` naming the extra when it is missing.
"""

from mafialab.env._core import KINDS, Rewards
from mafialab.env._make import env, parallel_env

__all__ = ["KINDS", "Rewards", "env", "parallel_env"]
