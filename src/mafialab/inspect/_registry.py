"""Entry point of the ``inspect_ai`` group: registers the tasks ``mafialab/beliefshift``, ``mafialab/game``
and the model provider ``mafialab/``."""

from mafialab.inspect import beliefshift, game
from mafialab.inspect._provider import mafialab_provider

__all__ = ["beliefshift", "game", "mafialab_provider"]
