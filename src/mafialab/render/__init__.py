"""The one event → text renderer, shared by every layer that shows a game as text (layer ``render``).

Depends only on ``rules`` and ``engine``: ``agents`` (LLM prompts), ``beliefshift``
(observer histories), ``judge`` (transcripts) and ``viewer`` (exported with the site for
``app.js``) all render events with :class:`EventRenderer` and the templates of
:func:`load_event_templates` (``mafialab/render/events/en.yaml``); see ``docs/render.md``.
"""

from mafialab.render._quote import quote
from mafialab.render._templates import (
    BUILTIN_TEMPLATES,
    EVENT_KINDS,
    STYLES,
    Case,
    EventRenderer,
    EventTemplates,
    RenderedLine,
    Style,
    TemplateError,
    field_rules,
    lexicon_words,
    load_event_templates,
    past_tense,
)

__all__ = [
    "BUILTIN_TEMPLATES",
    "EVENT_KINDS",
    "STYLES",
    "Case",
    "EventRenderer",
    "EventTemplates",
    "RenderedLine",
    "Style",
    "TemplateError",
    "field_rules",
    "lexicon_words",
    "load_event_templates",
    "past_tense",
    "quote",
]
