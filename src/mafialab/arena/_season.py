"""Running and resuming a season: plan, integrity gate, concurrent games, judging, manifest."""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mafialab._words import count
from mafialab.agents import make_agent
from mafialab.analysis import DEFAULT, game_data, game_quality, opening_order, quality_lines
from mafialab.arena._config import SeasonConfig
from mafialab.arena._leaderboard import write_index
from mafialab.arena._manifest import (
    DISCARDED_DIR,
    GAMES_DIR,
    INCOMPLETE_DIR,
    MANIFEST_FILE,
    Attempt,
    SeasonError,
    SeasonManifest,
    Slot,
    game_id_for,
    load_manifest,
    plan_season,
    save_manifest,
)
from mafialab.arena._seating import reseat
from mafialab.engine import GameState
from mafialab.harness import connect_ray, driver_limits, ping, play_game, ray_run, read_game_files, write_game_files
from mafialab.judge import judge_game
from mafialab.models import ChatModel, ChatRequest, ChatResponse, get_model, parse_model_spec
from mafialab.probes import GameSetup
from mafialab.record import (
    GAME_FILE,
    GameLog,
    GameStatus,
    JsonlWriter,
    LogFormatError,
    PriceTable,
    latest_verdicts,
    read_game,
    read_verdicts,
)
from mafialab.record import Price as RecordPrice

log = logging.getLogger(__name__)

ACTION_KINDS = ("speech", "mafia_chat", "night_action", "vote")
"""Event kinds that record a player decision (each carries a ``fallback`` flag)."""


def answered_share(game: GameLog) -> tuple[float, int, int]:
    """Share of player decisions answered by the agents themselves.

    Counts the decision events (speech, mafia chat, night action, vote) and those marked
    ``fallback`` (the agent's call failed or its answer was unusable).

    Returns:
        ``(share, decisions, fallbacks)``; share is 1.0 for a game without decisions.
    """
    acts = [e for e in game.events if e.kind in ACTION_KINDS]
    fb = sum(1 for e in acts if getattr(e, "fallback", False))
    return ((len(acts) - fb) / len(acts) if acts else 1.0), len(acts), fb


class _Limited:
    """A judge model behind a concurrency limit."""

    def __init__(self, model: ChatModel, limit: int):
        self.inner = model
        self.name = model.name
        self.context_window = model.context_window
        self._sem = asyncio.Semaphore(limit)
        self.calls_network = model.calls_network
        self.counts_tokens = model.counts_tokens
        self.count_tokens = model.count_tokens

    async def chat(self, request: ChatRequest) -> ChatResponse:
        async with self._sem:
            return await self.inner.chat(request)


def preflight_specs(config: SeasonConfig) -> list[str]:
    """Model strings the integrity gate may check: roster models and judges, except ``mock/``."""
    specs = [e.agent for e in config.roster if e.is_model] + [j.model for j in config.judges]
    return [s for s in dict.fromkeys(specs) if not s.startswith("mock/")]


def _roster_model(config: SeasonConfig, spec: str) -> ChatModel:
    """The chat model behind a roster model spec: the agent's ``model`` (shared pool), else ``get_model``."""
    agent = make_agent(spec, 0, config.load_rules(), config.seed)
    model = getattr(agent, "model", None)
    if model is not None and hasattr(model, "chat"):
        return model  # type: ignore[no-any-return]
    return get_model(parse_model_spec(spec)[0])


async def preflight_season(
    config: SeasonConfig, judges: Mapping[str, ChatModel] | None = None, timeout_s: float = 120.0
) -> dict[str, str]:
    """Integrity gate, part 1: one tiny call to every remote backend before the season starts.

    Checked: each distinct model string of the roster and the judges, except ``mock/…``
    models and models that declare ``calls_network = False`` (the embedded backend, which cannot
    be unreachable). A roster entry that is a bare ``mock/NAME`` (no ``outputs``: it answers
    ``"{}"`` to every decision, ``scripted = False``) is refused too, as the game preflight
    refuses it (:func:`~mafialab.harness.preflight`); ``limits.preflight: false`` plays it.

    Args:
        config: The season.
        judges: Judge model instances by model string (reused instead of new instances).
        timeout_s: Seconds to wait per backend.

    Returns:
        Model string → ``"ok"`` (or ``"local"`` for a backend that is not remote).

    Raises:
        SeasonError: Naming every backend that did not answer, and why.
    """
    mocks = [e.agent for e in config.roster if e.is_model and e.agent.startswith("mock/")]
    idle = [s for s in dict.fromkeys(mocks) if getattr(_roster_model(config, s), "scripted", True) is False]
    if idle:
        raise SeasonError(
            f"integrity gate: {', '.join(idle)} has no scripted outputs, so it answers {{}} to every "
            "decision and every one would fall back; season not started (give it outputs=[...], "
            "or set limits.preflight: false)"
        )
    specs = preflight_specs(config)
    opts = {j.model: j.options for j in config.judges}

    async def check(spec: str) -> str:
        try:
            model = (judges or {}).get(spec)
            if model is None:
                model = get_model(spec, **opts[spec]) if spec in opts else _roster_model(config, spec)
            if not model.calls_network:
                return "local"
            err = await ping(model, timeout_s)
        except Exception as exc:  # building the model failed
            return f"error: {type(exc).__name__}: {exc}"
        return "ok" if err is None else f"error: {err}"

    results = await asyncio.gather(*(check(s) for s in specs))
    bad = [f"{s}: {r.removeprefix('error: ')}" for s, r in zip(specs, results, strict=True) if r.startswith("error")]
    if bad:
        raise SeasonError("integrity gate: backend unreachable, season not started: " + "; ".join(bad))
    return dict(zip(specs, results, strict=True))


def _price_table(cfg: SeasonConfig) -> PriceTable:
    """The season's ``prices`` as the harness's price table.

    So each call's ``cost_usd`` in ``calls.jsonl`` uses the same prices as the leaderboard
    (``local/*`` and ``mock/*`` free unless listed).
    """
    table = PriceTable()
    extra = {k: RecordPrice(**v.model_dump()) for k, v in cfg.prices.items()}
    return PriceTable(prices={**table.prices, **extra})


async def _play_season_game(
    cfg: SeasonConfig,
    slot: int,
    seed: int,
    seating: list[int],
    game_id: str,
    replaced: list[str],
    deal: tuple[list[str] | None, list[str] | None],
    out: Path,
) -> None:
    """Play one game of a season into ``out/<game_id>/`` (its agents, labels, personas, probes, meta).

    Args:
        cfg: The season.
        slot: Game number (0-based).
        seed: The game's seed.
        seating: Roster entry index per seat.
        game_id: The game's id (:func:`game_id_for`).
        replaced: Ids of the discarded games this one replaces (recorded in the header's meta).
        deal: ``(roles, names)`` of the slot (``None``: the seed's deal, the rule set's names).
        out: Parent directory of the game directory (``games/`` of the season, or a worker's
            temporary folder).
    """
    rules = cfg.load_rules()
    roles, names = deal
    if names is not None:  # seat names are cosmetic: the rule set's id and play are unchanged
        rules = rules.model_copy(update={"seat_names": tuple(names) + rules.seat_names[len(names) :]})
    entries = [cfg.roster[e] for e in seating]
    agents = [make_agent(e.agent, s, rules, seed) for s, e in enumerate(entries)]
    meta: dict[str, Any] = {"season": cfg.name, "slot": slot, "entries": [e.name for e in entries]}
    if replaced:
        meta["replaces"] = replaced
    setup = GameSetup.of(cfg.probes)
    if setup.probes is not None:
        meta["probes"] = setup.probes
    await play_game(
        rules,
        agents,
        seed,
        out=out,
        game_id=game_id,
        observers=setup.observers(rules, seed, agents, out, game_id=game_id),
        labels=[e.label for e in entries],
        personas=[e.persona for e in entries],
        meta=meta,
        state=None if roles is None else GameState(rules, seed, labels=[e.label for e in entries], roles=roles),
        prices=_price_table(cfg),
        check_remote=False,  # the season ran its preflight once for all games
        gate_threshold=cfg.limits.min_answered_share,
    )


def _season_game_files(
    cfg: SeasonConfig,
    slot: int,
    seed: int,
    seating: list[int],
    game_id: str,
    replaced: list[str],
    deal: tuple[list[str] | None, list[str] | None],
) -> dict[str, bytes]:
    """:func:`_play_season_game` on a Ray worker, into a temporary folder; returns the game's files."""
    with tempfile.TemporaryDirectory(prefix="mafialab-season-") as tmp:
        asyncio.run(_play_season_game(cfg, slot, seed, seating, game_id, replaced, deal, Path(tmp)))
        return read_game_files(Path(tmp) / game_id)


ProgressFn = Callable[[str, Slot], None]
"""``progress(event, slot)`` with event ``played``, ``replaced``, ``judged`` or ``failed``."""


class _Runner:
    def __init__(
        self,
        out: Path,
        manifest: SeasonManifest,
        judges: Mapping[str, ChatModel] | None,
        progress: ProgressFn | None,
        ray: str | None = None,
    ):
        self.out = Path(out)
        self.ray = ray
        self.m = manifest
        self.cfg = manifest.config
        self.rules = self.cfg.load_rules()
        self.progress = progress
        given = dict(judges or {})
        self.judges: list[ChatModel] = []
        for j in self.cfg.judges:
            model = given.get(j.model) or get_model(j.model, **j.options)
            self.judges.append(_Limited(model, self.cfg.parallelism.judge_calls))

    def save(self) -> None:
        save_manifest(self.out, self.m)

    def _emit(self, event: str, slot: Slot) -> None:
        if self.progress is not None:
            self.progress(event, slot)

    def _move(self, src: Path, kind: str, name: str) -> str:
        dst = self.out / kind / name
        n = 1
        while dst.exists():
            n += 1
            dst = self.out / kind / f"{name}.{n}"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(src), str(dst))
        return str(dst.relative_to(self.out))

    def _finish_moves(self) -> None:
        """Move files of recorded attempts that a crash left in ``games/``."""
        for slot in self.m.slots:
            for a in slot.history:
                src = self.out / GAMES_DIR / a.game_id
                if a.game_id != slot.game_id and src.exists() and not (self.out / a.path).exists():
                    shutil.move(str(src), str(self.out / a.path))

    async def _play(self, slot: Slot) -> GameLog:
        gdir = self.out / GAMES_DIR / slot.game_id
        if (gdir / GAME_FILE).exists():
            try:
                existing = read_game(gdir)
            except LogFormatError:
                existing = None
            if existing is not None and existing.winner is not None:
                return existing  # finished before a crash; never replayed
            moved = self._move(gdir, INCOMPLETE_DIR, slot.game_id)
            slot.history.append(
                Attempt(
                    game_id=slot.game_id,
                    seed=slot.seed,
                    outcome="incomplete",
                    path=moved,
                    reason="no outcome (interrupted); rerun from its own seed",
                )
            )
            self.save()
        elif gdir.exists():
            shutil.rmtree(gdir)  # an empty directory, nothing recorded
        replaced = [a.game_id for a in slot.history if a.outcome == "discarded"]
        deal = (slot.roles, slot.names)
        job = (self.cfg, slot.slot, slot.seed, list(slot.seating), slot.game_id, replaced, deal)
        if self.ray is None:
            await _play_season_game(*job, self.out / GAMES_DIR)
        else:  # played on a worker; the driver writes its files where a local game would be
            files = await ray_run(_season_game_files, *job, address=self.ray)
            write_game_files(self.out / GAMES_DIR, slot.game_id, files)
        return read_game(gdir)

    def _mark_degraded(self, game: GameLog, share: float, decisions: int, fallbacks: int, why: str) -> None:
        with JsonlWriter(game.path / GAME_FILE) as w:
            w.write(
                GameStatus(
                    seq=len(game.events) + 1,
                    degraded=True,
                    answered_share=share,
                    decisions=decisions,
                    fallbacks=fallbacks,
                    detail={"reason": why, "threshold": self.cfg.limits.min_answered_share},
                )
            )

    async def run_slot(self, slot: Slot, sem: asyncio.Semaphore) -> None:
        async with sem:
            while slot.status == "pending":
                game = await self._play(slot)
                share, decisions, fallbacks = answered_share(game)
                threshold = self.cfg.limits.min_answered_share
                why = f"agents answered {share:.1%} of {decisions} decisions (< {threshold:.0%})"
                marked = game.status is not None and game.status.degraded
                if marked and game.status is not None:
                    n_model = game.status.detail.get("model_decisions", "?")
                    why = (
                        f"the harness gate marked it degraded: model calls answered "
                        f"{game.status.answered_share:.1%} of {n_model} model decisions (< {threshold:.0%})"
                    )
                    share = min(share, game.status.answered_share)
                lines, failed = quality_check(game, self.cfg)
                for line in lines:
                    log.warning("season %s: game %s: quality: %s", self.cfg.name, game.game_id, line)
                if failed is not None and not (share < threshold or marked):
                    why = failed
                if share < threshold or marked or failed is not None:
                    if self.m.replacements < self.cfg.max_replacements():
                        self._mark_degraded(game, share, decisions, fallbacks, why + "; discarded and replayed")
                        j = self.m.replacements
                        self.m.replacements += 1
                        new_seed = self.cfg.seed + self.cfg.games + j
                        old_id = slot.game_id
                        slot.history.append(
                            Attempt(
                                game_id=old_id,
                                seed=slot.seed,
                                outcome="discarded",
                                answered_share=share,
                                path=f"{DISCARDED_DIR}/{old_id}",
                                reason=why,
                            )
                        )
                        slot.seating = reseat(slot.seating, self.rules, slot.seed, new_seed, slot.roles)
                        slot.roles = None  # a replacement plays its own seed's deal
                        slot.seed = new_seed
                        slot.game_id = game_id_for(self.cfg.name, slot.slot, new_seed)
                        self.save()
                        self._move(game.path, DISCARDED_DIR, old_id)
                        log.warning(
                            "season %s: game %s degraded (%s); replaying with seed %d",
                            self.cfg.name,
                            old_id,
                            why,
                            new_seed,
                        )
                        self._emit("replaced", slot)
                        continue
                    self._mark_degraded(game, share, decisions, fallbacks, why + "; replacement budget spent, kept")
                    slot.degraded = True
                slot.status = "played"
                slot.quality = lines
                slot.winner = "mafia" if game.winner == "mafia" else "town"
                end = next((e for e in reversed(game.events) if e.kind == "game_end"), None)
                slot.rounds = end.rounds if end is not None else None  # type: ignore[union-attr]
                slot.answered_share = share
                slot.speaking_order = opening_order(game)
                self.save()
                self._emit("played", slot)
        if slot.status == "played":
            if self.judges and not slot.degraded:
                await self.judge_slot(slot)
            slot.status = "judged"
            self.save()
            self._emit("judged", slot)

    async def judge_slot(self, slot: Slot) -> None:
        gdir = self.out / GAMES_DIR / slot.game_id
        done = {v.judge for v in latest_verdicts(read_verdicts(gdir))}
        todo = [j for j in self.judges if j.name not in done]
        if not todo:
            return
        game = read_game(gdir)
        lim = self.cfg.limits
        await asyncio.gather(
            *(
                judge_game(game, j, attempts=lim.judge_attempts, max_tokens=lim.judge_max_tokens, seed=self.cfg.seed)
                for j in todo
            )
        )

    async def run(self) -> None:
        self._finish_moves()
        todo = [s for s in self.m.slots if s.status != "judged"]
        # on Ray every pending game is a task at once: the cluster runs as many as it has CPUs
        sem = asyncio.Semaphore(self.cfg.parallelism.games if self.ray is None else max(1, len(todo)))
        results = await asyncio.gather(*(self.run_slot(s, sem) for s in todo), return_exceptions=True)
        failed = []
        for s, r in zip(todo, results, strict=True):
            if isinstance(r, BaseException):
                if isinstance(r, (KeyboardInterrupt, asyncio.CancelledError)):
                    raise r
                log.error("season %s: game %s failed: %s: %s", self.cfg.name, s.game_id, type(r).__name__, r)
                self._emit("failed", s)
                failed.append(f"{s.game_id}: {type(r).__name__}: {r}")
        self.save()
        if failed:
            raise SeasonError(
                f"{count(len(failed), 'game')} failed (recorded games are kept; fix and run "
                f"`season resume {self.out}`): " + "; ".join(failed)
            )


def quality_check(game: GameLog, config: SeasonConfig) -> tuple[list[str], str | None]:
    """The quality signals of a finished season game, and why it fails the season's quality thresholds.

    Counted by :func:`mafialab.analysis.game_quality` (the definitions of ``report`` and
    ``play``). Without a threshold in ``config.limits`` (the default) the signals are only a
    warning: the reason is ``None``.

    Returns:
        ``(lines, reason)``: one line per signal that fired
        (:func:`mafialab.analysis.quality_lines`), and the first threshold crossed, in words,
        or ``None``.
    """
    lim = config.limits
    q = game_quality(game_data(game), DEFAULT)
    lines = quality_lines(q)
    if lim.max_copied_share is not None and q["speeches"]:
        share = q["copied_speeches"] / q["speeches"]
        if share > lim.max_copied_share:
            return lines, (
                f"{share:.1%} of {count(q['speeches'], 'text')} copy the seat's prompt "
                f"(> max_copied_share {lim.max_copied_share:.0%})"
            )
    if lim.max_off_roster is not None and q["off_roster"] > lim.max_off_roster:
        return lines, f"{count(q['off_roster'], 'off-roster name')} (> max_off_roster {lim.max_off_roster})"
    if lim.fail_on_constant_answers and q["constant"]:
        which = ", ".join(f"{f['model']} {f['probe_id']}" for f in q["constant"])
        return lines, f"answers that never vary ({which}; fail_on_constant_answers)"
    return lines, None


def _judge_models(config: SeasonConfig, given: Mapping[str, ChatModel] | None) -> dict[str, ChatModel]:
    """One model instance per judge (given instances first), shared by preflight and judging."""
    given = dict(given or {})
    return {j.model: given.get(j.model) or get_model(j.model, **j.options) for j in config.judges}


async def run_season(
    config: SeasonConfig,
    out: Path,
    *,
    judges: Mapping[str, ChatModel] | None = None,
    progress: ProgressFn | None = None,
    preflight_timeout_s: float = 120.0,
    ray: str | None = None,
) -> SeasonManifest:
    """Start a season in ``out`` and play it to the end.

    Passes the integrity gate (:func:`preflight_season`), writes the plan to ``season.json``, plays
    the games concurrently (``parallelism.games``), replaces degraded games, judges every
    counted game, and writes ``index.json`` and ``leaderboard.md``.

    Args:
        config: The validated season.
        out: Season directory (must not hold a season already).
        judges: Judge model instances by model string, overriding ``get_model`` (tests,
            notebooks).
        progress: Callback per game event.
        preflight_timeout_s: Seconds per preflight call.
        ray: Play the games as Ray tasks on this cluster (``auto``, ``local`` or an address,
            :func:`mafialab.harness.connect_ray`); each worker plays a game into a temporary
            folder and returns its files, which the driver writes into ``games/`` as a local
            game is written. Judging, the manifest and the index stay on the driver.

    Returns:
        The final manifest.

    Raises:
        SeasonError: ``out`` already holds a season, a backend is unreachable, or games
            failed (the finished ones are kept; resume later).
        ImportError: ``ray`` given and Ray is not installed (nothing is written).
    """
    out = Path(out)
    if (out / MANIFEST_FILE).exists():
        raise SeasonError(f"{out}: already holds a season; use `season resume {out}` or another --out")
    if ray is not None:
        connect_ray(ray)  # before anything is written: without Ray the season does not start
    judges = _judge_models(config, judges)
    # on Ray the driver's own calls (the preflight, the judges) share the cluster's per-backend
    # limits with the workers' calls
    with driver_limits(ray):
        pre: dict[str, str] = {}
        if config.limits.preflight:
            pre = await preflight_season(config, judges, preflight_timeout_s)
        manifest = plan_season(config)
        manifest.preflight = pre
        save_manifest(out, manifest)
        runner = _Runner(out, manifest, judges, progress, ray)
        try:
            await runner.run()
        finally:
            if all(s.status == "judged" for s in manifest.slots):
                write_index(out)
    return manifest


async def resume_season(
    out: Path,
    *,
    judges: Mapping[str, ChatModel] | None = None,
    progress: ProgressFn | None = None,
    preflight_timeout_s: float = 120.0,
    ray: str | None = None,
) -> SeasonManifest:
    """Resume a season after a crash or Ctrl-C.

    Games without an outcome are moved to ``incomplete/`` and rerun from their own seed (so
    is a game marked played whose ``game.jsonl`` is missing); finished games are never
    replayed; missing verdicts are requested. The integrity gate runs again first. ``ray``:
    the games left run as Ray tasks (as :func:`run_season`).

    Raises:
        SeasonError: No manifest in ``out``, a backend is unreachable, or games failed.
        ImportError: ``ray`` given and Ray is not installed.
    """
    out = Path(out)
    manifest = load_manifest(out)
    if ray is not None:
        connect_ray(ray)
    for slot in manifest.slots:
        if slot.status != "pending" and not (out / GAMES_DIR / slot.game_id / GAME_FILE).exists():
            # the manifest says played, but the game's log is gone (deleted, or a partial copy of
            # the season directory): without it the game has no outcome, so it is rerun
            log.warning("season: %s is marked %s but has no %s; rerunning it", slot.game_id, slot.status, GAME_FILE)
            slot.status = "pending"
    judges = _judge_models(manifest.config, judges)
    with driver_limits(ray):  # on Ray: the preflight and the judges under the cluster's limits
        if manifest.config.limits.preflight and any(s.status != "judged" for s in manifest.slots):
            manifest.preflight = await preflight_season(manifest.config, judges, preflight_timeout_s)
        runner = _Runner(out, manifest, judges, progress, ray)
        try:
            await runner.run()
        finally:
            if all(s.status == "judged" for s in manifest.slots):
                write_index(out)
    return manifest
