"""What a person at a human seat is asked: plain questions, never the model-facing decision text."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from mafialab.agents import Renderer
from mafialab.config import read_config
from mafialab.engine import Decision, PlayerView

QUESTIONS_FILE = "questions.yaml"
"""The questions, by decision key, shipped in ``mafialab/remote/``."""


@functools.cache
def person_questions() -> dict[str, str]:
    """The question a person is asked for each decision key (``mafialab/remote/questions.yaml``).

    Keys are those of a prompt pack's ``decisions`` (a decision kind, ``speak_intro``,
    ``vote_statement``); values are ``str.format`` templates with the pack's placeholders.
    A person sees the legal options listed (numbered at the terminal, buttons in the page),
    so a question never states an answer format.

    Raises:
        ValueError: The shipped file is not a mapping of strings.
    """
    src = f"mafialab/remote/{QUESTIONS_FILE}"
    data: Any = read_config(resources.files("mafialab.remote").joinpath(QUESTIONS_FILE), source=src)
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise ValueError(f"{src}: expected a mapping of decision key -> question")
    return dict(data)


def person_question(renderer: Renderer, decision: Decision, view: PlayerView, max_chars: int) -> str:
    """The question for ``decision`` as a person at the seat reads it (the rule set's words filled in).

    Args:
        renderer: The seat's renderer (its rule set gives the words: ``{mafia}``, ``{kill}`` ...).
        decision: The decision.
        view: The seat's view.
        max_chars: Cap on the person's text, stated in the question.
    """
    return renderer.decision_prompt(decision, view, max_chars, templates=person_questions())
