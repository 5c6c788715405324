"""The served site: static files plus a JSON API that forks a game from the page (FastAPI).

``mafialab view DIR --serve`` builds the site and serves it with this app. Beside the static
files it offers (under ``/api``, OpenAPI schema at ``/api/openapi.json``):

- ``GET /api/info``: whether a bearer token is required (the only route open without one);
- ``GET /api/games/{id}/steps``: the forkable steps of a game (:func:`mafialab.counterfactual.fork_steps`)
  with the event ``seq`` each answers;
- ``GET /api/games/{id}/estimate?step=&replicas=``: calls and cost from the parent's
  ``calls.jsonl`` (:func:`mafialab.counterfactual.estimate_fork`);
- ``GET /api/games/{id}/branches``: the batches of a game, as drawn in its branch tree;
- ``POST /api/forks``: start a fork job (202; replicas are played in the background with
  bounded concurrency, whether or not a browser is still polling);
- ``GET /api/jobs/{id}`` and ``GET /api/jobs``: job status (``queued``/``running``/``done``/
  ``failed`` with done, running, failed, total counts and an ETA);
- ``/api/arena``, ``/api/arena/estimate``, ``/api/arena/jobs``: the Arena panel
  (:mod:`mafialab.viewer._arena`: batches and seasons of the ``--allow-agents`` specs, with a
  cost estimate and a cap on games in flight), under the same origin and token rules.

Each finished replica is written under ``DIR/forks/`` (the only place a job writes logs) and
added to the site at once: its data files, its parent's branch file, the dashboard pages and ``data/index.js``
are rewritten; the rest of the site is not rebuilt.

Safety: bound to 127.0.0.1 unless a token is given; with a token every ``/api`` route but
``/api/info`` needs ``Authorization: Bearer <token>`` (401 otherwise). Request bodies over
:data:`MAX_BODY` bytes get 413; unknown games 404; a step, intervention or option that does
not fit 422 with the reason; bad JSON 400; a ``POST /api/forks`` body that is not
``application/json`` 415 (every ``POST`` of the API). Games are looked up by id in the served
directory's index, never by a path from the request.

Pages of other origins (:class:`mafialab._http.OriginGuard`, 403 with the reason): on loopback
``Host:`` must be 127.0.0.1, localhost or ::1 (a rebound DNS name gets nothing); a request
whose ``Origin:`` is not the served origin, or whose ``Sec-Fetch-Site`` is ``cross-site`` or
``same-site``, is refused (a link from elsewhere may still open the page itself); a ``POST``
under ``/api/`` from a browser (it carries ``Origin`` or a ``Sec-Fetch-*`` header) must send
the page token of the served ``index.html`` (``<meta name="mafialab-csrf">``) back as
``X-Mafialab-CSRF``. curl and scripts send none of these headers and need no page token.

The agents of a fork job: the parent's roster (no ``agents``), one spec of that roster for
every seat, or a spec the person who started the server allowed (``--allow-agents``); never a
spec with other backend options (``base_url``, ``api_key_env`` ...) nor a seat played from
outside (``human``, ``human-web``, ``remote``) from a request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from mafialab._files import atomic_path
from mafialab._http import LOOPBACK_NAMES, BearerGuard, BodyLimit, OriginGuard
from mafialab._json import NonFiniteNumber, loads_finite
from mafialab.config import validation_message
from mafialab.counterfactual import (
    Intervention,
    estimate_fork,
    fork_batch_id,
    fork_steps,
    intervention_from,
    prepare,
    resolve_step,
    run_fork,
)
from mafialab.counterfactual import branch_id as make_branch_id
from mafialab.record import (
    BIFURCATION_FILE,
    RETEST_FILE,
    GameLog,
    LogFormatError,
    PriceTable,
    find_files,
    iter_game_dirs,
    read_game,
    read_header,
)
from mafialab.viewer._arena import ARENA_GAMES, ArenaRequest, ArenaService, ArenaStatus, refusal

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024
"""Largest accepted request body in bytes (413 beyond)."""
MAX_REPLICAS = 50
"""Most replicas one fork job may ask for."""
MAX_PARALLEL = 2
"""Replicas played at once, over all jobs (the bounded concurrency of the background work)."""
FORKS_DIR = "forks"
"""Where jobs write their branches, under the served log directory."""
CLAIMS_DIR = ".claims"
"""``FORKS_DIR/CLAIMS_DIR/<batch>``: one folder per batch a job took (made exclusively, kept)."""
MAX_SEED_TRIES = 10_000
"""Seeds tried for a request without one before it is refused (409)."""
API_META = '<meta name="mafialab-api" content="api/">'
CSRF_META = '<meta name="mafialab-csrf" content="{}">'
"""The served page's token, sent back by its script as :data:`CSRF_HEADER` on every API call."""
CSRF_HEADER = "X-Mafialab-CSRF"
"""The header a browser's ``POST`` under ``/api/`` must carry the page token in (403 otherwise)."""
SERVED_CSP = "connect-src 'self'"


class ForkRequest(BaseModel):
    """Body of ``POST /api/forks``.

    Attributes:
        game: Id of the game to fork (a game of the served directory).
        step: Decision id of the fork step (``GET /api/games/{id}/steps``).
        intervention: ``{"type": "resample"}`` (default), ``{"type": "inject", "target",
            "text", "no_vote"}``, ``{"type": "belief", "seat", "text"}`` or ``{"type":
            "night", "seat", "target"}`` (:data:`mafialab.counterfactual.Intervention`).
        replicas: Branches to play, 1..:data:`MAX_REPLICAS`.
        agents: Agent spec for every seat of the continuation (default: the parent's roster):
            one spec of the parent's roster or of the server's ``--allow-agents``.
        seed: The fork's ``--seed``; ``None`` picks the first seed whose batch no job has taken
            (in this server or another serving the same folder) and is not on disk.
    """

    model_config = ConfigDict(extra="forbid")

    game: str = Field(min_length=1, max_length=300)
    step: int = Field(ge=0)
    intervention: dict[str, Any] = Field(default_factory=lambda: {"type": "resample"})
    replicas: int = Field(default=1, ge=1, le=MAX_REPLICAS)
    agents: str | None = Field(default=None, max_length=300)
    seed: StrictInt | None = Field(default=None, ge=0, le=2**31)


class JobStatus(BaseModel):
    """A fork job as ``GET /api/jobs/{id}`` reports it.

    Attributes:
        id: Job id.
        game: Parent game id.
        step: Fork step (decision id).
        batch: Batch id of the branches.
        state: ``queued``, ``running``, ``done`` (every replica finished, some may have
            failed) or ``failed`` (none could be played).
        total: Replicas asked for.
        done: Replicas written and added to the site.
        running: Replicas being played now.
        failed: Replicas that raised (see ``error``).
        eta_s: Seconds left, estimated from the mean time of finished replicas; ``None``
            before the first finishes.
        branches: Ids of the finished branches, in replica order.
        error: The first failure's reason, if any.
    """

    id: str
    game: str
    step: int
    batch: str
    state: Literal["queued", "running", "done", "failed"] = "queued"
    total: int
    done: int = 0
    running: int = 0
    failed: int = 0
    eta_s: float | None = None
    branches: list[str] = Field(default_factory=list)
    error: str | None = None


@dataclass
class _Job:
    status: JobStatus
    started: float = field(default_factory=time.monotonic)
    times: list[float] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


def check_allowed_agents(specs: Sequence[str]) -> tuple[str, ...]:
    """Check the specs a server allows fork requests to name (``--allow-agents``); returns them, deduplicated.

    Raises:
        ValueError: A spec that is empty, a seat played from outside (``human``, ``human-web``,
            ``remote``: a fork job of the server seats none), or a malformed model string;
            the message names ``--allow-agents``.
    """
    from mafialab.agents import is_model_spec
    from mafialab.models import ModelSpecError, parse_model_spec
    from mafialab.remote import is_seat_spec

    out: list[str] = []
    for spec in specs:
        spec = spec.strip()
        if not spec:
            raise ValueError("--allow-agents: an empty spec")
        if is_seat_spec(spec):
            raise ValueError(
                f"--allow-agents: {spec!r} is a seat played from outside; a fork job of the server seats no "
                "person or remote program"
            )
        if "/" in spec.partition("?")[0] or is_model_spec(spec):
            try:
                parse_model_spec(spec)
            except ModelSpecError as err:
                raise ValueError(f"--allow-agents: {err}") from None
        if spec not in out:
            out.append(spec)
    return tuple(out)


def _read_js(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    start = text.index(",", text.index(",") + 1) + 1  # after MAFIALAB_DATA("kind","key",
    return json.loads(text[start : text.rindex(")")])


class ForkService:
    """State behind the fork API: the served games, the site's index, the jobs.

    Args:
        logs: The served log directory (``mafialab view DIR``); jobs write to ``logs/forks``.
        site: The built site directory (its ``data/`` is updated as branches finish).
        token: Bearer token required on the API (``None``: no check; only for loopback).
        parallel: Replicas played at once over all jobs (>= 1).
        build_agent: Agent factory passed to :func:`mafialab.counterfactual.run_fork` (tests).
        allow_agents: Agent specs a request may name beside the parent's roster
            (``--allow-agents``; model strings may carry options, a request's never do); the
            only specs the Arena panel may seat.
        arena_games: Cap on Arena games in flight (``--max-arena-games``, >= 1;
            :mod:`mafialab.viewer._arena`).
        prices: Price table of the Arena panel's estimates and games (``--prices``).

    Raises:
        ValueError: ``site`` holds no built index (build it first), or an ``allow_agents``
            spec is a seat played from outside or a malformed model string.
    """

    def __init__(
        self,
        logs: Path,
        site: Path,
        *,
        token: str | None = None,
        parallel: int = MAX_PARALLEL,
        build_agent: Callable[[str, int, Any, int], Any] | None = None,
        allow_agents: Sequence[str] = (),
        arena_games: int = ARENA_GAMES,
        prices: PriceTable | None = None,
    ):
        self.allow_agents = check_allowed_agents(allow_agents)
        self.logs = Path(logs).resolve()
        self.site = Path(site).resolve()
        self.data = self.site / "data"
        if not (self.data / "index.js").is_file():
            raise ValueError(f"{self.site}: no data/index.js (build the site first)")
        self.token = token
        self.parallel = max(1, parallel)
        self.build_agent = build_agent
        from mafialab.viewer._build import site_rows

        self.index: dict[str, Any] = _read_js(self.data / "index.js")
        self.rows: list[dict[str, Any]] = site_rows(self.data)  # the dashboard rows: the index has none
        self.dirs: dict[str, Path] = {}
        for d in iter_game_dirs(self.logs):
            gid = self._game_id(d)
            if gid is not None:
                self.dirs.setdefault(gid, d.resolve())
        self.jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._claim_lock = threading.Lock()
        self._claimed: set[str] = set()
        self._sem: asyncio.Semaphore | None = None
        self._bifs: list[dict[str, Any]] | None = None
        self.arena = ArenaService(self, arena_games, prices)

    @staticmethod
    def _game_id(d: Path) -> str | None:
        try:
            return read_header(d).game_id
        except LogFormatError:
            return None

    def game_dir(self, game: str) -> Path:
        """The directory of a served game.

        Raises:
            HTTPException: 404 when no game of the served directory has that id.
        """
        d = self.dirs.get(game)
        if d is None or not any(r["id"] == game for r in self.rows):
            raise HTTPException(404, f"game: no game {game!r} in this site")
        return d

    def steps(self, game: str) -> list[dict[str, Any]]:
        """Forkable steps of ``game`` with the ``seq`` of the event answering each (``None``: no event)."""
        from mafialab.viewer._branches import decision_seqs

        glog = read_game(self.game_dir(game))
        seqs = decision_seqs(glog.events)
        return [
            {
                "id": s.id,
                "label": s.label,
                "name": s.name,
                "kind": s.kind,
                "done": s.done,
                "public": s.public,
                "seq": seqs.get(s.id),
            }
            for s in fork_steps(glog)
        ]

    def validate(self, req: ForkRequest) -> tuple[Path, Intervention, GameLog]:
        """Check a fork request before a job is made: the game, the step, the intervention, the agents.

        Returns:
            ``(parent directory, intervention, parent log)``.

        Raises:
            HTTPException: 404 unknown game; 422 a step, intervention or agent spec that does not fit.
        """
        d = self.game_dir(req.game)
        try:
            iv = intervention_from(req.intervention)
        except ValidationError as err:
            raise HTTPException(422, f"intervention: {validation_message(err, limit=2)}") from None
        plog = read_game(d)
        try:
            step = resolve_step(fork_steps(plog), str(req.step))
            prepare(plog, step, iv, 0)
        except (ValueError, LogFormatError) as err:
            raise HTTPException(422, f"step {req.step}: {err}".replace("--at: ", "")) from None
        self.check_agents(req.agents, plog)
        if req.agents is not None:
            from mafialab.agents import is_model_spec, make_agent

            if not is_model_spec(req.agents):
                try:
                    make_agent(req.agents, 0, plog.header.rules, 0)
                except (ValueError, KeyError) as err:
                    raise HTTPException(422, f"agents: {err}") from None
        return d, iv, plog

    def reserve(self, req: ForkRequest, parent: GameLog, iv: Intervention) -> tuple[int, str]:
        """Take the seed and batch of a valid request, so that no other job gets them.

        The batch id is :func:`mafialab.counterfactual.fork_batch_id` of the request (its
        agents included). A batch is free when no job of this service took it, no branch of
        it is on disk, and ``FORKS_DIR/CLAIMS_DIR/<batch>`` can be created (an exclusive
        create: a second server on the same folder cannot take it too). Without a seed in the
        request, the first free seed from 0 is taken.

        Returns:
            ``(seed, batch id)``.

        Raises:
            HTTPException: 409 when the request's seed names a batch already taken or on disk,
                or no seed of the first :data:`MAX_SEED_TRIES` is free.
        """
        seeds = [req.seed] if req.seed is not None else range(MAX_SEED_TRIES)
        with self._claim_lock:  # the seed search and the claim are one step for the threads of this process
            for seed in seeds:
                batch = fork_batch_id(parent, req.step, iv, seed=seed, agents=req.agents)
                if self._claim(req.game, batch, req.replicas):
                    return seed, batch
        if req.seed is not None:
            raise HTTPException(
                409, f"seed: batch {batch} (seed {req.seed}) is already taken or on disk; choose another seed"
            )
        raise HTTPException(409, f"seed: no free seed among 0..{MAX_SEED_TRIES - 1}; give one")

    def _claim(self, game: str, batch: str, replicas: int) -> bool:
        if batch in self._claimed:
            return False
        forks = self.logs / FORKS_DIR
        if any((forks / make_branch_id(game, batch, r)).exists() for r in range(replicas)):
            return False
        (forks / CLAIMS_DIR).mkdir(parents=True, exist_ok=True)
        try:
            (forks / CLAIMS_DIR / batch).mkdir()  # exclusive, also against another process
        except FileExistsError:
            return False
        self._claimed.add(batch)
        return True

    def check_agents(self, agents: str | None, plog: Any) -> None:
        """Refuse agents a request may not choose: only the parent's roster or ``allow_agents``.

        Args:
            agents: The request's ``agents`` (``None``: the parent's roster, seat by seat).
            plog: The parent's :class:`mafialab.record.GameLog`.

        Raises:
            HTTPException: 422 naming the reason: a seat played from outside (``human``,
                ``human-web``, ``remote``; in the request or, without ``agents``, in the
                parent's roster), a model string with backend options, or a spec neither in
                the roster nor allowed.
        """
        from mafialab.remote import is_seat_spec

        roster = sorted(plog.header.roster, key=lambda s: s.seat)
        if agents is None:
            person = next((s for s in roster if is_seat_spec(s.agent)), None)
            if person is not None:
                raise HTTPException(
                    422,
                    f"agents: seat {person.seat} of the parent was played from outside ({person.agent}); "
                    "a fork job of this server seats no person or remote program: choose agents "
                    f"({', '.join(self.allowed_agents(plog)) or 'none allowed'})",
                )
            return
        if agents in self.allowed_agents(plog):
            return
        why = refusal(agents, "is neither in the parent's roster nor allowed by the server (--allow-agents)")
        allowed = ", ".join(self.allowed_agents(plog)) or "none"
        raise HTTPException(422, f"agents: {agents!r} {why} (allowed: {allowed})")

    def allowed_agents(self, plog: Any) -> list[str]:
        """The specs a request may name as ``agents``: ``plog``'s roster (bar outside seats), then ``allow_agents``."""
        from mafialab.remote import is_seat_spec

        roster = [s.agent for s in sorted(plog.header.roster, key=lambda s: s.seat) if not is_seat_spec(s.agent)]
        return list(dict.fromkeys([*roster, *self.allow_agents]))

    def create(self, req: ForkRequest) -> JobStatus:
        """Validate ``req``, take its seed and batch (:meth:`reserve`) and start its job in the running event loop.

        Returns:
            The job's first status.
        """
        d, iv, plog = self.validate(req)
        seed, batch = self.reserve(req, plog, iv)
        jid = f"j{len(self.jobs) + 1}-{secrets.token_hex(4)}"
        st = JobStatus(id=jid, game=req.game, step=req.step, batch=batch, total=req.replicas)
        job = _Job(status=st)
        self.jobs[jid] = job
        job.task = asyncio.get_running_loop().create_task(self._run(job, d, iv, seed, req.agents))
        return st

    def status(self, jid: str) -> JobStatus:
        """The status of a job (raises 404 for an unknown id)."""
        job = self.jobs.get(jid)
        if job is None:
            raise HTTPException(404, f"job: no job {jid!r}")
        st = job.status
        left = st.total - st.done - st.failed
        if job.times and left > 0:
            per = sum(job.times) / len(job.times)
            st.eta_s = per * -(-left // self.parallel)
        elif left == 0:
            st.eta_s = 0.0
        return st

    async def _run(self, job: _Job, parent: Path, iv: Intervention, seed: int, agents: str | None) -> None:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.parallel)
        sem = self._sem
        st = job.status

        async def one(replica: int) -> None:
            async with sem:
                st.state = "running"
                st.running += 1
                t0 = time.monotonic()
                try:
                    await asyncio.to_thread(self._play, parent, st.step, iv, seed, agents, st.total, replica)
                    gid = make_branch_id(st.game, st.batch, replica)
                    await asyncio.to_thread(self._add_to_site, self.logs / FORKS_DIR / gid)
                    st.branches.append(gid)
                    st.branches.sort(key=lambda b: int(b.rsplit("-", 1)[1]))
                    st.done += 1
                    job.times.append(time.monotonic() - t0)
                except Exception as err:  # a failed replica is reported, the others go on
                    log.warning("fork job %s replica %d failed: %s", st.id, replica, err, exc_info=True)
                    st.failed += 1
                    st.error = st.error or f"replica {replica}: {err}"
                finally:
                    st.running -= 1

        await asyncio.gather(*(one(r) for r in range(st.total)))
        st.state = "done" if st.done else "failed"

    def _play(
        self, parent: Path, step: int, iv: Intervention, seed: int, agents: str | None, n: int, replica: int
    ) -> None:
        asyncio.run(
            run_fork(
                parent,
                step,
                iv,
                n=n,
                seed=seed,
                agents=agents,
                out=self.logs / FORKS_DIR,
                build_agent=self.build_agent,
                check_remote=False,
                replicas=[replica],
            )
        )

    def _bifurcations(self) -> list[dict[str, Any]]:
        from mafialab.viewer._branches import bifurcation_payloads

        if self._bifs is None:
            self._bifs = bifurcation_payloads([p.parent for p in find_files(self.logs, BIFURCATION_FILE)], self.logs)
        return self._bifs

    def _add_to_site(self, game_dir: Path) -> None:
        """Write one new branch's data files, its parent's branch file and ``data/index.js``."""
        from mafialab.viewer._branches import batches
        from mafialab.viewer._build import (
            PAGE_SIZE,
            _build_dir,
            _corpus_of,
            write_branch_files,
            write_pages,
        )

        retests = tuple(find_files(self.logs, RETEST_FILE))
        res = _build_dir((game_dir, _corpus_of(self.logs, game_dir), self.data, retests, None))
        if isinstance(res, str):
            raise ValueError(f"{game_dir}: {res}")
        with self._lock:
            rows = [r for r in self.rows if r["id"] != res.row["id"]] + [res.row]
            write_branch_files(self.data, rows, self._bifurcations())
            self.rows = rows
            self.index["batches"] = batches(rows)
            size = self.index.get("pages", {}).get("size", PAGE_SIZE)
            self.index["pages"] = write_pages(self.data, rows, size).index_block()
            self.dirs[res.row["id"]] = game_dir.resolve()
            self._write_index()

    def _write_index(self) -> None:
        """Rewrite ``data/index.js`` from :attr:`index` (atomically; the caller holds the lock)."""
        from mafialab.viewer._build import _write_js

        with atomic_path(self.data / "index.js") as tmp:
            _write_js(tmp, "index", "index", self.index)

    def _add_seasons(self) -> None:
        """Redraw the seasons of the site (every ``index.json`` under the served directory) in ``data/index.js``."""
        from mafialab.viewer._season import season_payloads

        with self._lock:
            self.index["seasons"] = season_payloads(self.logs, self.rows)
            self._write_index()


def _served_index(site: Path, csrf: str) -> str:
    html = (site / "index.html").read_text(encoding="utf-8")
    html = html.replace("connect-src 'none'", SERVED_CSP)
    return html.replace("<title>", API_META + "\n" + CSRF_META.format(csrf) + "\n<title>", 1)


def create_app(
    site: Path, service: ForkService | None = None, *, allowed_hosts: frozenset[str] | None = LOOPBACK_NAMES
) -> FastAPI:
    """The served site: the built ``site`` as static files, and the fork API when ``service`` is given.

    Without a service the site is served read-only as built (no ``/api``, the page shows no
    Branch button). With one, ``index.html`` is served with a ``mafialab-api`` marker, the
    page token (``mafialab-csrf``; a fresh one per app) and a CSP that lets the page call
    this origin. Either way pages of other origins get nothing but a top-level page load
    (:class:`mafialab._http.OriginGuard`).

    Args:
        site: The built site directory.
        service: The fork API's state, or ``None`` (read-only).
        allowed_hosts: ``Host:`` names served (default the loopback names; ``None``: any,
            for a server on another interface, which needs a token).

    Returns:
        The FastAPI app (serve it with uvicorn; :class:`mafialab.viewer.SiteServer` does);
        its ``state.csrf`` is the page token (``None`` without a service).
    """
    site = Path(site).resolve()
    app = FastAPI(
        title="mafialab viewer",
        description="The viewer site and its fork API: fork a recorded game from the page.",
        version="1",
        docs_url="/api/docs",
        openapi_url="/api/openapi.json",
        redoc_url=None,
    )
    csrf = secrets.token_urlsafe(24) if service is not None else None
    app.state.csrf = csrf
    if service is not None and csrf is not None:
        if service.token is not None:  # the pages stay open; the API needs the token (its /api/info does not)
            app.add_middleware(BearerGuard, token=service.token, open_paths=("/api/info",), prefix="/api/")
        app.add_middleware(BodyLimit, max_body=MAX_BODY)

        app.include_router(_router(service), prefix="/api")

        @app.get("/", include_in_schema=False)
        @app.get("/index.html", include_in_schema=False)
        async def index() -> HTMLResponse:
            return HTMLResponse(_served_index(site, csrf))

    # added last: runs first (a page of another origin is refused before anything reads its body)
    app.add_middleware(
        OriginGuard,
        allowed_hosts=allowed_hosts,
        navigation=True,
        csrf=csrf,
        csrf_header=CSRF_HEADER,
        csrf_prefix="/api/",
    )

    app.mount("/", StaticFiles(directory=str(site), html=True), name="site")
    return app


def _router(service: ForkService) -> APIRouter:
    r = APIRouter()

    @r.get("/info")
    async def info() -> dict[str, Any]:
        """Whether the API needs a bearer token, and its limits."""
        return {"auth": service.token is not None, "max_replicas": MAX_REPLICAS, "parallel": service.parallel}

    @r.get("/games/{game}/steps")
    async def steps(game: str) -> dict[str, Any]:
        """The forkable steps of a game (decision id, ``round:phase:index``, seat, kind, what was done, event seq)."""
        return {"auth": service.token is not None, "steps": await asyncio.to_thread(service.steps, game)}

    @r.get("/games/{game}/estimate")
    async def estimate(
        game: str, step: int = Query(..., ge=0), replicas: int = Query(1, ge=1, le=MAX_REPLICAS)
    ) -> dict[str, Any]:
        """Estimated model calls and cost of a fork, from the parent's ``calls.jsonl``."""
        d = service.game_dir(game)
        try:
            est = await asyncio.to_thread(estimate_fork, d, str(step), replicas)
        except ValueError as err:
            raise HTTPException(422, f"step {step}: {err}".replace("--at: ", "")) from None
        return {
            "branches": est.branches,
            "calls_per_branch": est.calls_per_branch,
            "calls": est.calls,
            "cost_usd": est.cost_usd,
            "basis": est.basis,
        }

    @r.get("/games/{game}/branches")
    async def branches(game: str) -> dict[str, Any]:
        """The batches forked from a game (as its branch tree shows them)."""
        service.game_dir(game)
        return {"game": game, "batches": [b for b in service.index.get("batches", []) if b["parent"] == game]}

    @r.post("/forks", status_code=202, response_model=JobStatus)
    async def create(request: Request) -> JobStatus:
        """Start a fork job (body: :class:`ForkRequest`, ``application/json``); poll ``/api/jobs/{id}``."""
        return service.create(await _json_body(request, ForkRequest))

    @r.get("/jobs/{jid}", response_model=JobStatus)
    async def job(jid: str) -> JobStatus:
        """Status of one fork job."""
        return service.status(jid)

    @r.get("/jobs")
    async def jobs() -> list[JobStatus]:
        """Every job of this server, oldest first."""
        return [service.status(j) for j in service.jobs]

    arena = service.arena

    @r.get("/arena")
    async def arena_info() -> dict[str, Any]:
        """The Arena panel's choices: built-in rule sets, allowed agent specs, the cap on games in flight."""
        return {"auth": service.token is not None, **arena.info()}

    @r.post("/arena/estimate")
    async def arena_estimate(request: Request) -> dict[str, Any]:
        """The estimated cost of a launch (body: :class:`~mafialab.viewer._arena.ArenaRequest`)."""
        req = await _json_body(request, ArenaRequest)
        return await asyncio.to_thread(arena.estimate, req)

    @r.post("/arena/jobs", status_code=202, response_model=ArenaStatus)
    async def arena_create(request: Request) -> ArenaStatus:
        """Launch a batch or a season (body: ``ArenaRequest``); poll ``/api/arena/jobs/{id}``."""
        req = await _json_body(request, ArenaRequest)
        cost = await asyncio.to_thread(arena.estimate, req)  # reads recorded calls: off the event loop
        return arena.create(req, cost)

    @r.get("/arena/jobs/{jid}", response_model=ArenaStatus)
    async def arena_job(jid: str) -> ArenaStatus:
        """Status of one arena job."""
        return arena.status(jid)

    @r.get("/arena/jobs")
    async def arena_jobs() -> list[ArenaStatus]:
        """Every arena job of this server, oldest first."""
        return [arena.status(j) for j in arena.jobs]

    return r


async def _json_body(request: Request, model: type[BaseModel]) -> Any:
    """The validated JSON body of a ``POST`` (415 not JSON, 413 too large, 400 bad JSON, 422 invalid)."""
    ctype = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if ctype != "application/json":
        raise HTTPException(415, f"Content-Type: expected application/json, got {ctype or 'none'!r}")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise HTTPException(413, f"body: larger than {MAX_BODY} bytes")
    try:
        data = loads_finite(body or b"null")
    except NonFiniteNumber as err:
        raise HTTPException(422, err.message("body")) from None
    except ValueError as err:
        raise HTTPException(400, f"body: not valid JSON ({err})") from None
    except RecursionError:
        raise HTTPException(400, "body: not valid JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise HTTPException(400, "body: expected a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise HTTPException(422, validation_message(err, limit=3)) from None
