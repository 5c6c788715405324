"""The probe DSL: batteries of private belief questions, loaded from YAML and validated."""

from __future__ import annotations

import functools
import hashlib
import json
import string
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mafialab.config import ConfigError, read_config, top_level_message, validation_message

When = Literal["always", "own_turn", "round_end", "night_action"]
"""When a probe runs (see :class:`ProbeSpec`)."""

BUILTIN_BATTERIES = ("default", "suspicion", "light", "mission", "logprob-suspicion")
"""Names of the batteries shipped as package data (``mafialab/probes/batteries/<name>.yaml``)."""

FIXED_PLACEHOLDERS = ("player", "players", "others", "roles", "mafia_team")
"""Template fields every question may use besides ``prev_<id>`` and ``last_<id>``."""

PREAMBLE_PLACEHOLDERS = ("players", "roles", "mafia_team")
"""Template fields a battery's preamble may use: those equal for every seat at a trigger."""

SCHEMA_LISTS = ("$players", "$others", "$roles")
"""Items of an ``enum`` list in a probe schema that expand, per call, into the alive players,
the alive players other than the one probed, or the rule set's role names plus ``Unknown``."""

NOT_AVAILABLE = "N/A"
"""Text spliced for a ``{prev_<id>}``/``{last_<id>}`` that has no answer yet (MafiaScope's word)."""


class ProbeBatteryError(ConfigError):
    """A probe battery could not be loaded; the message names the source and the field."""


class ProbeSpec(BaseModel):
    """One probe question.

    Attributes:
        id: Probe id (an identifier: letters, digits, ``_``; unique in the battery), e.g.
            ``role_assessment``. Records and chaining placeholders refer to it.
        question: A Python ``str.format`` template (literal braces written ``{{ }}``) with the
            fields ``{player}`` (the probed player's name), ``{players}`` (alive players,
            comma-separated, the probed one included), ``{others}`` (alive players but the
            probed one), ``{roles}`` (role names of the rule set and ``Unknown``, joined by
            ``|``), ``{mafia_team}`` (the hidden team's display name), ``{prev_<id>}`` (this
            step's answer of an earlier probe ``<id>``) and ``{last_<id>}`` (the agent's
            previous answer of probe ``<id>``). Missing answers render as ``N/A``.
        when: ``always`` (at every trigger the agent is probed at: after each public
            message, at the end of each round, and after its own night action),
            ``own_turn`` (after the agent's own public message or night action only),
            ``round_end`` (at the end of each round only) or ``night_action`` (after the
            agent's own night action only).
        max_tokens: Answer cap in tokens (>= 1; MafiaScope's default 300).
        json_schema: JSON schema (draft 2020-12) of the answer, written ``schema:`` in YAML;
            sent for constrained decoding and used to validate the answer. ``enum`` lists may
            hold ``"$players"``, ``"$others"`` and ``"$roles"`` (see :data:`SCHEMA_LISTS`).
            ``None``: free JSON, only parsed.
        kind: ``answer`` (the model writes an answer) or ``logprob`` (no text is generated:
            each of :attr:`candidates` is scored by the model's log-probability of its
            tokens as the answer, and the record carries the normalised distribution; see
            docs/probes.md). A ``logprob`` probe has no schema and ignores ``max_tokens``.
        candidates: A ``logprob`` probe's answers: ``"$players"``, ``"$others"``,
            ``"$roles"`` (expanded per call as in schemas) or a list of fixed texts (a
            scale: ``["0", "1", "2"]``); at least two, none repeated.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    id: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64)
    question: str = Field(min_length=1)
    when: When = "always"
    max_tokens: int = Field(default=300, ge=1, le=65536)
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    kind: Literal["answer", "logprob"] = "answer"
    candidates: str | list[str] | None = None

    def placeholders(self) -> list[str]:
        """Field names used in :attr:`question`, in order of appearance."""
        return [f for _, f, _, _ in string.Formatter().parse(self.question) if f is not None]


class ProbeBattery(BaseModel):
    """A battery of probes and the triggers that run it.

    Attributes:
        name: Battery name (the built-in name or the file stem).
        description: Free text.
        enabled: MafiaScope's switch; a disabled battery runs no probe.
        after_each_message: Probe every alive agent after each public message (a speech or
            a public vote).
        after_each_round: Probe every alive agent at the end of each round (after the
            day's elimination, if the game goes on).
        after_night_action: Probe an agent after its own night action (kill vote, protect,
            investigate); ``None`` means "same as ``after_each_message``", which is how
            MafiaScope treats night turns.
        preamble: Text common to every probe call of the battery (what the questions are,
            how to answer), a ``str.format`` template with only the fields of
            :data:`PREAMBLE_PLACEHOLDERS` (equal for every seat at a trigger: no seat's own
            name, no answer). An LLM agent places it after the public transcript and before
            the seat's private block, so every probe call at one trigger shares the text up
            to there (a server's prefix cache serves it once per trigger, not once per
            seat); agents without that placement get it before the question. ``""``: none
            (MafiaScope configurations have none).
        probes: The probes, in the order they are asked at each trigger (>= 1).
        source_format: ``mafialab`` or ``mafiascope`` (an ``introspection:`` block).
        first_token: Score each candidate of the ``logprob`` probes by its first token
            alone (cheaper, an approximation; recorded with each answer as ``scoring``),
            instead of its whole token sequence.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "custom"
    description: str = ""
    enabled: bool = True
    after_each_message: bool = True
    after_each_round: bool = True
    after_night_action: bool | None = None
    preamble: str = ""
    probes: tuple[ProbeSpec, ...] = Field(min_length=1)
    source_format: Literal["mafialab", "mafiascope"] = "mafialab"
    first_token: bool = False

    @property
    def night_actions(self) -> bool:
        """Whether night actions trigger probes (resolving the ``None`` default)."""
        return self.after_each_message if self.after_night_action is None else self.after_night_action

    def fingerprint(self) -> str:
        """``<name>:<8 hex>``: the battery's name and sha256 of its content.

        The hash covers the JSON of every field but the description (and an empty
        preamble), so two batteries that
        ask anything differently differ. Recorded in a probed game's header (``meta.probes``) and part of its game id.
        """
        # fields at their defaults that came later (preamble, first_token, kind, candidates) are
        # left out, so a battery that does not use them hashes as before (its game ids stay)
        skip: dict[Any, Any] = {"description": True}
        if not self.preamble:
            skip["preamble"] = True
        if not self.first_token:
            skip["first_token"] = True
        plain = {i: {"kind": True, "candidates": True} for i, p in enumerate(self.probes) if p.kind == "answer"}
        if plain:
            skip["probes"] = plain
        body = self.model_dump_json(exclude=skip, by_alias=True)
        return f"{self.name}:{hashlib.sha256(body.encode()).hexdigest()[:8]}"

    def preamble_placeholders(self) -> list[str]:
        """Field names used in :attr:`preamble`, in order of appearance.

        Raises:
            ValueError: The preamble is not a valid ``str.format`` template.
        """
        return [f for _, f, _, _ in string.Formatter().parse(self.preamble) if f is not None]

    def probe(self, probe_id: str) -> ProbeSpec:
        """The probe with id ``probe_id``.

        Raises:
            KeyError: No such probe.
        """
        for p in self.probes:
            if p.id == probe_id:
                return p
        raise KeyError(probe_id)


# --------------------------------------------------------------------------- loading
def _check(battery: ProbeBattery, prefix: str) -> None:
    """Cross-field checks: unique ids, template fields, schemas."""
    pre = f"{prefix}." if prefix else ""
    ids = [p.id for p in battery.probes]
    try:
        pre_fields = battery.preamble_placeholders()
    except ValueError as err:
        raise ProbeBatteryError(
            f"{pre}preamble: not a valid template ({err}); write literal braces as {{{{ }}}}"
        ) from None
    for f in pre_fields:
        if f not in PREAMBLE_PLACEHOLDERS:
            allowed = ", ".join(f"{{{x}}}" for x in PREAMBLE_PLACEHOLDERS)
            shown = f"{{{f}}}" if f else "{} (an empty field)"
            raise ProbeBatteryError(
                f"{pre}preamble: placeholder {shown} is not allowed there; the preamble is the same for "
                f"every seat at a trigger and may use only {allowed} (write literal braces as {{{{ }}}})"
            )
    for i, p in enumerate(battery.probes):
        where = f"{pre}probes[{i}]"
        if p.id in ids[:i]:
            raise ProbeBatteryError(f"{where}.id: duplicate probe id {p.id!r}")
        try:
            fields = p.placeholders()
        except ValueError as err:
            raise ProbeBatteryError(
                f"{where}.question: not a valid template ({err}); write literal braces as {{{{ }}}}"
            ) from None
        for f in fields:
            if f in FIXED_PLACEHOLDERS:
                continue
            if f.startswith("prev_"):
                ref = f[len("prev_") :]
                if ref not in ids[:i]:
                    raise ProbeBatteryError(
                        f"{where}.question: {{{f}}} needs a probe {ref!r} earlier in the battery "
                        f"(earlier probes: {', '.join(ids[:i]) or 'none'})"
                    )
                continue
            if f.startswith("last_"):
                ref = f[len("last_") :]
                if ref not in ids:
                    raise ProbeBatteryError(
                        f"{where}.question: {{{f}}} names no probe of this battery ({', '.join(ids)})"
                    )
                continue
            allowed = ", ".join(f"{{{x}}}" for x in FIXED_PLACEHOLDERS)
            shown = f"{{{f}}}" if f else "{} (an empty field)"
            raise ProbeBatteryError(
                f"{where}.question: unknown placeholder {shown}; allowed: {allowed}, {{prev_<id>}}, {{last_<id>}} "
                "(write literal braces as {{ }})"
            )
        _check_kind(p, where)
        if p.json_schema is not None:
            try:
                jsonschema.Draft202012Validator.check_schema(p.json_schema)
            except jsonschema.SchemaError as err:
                path = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in err.absolute_path)
                raise ProbeBatteryError(f"{where}.schema{path}: not a valid JSON schema ({err.message})") from None


def _check_kind(p: ProbeSpec, where: str) -> None:
    """A ``logprob`` probe has candidates and no schema; an ``answer`` probe has no candidates."""
    if p.kind == "answer":
        if p.candidates is not None:
            raise ProbeBatteryError(f"{where}.candidates: only a probe of kind logprob has candidates")
        return
    if p.json_schema is not None:
        raise ProbeBatteryError(f"{where}.schema: a logprob probe has no schema (its answer is one of its candidates)")
    if p.candidates is None:
        raise ProbeBatteryError(
            f"{where}.candidates: a logprob probe needs candidates ($players, $others, $roles or a list)"
        )
    if isinstance(p.candidates, str):
        if p.candidates not in SCHEMA_LISTS:
            raise ProbeBatteryError(
                f"{where}.candidates: expected {', '.join(SCHEMA_LISTS)} or a list of texts, got {p.candidates!r}"
            )
        return
    if len(p.candidates) < 2 or len(set(p.candidates)) != len(p.candidates) or not all(c.strip() for c in p.candidates):
        raise ProbeBatteryError(f"{where}.candidates: at least two different non-empty texts, got {p.candidates!r}")


def probe_candidates(probe: ProbeSpec, lists: Mapping[str, Sequence[str]]) -> list[str]:
    """The candidates of a ``logprob`` probe at one call (``$players`` … expanded from ``lists``)."""
    if isinstance(probe.candidates, str):
        return list(lists[probe.candidates])
    return list(probe.candidates or [])


def battery_from_dict(data: Any, *, name: str = "custom", source: str = "battery") -> ProbeBattery:
    """Validate a battery from parsed YAML/JSON.

    ``data`` is either a mafialab battery mapping (keys of :class:`ProbeBattery`) or a
    MafiaScope configuration holding an ``introspection:`` block (keys ``enabled``,
    ``after_each_message``, ``after_each_round``, ``probes``; other top-level keys of that
    configuration are ignored), which loads unchanged.

    Args:
        data: The parsed document.
        name: Battery name when the document gives none.
        source: Where it came from, prefixed to error messages.

    Raises:
        ProbeBatteryError: Empty document (``the file is empty``), or an invalid battery; the
            message names the field of the bad probe, e.g. ``battery.yaml: probes[2].when:
            Input should be 'always', ...`` or ``probes[0].kind: unknown field 'kind'
            (allowed: id, question, ...)``.
    """
    if data is None:  # worded as the config loader words an empty file (config.load_config)
        raise ProbeBatteryError(
            f"{source}: the file is empty (expected a probe battery: a mapping with a 'probes' list)"
        )
    if not isinstance(data, Mapping):
        wanted = "a probe battery (a mapping with a 'probes' list)"
        raise ProbeBatteryError(f"{source}: {top_level_message(wanted, data)}")
    prefix = ""
    fmt = "mafialab"
    if "introspection" in data:
        block = data["introspection"]
        prefix, fmt = "introspection", "mafiascope"
        if not isinstance(block, Mapping):
            raise ProbeBatteryError(f"{source}: {top_level_message('a mapping of fields', block, ('introspection',))}")
        allowed = {"enabled", "after_each_message", "after_each_round", "probes"}
        extra = sorted(set(block) - allowed)
        if extra:
            raise ProbeBatteryError(
                f"{source}: introspection.{extra[0]}: unknown key (MafiaScope blocks have {', '.join(sorted(allowed))})"
            )
        listed = block.get("probes")
        for i, p in enumerate(listed if isinstance(listed, list) else []):  # other shapes: pydantic names them
            if isinstance(p, Mapping) and "when" in p and p["when"] not in ("always", "own_turn"):
                raise ProbeBatteryError(
                    f"{source}: introspection.probes[{i}].when: MafiaScope blocks allow always or own_turn, "
                    f"got {p['when']!r}"
                )
        data = {**block, "name": name, "source_format": fmt}
    else:
        data = {"name": name, **data}
    try:
        battery = ProbeBattery.model_validate(data)
    except ValidationError as err:
        msg = validation_message(err, (prefix,) if prefix else (), model=ProbeBattery)
        raise ProbeBatteryError(f"{source}: {msg}") from None
    try:
        _check(battery, prefix)
    except ProbeBatteryError as err:
        raise ProbeBatteryError(f"{source}: {err}") from None
    return battery


def load_battery(spec: str | Path) -> ProbeBattery:
    """Load a built-in battery by name or a YAML file by path.

    Args:
        spec: ``default``, ``suspicion``, ``light``, ``mission``, ``logprob-suspicion`` (see
            :data:`BUILTIN_BATTERIES`) or a path to a YAML file holding a mafialab battery or a
            MafiaScope configuration with an ``introspection:`` block.

    Returns:
        The validated battery.

    Raises:
        ProbeBatteryError: Unknown name, unreadable file or invalid battery (the message
            names the file and the field).
    """
    s = str(spec)
    if s in BUILTIN_BATTERIES:
        return _builtin_battery(s)
    path = Path(s)
    if not path.is_file():
        raise ProbeBatteryError(
            f"probes: {s!r} is neither a built-in battery ({', '.join(BUILTIN_BATTERIES)}, none) nor a YAML file"
        )
    data = read_config(path, error=ProbeBatteryError)
    return battery_from_dict(data, name=path.stem, source=str(path))


@functools.cache
def _builtin_battery(name: str) -> ProbeBattery:
    """A built-in battery, read and checked once per process.

    Batteries are frozen; checking each probe's schema against the JSON-schema metaschema is
    most of the reading.
    """
    res = resources.files("mafialab.probes").joinpath("batteries", f"{name}.yaml")
    data = read_config(res, error=ProbeBatteryError, source=name)
    return battery_from_dict(data, name=name, source=f"built-in battery {name}")


def resolve_battery(spec: str | Path | ProbeBattery | None) -> ProbeBattery | None:
    """Like :func:`load_battery`, but ``None``/``"none"`` and disabled batteries give ``None``.

    Raises:
        ProbeBatteryError: As :func:`load_battery`.
    """
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in ("", "none")):
        return None
    battery = spec if isinstance(spec, ProbeBattery) else load_battery(spec)
    return battery if battery.enabled and battery.probes else None


# --------------------------------------------------------------------------- rendering
CHAIN_MAX_CHARS = 16_000
"""Longest chained answer spliced into a later question (characters; longer ones are cut).

Four times what the largest built-in probe cap (900 tokens) can hold at 4 characters per
token, so a real answer is never cut; a backend that ignores the token cap (a 100 kB answer)
cannot make every later question of the seat carry it."""


def chain_text(parsed: Any, raw: str | None) -> str:
    """Text spliced for a chained answer: compact JSON of the parsed answer, else the raw text.

    Returns :data:`NOT_AVAILABLE` when there is neither (MafiaScope's revised chaining). A
    text longer than :data:`CHAIN_MAX_CHARS` is cut there and ends with ``…``.
    """
    if parsed is not None:
        text = json.dumps(parsed, ensure_ascii=False, separators=(",", ":"))
    elif raw and raw.strip():
        text = raw.strip()
    else:
        return NOT_AVAILABLE
    return text if len(text) <= CHAIN_MAX_CHARS else text[: CHAIN_MAX_CHARS - 1] + "…"


def render_question(probe: ProbeSpec, values: Mapping[str, str], answers: Mapping[str, str]) -> str:
    """Fill ``probe.question``.

    Args:
        probe: The probe.
        values: The fixed fields (:data:`FIXED_PLACEHOLDERS`).
        answers: Chained answers keyed ``prev_<id>``/``last_<id>`` (missing ones render as
            :data:`NOT_AVAILABLE`).

    Returns:
        The question text. Answer text is inserted as a value, never parsed as a template.
    """
    fields: dict[str, str] = {}
    for f in probe.placeholders():
        if f in values:
            fields[f] = values[f]
        else:
            fields[f] = answers.get(f, NOT_AVAILABLE)
    return probe.question.format_map(fields).strip()


def render_preamble(battery: ProbeBattery, values: Mapping[str, str]) -> str:
    """Fill ``battery.preamble`` with the fixed fields ``values`` (``""`` when it has none).

    Args:
        battery: The battery.
        values: At least the fields of :data:`PREAMBLE_PLACEHOLDERS`.
    """
    if not battery.preamble:
        return ""
    return battery.preamble.format_map({f: values[f] for f in battery.preamble_placeholders()}).strip()


def render_schema(schema: Any, lists: Mapping[str, Sequence[str]]) -> Any:
    """A copy of ``schema`` with ``$players``/``$others``/``$roles`` in ``enum`` lists expanded.

    Args:
        schema: A JSON schema (any JSON value).
        lists: Expansion per sentinel, e.g. ``{"$players": ["Alex", "Bailey"], ...}``.
    """
    if isinstance(schema, dict):
        out: dict[str, Any] = {}
        for k, v in schema.items():
            if k == "enum" and isinstance(v, list):
                items: list[Any] = []
                for x in v:
                    if isinstance(x, str) and x in lists:
                        items.extend(y for y in lists[x] if y not in items)
                    elif x not in items:
                        items.append(x)
                out[k] = items
            else:
                out[k] = render_schema(v, lists)
        return out
    if isinstance(schema, list):
        return [render_schema(x, lists) for x in schema]
    return schema
