"""Event → text rendering shared by every layer that shows a game as text (layer ``render``).

Depends only on ``rules`` and ``engine``; ``agents`` (prompts), ``beliefshift`` (observer
histories), ``judge`` (transcripts) and ``viewer`` import it.
"""

from mafialab.render._quote import quote

__all__ = ["quote"]
