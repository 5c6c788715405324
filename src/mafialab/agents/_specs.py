"""Agent specs for whole tables: per-seat overrides and shared model options."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from mafialab.agents._llm import is_model_spec
from mafialab.models import parse_model_spec


def parse_seat_overrides(items: list[str], n_seats: int) -> dict[int, str]:
    """Parse per-seat overrides ``N=SPEC`` (the CLI's ``--seat``) into ``{seat: spec}``.

    Raises:
        ValueError: Malformed item, seat out of range, or a seat given twice (message names
            the item).
    """
    out: dict[int, str] = {}
    for item in items:
        seat_s, sep, spec = item.partition("=")
        if not sep or not seat_s.strip().isdigit() or not spec.strip():
            raise ValueError(f"--seat: expected N=SPEC (e.g. 3=scripted), got {item!r}")
        seat = int(seat_s)
        if seat >= n_seats:
            raise ValueError(f"--seat: seat {seat} out of range 0..{n_seats - 1}")
        if seat in out:
            raise ValueError(
                f"--seat: seat {seat} is given twice ({seat}={out[seat]} and {item.strip()}); give each seat once"
            )
        out[seat] = spec.strip()
    return out


def with_model_options(spec: str, options: dict[str, Any]) -> str:
    """Add model options (``max_tokens``, ``base_url``, ...) to a model spec.

    Options already in the spec win; ``base_url`` and ``api_key_env`` only go to
    ``openai/`` models; a spec that is not a model string (``scripted``) is returned as is.

    Example: ``with_model_options("openai/m?max_tokens=3", {"max_tokens": 9, "temperature": 0.5})``
    gives ``"openai/m?max_tokens=3&temperature=0.5"`` (keys in that order).
    """
    if not is_model_spec(spec) or not options:
        return spec
    model, given = parse_model_spec(spec)
    opts = {**options, **given}
    if not model.startswith("openai/"):
        for key in ("base_url", "api_key_env"):
            if key in options:
                opts.pop(key, None)
    query = urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in opts.items()})
    return f"{model}?{query}" if query else model


def table_specs(
    default: str, overrides: dict[int, str], n_seats: int, options: dict[str, Any] | None = None
) -> list[str]:
    """One agent spec per seat: ``overrides`` where given, else ``default``; model options added."""
    return [with_model_options(overrides.get(s, default), options or {}) for s in range(n_seats)]
