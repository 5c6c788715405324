"""The one event → text renderer, shared by every layer that shows a game as text (layer ``render``).

Depends only on ``rules`` and ``engine``: ``agents`` (LLM prompts), ``beliefshift``
(observer histories), ``judge`` (transcripts) and ``viewer`` (exported with the site for
``app.js``) all render events with :class:`EventRenderer` and the templates of
:func:`load_event_templates` (``mafialab/render/events/en.yaml``); see ``docs/render.md``.
"""

# Names below marked ``X as X`` are used by other mafialab packages and are not public API
# (not in __all__, not in docs/api.md); they may change without notice.

from mafialab.render._quote import quote
from mafialab.render._templates import BUILTIN_TEMPLATES as BUILTIN_TEMPLATES
from mafialab.render._templates import EVENT_KINDS as EVENT_KINDS
from mafialab.render._templates import STYLES as STYLES
from mafialab.render._templates import (
    Case,
    EventRenderer,
    TemplateError,
    load_event_templates,
)
from mafialab.render._templates import EventTemplates as EventTemplates
from mafialab.render._templates import RenderedLine as RenderedLine
from mafialab.render._templates import Style as Style
from mafialab.render._templates import field_rules as field_rules
from mafialab.render._templates import lexicon_words as lexicon_words
from mafialab.render._templates import past_tense as past_tense

__all__ = [
    "Case",
    "EventRenderer",
    "TemplateError",
    "load_event_templates",
    "quote",
]
