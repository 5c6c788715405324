"""Strict parsing of model answers: no repair, failures carry their cause."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mafialab._json import loads_finite
from mafialab._words import kind_of
from mafialab.beliefshift._schema import FailureCause
from mafialab.models import ChatResponse

_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class Answer:
    """A model answer split into its parts.

    Attributes:
        obj: The JSON object of the answer, or ``None`` on failure.
        cause: Failure cause, or ``None``.
        detail: Error detail on failure.
        text: Answer text with reasoning removed.
        reasoning: Reasoning (the backend's separate channel, or ``<think>`` blocks), if any.
    """

    obj: dict[str, Any] | None
    cause: FailureCause | None
    detail: str
    text: str
    reasoning: str | None


def split_answer(resp: ChatResponse) -> Answer:
    """Classify a response and parse its JSON object.

    Rules (documented in ``docs/beliefshift.md``): a backend error is ``transport`` (or
    ``length``/``empty``/``schema`` when the backend says so); ``<think>...</think>`` blocks
    are moved to ``reasoning``; one surrounding Markdown code fence is removed; what remains
    must be exactly one JSON object (``non_json`` otherwise, ``empty`` if nothing remains).
    No other repair is attempted: the output was requested under a JSON schema.
    """
    reasoning = resp.reasoning
    text = resp.text or ""
    thoughts = _THINK.findall(text)
    if thoughts:
        text = _THINK.sub("", text)
        reasoning = "\n".join(x.strip() for x in ([reasoning] if reasoning else []) + thoughts)
    text = text.strip()
    if resp.error is not None:
        kind = resp.error_kind
        cause: FailureCause = "transport"
        if kind in ("length", "context"):  # generation cap hit, or the prompt exceeds the context
            cause = "length"
        elif kind == "empty":
            cause = "empty"
        elif kind == "schema":
            cause = "schema"
        return Answer(None, cause, resp.error, text, reasoning)
    if not text:
        return Answer(None, "empty", "empty answer", "", reasoning)
    m = _FENCE.match(text)
    body = m.group(1).strip() if m else text
    try:
        obj = loads_finite(body)  # NaN or Infinity: not JSON
    except ValueError as err:
        return Answer(None, "non_json", f"not JSON: {err}", text, reasoning)
    except RecursionError:  # degenerate deeply nested output
        return Answer(None, "non_json", "not JSON: nested too deeply", text, reasoning)
    if not isinstance(obj, dict):
        return Answer(None, "schema", f"expected a JSON object, found {kind_of(obj)}", text, reasoning)
    return Answer(obj, None, "", text, reasoning)
