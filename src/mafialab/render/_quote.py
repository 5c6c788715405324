"""Quoting of model-written text inside rendered lines."""

from __future__ import annotations

import json


def quote(text: str) -> str:
    """Model-written text as one JSON string literal (newlines and quotes escaped).

    Model output is untrusted: quoted, a message containing ``SYSTEM:``, ``[GAME]`` or a
    newline stays on its speaker's line, so it can never start a moderator line, a fake
    event or a new prompt section.

    Args:
        text: The player's text (any string).

    Returns:
        A one-line JSON string literal, non-ASCII kept as is.
    """
    return json.dumps(text, ensure_ascii=False)
