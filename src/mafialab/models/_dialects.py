"""Structured-output dialects of OpenAI-compatible servers, declared as data.

Every server family takes a JSON schema in its own request field. A :class:`Dialect` says
which field carries it and what the field's value looks like (a template with
:data:`SCHEMA` where the schema goes), whether the official SDK knows the field (else it
travels in ``extra_body``), and which words in an error message blame that field. The
OpenAI backend (``models/_openai.py``) builds every request from this table and never
branches on a server's name.

Request shapes as the servers document them:

* ``json_schema``: OpenAI's ``response_format={"type": "json_schema", "json_schema":
  {"name", "schema", "strict"}}`` (OpenAI Chat Completions API reference); read by vLLM,
  SGLang, llama.cpp's ``llama-server``, LM Studio, and Ollama's ``/v1`` endpoint (which maps
  ``json_schema.schema`` onto its own ``format``).
* ``json_object``: ``response_format={"type": "json_object", "schema": {...}}``
  (llama-cpp-python's server, whose ``response_format.type`` accepts only ``text`` or
  ``json_object``; ``llama-server`` reads it too).
* ``structured_outputs``: vLLM >= 0.10.2's extra parameter ``structured_outputs={"json": {...}}``.
* ``guided_json``: vLLM's older extra parameter ``guided_json={...}`` (removed in vLLM 0.12).
* ``format``: Ollama's native request field ``format={...}`` (its ``/api/chat``), for
  proxies that pass Ollama's fields through.
* ``prompt``: no field; the schema is written into the last user message. The last resort:
  nothing constrains decoding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jsonschema

from mafialab.models._protocol import ChatMessage, ChatRequest, ChatResponse, ModelSpecError

SCHEMA = "<the JSON schema>"
"""Placeholder in a :attr:`Dialect.template` for the request's JSON schema."""

PROMPT_SCHEMA_NOTE = "Reply with only a JSON object (no prose, no code fence) that follows this JSON schema:\n{schema}"
"""Appended to the last user message by dialects with ``prompt_note`` (``{schema}``: the schema as JSON)."""


@dataclass(frozen=True)
class Dialect:
    """How one family of servers takes a JSON schema in a chat-completions request.

    Attributes:
        name: The ``json_mode`` value that selects it.
        field: Top-level request field that carries the schema, or ``None`` (prompt only).
        template: The field's value, with :data:`SCHEMA` where the schema goes.
        sdk_field: Whether the ``openai`` SDK has a parameter for ``field`` (else the field is
            sent through ``extra_body``, which the SDK merges into the JSON body).
        prompt_note: The schema is also written into the last user message
            (:data:`PROMPT_SCHEMA_NOTE`).
        servers: Servers documented to read this shape.
        reference: Where the shape is documented.
        blame: Lower-case words that, found in an error message, mean the server refused
            this dialect's field.
    """

    name: str
    field: str | None
    template: Any
    sdk_field: bool
    prompt_note: bool
    servers: tuple[str, ...]
    reference: str
    blame: tuple[str, ...]

    def apply(self, body: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        """``body`` (an SDK ``create`` keyword dict) with ``schema`` placed this dialect's way.

        The field goes to the top level when the SDK knows it, else into ``extra_body``
        (request fields already in ``extra_body``, i.e. the user's ``extra``, win).
        Returns a new dict; ``body`` is not changed.
        """
        out = dict(body)
        if self.field is not None:
            value = _fill(self.template, schema)
            if self.sdk_field:
                out[self.field] = value
            else:
                out["extra_body"] = {self.field: value, **out.get("extra_body", {})}
        if self.prompt_note:
            messages = [dict(m) for m in out["messages"]]
            note = PROMPT_SCHEMA_NOTE.format(schema=json.dumps(schema, ensure_ascii=False))
            last = next(i for i in range(len(messages) - 1, -1, -1) if messages[i]["role"] != "assistant")
            messages[last]["content"] = messages[last]["content"] + "\n\n" + note
            out["messages"] = messages
        return out

    def schema_in(self, wire_body: dict[str, Any]) -> Any:
        """The schema a request body (as sent on the wire) carries in this dialect's way, else ``None``.

        The inverse of :meth:`apply`, used by test servers that emulate one dialect: the
        body's field must match the template's fixed parts (e.g. ``type: json_object``).
        """
        if self.field is not None:
            return _match(self.template, wire_body.get(self.field))
        if self.prompt_note:
            for m in reversed(wire_body.get("messages", [])):
                marker = PROMPT_SCHEMA_NOTE.split("{schema}")[0]
                content = str(m.get("content", ""))
                if marker in content:
                    try:
                        return json.loads(content.rsplit(marker, 1)[1])
                    except ValueError:
                        return None
        return None

    def blamed_by(self, message: str) -> bool:
        """Whether an error message names this dialect's field (case-insensitive)."""
        text = message.lower()
        return any(word in text for word in self.blame)


DIALECTS: tuple[Dialect, ...] = (
    Dialect(
        name="json_schema",
        field="response_format",
        template={"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True}},
        sdk_field=True,
        prompt_note=False,
        servers=("OpenAI", "vLLM", "SGLang", "llama.cpp llama-server", "LM Studio", "Ollama >= 0.5 (/v1)"),
        reference="OpenAI Chat Completions API reference: response_format; vLLM, SGLang structured outputs docs",
        blame=("response_format", "json_schema"),
    ),
    Dialect(
        name="json_object",
        field="response_format",
        template={"type": "json_object", "schema": SCHEMA},
        sdk_field=True,
        prompt_note=False,
        servers=("llama-cpp-python server", "llama.cpp llama-server"),
        reference="llama-cpp-python: ChatCompletionRequestResponseFormat (type text|json_object, schema)",
        blame=("response_format", "json_object"),
    ),
    Dialect(
        name="structured_outputs",
        field="structured_outputs",
        template={"json": SCHEMA},
        sdk_field=False,
        prompt_note=False,
        servers=("vLLM >= 0.10.2",),
        reference="vLLM docs, Structured Outputs: extra parameter structured_outputs.json",
        blame=("structured_outputs",),
    ),
    Dialect(
        name="guided_json",
        field="guided_json",
        template=SCHEMA,
        sdk_field=False,
        prompt_note=False,
        servers=("vLLM < 0.12",),
        reference="vLLM docs (<= 0.11), Structured Outputs: extra parameter guided_json",
        blame=("guided_json", "guided_decoding"),
    ),
    Dialect(
        name="format",
        field="format",
        template=SCHEMA,
        sdk_field=False,
        prompt_note=False,
        servers=("Ollama native field (/api/chat), proxies passing it through",),
        reference="Ollama API docs: chat request field format (a JSON schema)",
        blame=("format",),
    ),
    Dialect(
        name="prompt",
        field=None,
        template=None,
        sdk_field=False,
        prompt_note=True,
        servers=("any server (last resort: decoding is not constrained)",),
        reference="-",
        blame=(),
    ),
)
"""Every dialect, in the order ``json_mode=auto`` tries them."""

DIALECT_NAMES: tuple[str, ...] = tuple(d.name for d in DIALECTS)
"""Names accepted by ``json_mode`` besides ``auto``."""

_ALIASES = {"schema": "json_schema"}  # the name json_mode used before dialects were declared


def get_dialect(name: str) -> Dialect:
    """The dialect called ``name`` (``schema`` is accepted for ``json_schema``).

    Raises:
        ModelSpecError: Unknown name; the message names ``json_mode`` and lists the known ones.
    """
    name = _ALIASES.get(name, name)
    for d in DIALECTS:
        if d.name == name:
            return d
    raise ModelSpecError(f"json_mode: expected auto or one of {', '.join(DIALECT_NAMES)}, got {name!r}")


def next_dialect(name: str) -> Dialect | None:
    """The dialect ``auto`` tries after ``name``, or ``None`` after the last."""
    names = list(DIALECT_NAMES)
    i = names.index(get_dialect(name).name)
    return DIALECTS[i + 1] if i + 1 < len(DIALECTS) else None


PROBE_NAMES = ("Alex", "Blair")
"""The two legal names of the preflight probe."""


def probe_schema() -> dict[str, Any]:
    """The preflight probe's schema: a targeted decision with two legal names (as a game's vote)."""
    return {
        "type": "object",
        "properties": {"target": {"type": "string", "enum": list(PROBE_NAMES)}},
        "required": ["target"],
        "additionalProperties": False,
    }


def probe_request(max_tokens: int | None) -> ChatRequest:
    """One tiny request shaped like a game's vote: two legal names, the run's ``max_tokens``.

    The prompt does not spell out JSON, so a server that ignores a dialect's field answers
    free text and that dialect is not chosen.
    """
    names = " and ".join(PROBE_NAMES)
    return ChatRequest(
        messages=[
            ChatMessage(role="system", content="You are a player in a game of Werewolf."),
            ChatMessage(role="user", content=f"Two players remain: {names}. Vote to eliminate one of them."),
        ],
        json_schema=probe_schema(),
        max_tokens=max_tokens,
        temperature=0.0,
        purpose="preflight",
    )


def answer_problem(resp: ChatResponse, schema: dict[str, Any]) -> str | None:
    """Why ``resp`` is not a usable answer to a request with ``schema``, or ``None`` if it is.

    Usable: no error, and the parsed JSON validates against ``schema`` (``jsonschema``).
    """
    if not resp.ok:
        return resp.error or "no answer"
    if resp.parsed is None:
        return "answer is not JSON"
    try:
        jsonschema.validate(resp.parsed, schema)
    except jsonschema.ValidationError as err:
        return f"answer does not fit the schema ({err.message[:60]})"
    return None


@dataclass(frozen=True)
class DialectChoice:
    """The outcome of a preflight's dialect probes for one backend.

    Attributes:
        model: Model string (``openai/...``).
        dialect: The dialect chosen for every later call, or ``None`` when none gave a
            usable answer.
        tried: ``(dialect, outcome)`` in the order tried; outcome ``ok`` or why not.
        reachable: ``False`` when the server did not answer at all (transport error,
            authentication, unknown model): no dialect can help then.
        max_tokens: The generation cap the probes used.
    """

    model: str
    dialect: str | None
    tried: tuple[tuple[str, str], ...]
    reachable: bool = True
    max_tokens: int | None = None

    @property
    def usable(self) -> bool:
        """Whether a dialect gave a schema-valid answer."""
        return self.dialect is not None

    def line(self) -> str:
        """One line for the user: the choice and what was tried, or why nothing worked."""
        tried = "; ".join(f"{name}: {_short(outcome)}" for name, outcome in self.tried)
        if not self.reachable:
            return f"{self.model} did not answer a test call ({tried})"
        if self.usable:
            return f"{self.model}: structured output as {self.dialect} (tried {tried})"
        cap = f" at max_tokens={self.max_tokens}" if self.max_tokens is not None else ""
        return f"{self.model} gave no schema-valid answer{cap} in any structured-output dialect (tried {tried})"


def _short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _fill(template: Any, schema: dict[str, Any]) -> Any:
    if template == SCHEMA:
        return schema
    if isinstance(template, dict):
        return {k: _fill(v, schema) for k, v in template.items()}
    return template


def _match(template: Any, value: Any) -> Any:
    """The value at the :data:`SCHEMA` position of ``template`` in ``value``, if the fixed parts match."""
    if template == SCHEMA:
        return value if isinstance(value, dict) else None
    if isinstance(template, dict):
        if not isinstance(value, dict):
            return None
        found = None
        for k, t in template.items():
            if t == SCHEMA or isinstance(t, dict):
                sub = _match(t, value.get(k))
                if sub is None:
                    return None
                found = sub
            elif k == "type" and value.get(k) != t:
                return None
        return found
    return None
