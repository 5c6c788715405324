"""The season file (``SEASON.yaml``): schema and validation; errors name the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mafialab._words import count
from mafialab.agents import AgentSpecError, make_agent
from mafialab.config import ConfigError, load_config, read_config
from mafialab.models import ModelSpecError, parse_model_spec, resolve_backend
from mafialab.record import Price, PriceTable
from mafialab.rules import RuleSet, RuleSetError, load_rules


class SeasonConfigError(ConfigError):
    """A season file is invalid; the message names the file and the field."""


class RosterEntry(BaseModel):
    """One roster entry: an agent spec and its public table name.

    Attributes:
        agent: Agent spec: ``scripted``, ``random`` or a model string ``provider/model``.
        name: Name of the entry on the leaderboard and at the table (unique in the
            roster; default: the agent spec).
        persona: Optional persona fields, recorded in each game's roster.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str = Field(min_length=1)
    name: str = ""
    persona: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _default_name(self) -> RosterEntry:
        if not self.name:
            object.__setattr__(self, "name", self.agent)
        return self

    @property
    def label(self) -> str:
        """The public seat label: ``name`` and, when different, ``[agent]``."""
        return self.name if self.name == self.agent else f"{self.name} [{self.agent}]"

    @property
    def is_model(self) -> bool:
        """Whether ``agent`` is a model string (``provider/model``)."""
        return "/" in self.agent


class JudgeSpec(BaseModel):
    """A judge model.

    Attributes:
        model: Model string ``provider/model``.
        options: Backend options passed to ``get_model`` (e.g. ``base_url``; the mock
            backend's ``outputs``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(pattern=r"^[^/\s]+/\S+$")
    options: dict[str, Any] = Field(default_factory=dict)


class Parallelism(BaseModel):
    """Concurrency limits.

    Attributes:
        games: Games played at the same time (each game already asks its independent
            decisions concurrently).
        judge_calls: Judge calls in flight at the same time, per judge model.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    games: int = Field(default=1, ge=1, le=256)
    judge_calls: int = Field(default=2, ge=1, le=256)


class Limits(BaseModel):
    """Integrity and budget limits.

    Attributes:
        min_answered_share: A finished game whose agents answered (without fallback) less
            than this share of player decisions is discarded and replayed (default 0.7).
        max_replacements: Replacement games allowed in the whole season (default: the
            number of games); past it a degraded game is kept and flagged.
        judge_attempts: Calls per verdict (first try plus retries).
        judge_max_tokens: Answer budget of a judge call.
        preflight: Check that every model backend answers before the season starts.
        max_copied_share: Quality threshold (``docs/metrics.md``, quality signals): a finished
            game in which more than this share (0-1) of the agents' texts (speeches,
            statements, team chat) copy 8 or more words of the seat's own prompt fails the
            gate like one below ``min_answered_share`` (discarded and replayed, or kept and
            flagged degraded once the replacements are spent). ``None`` (default): the
            signal is a warning only (logged, and kept in the slot's ``quality``).
        max_off_roster: Quality threshold: a game whose answers name more than this many
            players that are no seat of the game fails the gate; ``None`` (default): a
            warning only.
        fail_on_constant_answers: Quality threshold: a game in which a model's answers to a
            probe never vary (one value over 10 or more) fails the gate; ``False``
            (default): a warning only.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_answered_share: float = Field(default=0.7, ge=0.0, le=1.0)
    max_replacements: int | None = Field(default=None, ge=0)
    judge_attempts: int = Field(default=2, ge=1, le=10)
    judge_max_tokens: int = Field(default=2048, ge=64)
    preflight: bool = True
    max_copied_share: float | None = Field(default=None, ge=0.0, le=1.0)
    max_off_roster: int | None = Field(default=None, ge=0)
    fail_on_constant_answers: bool = False


class Deals(BaseModel):
    """Controlled deals (``deals:`` in the season file; ``docs/arena.md``, "Controlled deals").

    Attributes:
        mode: ``seeded`` (default): game ``j`` deals from seed ``S + j``. ``duplicate``: games
            come in blocks of ``rotations``; block ``b`` replays the deal of seed ``S + b``
            (same roles per seat, same engine streams) once per rotation of its line-up over
            the seats, so every entry of the line-up meets the same hands. ``role_rotation``:
            games come in blocks of ``rotations`` with one line-up on fixed seats; game ``k``
            of block ``b`` deals the roles of seed ``S + b·rotations`` shifted ``k·step`` seats
            and plays with its own seed ``S + j`` (fresh speaking orders and tie-breaks).
        rotations: Games per block (default: the table's seat count, a whole rotation, so each
            entry of the line-up holds every seat (duplicate) or role slot (role rotation) of
            the block's deal once); ``games`` must be a multiple. The shift between two games
            of a block is ``step = seats // rotations`` seats.
        shuffle_names: Give the seats a fresh permutation of the rule set's names every game
            (stream ``names:<slot>`` of the season seed), so table names are independent of
            models and seats; the names are recorded per slot in ``season.json`` and in each
            game's roster.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["seeded", "duplicate", "role_rotation"] = "seeded"
    rotations: int | None = Field(default=None, ge=1, le=1000)
    shuffle_names: bool = False


class SeasonConfig(BaseModel):
    """A season: who plays, under which rules, how many games, who judges.

    Attributes:
        name: Season name (letters, digits, ``-_.``); prefixes game ids.
        description: Free text.
        rules: Rule-set name (``arena12``), versioned id or YAML path.
        games: Number of games (counted games; degraded ones are replaced).
        seed: Season seed ``S`` (>= 0): game ``j`` uses seed ``S + j``; the ``j``-th replacement
            (0-based) uses ``S + K + j``.
        roster: The entries, at least one (a string is shorthand for ``{agent: ...}``).
        judges: Judge models (strings or ``{model, options}``); none means no judging.
        prices: Model string (or ``provider/*``) → price, for cost accounting; ``local/*``
            and ``mock/*`` are free unless listed.
        parallelism: Concurrency limits.
        limits: Integrity and budget limits.
        probes: Probe battery asked in every game (``none``, ``default``, ``suspicion`` or a
            battery YAML path; ``docs/probes.md``); answers go to each game's
            ``probes.jsonl``, so ``mafialab report`` and the viewer read a season like any run.
        deals: Controlled deals: duplicate deals, role-rotation blocks, name shuffling.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=80)
    description: str = ""
    rules: str = "arena12"
    games: int = Field(ge=1, le=100_000)
    seed: int = Field(default=0, ge=0)
    roster: list[RosterEntry] = Field(min_length=1)
    judges: list[JudgeSpec] = Field(default_factory=list)
    prices: dict[str, Price] = Field(default_factory=dict)
    parallelism: Parallelism = Field(default_factory=Parallelism)
    limits: Limits = Field(default_factory=Limits)
    probes: str = "none"
    deals: Deals = Field(default_factory=Deals)

    @field_validator("probes")
    @classmethod
    def _known_battery(cls, v: str) -> str:
        from mafialab.probes import ProbeBatteryError, resolve_battery

        try:
            resolve_battery(v)
        except ProbeBatteryError as err:
            raise ValueError(str(err)) from None
        return v

    @field_validator("roster", mode="before")
    @classmethod
    def _roster_strings(cls, v: Any) -> Any:
        if isinstance(v, list):
            return [{"agent": x} if isinstance(x, str) else x for x in v]
        return v

    @field_validator("judges", mode="before")
    @classmethod
    def _judge_strings(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = [v]
        if isinstance(v, list):
            return [{"model": x} if isinstance(x, str) else x for x in v]
        return v

    @field_validator("roster")
    @classmethod
    def _unique_names(cls, v: list[RosterEntry]) -> list[RosterEntry]:
        seen: set[str] = set()
        for i, e in enumerate(v):
            if e.name in seen:
                raise ValueError(f"entry {i}: name {e.name!r} used twice; give each entry a unique name")
            seen.add(e.name)
        return v

    @field_validator("judges")
    @classmethod
    def _unique_judges(cls, v: list[JudgeSpec]) -> list[JudgeSpec]:
        models = [j.model for j in v]
        dup = {m for m in models if models.count(m) > 1}
        if dup:
            raise ValueError(f"judge {sorted(dup)[0]!r} listed twice")
        return v

    def load_rules(self) -> RuleSet:
        """The season's rule set.

        Raises:
            SeasonConfigError: Unknown rule set (message names ``rules``).
        """
        try:
            return load_rules(self.rules)
        except RuleSetError as err:
            why = str(err)
            raise SeasonConfigError(why if why.startswith("rules:") else f"rules: {why}") from None

    def price(self, model: str) -> Price | None:
        """The price of ``model``: exact key, then ``provider/*``, then free for local/mock, else ``None``.

        The lookup is :meth:`mafialab.record.PriceTable.price` over the default table with
        this season's ``prices`` on top.
        """
        return PriceTable(prices={**PriceTable().prices, **self.prices}).price(model.partition("?")[0])

    def max_replacements(self) -> int:
        """Replacement games allowed (``limits.max_replacements`` or ``games``)."""
        m = self.limits.max_replacements
        return self.games if m is None else m

    def rotations(self) -> int:
        """Games per deal block: ``deals.rotations`` or the table's seat count (1 for ``seeded``)."""
        if self.deals.mode == "seeded":
            return 1
        return self.deals.rotations or self.load_rules().n_seats


def entry_codes(n: int) -> list[str]:
    """Short codes for ``n`` roster entries: ``A`` … ``Z``, then ``AA``, ``AB``, … (plan tables)."""
    letters = [chr(ord("A") + i) for i in range(26)]
    out = []
    for i in range(n):
        out.append(letters[i] if i < 26 else letters[i // 26 - 1] + letters[i % 26])
    return out


def season_warnings(cfg: SeasonConfig) -> list[str]:
    """What makes a season's leaderboard uninformative, found before anything is played.

    A roster smaller than the table (3 entries at 12 seats) seats every entry in every
    game, several times and on both teams, so every entry shares every outcome and all rows
    come out the same; a meaningful season has more entries than seats (``docs/arena.md``).

    Raises:
        SeasonConfigError: The rule set cannot be loaded.
    """
    seats = cfg.load_rules().n_seats
    out = []
    if len(cfg.roster) < seats:
        out.append(
            f"roster: {count(len(cfg.roster), 'entry', 'entries')} at a {seats}-seat table: "
            "every entry plays every game, "
            "several seats on both teams, so all entries share the same outcomes and the leaderboard rows "
            f"come out the same; use at least {seats + 1} entries (docs/arena.md, 'A meaningful season')"
        )
    elif len(cfg.roster) == seats:
        out.append(
            f"roster: {seats} entries at a {seats}-seat table: every entry plays every game, so win rates "
            "differ only by team; more entries than seats separate them"
        )
    return out


def season_from_dict(data: Any, source: str = "season") -> SeasonConfig:
    """Validate a mapping into a :class:`SeasonConfig`; check rules, agent specs and judge providers.

    Raises:
        SeasonConfigError: The first failing fields, by path (``roster[2].agent: …``).
    """
    cfg = load_config(data, SeasonConfig, source=source, error=SeasonConfigError)
    try:
        rules = cfg.load_rules()
    except SeasonConfigError as err:
        raise SeasonConfigError(f"{source}: {err}") from None
    for i, e in enumerate(cfg.roster):
        try:
            make_agent(e.agent, 0, rules, cfg.seed)
        except (AgentSpecError, ValueError) as err:
            raise SeasonConfigError(f"{source}: roster[{i}].agent: {err}") from None
    d = cfg.deals
    if d.mode != "seeded":
        n = rules.n_seats
        k = cfg.rotations()
        if k > n:
            raise SeasonConfigError(f"{source}: deals.rotations: {k} rotations of a {n}-seat table (at most {n})")
        if cfg.games % k:
            raise SeasonConfigError(
                f"{source}: games: {cfg.games} is not a multiple of deals.rotations ({k}, the games per "
                f"{d.mode.replace('_', ' ')} block); use {cfg.games + k - cfg.games % k} games or another rotation"
            )
    for i, j in enumerate(cfg.judges):
        try:
            resolve_backend(parse_model_spec(j.model)[0].partition("/")[0])  # the one model-string wording
        except (ModelSpecError, ImportError) as err:
            raise SeasonConfigError(f"{source}: judges[{i}].model: {err}") from None
    return cfg


def load_season(path: Path) -> SeasonConfig:
    """Read and validate a season YAML file.

    Raises:
        SeasonConfigError: Unreadable file, bad YAML, or an invalid field (named).
    """
    path = Path(path)
    data = read_config(path, error=SeasonConfigError)
    if isinstance(data, dict):
        rules = data.get("rules")
        if isinstance(rules, str) and rules.endswith((".yaml", ".yml")) and not Path(rules).is_absolute():
            data = {**data, "rules": str(path.parent / rules)}
    return season_from_dict(data, source=str(path))
