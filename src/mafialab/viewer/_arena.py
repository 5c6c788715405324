"""The served site's Arena panel: batches and seasons launched from the page (``/api/arena/*``).

``mafialab view DIR --serve --allow-agents SPEC,...`` offers, beside the fork API:

- ``GET /api/arena``: the built-in rule sets (name, id, seats), the agent specs a request may
  seat (the server's ``--allow-agents``, nothing else), the cap on games in flight and how
  many are in flight now;
- ``POST /api/arena/estimate``: the cost of a launch before it starts (body: :class:`ArenaRequest`);
- ``POST /api/arena/jobs``: launch it (202; played in the background, games written under
  ``DIR/arena/`` and added to the site as each finishes);
- ``GET /api/arena/jobs`` and ``GET /api/arena/jobs/{id}``: progress.

A **batch** plays ``games`` seeded games of one line-up (one agent spec per seat, as
``mafialab play``); a **season** takes the line-up's distinct specs as its roster and is built
and played by the arena (:func:`mafialab.arena.season_from_dict`, :func:`mafialab.arena.run_season`:
balanced seating, integrity gate, ``index.json``), without judges.

Every agent spec of a request must be one the person who started the server allowed
(``--allow-agents``), character for character: a request never names backend options
(``base_url``, ``api_key_env`` ...) or a seat played from outside (``human``, ``remote``); 422
naming the field (``agents[2]``) otherwise. A launch that would take the games accepted and not
yet finished over the server's cap (``--max-arena-games``) is refused with 429.

The estimate: per agent spec, its seat-games (batch: seats × games; season: games × seats /
roster size, the balanced share of :func:`mafialab.arena.plan_seating`) times the mean prompt
and completion tokens of one model-played seat in one game, read from the ``calls.jsonl`` of
the served games of the same rule set (game-decision calls; probes are not asked), priced with
the server's price table (:class:`mafialab.record.PriceTable`, ``--prices``). Agents that call
no model (``scripted``, ``random``) and models priced at zero (``local/*``, ``mock/*``) cost
nothing: a launch of only those says "no cost". A model without a price, or no recorded calls
to take token counts from, makes the cost unknown, with the reason.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fastapi import HTTPException
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from mafialab._words import count
from mafialab.record import CALLS_FILE, PriceTable, iter_call_records
from mafialab.rules import BUILTIN, RuleSet, load_rules

log = logging.getLogger(__name__)

ARENA_DIR = "arena"
"""Where arena jobs write their games, under the served log directory."""
ARENA_GAMES = 20
"""Default cap on arena games in flight (accepted and not finished) per server (``--max-arena-games``)."""
MAX_JOB_GAMES = 500
"""Most games one launch may ask for."""
MAX_ROSTER = 32
"""Most agent specs in one request."""
TOKEN_SAMPLE = 200
"""Served games of a rule set whose ``calls.jsonl`` the estimate reads, at most."""
MAX_SEED_TRIES = 10_000


class ArenaRequest(BaseModel):
    """Body of ``POST /api/arena/estimate`` and ``POST /api/arena/jobs``.

    Attributes:
        kind: ``batch`` (one line-up, ``games`` seeded games) or ``season`` (the line-up's
            distinct specs as a season roster, seated by the arena).
        rules: A built-in rule-set name (``GET /api/arena`` lists them).
        agents: Batch: one spec per seat. Season: the roster (1..:data:`MAX_ROSTER` specs;
            repeats are dropped). Every spec one of the server's ``--allow-agents``.
        games: Games to play, 1..:data:`MAX_JOB_GAMES`.
        seed: First game seed (batch: games ``seed``, ``seed+1`` ...; season: its seed);
            ``None``: the first seeds whose games are not in the site yet (season: 0).
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["batch", "season"] = "batch"
    rules: str = Field(min_length=1, max_length=80)
    agents: list[str] = Field(min_length=1, max_length=MAX_ROSTER)
    games: StrictInt = Field(default=1, ge=1, le=MAX_JOB_GAMES)
    seed: StrictInt | None = Field(default=None, ge=0, le=2**31)


class ArenaStatus(BaseModel):
    """An arena job as ``GET /api/arena/jobs/{id}`` reports it.

    Attributes:
        id: Job id.
        kind: ``batch`` or ``season``.
        rules: Rule-set name.
        agents: The request's specs (batch: per seat; season: the roster).
        folder: Where its games are written, relative to the served directory.
        state: ``queued``, ``running``, ``done`` (every game finished or failed) or
            ``failed`` (none could be played, or the season stopped).
        total: Games asked for.
        done: Games written and added to the site.
        running: Games being played now (season: at most its parallel games).
        failed: Games that raised.
        eta_s: Seconds left at the rate games finished so far (elapsed / finished × left);
            ``None`` before the first finishes.
        games: Ids of the finished games, in the order they finished.
        season: The season's name (its page is ``#/season/<name>``); ``None`` for a batch.
        cost: The estimate shown before the launch (``cost_usd``, ``text``).
        error: The first failure's reason, if any.
    """

    id: str
    kind: Literal["batch", "season"]
    rules: str
    agents: list[str]
    folder: str
    state: Literal["queued", "running", "done", "failed"] = "queued"
    total: int
    done: int = 0
    running: int = 0
    failed: int = 0
    eta_s: float | None = None
    games: list[str] = Field(default_factory=list)
    season: str | None = None
    cost: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


@dataclass
class _Job:
    status: ArenaStatus
    parallel: int
    started: float = field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None


def refusal(spec: str, otherwise: str) -> str:
    """Why a request may not name ``spec`` (one agent spec the server did not allow), in words.

    A seat played from outside (``human``, ``human-web``, ``remote``), a model string with
    backend options (``base_url``, ``api_key_env`` ...), else ``otherwise``.
    """
    from mafialab.models import ModelSpecError, parse_model_spec
    from mafialab.remote import is_seat_spec

    if is_seat_spec(spec):
        return "is a seat played from outside (human, human-web, remote); a job of this server seats none"
    try:
        _, options = parse_model_spec(spec)
    except ModelSpecError:
        options = {}
    if options:
        return (
            f"sets backend options ({', '.join(sorted(options))}); a request may not choose "
            "base_url, api_key_env or any other option"
        )
    return otherwise


def _agents(specs: Sequence[str], rules: RuleSet) -> list[Any]:
    """One agent per spec (seat ``i`` for spec ``i``), built to check that this server can play them.

    Raises:
        HTTPException: 422 naming ``agents`` when one cannot be built (an allowed model whose
            key variable is not set on this server, an unknown provider).
    """
    from mafialab.agents import make_agent

    try:
        return [make_agent(spec, s % rules.n_seats, rules, 0) for s, spec in enumerate(specs)]
    except ValueError as err:
        raise HTTPException(422, f"agents: {err}") from None


class ArenaService:
    """State behind the Arena panel: checks, estimates, the cap, the jobs.

    Args:
        fork: The served site's :class:`~mafialab.viewer.ForkService` (its log and site
            directories, allowed specs, token, parallelism; finished games are added to the
            site as its branches are).
        cap: Games in flight (accepted, not finished) allowed over all arena jobs (>= 1).
        prices: Price table for estimates and the calls' ``cost_usd`` (default: the built-in
            one: ``local/*`` and ``mock/*`` free, hosted models unpriced).
    """

    def __init__(self, fork: Any, cap: int = ARENA_GAMES, prices: PriceTable | None = None):
        if cap < 1:
            raise ValueError(f"--max-arena-games: at least 1, got {cap}")
        self.fork = fork
        self.cap = cap
        self.prices = prices or PriceTable()
        self.jobs: dict[str, _Job] = {}
        self._taken: set[str] = set()
        self._tokens: dict[str, tuple[int, tuple[float, float, int] | None]] = {}

    # ------------------------------------------------------------------ checks
    def info(self) -> dict[str, Any]:
        """What the panel offers: rule sets, allowed specs, the cap and the games in flight."""
        rules = [load_rules(n) for n in BUILTIN]
        return {
            "rules": [{"name": r.name, "id": r.id, "seats": r.n_seats} for r in rules],
            "agents": list(self.fork.allow_agents),
            "cap": self.cap,
            "in_flight": self.in_flight(),
            "max_games": MAX_JOB_GAMES,
            "folder": ARENA_DIR,
        }

    def check(self, req: ArenaRequest) -> tuple[RuleSet, list[str]]:
        """The rule set and agent specs of a valid request.

        Returns:
            ``(rules, specs)``: batch: one spec per seat; season: the distinct specs in order.

        Raises:
            HTTPException: 422 naming the field: ``rules`` not built in, ``agents[i]`` not
                allowed (a seat played from outside, backend options, or not in
                ``--allow-agents``), a batch line-up whose length is not the seat count.
        """
        if req.rules not in BUILTIN:
            raise HTTPException(422, f"rules: {req.rules!r} is no built-in rule set (one of {', '.join(BUILTIN)})")
        rules = load_rules(req.rules)
        allowed = self.fork.allow_agents
        for i, spec in enumerate(req.agents):
            if spec not in allowed:
                why = refusal(spec, "is not allowed by the server (--allow-agents)")
                names = ", ".join(allowed) or "none: start the server with --allow-agents"
                raise HTTPException(422, f"agents[{i}]: {spec!r} {why} (allowed: {names})")
        if req.kind == "batch":
            if len(req.agents) != rules.n_seats:
                raise HTTPException(
                    422,
                    f"agents: {count(len(req.agents), 'spec')} for the {count(rules.n_seats, 'seat')} of "
                    f"{rules.name} (a batch seats one spec per seat)",
                )
            return rules, list(req.agents)
        return rules, list(dict.fromkeys(req.agents))

    def in_flight(self) -> int:
        """Arena games accepted and not yet finished (played or failed), over all jobs."""
        return sum(
            j.status.total - j.status.done - j.status.failed
            for j in self.jobs.values()
            if j.status.state in ("queued", "running")
        )

    # ------------------------------------------------------------------ estimate
    def seat_games(self, req: ArenaRequest, rules: RuleSet, specs: Sequence[str]) -> dict[str, float]:
        """Seat-games per spec: batch ``seats × games``; season ``games × seats / roster`` (balanced seating)."""
        out: dict[str, float] = {}
        if req.kind == "batch":
            for spec in specs:
                out[spec] = out.get(spec, 0.0) + req.games
        else:
            for spec in specs:
                out[spec] = req.games * rules.n_seats / len(specs)
        return out

    def token_rates(self, rules: RuleSet) -> tuple[float, float, int] | None:
        """Mean prompt and completion tokens of one model-played seat in one game of ``rules``.

        From the game-decision calls (probe calls left out) in the ``calls.jsonl`` of up to
        :data:`TOKEN_SAMPLE` served games of the same rule-set id; ``None`` when they hold none.

        Returns:
            ``(prompt tokens, completion tokens, seat-games counted)``.
        """
        rows = self.fork.rows
        cached = self._tokens.get(rules.id)
        if cached is not None and cached[0] == len(rows):
            return cached[1]
        prompt = completion = 0
        seat_games = 0
        read = 0
        for row in rows:
            if row.get("rules") != rules.id or read >= TOKEN_SAMPLE:
                continue
            d = self.fork.dirs.get(row["id"])
            if d is None or not (d / CALLS_FILE).is_file():
                continue
            read += 1
            seats: set[int] = set()
            for _, c in iter_call_records(d, warn=False):
                if c.get("kind", "call") != "call" or c.get("purpose") == "probe" or int(c.get("seat", -1)) < 0:
                    continue
                seats.add(int(c["seat"]))
                prompt += int(c.get("prompt_tokens") or 0)
                completion += int(c.get("completion_tokens") or 0)
            seat_games += len(seats)
        rate = (prompt / seat_games, completion / seat_games, seat_games) if seat_games else None
        self._tokens[rules.id] = (len(rows), rate)
        return rate

    def estimate(self, req: ArenaRequest) -> dict[str, Any]:
        """The cost of a launch before it starts (see the module docstring for the method).

        Returns:
            ``{"games", "seat_games": {spec: n}, "cost_usd" (0.0: no cost; None: unknown),
            "text" ("no cost", "$0.1234" or "unknown"), "basis"}``.

        Raises:
            HTTPException: 422 as :meth:`check`.
        """
        from mafialab.agents import is_model_spec
        from mafialab.models import parse_model_spec

        rules, specs = self.check(req)
        seat_games = self.seat_games(req, rules, specs)
        free: list[str] = []
        unpriced: list[str] = []
        priced: list[tuple[str, Any]] = []
        for spec in seat_games:
            if not is_model_spec(spec):
                free.append(spec)
                continue
            model = parse_model_spec(spec)[0]
            price = self.prices.price(model)
            if price is None:
                unpriced.append(model)
            elif price.input == 0 and price.output == 0 and not price.cached_input:
                free.append(spec)
            else:
                priced.append((spec, price))
        out: dict[str, Any] = {"games": req.games, "seat_games": seat_games, "cost_usd": None, "text": "unknown"}
        free_note = f"{', '.join(free)}: no paid model calls" if free else ""
        if unpriced:
            out["basis"] = (
                f"no price for {', '.join(dict.fromkeys(unpriced))}: start the server with --prices FILE "
                "(MODEL: {input, output} in USD per million tokens)"
            )
            return out
        if not priced:
            out.update(cost_usd=0.0, text="no cost", basis=free_note + " (scripted and random agents call no model; "
                       "local/* and mock/* models are free)")  # fmt: skip
            return out
        rate = self.token_rates(rules)
        if rate is None:
            out["basis"] = (
                f"no recorded model calls in the served {rules.name} games to take token counts from "
                "(play one game with a model first)"
            )
            return out
        p_tok, c_tok, n = rate
        cost = sum(seat_games[spec] * price.cost(round(p_tok), round(c_tok), 0) for spec, price in priced)
        out.update(
            cost_usd=round(cost, 6),
            text=f"${cost:.4f}",
            basis=(
                f"{p_tok:,.0f} prompt + {c_tok:,.0f} completion tokens per model seat and game (mean of "
                f"{count(n, 'seat-game')} recorded in the served {rules.name} games) × the price table"
                + (f"; {free_note}" if free_note else "")
            ),
        )
        return out

    # ------------------------------------------------------------------ jobs
    def _batch_ids(self, req: ArenaRequest, rules: RuleSet, specs: Sequence[str]) -> tuple[list[int], list[str]]:
        """Seeds and game ids of a batch, none of them in the site, on disk or taken by another job."""
        from mafialab.harness import default_game_id, run_config

        agents = _agents(specs, rules)
        labels, cfg = [a.label for a in agents], run_config(agents)
        out = self.fork.logs / ARENA_DIR

        def taken(gid: str) -> bool:
            return gid in self._taken or gid in self.fork.dirs or (out / gid).exists()

        start = 0 if req.seed is None else req.seed
        for _ in range(MAX_SEED_TRIES):
            seeds = list(range(start, start + req.games))
            ids = [default_game_id(rules, s, labels, cfg) for s in seeds]
            clash = next((k for k, gid in enumerate(ids) if taken(gid)), None)
            if clash is None:
                self._taken.update(ids)
                return seeds, ids
            if req.seed is not None:
                raise HTTPException(
                    409, f"seed: game {ids[clash]} (seed {seeds[clash]}) is already in this site; choose another seed"
                )
            start = seeds[clash] + 1
        raise HTTPException(409, "seed: no free seeds found; give one")

    def create(self, req: ArenaRequest, cost: dict[str, Any] | None = None) -> ArenaStatus:
        """Check ``req``, apply the cap, and start its job in the running event loop.

        Args:
            req: The launch.
            cost: Its :meth:`estimate` when the caller made it already (off the event loop).

        Raises:
            HTTPException: 422 as :meth:`check`, or an allowed agent this server cannot build
                (its key variable unset); 429 when its games would take the games in flight
                over the cap; 409 when a batch's ``seed`` names games already in the site.
        """
        rules, specs = self.check(req)
        busy = self.in_flight()
        if busy + req.games > self.cap:
            raise HTTPException(
                429,
                f"games: {req.games} more would make {busy + req.games} games in flight, over this server's cap of "
                f"{self.cap} (--max-arena-games); wait for running jobs to finish or ask for "
                f"{max(0, self.cap - busy)} or fewer",
            )
        if cost is None:
            cost = self.estimate(req)
        jid = f"a{len(self.jobs) + 1}-{secrets.token_hex(3)}"
        if req.kind == "batch":
            seeds, ids = self._batch_ids(req, rules, specs)
            folder = ARENA_DIR
        else:
            _agents(specs, rules)
            seeds, ids = [req.seed or 0], []
            folder = f"{ARENA_DIR}/season-{jid}"
        st = ArenaStatus(
            id=jid, kind=req.kind, rules=rules.name, agents=list(req.agents), folder=folder, total=req.games,
            season=None if req.kind == "batch" else f"season-{jid}",
            cost={"cost_usd": cost["cost_usd"], "text": cost["text"]},
        )  # fmt: skip
        job = _Job(status=st, parallel=self.fork.parallel)
        self.jobs[jid] = job
        if req.kind == "batch":
            work = asyncio.to_thread(self._play_batch, job, rules, specs, seeds, ids)
        else:
            work = asyncio.to_thread(self._play_season, job, rules, specs, seeds[0], f"season-{jid}")
        job.task = asyncio.get_running_loop().create_task(self._run(job, work))
        return st

    async def _run(self, job: _Job, work: Any) -> None:
        st = job.status
        try:
            await work
        except Exception as err:  # the job is reported failed; the games it finished stay in the site
            log.warning("arena job %s failed: %s", st.id, err, exc_info=True)
            st.error = st.error or f"{type(err).__name__}: {err}"
            st.state = "failed"
            st.running = 0
            return
        st.running = 0
        st.state = "done" if st.done else "failed"

    def _finished(self, job: _Job, game_dir: Path) -> None:
        self.fork._add_to_site(game_dir)
        job.status.games.append(game_dir.name)
        job.status.done += 1

    def _play_batch(self, job: _Job, rules: RuleSet, specs: list[str], seeds: list[int], ids: list[str]) -> None:
        asyncio.run(self._batch(job, rules, specs, seeds, ids))

    async def _batch(self, job: _Job, rules: RuleSet, specs: list[str], seeds: list[int], ids: list[str]) -> None:
        from mafialab.agents import make_agent
        from mafialab.harness import play_game

        st = job.status
        sem = asyncio.Semaphore(job.parallel)
        out = self.fork.logs / ARENA_DIR

        async def one(seed: int, gid: str) -> None:
            async with sem:
                st.state = "running"
                st.running += 1
                try:
                    agents = [make_agent(spec, s, rules, seed) for s, spec in enumerate(specs)]
                    await play_game(rules, agents, seed, out=out, game_id=gid, prices=self.prices)
                    await asyncio.to_thread(self._finished, job, out / gid)
                except Exception as err:  # a failed game is reported, the others go on
                    log.warning("arena job %s game %s failed: %s", st.id, gid, err, exc_info=True)
                    st.failed += 1
                    st.error = st.error or f"{gid}: {err}"
                finally:
                    st.running -= 1

        await asyncio.gather(*(one(s, g) for s, g in zip(seeds, ids, strict=True)))

    def _play_season(self, job: _Job, rules: RuleSet, specs: list[str], seed: int, name: str) -> None:
        from mafialab.arena import season_from_dict

        cfg = season_from_dict(
            {
                "name": name,
                "description": "launched from the viewer's Arena panel",
                "rules": rules.name,
                "games": job.status.total,
                "seed": seed,
                "roster": [{"agent": spec} for spec in specs],
                "prices": {k: v.model_dump() for k, v in self.prices.prices.items()},
                "parallelism": {"games": job.parallel},
            },
            source="request",
        )
        asyncio.run(self._season(job, cfg))

    async def _season(self, job: _Job, cfg: Any) -> None:
        from mafialab.arena import run_season

        st = job.status
        out = self.fork.logs / st.folder

        def progress(event: str, slot: Any) -> None:
            if event == "played":  # a season writes its games under games/ (docs/arena.md)
                self._finished(job, out / "games" / slot.game_id)
            elif event == "failed":
                st.failed += 1
            st.running = min(job.parallel, st.total - st.done - st.failed)

        st.state = "running"
        st.running = min(job.parallel, st.total)
        try:
            await run_season(cfg, out, progress=progress)
        finally:  # its leaderboard (index.json, once every game is played) on the season page
            await asyncio.to_thread(self.fork._add_seasons)

    def status(self, jid: str) -> ArenaStatus:
        """The status of an arena job (raises 404 for an unknown id)."""
        job = self.jobs.get(jid)
        if job is None:
            raise HTTPException(404, f"job: no arena job {jid!r}")
        st = job.status
        left = st.total - st.done - st.failed
        if st.done and left > 0:
            st.eta_s = (time.monotonic() - job.started) / st.done * left
        elif left == 0:
            st.eta_s = 0.0
        return st
