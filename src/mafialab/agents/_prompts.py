"""Prompt packs (data files) and rendering a player's view into chat messages.

Rendering reads ONLY the :class:`~mafialab.engine.PlayerView` the engine built for a seat.
Model-written text (speeches, chat, vote statements) is inserted as a JSON string literal on
the speaker's line: newlines and quotes are escaped, so a message containing
``SYSTEM:`` or ``[GAME]`` stays inside its quote and cannot start a moderator line.

Context shortening rule (when a prompt would not fit the model's window): the system prompt,
the seat's identity and private information, every moderator line (phases, deaths, tallies)
and everything of the current round are always kept. Player-written lines (speeches, chat,
vote statements) of older rounds are shortened in steps until the prompt fits:

1. lines of rounds before the previous round are cut to :data:`SHORT_CHARS` characters;
2. those lines are left out, one moderator note per round saying how many;
3. lines of the previous round are cut to :data:`SHORT_CHARS` characters;
4. those are left out too.

The step taken is recorded with each call (``context.shortened``, ``context.lines_cut``,
``context.lines_dropped``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mafialab.config import ConfigError, load_config
from mafialab.engine import Decision, PlayerView
from mafialab.models import ChatMessage
from mafialab.render import EventRenderer, EventTemplates, RenderedLine, load_event_templates, past_tense, quote
from mafialab.rules import RuleSet, rule_fields

_OMITTED = "(omitted)"
"""Kind of the placeholder line that notes how many lines of a round were left out."""

SHORT_CHARS = 80
"""Characters kept of an older player-written line when shortening (then ``…``)."""

Layout = Literal["shared_first", "seat_first"]


class PromptPackError(ConfigError):
    """A prompt pack could not be loaded; the message names the file and field."""


class PromptPack(BaseModel):
    """A prompt pack: every string an LLM agent sends, as data.

    Attributes:
        id: Versioned pack id (recorded with the game).
        language: Language code.
        layout: ``shared_first`` (rules and public transcript first, the seat's own text
            last: prefix caches are shared across seats) or ``seat_first`` (identity in the
            system prompt, one interleaved transcript).
        max_text_chars: Cap on free text the agent asks for (also capped by the decision).
        max_tokens: Default generation caps: ``text`` (speech, chat) and ``target``.
        rule_text: One sentence per rule field and value (``"*"`` for any value, as
            ``{value}``), keyed by dotted field path (``night.protect_self``): the rules text
            is generated from the rule set's fields (see :meth:`Renderer.rule_statements`).
        system, roles, investigate_what, night_rules, day_rules, reveal, identity,
        teammates, no_teammates, persona, persona_traits, public_header, private_header,
        no_events, private_none, decisions, retry: Templates (``str.format``).
        mission: Mission games' texts: ``system`` (the system prompt in place of ``system``),
            ``role`` (one line per role) and ``knows_spies`` (the identity line of a role told
            the hidden team, e.g. Merlin); their decisions are in ``decisions``
            (``propose``, ``team_vote``, ``team_vote_statement``, ``mission``, ``assassinate``).
        events: How events read as text: the name of a built-in event template set
            (``en``), the path of one, or the styles inline (see :mod:`mafialab.render`);
            LLM prompts use its ``prompt`` style.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    language: str = "en"
    layout: Layout = "shared_first"
    max_text_chars: int = Field(default=300, ge=20)
    max_tokens: dict[str, int] = Field(default_factory=lambda: {"text": 160, "target": 32})
    system: str
    roles: dict[Literal["kill", "protect", "investigate", "none"], str]
    investigate_what: dict[Literal["team", "role"], str]
    night_rules: dict[str, str]
    day_rules: dict[str, str]
    reveal: dict[str, str]
    rule_text: dict[str, dict[str, str]] = Field(default_factory=dict)
    identity: str
    teammates: str
    no_teammates: str
    persona: str
    persona_traits: str
    public_header: str
    private_header: str
    no_events: str
    private_none: str
    events: EventTemplates
    decisions: dict[str, str]
    retry: str
    mission: dict[str, str] = Field(default_factory=dict)

    @field_validator("events", mode="before")
    @classmethod
    def _named_templates(cls, v: Any) -> Any:
        return load_event_templates(v) if isinstance(v, str) else v


BUILTIN_PACKS = ("en",)
"""Prompt packs shipped in ``mafialab/agents/prompts/<name>.yaml``."""


def load_prompt_pack(name_or_path: str | Path = "en") -> PromptPack:
    """Load a built-in prompt pack by name, or a YAML file.

    Raises:
        PromptPackError: Unknown name, unreadable or malformed file, or a missing/bad field.
    """
    key = str(name_or_path)
    if key in BUILTIN_PACKS:
        return _builtin_pack(key)
    return _parse_pack(key)


@functools.cache
def _builtin_pack(key: str) -> PromptPack:
    """A built-in pack, parsed once per process (packs are immutable)."""
    return _parse_pack(key)


def _parse_pack(key: str) -> PromptPack:
    if key in BUILTIN_PACKS:
        res = resources.files("mafialab.agents").joinpath("prompts", f"{key}.yaml")
        return load_config(res, PromptPack, source=f"prompt pack {key}", error=PromptPackError)
    path = Path(key)
    if not path.is_file():
        raise PromptPackError(
            f"pack: unknown prompt pack {key!r} (built in: {', '.join(BUILTIN_PACKS)}; or a YAML path)"
        )
    return load_config(path, PromptPack, error=PromptPackError)


class Persona(BaseModel):
    """An optional persona: a table name and Big-Five traits (MafiaScope: O/C/E/A/N, 0-100).

    Attributes:
        table_name: Name the character goes by (shown in its own prompt only).
        big5: ``{"O", "C", "E", "A", "N"} -> 0..100``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    table_name: str | None = None
    big5: dict[str, int] | None = None

    @field_validator("big5")
    @classmethod
    def _check_big5(cls, v: dict[str, int] | None) -> dict[str, int] | None:
        if v is None:
            return v
        for k, x in v.items():
            if k not in "OCEAN" or len(k) != 1:
                raise ValueError(f"big5: unknown trait {k!r} (use O, C, E, A, N)")
            if not 0 <= x <= 100:
                raise ValueError(f"big5.{k}: {x} is outside 0-100")
        return v


@dataclass
class Rendered:
    """Messages for one call and what shortening did.

    Attributes:
        messages: The chat messages (context, then the decision or question).
        context: Shortening record: ``{}`` or ``{"shortened": step, "lines_cut": n,
            "lines_dropped": n, "est_tokens": n}``.
    """

    messages: list[ChatMessage]
    context: dict[str, Any]


_LINE_CACHE_MAX = 20_000
"""Rendered lines one :class:`Renderer` keeps before starting over (a long-lived agent across games)."""


class Renderer:
    """Renders views and decisions of one seat with a prompt pack.

    Args:
        pack: The prompt pack.
        rules: The rule set (lexicon, rule text).
        layout: Overrides the pack's layout.
        persona: Optional persona of the seat.
    """

    def __init__(self, pack: PromptPack, rules: RuleSet, layout: Layout | None = None, persona: Persona | None = None):
        self.pack = pack
        self.rules = rules
        self.layout: Layout = layout or pack.layout
        self.persona = persona
        lx = rules.lexicon
        self.words = {
            "game": lx.game,
            "town": lx.town_team,
            "mafia": lx.mafia_team,
            "kill": lx.kill,
            "killed": past_tense(lx.kill),
            "day": lx.day,
        }
        self._system_rules = self._rules_text()
        self._line_cache: dict[int, tuple[Any, int, tuple[str, ...], RenderedLine | None]] = {}
        self._last_context: tuple[PlayerView, int, str, tuple[ChatMessage, ...], int, int] | None = None

    # ------------------------------------------------------------------ text pieces
    def _fmt(self, template: str, **fields: Any) -> str:
        return template.format(**{**self.words, **fields})

    def _rules_text(self) -> str:
        p, r = self.pack, self.rules
        if r.mission is not None and "system" in p.mission:
            return self._mission_rules_text()
        role_lines = []
        for role in r.roles:
            t = p.roles[role.ability or "none"]
            what = self._fmt(p.investigate_what[r.night.investigate_result])
            role_lines.append("- " + self._fmt(t, role=role.name, count=role.count, investigate_what=what))
        chat = self._fmt(p.night_rules["chat"]) if r.night.mafia_chat else ""
        night = self._fmt(p.night_rules[r.night.kill_vote], chat=chat)
        stmt = self._fmt(p.day_rules["statement"]) if r.day.vote_statement else ""
        tie = self._fmt(p.day_rules[f"tie_{r.day.tie}"])
        day = self._fmt(p.day_rules[r.day.vote], rounds=r.day.discussion_rounds, statement=stmt, tie=tie)
        reveal = self._fmt(p.reveal[str(r.reveal_role_on_death).lower()])
        rule_lines = "\n".join(f"- {text}" for text in self.rule_statements().values())
        return self._fmt(
            p.system,
            n=r.n_seats,
            names=", ".join(r.seat_names[: r.n_seats]),
            role_lines="\n".join(role_lines),
            night_rules=night,
            day_rules=day,
            reveal_rule=reveal,
            rule_lines=rule_lines,
        )

    def _mission_rules_text(self) -> str:
        p, r = self.pack, self.rules
        roles = [
            "- " + self._fmt(p.mission["role"], role=x.name, count=x.count, team_name=r.lexicon.team_name(x.team))
            for x in r.roles
        ]
        rule_lines = "\n".join(f"- {text}" for text in self.rule_statements().values())
        names = ", ".join(r.seat_names[: r.n_seats])
        return self._fmt(
            p.mission["system"], n=r.n_seats, names=names, role_lines="\n".join(roles), rule_lines=rule_lines
        )

    def rule_statements(self) -> dict[str, str]:
        """The sentence stating each rule field of the rule set, by dotted field path.

        Generated from :func:`mafialab.rules.rule_fields` and the pack's ``rule_text``; a
        field that concerns no role of this rule set (a protect rule without a protector) is
        left out, and so is a field the pack has no sentence for (a custom pack may not
        state every rule; the built-in packs must, which their tests check).
        """
        r = self.rules
        prot, inv = r.role_with("protect"), r.role_with("investigate")
        words = {"protector": prot.name if prot else "", "investigator": inv.name if inv else ""}
        if r.mission is not None:
            words |= {"assassin": r.mission.assassin or "", "assassin_target": r.mission.assassin_target or ""}
        out: dict[str, str] = {}
        for path, value, roles in rule_fields(r):
            texts = self.pack.rule_text.get(path)
            if not roles or texts is None:
                continue
            if isinstance(value, tuple):  # a list field (mission.team_sizes): its items, comma-separated
                value = ", ".join(str(v) for v in value)
            key = str(value).lower() if isinstance(value, bool) else str(value)
            if r.mission is not None and f"mission:{key}" in texts:  # a mission game's own wording
                key = f"mission:{key}"
            template = texts.get(key, texts.get("*"))
            if template:
                out[path] = self._fmt(template, value=value, **words)
        return out

    def identity(self, view: PlayerView) -> str:
        """Identity, team knowledge and persona of the seat."""
        p = self.pack
        team_name = self.rules.lexicon.team_name(view.team)
        parts = [self._fmt(p.identity, name=view.name, role=view.role, team_name=team_name)]
        if view.team == "mafia" and view.teammates:
            parts.append(self._fmt(p.teammates, mates=", ".join(view.names[s] for s in view.teammates)))
        elif view.team != "mafia":
            told = [ev for ev in view.events if ev.kind == "team_revealed"]
            if told and "knows_spies" in p.mission:  # a mission game's Merlin
                mates = ", ".join(view.names[s] for s in told[-1].members)  # type: ignore[union-attr]
                parts.append(self._fmt(p.mission["knows_spies"], mates=mates))
            else:
                parts.append(self._fmt(p.no_teammates))
        if self.persona is not None and self.persona.big5 is not None:
            b = self.persona.big5
            tmpl = p.persona if self.persona.table_name else p.persona_traits
            parts.append(self._fmt(tmpl, table_name=self.persona.table_name, **{k: b.get(k, 50) for k in "OCEAN"}))
        return " ".join(parts)

    def transcript_lines(self, view: PlayerView) -> list[str]:
        """Every transcript line of ``view`` (public and private), unshortened, in order."""
        return [ln.text for ln in self._lines(view)]

    def rendered_lines(self, view: PlayerView) -> list[RenderedLine]:
        """Every rendered transcript line of ``view`` with its ``private`` flag, unshortened."""
        return self._lines(view)

    def private_heading(self, view: PlayerView) -> str:
        """The heading of the seat's private block (``Private to you (NAME):``)."""
        return self._fmt(self.pack.private_header, name=view.name)

    def _lines(self, view: PlayerView) -> list[RenderedLine]:
        """The view's events rendered with the pack's ``prompt`` style (one shared renderer).

        A line depends only on the event, the reader and the seat names, and every context
        of a seat re-renders the whole history (each decision and each probe question), so
        lines are kept per event object (the engine never changes an event once emitted;
        the cache holds the event, so an id is never reused while cached). Without the
        cache a game's prompts cost O(events²) renders.
        """
        cache = self._line_cache
        if len(cache) > _LINE_CACHE_MAX:
            cache.clear()
        renderer: EventRenderer | None = None
        out: list[RenderedLine] = []
        for ev in view.events:
            hit = cache.get(id(ev))
            if hit is not None and hit[0] is ev and hit[1] == view.seat and hit[2] == view.names:
                line = hit[3]
            else:
                if renderer is None:
                    renderer = EventRenderer(self.pack.events.prompt, self.rules.lexicon, view.names, view.seat)
                line = renderer.render(ev)
                cache[id(ev)] = (ev, view.seat, view.names, line)
            if line is not None:
                out.append(line)
        return out

    # ------------------------------------------------------------------ assembly
    def _shorten(self, lines: list[RenderedLine], step: int, current: int) -> tuple[list[RenderedLine], int, int]:
        """Apply shortening ``step`` (0-4, see the module docstring)."""
        if step == 0:
            return lines, 0, 0
        old_cut = current - 1  # rounds < old_cut are "older"; round current-1 is "previous"
        out: list[RenderedLine] = []
        cut = dropped = 0
        omitted: dict[int, int] = {}
        for ln in lines:
            if ln.player_text is None or ln.round >= current:
                out.append(ln)
                continue
            older = ln.round < old_cut
            drop = (older and step >= 2) or (not older and step >= 4)
            short = (older and step >= 1) or (not older and step >= 3)
            if drop:
                dropped += 1
                if ln.round not in omitted:
                    omitted[ln.round] = 0
                    out.append(RenderedLine("", ln.round, ln.private, "", kind=_OMITTED))
                omitted[ln.round] += 1
            elif short and len(ln.player_text) > SHORT_CHARS:
                cut += 1
                t = ln.player_text[:SHORT_CHARS].rstrip() + "…"
                out.append(replace(ln, text=ln.with_player_text(quote(t)), player_text=t))
            else:
                out.append(ln)
        note = self.pack.events.prompt.notes["shortened"]
        for i, ln in enumerate(out):
            if ln.kind == _OMITTED:
                text = self._fmt(note, count=omitted[ln.round], round=ln.round)
                out[i] = replace(ln, text=text, prefix=text)
        return out, cut, dropped

    def context(self, view: PlayerView, step: int = 0, shared: str = "") -> tuple[list[ChatMessage], int, int]:
        """The context messages of ``view`` (no decision), after shortening ``step``.

        Args:
            view: The seat's view.
            step: Shortening step (0-4, see the module docstring).
            shared: Text the same for every seat at this point (a probe battery's preamble;
                never model text, never private): in the ``shared_first`` layout it goes
                after the public transcript and before the seat's private block, so calls of
                every seat at one point share the prompt up to the end of it; in
                ``seat_first`` it ends the context. ``""``: none (game decisions).

        Returns:
            ``(messages, lines_cut, lines_dropped)``.
        """
        last = self._last_context
        if last is not None and last[0] is view and last[1] == step and last[2] == shared:
            # the same view again (a seat's probe questions at one point share it): a view is frozen
            return list(last[3]), last[4], last[5]
        msgs, cut, dropped = self._context(view, step, shared)
        self._last_context = (view, step, shared, tuple(msgs), cut, dropped)
        return msgs, cut, dropped

    def _context(self, view: PlayerView, step: int, shared: str = "") -> tuple[list[ChatMessage], int, int]:
        p = self.pack
        current = view.events[-1].round if view.events else 0
        lines, cut, dropped = self._shorten(self._lines(view), step, current)
        ident = self.identity(view)
        if self.layout == "shared_first":
            public = [ln.text for ln in lines if not ln.private]
            private = [ln.text for ln in lines if ln.private]
            user = "\n".join(
                [
                    self._fmt(p.public_header),
                    *(public or [self._fmt(p.no_events)]),
                    "",
                    *([shared, ""] if shared else []),
                    self._fmt(p.private_header, name=view.name),
                    ident,
                    *(private or [self._fmt(p.private_none)]),
                ]
            )
            msgs = [ChatMessage(role="system", content=self._system_rules), ChatMessage(role="user", content=user)]
        else:
            system = self._system_rules + "\n\n" + ident
            user = "\n".join([self._fmt(p.public_header), *([ln.text for ln in lines] or [self._fmt(p.no_events)])])
            if shared:
                user += "\n\n" + shared
            msgs = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]
        return msgs, cut, dropped

    def decision_prompt(
        self, decision: Decision, view: PlayerView, max_chars: int, templates: Mapping[str, str] | None = None
    ) -> str:
        """The decision text (last message) for ``decision``.

        Args:
            decision: The decision.
            view: The seat's view (option names).
            max_chars: Cap on the answer's text, stated in the text.
            templates: Decision texts by key to use instead of the pack's ``decisions`` (the
                same keys: a decision kind, ``speak_intro``, ``vote_statement``), e.g. the
                questions a person at a human seat is asked; the rule set's words fill them.

        Raises:
            KeyError: ``templates`` has no text for the decision's key.
        """
        d = self.pack.decisions if templates is None else templates
        names = ", ".join(option_labels(decision, view))
        kind = decision.kind
        if kind == "speak" and decision.phase == "intro":
            key = "speak_intro"
        elif kind in ("vote", "team_vote") and decision.needs_text:
            key = f"{kind}_statement"
        else:
            key = kind
        return self._fmt(
            d[key], round=decision.round, discussion=decision.discussion, options=names, max_chars=max_chars,
            choices=", ".join(decision.choices), **self._mission_words(decision, view),
        )  # fmt: skip

    def _mission_words(self, decision: Decision, view: PlayerView) -> dict[str, Any]:
        """A mission decision's words: the proposal (leader, team), the picks so far, the assassin's target."""
        if self.rules.mission is None:
            return {}
        m = self.rules.mission
        picks: list[int] = []
        proposal = None
        for ev in view.events:
            if ev.kind == "team_pick":
                picks.append(ev.target)  # type: ignore[union-attr]
            elif ev.kind == "team_proposal":
                picks, proposal = [], ev
        size = m.team_sizes[min(decision.round, len(m.team_sizes)) - 1] if decision.round else 0
        return {
            "size": size,
            "pick": len(picks) + 1,
            "picked": ", ".join(view.names[s] for s in picks) or "nobody yet",
            "leader": view.names[proposal.leader] if proposal is not None else "",  # type: ignore[union-attr]
            "team": ", ".join(view.names[s] for s in proposal.members) if proposal is not None else "",  # type: ignore[union-attr]
            "assassin": m.assassin or "",
            "assassin_target": m.assassin_target or "",
        }


def option_labels(decision: Decision, view: PlayerView) -> list[str]:
    """How a decision's options read in prompts and answers: seat names, or amounts for a ``bid``."""
    if decision.kind == "bid":
        return [str(o) for o in decision.options]
    return [view.names[s] for s in decision.options]


def decision_schema(decision: Decision, view: PlayerView, max_chars: int) -> dict[str, Any]:
    """The JSON schema of an answer: ``target`` is an enum of legal seat names; text is capped.

    Targeted decisions: ``{"target": <name>}`` (plus ``"statement"`` when the decision needs
    text); choice decisions (mission games): ``{"choice": <one of the choices>}`` (plus
    ``"statement"``); free-text decisions: ``{"text": <string of 1..max_chars characters>}``.
    """
    props: dict[str, Any] = {}
    if decision.choices:
        props["choice"] = {"type": "string", "enum": list(decision.choices)}
        if decision.needs_text:
            props["statement"] = {"type": "string", "minLength": 1, "maxLength": max_chars}
    elif decision.wants_target:
        props["target"] = {"type": "string", "enum": option_labels(decision, view)}
        if decision.needs_text:
            props["statement"] = {"type": "string", "minLength": 1, "maxLength": max_chars}
    else:
        props["text"] = {"type": "string", "minLength": 1, "maxLength": max_chars}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
