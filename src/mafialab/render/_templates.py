"""The one event → text renderer, driven by templates that are data (the prompt pack's ``events``).

A prompt pack's ``events`` section holds one *style* per use: ``prompt`` (LLM agents'
context), ``history`` (belief-shift observer histories), ``transcript`` (judge transcripts)
and ``viewer`` (the web viewer, exported with the site and rendered by ``app.js`` with the
same rules). A style maps each event ``kind`` to cases; the first case whose ``when``
holds renders the line; no case (or an empty ``text``) means no line. A new event kind is
added by adding its cases to the pack: the renderers here and in ``app.js`` need no change.

Template syntax (the same in Python and JavaScript):

- ``{field}``: the event field (or a word of the rule set's lexicon: ``{game}``, ``{town}``,
  ``{mafia}``, ``{kill}``, ``{kill_past}``, ``{town_wins}``, ``{mafia_wins}``) shown for
  reading: seats (``seat``, ``target``, ``killed``, ``saved``, ``outcome``) as player
  names; seat lists (``alive``, ``candidates``, ``members``) as names joined by ``", "``
  (the style's ``empty`` when there are none); team ids (``team``, ``winner``, ``result``) as the lexicon's team name;
  the player-written ``text`` and ``statement`` as one JSON string literal (quoted, so it
  can never start a line of its own); ``votes``, ``tally`` and ``labels`` as the style's
  ``items`` templates joined by ``", "``. ``{field_raw}`` is the value as recorded.
- ``{field|sep}``: a list joined by ``sep`` instead of ``", "``.
- ``{field?snippet}``: ``snippet`` (which may hold placeholders) when the field is set
  (not null, false, empty; ``0`` counts as set), else nothing.
- ``{{`` and ``}}``: literal braces.

Player-written text (``{text}``, ``{statement}``) may only end a template, so the part
before it (the line's ``prefix``) is fixed and the text can be shortened or left out
without re-rendering the rest.

Conditions (``when``): ``field: value`` holds when the recorded value equals ``value``; a
list holds when the value is one of its items; ``true``/``false`` test whether the field
is set (as for ``?``). Besides the event's fields, ``public`` (the event is visible to
everyone) and ``mine`` (the event's ``seat`` is the reader's own seat) can be tested.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mafialab._words import noun_for, team_wins
from mafialab.config import ConfigError, load_config
from mafialab.engine import Event
from mafialab.render._quote import quote
from mafialab.rules import Lexicon

SEAT_FIELDS = frozenset({"seat", "target", "killed", "saved", "outcome", "voter", "speaker", "leader"})
"""Fields holding one seat number (shown as the player's name)."""
SEAT_LIST_FIELDS = frozenset({"alive", "candidates", "members"})
"""Fields holding a list of seat numbers."""
TEAM_FIELDS = frozenset({"team", "winner", "result"})
"""Fields that may hold a team id (``mafia``/``town``, shown as the lexicon's team name)."""
TEXT_FIELDS = frozenset({"text", "statement"})
"""Player-written fields (quoted; only at the end of a template)."""
QUOTED_FIELDS = TEXT_FIELDS | {"label"}
"""Fields shown as a JSON string literal: player text and operator-given seat labels."""
ITEM_FIELDS = {
    "votes": ("voter", "target"),
    "tally": ("target", "count"),
    "labels": ("seat", "label"),
    "bids": ("seat", "count"),
    "choices": ("voter", "choice"),
}
"""Mapping fields rendered item by item: field → the item template's two fields."""
EVENT_KINDS = tuple(str(cls.model_fields["kind"].default) for cls in typing.get_args(typing.get_args(Event)[0]))
"""Every engine event kind (from the :data:`mafialab.engine.Event` union)."""
STYLES = ("prompt", "history", "transcript", "viewer")
"""The styles a prompt pack's ``events`` section holds."""

_TEXT_AT_END = re.compile(r"\{(text|statement)\}$")


def field_rules() -> dict[str, Any]:
    """How fields are shown, as data (for renderers in other languages, e.g. the viewer's ``app.js``).

    Returns:
        ``{"seat": [...], "seat_list": [...], "team": [...], "quoted": [...], "items":
        {field: [item field, item field]}}``.
    """
    return {
        "seat": sorted(SEAT_FIELDS),
        "seat_list": sorted(SEAT_LIST_FIELDS),
        "team": sorted(TEAM_FIELDS),
        "quoted": sorted(QUOTED_FIELDS),
        "items": {k: list(v) for k, v in ITEM_FIELDS.items()},
    }


class TemplateError(ValueError):
    """A template is malformed (unbalanced braces, player text not at the end)."""


class Case(BaseModel):
    """One way to render an event kind.

    Attributes:
        when: Conditions that must all hold (see the module docstring); empty: always.
        text: The line's template; ``""`` renders no line.
        values: Per field, display words for recorded values (e.g. ``ability: {kill:
            "votes to kill"}``); a value without an entry is shown as usual.
        group: Transcript only: heading of a group of lines that condensation may merge
            (the lines of one vote stage).
        item: Transcript only: the line's entry in a merged group.
        css: Viewer only: CSS class of the rendered line.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    when: dict[str, Any] = Field(default_factory=dict)
    text: str
    values: dict[str, dict[str, str]] = Field(default_factory=dict)
    group: str | None = None
    item: str | None = None
    css: str | None = None

    @field_validator("text", "group", "item")
    @classmethod
    def _well_formed(cls, v: str | None) -> str | None:
        if v is not None:
            _parse(v)
            inner = _TEXT_AT_END.sub("", v)
            if re.search(r"\{(text|statement)[}|?]", inner):
                raise ValueError("player text ({text}, {statement}) may only end a template")
        return v


class Style(BaseModel):
    """The templates of one style.

    Attributes:
        kinds: Event kind → cases, tried in order (a plain string or a single mapping is
            one case).
        items: Item templates of mapping fields (``votes``: ``{voter}``, ``{target}``;
            ``tally``: ``{target}``, ``{count}``; ``labels``: ``{seat}``, ``{label}``).
        empty: Shown for an empty seat list.
        notes: Further templates of the style that are not events (e.g. the prompt's
            ``shortened`` note).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kinds: dict[str, list[Case]]
    items: dict[str, str] = Field(default_factory=dict)
    empty: str = ""
    notes: dict[str, str] = Field(default_factory=dict)

    @field_validator("kinds", mode="before")
    @classmethod
    def _plain_strings(cls, v: Any) -> Any:
        if isinstance(v, Mapping):
            return {
                k: ([{"text": c}] if isinstance(c, str) else [c] if isinstance(c, Mapping) else c) for k, c in v.items()
            }
        return v

    @field_validator("items", "notes")
    @classmethod
    def _items_well_formed(cls, v: dict[str, str]) -> dict[str, str]:
        for t in v.values():
            _parse(t)
        return v


class EventTemplates(BaseModel):
    """A prompt pack's ``events`` section: one :class:`Style` per use (:data:`STYLES`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: Style
    history: Style
    transcript: Style
    viewer: Style

    @model_validator(mode="after")
    def _known_kinds(self) -> EventTemplates:
        for name in STYLES:
            unknown = sorted(set(getattr(self, name).kinds) - set(EVENT_KINDS))
            if unknown:
                raise ValueError(
                    f"{name}: unknown event {noun_for(len(unknown), 'kind')} {', '.join(unknown)} "
                    f"(known: {', '.join(EVENT_KINDS)})"
                )
        return self

    def style(self, name: str) -> Style:
        """The style called ``name`` (one of :data:`STYLES`).

        Raises:
            KeyError: Unknown style.
        """
        if name not in STYLES:
            raise KeyError(f"unknown template style {name!r} (known: {', '.join(STYLES)})")
        style: Style = getattr(self, name)
        return style


def past_tense(verb: str) -> str:
    """``kill`` → ``killed``, ``eat`` → ``eaten``: the lexicon's kill verb after "was"."""
    irregular = {"eat": "eaten", "slay": "slain"}
    if verb in irregular:
        return irregular[verb]
    return verb + "d" if verb.endswith("e") else verb + "ed"


def lexicon_words(lexicon: Lexicon) -> dict[str, str]:
    """The game words every event template may use: ``game``, ``town``, ``mafia``, ``kill``, and more.

    Also ``kill_past`` (the past tense; not ``killed``, a field of ``night_result``),
    ``town_wins``/``mafia_wins``: the team's name with ``win`` agreeing with it
    (``Werewolves win``, ``Mafia wins``; :func:`mafialab._words.team_wins`), and ``day`` /
    ``day_lower`` / ``day_upper``: the name of a day round (``Day``; ``Mission`` in mission games).
    """
    return {
        "game": lexicon.game,
        "town": lexicon.town_team,
        "mafia": lexicon.mafia_team,
        "kill": lexicon.kill,
        "kill_past": past_tense(lexicon.kill),
        "town_wins": team_wins(lexicon.town_team),
        "mafia_wins": team_wins(lexicon.mafia_team),
        "day": lexicon.day,
        "day_lower": lexicon.day.lower(),
        "day_upper": lexicon.day.upper(),
    }


# ---------------------------------------------------------------------- the template language
_Piece = tuple[str, str, str]  # (kind, name, arg): ("lit", text, ""), ("field", name, sep|None), ("if", name, snippet)


@functools.lru_cache(maxsize=4096)
def _parse(template: str) -> tuple[_Piece, ...]:
    """Split a template into literal text and placeholders (cached: templates are few, renders many).

    Raises:
        TemplateError: Unbalanced braces.
    """
    out: list[_Piece] = []
    i, n, lit = 0, len(template), []
    while i < n:
        ch = template[i]
        if ch in "{}" and template[i : i + 2] in ("{{", "}}"):
            lit.append(ch)
            i += 2
            continue
        if ch == "}":
            raise TemplateError(f"unbalanced '}}' at {i} in {template!r}")
        if ch != "{":
            lit.append(ch)
            i += 1
            continue
        depth, j = 1, i + 1
        while j < n and depth:
            if template[j] == "{":
                depth += 1
            elif template[j] == "}":
                depth -= 1
            j += 1
        if depth:
            raise TemplateError(f"unclosed '{{' at {i} in {template!r}")
        if lit:
            out.append(("lit", "".join(lit), ""))
            lit = []
        body = template[i + 1 : j - 1]
        q, p = body.find("?"), body.find("|")
        if q > 0 and (p < 0 or q < p):
            out.append(("if", body[:q], body[q + 1 :]))
            _parse(body[q + 1 :])
        elif p > 0:
            out.append(("field", body[:p], body[p + 1 :]))
        else:
            out.append(("field", body, ", "))
        i = j
    if lit:
        out.append(("lit", "".join(lit), ""))
    return tuple(out)


def is_set(value: Any) -> bool:
    """Whether a field counts as set: not ``None``, ``False``, empty, or a list of empties; ``0`` is set."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, list | tuple):
        return any(is_set(v) for v in value)
    if isinstance(value, dict):
        return bool(value)
    return True


def holds(when: Mapping[str, Any], facts: Mapping[str, Any]) -> bool:
    """Whether every condition of ``when`` holds for ``facts`` (see the module docstring)."""
    for key, want in when.items():
        got = facts.get(key)
        if isinstance(want, bool):
            if is_set(got) != want:
                return False
        elif isinstance(want, list):
            if got not in want:
                return False
        elif got != want:
            return False
    return True


@dataclass(frozen=True)
class RenderedLine:
    """One rendered event.

    Attributes:
        text: The whole line.
        round: The event's round.
        private: Whether the event is not public (seen by a team or some seats only).
        prefix: The line before the player-written text (the whole line when there is none).
        player_text: The player-written text (unquoted) the line ends with, or ``None``.
        group: Heading of the group of lines this line may be merged into, or ``None``.
        item: The line's entry in a merged group, or ``None``.
        kind: The event kind.
    """

    text: str
    round: int
    private: bool
    prefix: str
    player_text: str | None = None
    group: str | None = None
    item: str | None = None
    kind: str = ""

    def with_player_text(self, shown: str) -> str:
        """The line with its player-written part replaced by ``shown`` (already quoted or marked)."""
        return self.prefix + shown


class EventRenderer:
    """Renders events to lines with one :class:`Style`.

    Args:
        style: The style's templates.
        lexicon: The rule set's lexicon (game words, team names).
        names: Player names by seat; a seat without one is shown as ``seat N``.
        reader: The seat reading the lines (for ``mine``), or ``None``.
    """

    def __init__(self, style: Style, lexicon: Lexicon, names: Sequence[str], reader: int | None = None):
        self.style = style
        self.lexicon = lexicon
        self.words = lexicon_words(lexicon)
        self.names = list(names)
        self.reader = reader

    def name(self, seat: Any) -> str:
        """The name of ``seat`` (``seat N`` when out of range)."""
        if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(self.names):
            return self.names[seat]
        return f"seat {seat}"

    def facts(self, event: Any) -> dict[str, Any]:
        """The recorded fields of ``event`` plus ``public`` and ``mine``."""
        data: dict[str, Any] = event.model_dump(mode="python") if hasattr(event, "model_dump") else dict(event)
        for name in getattr(type(event), "model_fields", ()):  # a field its record leaves out while unset
            data.setdefault(name, getattr(event, name))
        vis = data.get("visibility") or {}
        data["public"] = bool(vis.get("public")) if isinstance(vis, Mapping) else False
        data["mine"] = self.reader is not None and data.get("seat") == self.reader
        return data

    def render(self, event: Any) -> RenderedLine | None:
        """The line of ``event``, or ``None`` when its style renders nothing for it."""
        facts = self.facts(event)
        for case in self.style.kinds.get(str(facts.get("kind")), ()):
            if not holds(case.when, facts):
                continue
            if not case.text:
                return None
            return self._line(case, facts)
        return None

    def render_all(self, events: Sequence[Any]) -> list[RenderedLine]:
        """The lines of ``events`` in order (events that render nothing are skipped)."""
        return [ln for ev in events if (ln := self.render(ev)) is not None]

    def note(self, key: str, **fields: Any) -> str:
        """A note template of the style (e.g. ``shortened``) filled with ``fields`` (shown as given)."""
        return self.format(self.style.notes[key], {k: str(v) for k, v in fields.items()}, {})

    def _line(self, case: Case, facts: dict[str, Any]) -> RenderedLine:
        m = _TEXT_AT_END.search(case.text)
        player = None
        if m is not None:
            player = facts.get(m.group(1)) or ""
            prefix = self.format(case.text[: m.start()], facts, case.values)
            text = prefix + quote(player)
        else:
            prefix = text = self.format(case.text, facts, case.values)
        return RenderedLine(
            text=text,
            round=int(facts.get("round") or 0),
            private=not facts["public"],
            prefix=prefix,
            player_text=player,
            group=self.format(case.group, facts, case.values) if case.group else None,
            item=self.format(case.item, facts, case.values) if case.item else None,
            kind=str(facts.get("kind")),
        )

    # ------------------------------------------------------------------ formatting
    def format(self, template: str, facts: Mapping[str, Any], values: Mapping[str, Mapping[str, str]]) -> str:
        """Fill ``template`` from ``facts`` (see the module docstring for the syntax).

        Raises:
            TemplateError: A placeholder names neither a field nor a game word.
        """
        out = []
        for kind, name, arg in _parse(template):
            if kind == "lit":
                out.append(name)
            elif kind == "if":
                if is_set(self._raw(name, facts)):
                    out.append(self.format(arg, facts, values))
            else:
                out.append(self.show(name, facts, values, arg))
        return "".join(out)

    def _raw(self, name: str, facts: Mapping[str, Any]) -> Any:
        if name in facts:
            return facts[name]
        if name.endswith("_raw") and name[:-4] in facts:
            return facts[name[:-4]]
        if name in self.words:
            return self.words[name]
        raise TemplateError(f"unknown field {{{name}}} (fields: {', '.join(sorted(facts))})")

    def show(
        self, name: str, facts: Mapping[str, Any], values: Mapping[str, Mapping[str, str]], sep: str = ", "
    ) -> str:
        """How field ``name`` of ``facts`` reads in a line (see the module docstring)."""
        value = self._raw(name, facts)
        if name.endswith("_raw") and name not in facts:
            return "" if value is None else str(value)
        if name in values and str(value) in values[name]:
            return self.format(values[name][str(value)], facts, {})
        if value is None:
            return ""
        if name in QUOTED_FIELDS:
            return quote(str(value))
        if name in SEAT_FIELDS:
            return self.name(value)
        if name in TEAM_FIELDS and value in ("mafia", "town"):
            return self.lexicon.team_name(value)
        if name in ITEM_FIELDS:
            return sep.join(self._items(name, value))
        if name in SEAT_LIST_FIELDS:
            return sep.join(self.name(s) for s in value) or self.style.empty
        if isinstance(value, list):
            return sep.join(str(v) for v in value)
        if isinstance(value, bool):
            return str(value).lower()
        return str(value)

    def _items(self, name: str, value: Any) -> list[str]:
        template = self.style.items.get(name)
        if template is None:
            raise TemplateError(f"items.{name}: the style has no item template for {{{name}}}")
        a, b = ITEM_FIELDS[name]
        if name == "labels":
            pairs: list[tuple[Any, Any]] = [(s, label) for s, label in enumerate(value) if label]
        elif name == "tally":
            pairs = sorted(((int(t), c) for t, c in value.items()), key=lambda x: (-x[1], x[0]))
        else:
            pairs = sorted((int(k), v) for k, v in value.items())
        fill: Callable[[Any, Any], dict[str, Any]] = lambda x, y: {a: x, b: y, **self.words}  # noqa: E731
        return [self.format(template, fill(x, y), {}) for x, y in pairs]


BUILTIN_TEMPLATES = ("en",)
"""Event template sets shipped in ``mafialab/render/events/<name>.yaml``."""


@functools.cache
def _builtin(name: str) -> EventTemplates:
    return load_config(
        resources.files("mafialab.render").joinpath("events", f"{name}.yaml"), EventTemplates, source=f"events {name}"
    )


def load_event_templates(name_or_path: str | Path = "en") -> EventTemplates:
    """Load a built-in event template set by name, or a YAML file.

    Args:
        name_or_path: ``"en"`` (see :data:`BUILTIN_TEMPLATES`) or the path of a YAML file with
            the four styles.

    Raises:
        ConfigError: Unknown name, unreadable or malformed file, or a bad field (the message
            names the file and the field).
    """
    key = str(name_or_path)
    if key in BUILTIN_TEMPLATES:
        return _builtin(key)
    if not Path(key).is_file():
        raise ConfigError(
            f"events: unknown template set {key!r} (built in: {', '.join(BUILTIN_TEMPLATES)}; or a YAML path)"
        )
    return load_config(Path(key), EventTemplates)
