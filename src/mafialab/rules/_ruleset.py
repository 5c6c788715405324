"""Rule sets as data: roles, teams, abilities, day structure, votes, lexicon."""

from __future__ import annotations

from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from mafialab._words import count
from mafialab.config import ConfigError, load_config, read_config, top_level_message

Team = Literal["town", "mafia"]
"""Canonical team ids. The lexicon gives each a display name ("Village", "Werewolves")."""

NightAbility = Literal["kill", "protect", "investigate"]


class RuleSetError(ConfigError):
    """A rule set could not be loaded or validated; the message names the field."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RoleSpec(_Frozen):
    """One role of a rule set.

    Attributes:
        name: Display name of the role as players see it ("Mafia", "Werewolf", "Seer").
        count: How many seats hold the role (>= 1).
        team: Canonical team id, ``"town"`` or ``"mafia"``.
        ability: Night ability, or ``None`` for roles without one.
    """

    name: str = Field(min_length=1)
    count: int = Field(ge=1)
    team: Team
    ability: NightAbility | None = None


class NightRules(_Frozen):
    """How the night phase runs.

    Attributes:
        kill_vote: ``"sequential"``: the killers name a target one after another in
            seat order, each seeing earlier picks; ``"simultaneous"``: they pick in secret.
        kill_tie: ``"first_named"``: a tie goes to the tied target named first;
            ``"seeded"``: drawn from the ``tie_break`` stream; ``"none"``: a tie kills nobody
            (Kaggle's ``tie_break: no_elected``).
        mafia_chat: Whether the killers first hold a private chat (one message each).
        protect_self: Whether the protector may protect itself.
        protect_self_consecutive: Whether it may protect itself on two nights in a row.
        protect_repeat: Whether it may protect the same other player on consecutive nights.
        investigate_result: ``"team"``: the investigator learns whether the target is on
            the mafia team; ``"role"``: it learns the exact role.
        announce_save: Whether a save is announced by name (otherwise "nobody died").
    """

    kill_vote: Literal["sequential", "simultaneous"] = "sequential"
    kill_tie: Literal["first_named", "seeded", "none"] = "first_named"
    mafia_chat: bool = False
    protect_self: bool = True
    protect_self_consecutive: bool = True
    protect_repeat: bool = True
    investigate_result: Literal["team", "role"] = "team"
    announce_save: bool = True


class DayRules(_Frozen):
    """How the day phase runs.

    Attributes:
        discussion_rounds: Number of discussion rounds; every alive player speaks once in each.
        speaking_order: The discussion protocol. ``"seat"`` (seat order), ``"seeded"`` (a fresh
            random order per discussion round, from the ``speaking_order`` stream),
            ``"seeded_first"`` (seat order from a first speaker drawn once per day, the same in
            every round of the day: Kaggle's ``RoundRobinDiscussion`` with ``first_to_speak:
            random``), ``"rotate"`` (seat order from a first speaker that moves on each day: the
            first alive seat after the previous day's first; Kaggle's ``first_to_speak: rotate``)
            or ``"bid"`` (bid to speak, Kaggle's ``TurnByTurnBiddingDiscussion``,
            kaggle-environments 1.33.2: before each speaking turn every alive player bids 0-4,
            the highest bid speaks, a tie is drawn from the ``speaking_order`` stream, all bids
            0 end the discussion; at most ``bid_turns`` turns a day; ``discussion_rounds`` is
            not used).
        bid_turns: Under ``speaking_order: bid``, the most speaking turns in one day (Kaggle's
            ``max_turns``).
        vote_order: Order of a ``public_sequential`` vote: ``"seat"``, ``"seeded_first"`` (seat
            order from a first voter drawn per vote: Kaggle's ``first_to_vote: random``) or
            ``"rotate"`` (from a first voter that moves on each vote, as ``speaking_order: rotate``).
        vote: ``"public_sequential"``: each alive player in seat order posts a statement and
            a target, seeing earlier votes; ``"secret_simultaneous"``: secret votes revealed
            together; ``"nomination_runoff"``: a public sequential nomination in seeded order,
            then a runoff between the two most-nominated players.
        vote_statement: Whether a vote carries a short public statement.
        self_vote: Whether a player may vote for (or nominate) itself.
        tie: ``"no_elimination"`` or ``"seeded"`` (drawn from the ``tie_break`` stream).
        no_vote: Whether a day vote may end in **no vote**: an answer that names nobody
            (target ``None``) casts no vote and is left out of the tally. MafiaScope's engine
            does this, and also counts a vote naming a dead player or the voter as no vote
            (agents map such answers to ``None`` when this is set). ``False``: every vote
            names a legal target (an unusable answer is retried, then a logged fallback).
        text_chars: Longest speech the engine accepts (characters).
        statement_chars: Longest vote statement the engine accepts (characters).
        tally_names_voters: Whether the public result of a ``secret_simultaneous`` vote names
            every voter's target (``True``, as ``werewolf7-v1`` does) or only how many votes
            each player received (``False``: a vote stays known to its voter alone; the
            belief-shift benchmark setting, ``werewolf7-v2``). Public votes name their voters
            anyway; nominations are public in ``nomination_runoff``, its runoff tally follows
            this field.
    """

    discussion_rounds: int = Field(default=1, ge=1)
    speaking_order: Literal["seat", "seeded", "seeded_first", "rotate", "bid"] = "seat"
    bid_turns: int = Field(default=8, ge=1)
    vote_order: Literal["seat", "seeded_first", "rotate"] = "seat"
    vote: Literal["public_sequential", "secret_simultaneous", "nomination_runoff"] = "public_sequential"
    vote_statement: bool = False
    self_vote: bool = False
    tie: Literal["no_elimination", "seeded"] = "no_elimination"
    no_vote: bool = False
    text_chars: int = Field(default=1200, ge=20)
    statement_chars: int = Field(default=300, ge=20)
    tally_names_voters: bool = True

    @model_serializer(mode="wrap")
    def _drop_new_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # fields added after version 1 are written only when changed, so rule sets (and log
        # headers) from before them serialise byte for byte as they did
        data: dict[str, Any] = handler(self)
        for key, default in (
            ("no_vote", False),
            ("text_chars", 1200),
            ("statement_chars", 300),
            ("tally_names_voters", True),
            ("bid_turns", 8),
            ("vote_order", "seat"),
        ):
            if data.get(key) == default:
                del data[key]
        return data


class MissionRules(_Frozen):
    """Mission games (The Resistance, Avalon): no night and no elimination.

    A round is a mission. The leader (rotating in seat order) proposes a team, everyone votes
    to approve or reject it; an approved team's members secretly play success or fail, and
    enough fails fail the mission. Source: The Resistance (Eskridge, 2009) and Avalon (2012)
    rulebooks; ``mafiascope-resistance`` follows MafiaScope's Resistance module
    (karpovilia/mafiascope@2177db7, its showcase game).

    Attributes:
        team_sizes: Team size of each mission, in order (one entry per mission at most played).
        missions_to_win: A team wins on this many missions (succeeded for the town team,
            failed for the hidden team).
        fails_to_fail: Fail cards that fail a mission.
        approval: ``"strict_majority"``: a team goes on the mission when more than half of
            the players approve it.
        rejections_to_lose: The proposal rejected this many times in a row within one mission
            ends the game as a win of the hidden team.
        first_leader: ``"seat"``: seat 0 leads first; ``"seeded"``: drawn from the ``tie_break``
            stream. The lead then passes in seat order after every proposal.
        discussion_rounds: Discussion rounds before each proposal (every player speaks once
            in each; 0: none).
        team_vote: ``"simultaneous"``: secret votes revealed together with every voter's
            choice; ``"public_sequential"``: each player votes in public in seat order with a
            short statement, seeing earlier votes.
        blank_rejects: Whether an answer that names neither approve nor reject counts as a
            reject (MafiaScope) instead of being retried and then replaced by a logged fallback.
        knows_spies: Roles that learn the hidden team's members at the start (Avalon's Merlin).
        assassin: Role of the hidden team that names one player once the town team has won
            its missions (Avalon's Assassin); ``None``: no assassination.
        assassin_target: Role that the assassin must name for the hidden team to win.
    """

    team_sizes: tuple[int, ...] = Field(min_length=1)
    missions_to_win: int = Field(default=3, ge=1)
    fails_to_fail: int = Field(default=1, ge=1)
    approval: Literal["strict_majority"] = "strict_majority"
    rejections_to_lose: int = Field(default=5, ge=1)
    first_leader: Literal["seat", "seeded"] = "seat"
    discussion_rounds: int = Field(default=1, ge=0)
    team_vote: Literal["simultaneous", "public_sequential"] = "simultaneous"
    blank_rejects: bool = False
    knows_spies: tuple[str, ...] = ()
    assassin: str | None = None
    assassin_target: str | None = None


class Lexicon(_Frozen):
    """Words the players see, so that "Werewolf" is a skin of Mafia.

    Attributes:
        game: Name of the game ("Mafia", "Werewolf").
        town_team: Display name of the town team ("Town", "Village").
        mafia_team: Display name of the hidden team ("Mafia", "Werewolves").
        kill: Verb for the night kill ("kill", "devour").
        day: Name of a day round as the players read it ("Day 2 begins"); a mission game's
            round is a mission ("Mission"). Written only when it is not "Day".
    """

    game: str = "Mafia"
    town_team: str = "Town"
    mafia_team: str = "Mafia"
    kill: str = "kill"
    day: str = Field(default="Day", min_length=1)

    @model_serializer(mode="wrap")
    def _drop_default_day(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # added after version 1: rule sets and log headers that keep "Day" serialise as before
        data: dict[str, Any] = handler(self)
        if data.get("day") == "Day":
            del data["day"]
        return data

    def team_name(self, team: Team) -> str:
        """Display name of a canonical team id."""
        return self.mafia_team if team == "mafia" else self.town_team


class RuleSet(_Frozen):
    """A complete, versioned rule set.

    Attributes:
        name: Short id (``mafiascope7``).
        version: Integer version; the versioned id is ``f"{name}-v{version}"``.
        description: One line for ``mafialab rules list``.
        roles: Roles and counts; at least one ``mafia`` role with the ``kill`` ability and
            one ``town`` role.
        intro_day: Whether round 0 is an intro day in which everyone speaks once.
        night: Night rules.
        day: Day rules.
        reveal_role_on_death: Whether a dead player's role is announced.
        reveal_team_on_death: Whether a dead player's team is announced when its role is not
            (Kaggle's reveal level ``team``; ignored when ``reveal_role_on_death`` is set).
        round_cap: Last round played; at the cap the side with more alive players wins
            (the mafia on a tie, since parity is a mafia win).
        lexicon: Display words.
        seat_names: Names given to seats 0..n-1 (at least as many as seats).
        mission: Mission rules (:class:`MissionRules`) for a mission game (no night, no
            elimination; ``night``, ``day.vote`` and the elimination fields do not apply);
            ``None`` (left out of the file): an elimination game.

    Raises:
        pydantic.ValidationError: On construction with an invalid field.
    """

    FILE_KEYS: ClassVar[tuple[str, ...]] = ("extends",)
    """Keys a rule-set file may hold besides the fields: ``extends``, read by :func:`rules_from_dict`
    before validation (named among the allowed fields in errors)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    version: int = Field(default=1, ge=1)
    description: str = ""
    roles: tuple[RoleSpec, ...]
    intro_day: bool = False
    night: NightRules = NightRules()
    day: DayRules = DayRules()
    reveal_role_on_death: bool = True
    reveal_team_on_death: bool = False
    round_cap: int = Field(default=15, ge=1)
    lexicon: Lexicon = Lexicon()
    seat_names: tuple[str, ...] = (
        "Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley",
        "Gray", "Harper", "Indigo", "Jordan", "Kennedy", "Logan",
    )  # fmt: skip
    mission: MissionRules | None = None

    @model_serializer(mode="wrap")
    def _drop_new_top_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # fields added after version 1 are written only when set, so older rule sets and log
        # headers serialise byte for byte as before: the mission games' section, Kaggle's reveal level
        data: dict[str, Any] = handler(self)
        if data.get("mission", 0) is None:
            del data["mission"]
        if data.get("reveal_team_on_death") is False:
            del data["reveal_team_on_death"]
        return data

    @model_validator(mode="after")
    def _check(self) -> RuleSet:
        names = [r.name for r in self.roles]
        dup = [n for n, c in Counter(names).items() if c > 1]
        if dup:
            raise ValueError(f"roles: duplicate role name {dup[0]!r}")
        mafia = sum(r.count for r in self.roles if r.team == "mafia")
        town = sum(r.count for r in self.roles if r.team == "town")
        if self.mission is not None:
            _check_mission(self)
        elif not any(r.team == "mafia" and r.ability == "kill" for r in self.roles):
            raise ValueError("roles: needs a mafia-team role with ability 'kill'")
        if any(r.team == "town" and r.ability == "kill" for r in self.roles):
            raise ValueError("roles: a town role cannot have ability 'kill'")
        if town == 0:
            raise ValueError("roles: needs at least one town seat")
        if mafia >= town:
            raise ValueError(
                f"roles: {mafia} mafia against {town} town is already parity; the mafia must start outnumbered"
            )
        if len(self.seat_names) < self.n_seats:
            raise ValueError(f"seat_names: {count(len(self.seat_names), 'name')} for {count(self.n_seats, 'seat')}")
        for i, nm in enumerate(self.seat_names[: self.n_seats]):
            # names are read back from model answers and from `--night 3=Dana`: a blank name or a
            # number ("5" for seat 2) would be no name, or another seat
            if not nm.strip() or nm != nm.strip() or nm.strip().isdigit():
                raise ValueError(
                    f"seat_names.{i}: {nm!r} is not a name (a seat name is a word with no spaces around it "
                    "and not a number, e.g. 'Alex')"
                )
        if len({nm.casefold() for nm in self.seat_names[: self.n_seats]}) != self.n_seats:
            raise ValueError("seat_names: names must be unique (ignoring case: answers are read that way)")
        if self.day.vote == "nomination_runoff" and self.n_seats < 3:
            raise ValueError("day.vote: nomination_runoff needs at least 3 seats")
        return self

    @property
    def id(self) -> str:
        """Versioned id, e.g. ``"mafiascope7-v1"``."""
        return f"{self.name}-v{self.version}"

    @property
    def n_seats(self) -> int:
        """Number of seats (sum of role counts)."""
        return sum(r.count for r in self.roles)

    def role(self, name: str) -> RoleSpec:
        """Return the role named ``name``.

        Raises:
            KeyError: If no role has that name.
        """
        for r in self.roles:
            if r.name == name:
                return r
        raise KeyError(name)

    def role_with(self, ability: NightAbility) -> RoleSpec | None:
        """Return the first role holding ``ability``, or ``None``."""
        return next((r for r in self.roles if r.ability == ability), None)

    def deck(self) -> list[str]:
        """Role names, one per seat, in declaration order (before the seeded deal)."""
        return [r.name for r in self.roles for _ in range(r.count)]


def _check_mission(rules: RuleSet) -> None:
    """A mission game's roles and mission fields fit each other (the message names the field)."""
    m = rules.mission
    assert m is not None
    names = {r.name: r for r in rules.roles}
    if any(r.ability is not None for r in rules.roles):
        raise ValueError("roles: a mission game has no night, so no role has a night ability")
    if len(m.team_sizes) < 2 * m.missions_to_win - 1:
        raise ValueError(
            f"mission.team_sizes: {count(len(m.team_sizes), 'mission')} cannot decide a game of "
            f"{m.missions_to_win} missions to win (needs {2 * m.missions_to_win - 1})"
        )
    for i, size in enumerate(m.team_sizes):
        if not 1 <= size <= rules.n_seats:
            raise ValueError(f"mission.team_sizes.{i}: {size} is not a team of 1..{rules.n_seats} players")
    for path, role in [*((f"mission.knows_spies.{i}", r) for i, r in enumerate(m.knows_spies)),
                       ("mission.assassin", m.assassin), ("mission.assassin_target", m.assassin_target)]:  # fmt: skip
        if role is not None and role not in names:
            raise ValueError(f"{path}: {role!r} is not a role of this rule set ({', '.join(names)})")
    if (m.assassin is None) != (m.assassin_target is None):
        raise ValueError("mission.assassin: set both assassin and assassin_target, or neither")
    if m.assassin is not None and names[m.assassin].team != "mafia":
        raise ValueError(f"mission.assassin: {m.assassin!r} must be a role of the hidden (mafia) team")


MISSION_UNUSED = ("night.", "day.vote", "day.self_vote", "day.tie", "day.no_vote", "day.tally_names_voters",
                  "day.discussion_rounds", "reveal_role_on_death", "round_cap")  # fmt: skip
"""Rule fields (dotted paths, or their prefixes) that a mission game does not use."""

RULE_SCOPE: dict[str, NightAbility] = {
    "night.kill_vote": "kill",
    "night.kill_tie": "kill",
    "night.mafia_chat": "kill",
    "night.protect_self": "protect",
    "night.protect_self_consecutive": "protect",
    "night.protect_repeat": "protect",
    "night.investigate_result": "investigate",
}
"""Rule fields that concern only the roles holding one night ability; every other rule field
concerns every role. (Which roles' prompts must state a field, see :func:`rule_fields`.)"""

COSMETIC_FIELDS = frozenset({"name", "version", "description", "roles", "lexicon", "seat_names"})
"""Top-level fields that are not game rules (identity, display words, names) or are stated
role by role (``roles``)."""


_UNSTATED_DEFAULTS: dict[str, Any] = {"day.vote_order": "seat", "reveal_team_on_death": False}
"""Fields added for Kaggle's Werewolf that a rule set states only when it sets them: at these values
they are the rules as they were before the field existed (so the prompts of older rule sets stay
word for word). ``day.bid_turns`` is stated only under ``day.speaking_order: bid``."""


def _unstated(rules: RuleSet, path: str, value: Any) -> bool:
    if path == "day.bid_turns":
        return rules.day.speaking_order != "bid"
    return path in _UNSTATED_DEFAULTS and _UNSTATED_DEFAULTS[path] == value


def rule_fields(rules: RuleSet) -> list[tuple[str, Any, list[str]]]:
    """Every game rule of ``rules`` as ``(dotted field path, value, affected role names)``.

    Walks the rule set's fields (nested sections one level deep), leaving out
    :data:`COSMETIC_FIELDS` (and ``mission`` in an elimination game). A field's affected roles
    are the roles holding the ability of :data:`RULE_SCOPE` (none when the rule set has no such
    role; none for the fields of :data:`MISSION_UNUSED` in a mission game), else every role. A new
    field appears here automatically, so a prompt pack that does not state it fails its test.
    Kaggle's fields at their old-rules values are left out (``_UNSTATED_DEFAULTS``).
    """
    out: list[tuple[str, Any, list[str]]] = []
    everyone = [r.name for r in rules.roles]
    for key in type(rules).model_fields:
        if key in COSMETIC_FIELDS or (key == "mission" and rules.mission is None):
            continue
        value = getattr(rules, key)
        leaves = (
            [(f"{key}.{k}", getattr(value, k)) for k in type(value).model_fields]
            if isinstance(value, BaseModel)
            else [(key, value)]
        )
        for path, v in leaves:
            if _unstated(rules, path, v):
                continue
            ability = RULE_SCOPE.get(path)
            roles = everyone if ability is None else [r.name for r in rules.roles if r.ability == ability]
            if rules.mission is not None and path.startswith(MISSION_UNUSED):
                roles = []
            out.append((path, v, roles))
    return out


def _validate(data: object, *, source: str) -> RuleSet:
    """Validate a complete mapping (no ``extends``) into a :class:`RuleSet`."""
    return load_config(data, RuleSet, source=source, error=RuleSetError)


BUILTIN_NAMES = (
    "mafiascope7",
    "werewolf7",
    "arena12",
    "mafiascope7-werewolf",
    "mafiascope7-werewolf-seer",
    "secretmafia6",
    "kaggle-werewolf7",
    "kaggle-werewolf8",
    "resistance5",
    "avalon5",
    "mafiascope-resistance",
)
"""Rule sets shipped as package data (``mafialab/rules/builtin/<name>.yaml``; other versions of
them as ``<name>-v<version>.yaml``). A shipped file may ``extends:`` one shipped before it."""


def _merge(parent: RuleSet, data: dict[str, Any]) -> dict[str, Any]:
    """``parent``'s fields overridden by ``data``'s (nested sections merged one level deep)."""
    merged = parent.model_dump()
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def _load_builtin(name: str, loaded: dict[str, RuleSet] | None = None) -> RuleSet:
    """Read a shipped rule set from package data, validated exactly like a user's YAML file.

    ``extends`` names a rule set in ``loaded`` (by versioned id or by name), shipped before it.
    """
    source = f"built-in rule set {name}"
    res = resources.files("mafialab.rules").joinpath("builtin", f"{name}.yaml")
    data = read_config(res, error=RuleSetError, source=source)
    if isinstance(data, dict) and "extends" in data:
        data = dict(data)
        base = data.pop("extends")
        parent = (loaded or {}).get(base)
        if parent is None:  # pragma: no cover - a packaging error, caught by the rule-set tests
            raise RuleSetError(f"{source}: extends: {base!r} is not a rule set shipped before it")
        data = _merge(parent, data)
    return _validate(data, source=source)


def _load_all_builtins() -> dict[str, RuleSet]:
    """Every shipped version, by versioned id and (for a file named ``<name>.yaml``) by name."""
    loaded: dict[str, RuleSet] = {}
    files = [
        *BUILTIN_NAMES,
        "mafiascope7-v2",
        "werewolf7-v2",
        "mafiascope7-werewolf-v2",
        "mafiascope7-werewolf-seer-v2",
    ]
    for fname in files:
        rs = _load_builtin(fname, loaded)
        loaded[rs.id] = rs
        if fname == rs.name:
            loaded[rs.name] = rs
    return loaded


_SHIPPED = _load_all_builtins()

MAFIASCOPE7 = _SHIPPED["mafiascope7"]
"""MafiaScope protocol: 2 Mafia, 1 Doctor, 4 Villagers; intro day; public votes."""
WEREWOLF7 = _SHIPPED["werewolf7"]
"""Werewolf table: 2 Werewolves, Seer, Doctor, 3 Villagers; a vote's result names every voter (``werewolf7-v2`` is
the belief-shift benchmark setting)."""
ARENA12 = _SHIPPED["arena12"]
"""Arena table: 3 Mafia, Angel, Sheriff, 7 Town; 3 debate rounds; nomination + runoff."""

MAFIASCOPE7_V2 = _SHIPPED["mafiascope7-v2"]
"""``mafiascope7-v2``: MafiaScope's vote rule (no vote instead of a fallback); replays imported games."""

WEREWOLF7_V2 = _SHIPPED["werewolf7-v2"]
"""``werewolf7-v2``: the belief-shift benchmark setting; an observer sees no secret vote but its own."""

BUILTIN: dict[str, RuleSet] = {n: _SHIPPED[n] for n in BUILTIN_NAMES}
"""The default version of each built-in rule set, by name: ``mafiascope7``, ``werewolf7``, ``arena12``,
MafiaScope's Werewolf skin ``mafiascope7-werewolf`` and its Seer variant ``mafiascope7-werewolf-seer``,
TextArena's SecretMafia ``secretmafia6``, Kaggle Game Arena's Werewolf ``kaggle-werewolf7`` (the
package default) and ``kaggle-werewolf8`` (its standard experiment), and the mission games
``resistance5``, ``avalon5`` and ``mafiascope-resistance`` (MafiaScope's Resistance module)."""

BUILTIN_VERSIONS: dict[str, RuleSet] = {rid: r for rid, r in _SHIPPED.items() if rid == r.id}
"""Every built-in rule-set version, by versioned id (older and newer versions than the default)."""


def rules_from_dict(data: object, *, source: str = "rule set") -> RuleSet:
    """Validate a mapping into a :class:`RuleSet`.

    A mapping may name a built-in (by name or versioned id) under ``extends`` and override
    fields of it (nested sections are merged one level deep).

    Raises:
        RuleSetError: With the failing field path in the message.
    """
    if data is None:
        raise RuleSetError(f"{source}: the file is empty (expected a rule set: a mapping of its fields)")
    if not isinstance(data, dict):
        raise RuleSetError(f"{source}: {top_level_message('a rule set (a mapping of its fields)', data)}")
    data = dict(data)
    base = data.pop("extends", None)
    if base is not None:
        by_id = dict(BUILTIN_VERSIONS)
        parent = (BUILTIN.get(base) or by_id.get(base)) if isinstance(base, str) else None
        if parent is None:
            raise RuleSetError(
                f"{source}: extends: unknown rule set {base!r} (known: {', '.join(BUILTIN)}, or a versioned id "
                f"such as {next(iter(by_id))})"
            )
        data = _merge(parent, data)
    rs = _validate(data, source=source)
    same_id = BUILTIN_VERSIONS.get(rs.id)
    if same_id is not None and _rules_differ(rs, same_id):
        # logs, reports and benchmarks key on the id: a changed rule set must not pass as the built-in
        raise RuleSetError(
            f"{source}: name: {rs.name!r} version {rs.version} is the id of the built-in rule set {rs.id}, "
            "but the rules differ from it; give the changed rule set its own name (or another version)"
        )
    return rs


def _rules_differ(a: RuleSet, b: RuleSet) -> bool:
    """Whether ``a`` and ``b`` differ in anything but the cosmetic description and seat names."""
    cosmetic = {"description", "seat_names"}
    return a.model_dump(exclude=cosmetic) != b.model_dump(exclude=cosmetic)


def load_rules(name_or_path: str | Path) -> RuleSet:
    """Return a built-in rule set by name, or load one from a YAML file.

    Args:
        name_or_path: ``"mafiascope7"``, ``"werewolf7"``, ``"arena12"`` (the default version), a
            versioned id such as ``"werewolf7-v1"`` or ``"werewolf7-v2"``, or a YAML file path.

    Raises:
        RuleSetError: An empty value, an unknown name, unreadable or malformed YAML, or an invalid field.
    """
    key = str(name_or_path)
    if not key.strip():
        raise RuleSetError(f"rules: no rule set given (an empty value; built in: {', '.join(BUILTIN)}; or a YAML path)")
    if key in BUILTIN:
        return BUILTIN[key]
    if key in BUILTIN_VERSIONS:
        return BUILTIN_VERSIONS[key]
    path = Path(key)
    if not (path.suffix in {".yaml", ".yml", ".json"} or path.exists()):
        raise RuleSetError(
            f"rules: unknown rule set {key!r} (built in: {', '.join(BUILTIN)}; versions: "
            f"{', '.join(BUILTIN_VERSIONS)}; or a YAML path)"
        )
    return rules_from_dict(read_config(path, error=RuleSetError), source=str(path))
