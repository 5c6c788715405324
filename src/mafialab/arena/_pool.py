"""A frozen reference pool: pinned players, deals and ratings; a newcomer rated against it.

``season freeze-pool SEASON_DIR --out POOL`` writes the pool file (protocol
:data:`POOL_PROTOCOL`); ``season evaluate NEW_MODEL --pool POOL --out DIR`` plays the entrant
on the pool's deals and seats and rates it on the pool's scale, the pool's ratings held
fixed. See ``docs/arena.md``, "A frozen reference pool".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mafialab._files import write_atomic
from mafialab.agents import AgentSpecError, make_agent
from mafialab.arena._config import RosterEntry, SeasonConfig
from mafialab.arena._leaderboard import build_index
from mafialab.arena._manifest import (
    GAMES_DIR,
    MANIFEST_FILE,
    SeasonManifest,
    Slot,
    game_id_for,
    load_manifest,
    save_manifest,
)
from mafialab.arena._season import ProgressFn, _Runner, preflight_season
from mafialab.record import GAME_FILE, read_game
from mafialab.rules import RuleSet, RuleSetError, load_rules, rules_from_dict

POOL_PROTOCOL = "mafialab-pool/1"
"""The pool file's protocol: the fields below, SHA-256 over their canonical JSON, OpenSkill
Plackett-Luce ratings, the entrant on seat ``i mod seats`` of deal ``i``."""
EVALUATION_FILE = "evaluation.json"
POOL_COPY = "pool.json"


class PoolDeal(BaseModel):
    """One pinned game of the pool: its seed, roles, names, pool seating and the entrant's seat."""

    model_config = ConfigDict(extra="forbid")

    seed: int
    roles: list[str]
    names: list[str]
    seating: list[str] = Field(description="pool entry name per seat")
    entrant_seat: int = Field(ge=0)


class PoolRating(BaseModel):
    """A pool entry's fixed OpenSkill rating."""

    model_config = ConfigDict(extra="forbid")

    mu: float
    sigma: float


class Pool(BaseModel):
    """The pool file (JSON): everything an evaluation needs, under a SHA-256 of its canonical JSON.

    Attributes:
        protocol: :data:`POOL_PROTOCOL`.
        season: The season it was frozen from.
        rules: The full rule set (pinned; a built-in id is used when it still matches).
        roster: The pool entries: pinned agent strings (model options included) and personas.
        ratings: Entry name → its OpenSkill rating at the freeze (held fixed in evaluations).
        deals: The evaluation games, in order.
        created: Unix time of the freeze.
        sha256: SHA-256 (hex) of the canonical JSON of every other field (keys sorted, no
            spaces, UTF-8).
    """

    model_config = ConfigDict(extra="forbid")

    protocol: str
    season: str
    rules: dict[str, Any]
    roster: list[RosterEntry]
    ratings: dict[str, PoolRating]
    deals: list[PoolDeal] = Field(min_length=1)
    created: float
    sha256: str = ""


class PoolError(ValueError):
    """A pool file cannot be written or used (wrong protocol, hash mismatch, invalid field)."""


def pool_hash(data: dict[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``data`` without its ``sha256`` key."""
    body = {k: v for k, v in data.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def freeze_pool(season_dir: Path, out: Path) -> Pool:
    """Write the pool file of a finished season to ``out`` (JSON) and return it.

    The pool's deals are the season's counted games (seed, roles, names and seating as their
    logs record them); the entrant takes seat ``i mod seats`` of deal ``i``, so its seats
    cycle over the table. Ratings are the season leaderboard's OpenSkill ``mu``/``sigma``.

    Raises:
        SeasonError: Not a season directory.
        PoolError: The season has no counted game.
    """
    season_dir = Path(season_dir)
    m = load_manifest(season_dir)
    index = build_index(season_dir)
    deals: list[PoolDeal] = []
    rules: RuleSet | None = None
    for row in index.games:
        if not row.counted:
            continue
        game = read_game(season_dir / row.path)
        rules = game.header.rules
        roster = game.header.roster
        deals.append(
            PoolDeal(
                seed=row.seed,
                roles=[p.role for p in roster],
                names=[p.name for p in roster],
                seating=list(row.seats),
                entrant_seat=len(deals) % len(roster),
            )
        )
    if not deals or rules is None:
        raise PoolError(f"{season_dir}: no counted game to freeze into a pool")
    with contextlib.suppress(ValueError):  # a rule-set file that moved: the games' copy
        rules = m.config.load_rules()  # the rule set with its own seat names (a game's may be shuffled)
    data = Pool(
        protocol=POOL_PROTOCOL,
        season=m.config.name,
        rules=rules.model_dump(mode="json"),
        roster=list(m.config.roster),
        ratings={e.name: PoolRating(mu=e.rating.mu, sigma=e.rating.sigma) for e in index.leaderboard},
        deals=deals,
        created=round(time.time(), 3),
    ).model_dump(mode="json")
    data["sha256"] = pool_hash(data)
    write_atomic(Path(out), json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return Pool.model_validate(data)


def load_pool(path: Path) -> Pool:
    """Read a pool file; refuse it unless its protocol and SHA-256 match.

    Raises:
        PoolError: Unreadable file, another protocol (``protocol``), a hash that does not
            match the content (``sha256``: edited or damaged), or an invalid field (named).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise PoolError(f"{path}: not a readable pool file: {err}") from None
    if not isinstance(data, dict):
        raise PoolError(f"{path}: not a pool file (a JSON object with protocol {POOL_PROTOCOL!r})")
    if data.get("protocol") != POOL_PROTOCOL:
        raise PoolError(
            f"{path}: protocol: {data.get('protocol')!r} is not {POOL_PROTOCOL!r}; this mafialab reads "
            f"{POOL_PROTOCOL} pools only"
        )
    want = pool_hash(data)
    if data.get("sha256") != want:
        raise PoolError(
            f"{path}: sha256: the file says {data.get('sha256')!r} but its content hashes to {want}; "
            "the pool was edited or damaged: refused (freeze it again from its season)"
        )
    try:
        return Pool.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise PoolError(f"{path}: {where}: {first['msg']}") from None


def _pool_rules(pool: Pool, out: Path) -> str:
    """The season-file ``rules`` value for the pool's rule set: its built-in id, else a JSON copy in ``out``."""
    rules = rules_from_dict(pool.rules, source="pool rules")
    try:
        if load_rules(rules.id).model_dump(mode="json", exclude={"seat_names"}) == rules.model_dump(
            mode="json", exclude={"seat_names"}
        ):
            return rules.id
    except RuleSetError:
        pass
    path = Path(out) / "pool-rules.json"
    write_atomic(path, json.dumps(pool.rules, indent=1))
    return str(path.resolve())


def _evaluation_season(pool: Pool, entrant: RosterEntry, out: Path, preflight: bool) -> SeasonManifest:
    """The manifest of an evaluation: one slot per pool deal, the entrant on its seat."""
    names = [e.name for e in pool.roster]
    if entrant.name in names:
        raise PoolError(f"name: {entrant.name!r} is a pool entry's name; give the entrant another --name")
    cfg = SeasonConfig(
        name=f"eval-{pool.sha256[:12]}",
        description=f"{entrant.name} against pool {pool.season} (sha256 {pool.sha256})",
        rules=_pool_rules(pool, out),
        games=len(pool.deals),
        roster=[*pool.roster, entrant],
        limits={"preflight": preflight},  # type: ignore[arg-type]
    )
    rules = cfg.load_rules()
    slots = []
    for i, d in enumerate(pool.deals):
        seating = [names.index(n) for n in d.seating]
        seating[d.entrant_seat % rules.n_seats] = len(names)
        slots.append(
            Slot(
                slot=i,
                seed=d.seed,
                seating=seating,
                game_id=game_id_for(cfg.name, i, d.seed),
                roles=d.roles,
                names=d.names,
                block=i,
            )
        )
    return SeasonManifest(config=cfg, rules_id=rules.id, slots=slots, started=round(time.time(), 3))


def rate_entrant(out: Path, pool: Pool) -> dict[str, Any]:
    """The entrant's OpenSkill rating from an evaluation's games, the pool's ratings fixed.

    Games in slot order; each is a two-team match (winner rank 1) in which every pool seat
    carries its entry's frozen rating and the entrant's seat its current one; only the
    entrant's rating is updated (the mean of its seats' updates when it holds several).
    """
    m = load_manifest(out)
    model = PlackettLuce()
    entrant = m.config.roster[-1]
    me = model.rating(name=entrant.name)
    n_pool = len(pool.roster)
    fixed = []  # the pool's ratings, never updated (an entry the pool has no rating for: the prior)
    for e in pool.roster:
        r = pool.ratings.get(e.name)
        fixed.append(model.rating(name=e.name) if r is None else model.rating(mu=r.mu, sigma=r.sigma, name=e.name))
    games = []
    for slot in m.slots:
        gdir = Path(out) / GAMES_DIR / slot.game_id
        if slot.degraded or not (gdir / GAME_FILE).exists():
            continue
        game = read_game(gdir)
        if game.winner is None:
            continue
        teams: dict[str, list[int]] = {"town": [], "mafia": []}
        for s, info in enumerate(game.header.roster):
            teams[info.team].append(s)
        order = ["town", "mafia"]
        match = []
        for t in order:
            match.append([me if slot.seating[s] >= n_pool else fixed[slot.seating[s]] for s in teams[t]])
        new = model.rate(match, ranks=[1.0 if t == game.winner else 2.0 for t in order])
        mine = [(new[i][j].mu, new[i][j].sigma) for i, t in enumerate(order) for j, s in enumerate(teams[t])
                if slot.seating[s] >= n_pool]  # fmt: skip
        me = model.rating(mu=sum(x[0] for x in mine) / len(mine), sigma=sum(x[1] for x in mine) / len(mine))
        seats = [s for s, e in enumerate(slot.seating) if e >= n_pool]
        team = game.header.roster[seats[0]].team
        games.append(
            {"game_id": slot.game_id, "seed": slot.seed, "seats": seats,
             "role": game.header.roster[seats[0]].role, "team": team, "won": team == game.winner}
        )  # fmt: skip
    ordinal = me.mu - 3 * me.sigma
    above = sum(1 for r in pool.ratings.values() if r.mu - 3 * r.sigma > ordinal)
    return {
        "kind": "pool_evaluation",
        "protocol": POOL_PROTOCOL,
        "pool_sha256": pool.sha256,
        "pool_season": pool.season,
        "entrant": {"name": entrant.name, "agent": entrant.agent},
        "rating": {"mu": me.mu, "sigma": me.sigma, "ordinal": ordinal},
        "rank": above + 1,
        "pool_size": len(pool.ratings),
        "games_counted": len(games),
        "games_planned": len(m.slots),
        "wins": sum(g["won"] for g in games),
        "pool_ratings": {k: v.model_dump() for k, v in pool.ratings.items()},
        "games": games,
    }


async def evaluate_entrant(
    agent: str,
    pool_path: Path,
    out: Path,
    *,
    name: str | None = None,
    preflight: bool = True,
    progress: ProgressFn | None = None,
    on_ready: Callable[[Pool], None] | None = None,
) -> dict[str, Any]:
    """Play ``agent`` against a frozen pool and rate it on the pool's scale (pool ratings fixed).

    ``out`` gets the games (``games/``), ``season.json`` (so an interrupted evaluation is
    continued by running the same command again), a copy of the pool (``pool.json``) and
    ``evaluation.json`` (:func:`rate_entrant`, naming the pool's SHA-256).

    Raises:
        PoolError: The pool file is refused (:func:`load_pool`), the entrant's spec is
            unknown, or ``out`` holds another evaluation or season.
        SeasonError: A backend is unreachable, or games failed (recorded games are kept).
    """
    pool = load_pool(pool_path)
    if on_ready is not None:
        on_ready(pool)
    out = Path(out)
    entrant = RosterEntry(agent=agent, name=name or "")
    try:
        make_agent(agent, 0, rules_from_dict(pool.rules, source="pool rules"), 0)
    except (AgentSpecError, ValueError) as err:
        raise PoolError(f"NEW_MODEL: {err}") from None
    if (out / MANIFEST_FILE).exists():
        copy = out / POOL_COPY
        same = copy.is_file() and json.loads(copy.read_text(encoding="utf-8")).get("sha256") == pool.sha256
        manifest = load_manifest(out)
        if not same or manifest.config.roster[-1] != entrant:
            raise PoolError(f"--out: {out} already holds another evaluation or season; choose another --out")
    else:
        out.mkdir(parents=True, exist_ok=True)
        manifest = _evaluation_season(pool, entrant, out, preflight)
        write_atomic(out / POOL_COPY, json.dumps(pool.model_dump(mode="json"), indent=1, ensure_ascii=False))
    if manifest.config.limits.preflight and any(s.status != "judged" for s in manifest.slots):
        manifest.preflight = await preflight_season(manifest.config)
    save_manifest(out, manifest)
    await _Runner(out, manifest, None, progress).run()
    result = rate_entrant(out, pool)
    write_atomic(out / EVALUATION_FILE, json.dumps(result, indent=1, ensure_ascii=False))
    return result
