"""Entry point of the ``inspect_ai`` group: registers ``mafialab/beliefshift``, ``mafialab/game``, ``mafialab/``.

The two tasks and the model provider ``mafialab/`` (mafialab's backends inside Inspect).
"""

from mafialab.inspect import beliefshift, game
from mafialab.inspect._provider import mafialab_provider

__all__ = ["beliefshift", "game", "mafialab_provider"]
