"""Leaderboards and the season ``index.json``: win rates, judge scores, ratings, cost."""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from mafialab._files import write_atomic
from mafialab._words import count
from mafialab.analysis import (
    GTE_EXTRA_HINT,
    OPENSKILL_MU,
    OPENSKILL_SIGMA,
    GameOutcome,
    GteRatings,
    Rate,
    RatingRow,
    Ratings,
    SeatOutcome,
    bootstrap_mean_ci,
    fmt_rate,
    gte_available,
    gte_ratings,
    no_interval_reason,
    rate,
    rate_games,
    seat_effects,
    seat_rows,
)
from mafialab.arena._config import SeasonConfig
from mafialab.arena._effects import effect_rows
from mafialab.arena._manifest import GAMES_DIR, Slot, load_manifest
from mafialab.judge import Ensemble, game_ensemble
from mafialab.record import (
    GAME_FILE,
    JUDGE_AXES,
    GameLog,
    Verdict,
    iter_call_records,
    latest_verdicts,
    read_game,
    read_verdicts,
)
from mafialab.rules import RuleSet, Team, winner_name

log = logging.getLogger(__name__)

INDEX_FILE = "index.json"
LEADERBOARD_MD = "leaderboard.md"
BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95
GTE_RESAMPLES = 20
"""Bootstrap resamples of the leaderboard's GTE (each is one equilibrium solve)."""


class WinRate(BaseModel):
    """A win rate with its 95 % Wilson score interval, as a season's ``index.json`` writes it.

    The record of a :class:`mafialab.analysis.Rate` (``wins`` its ``hits``, ``low``/``high``
    its interval; ``None`` fields when ``n == 0``), computed by :func:`mafialab.analysis.rate`.
    ``low``/``high`` are ``None`` and ``no_interval`` says why when the seat-games come from
    fewer than two games (:func:`mafialab.analysis.no_interval_reason`).
    """

    wins: int
    n: int
    rate: float | None = None
    low: float | None = None
    high: float | None = None
    games: int | None = None
    no_interval: str | None = None


class Mean(BaseModel):
    """A mean judge score (0-10) with a 95 % percentile bootstrap interval over seat-games.

    ``None`` fields when ``n == 0``. The bootstrap resamples the entry's scored seat-games
    with replacement (:data:`BOOTSTRAP_RESAMPLES` times, seeded by the season seed). No
    interval (``low``/``high`` ``None``, ``no_interval`` the reason) when the seat-games come
    from fewer than two games.
    """

    n: int
    mean: float | None = None
    low: float | None = None
    high: float | None = None
    games: int | None = None
    no_interval: str | None = None


class Rating(BaseModel):
    """OpenSkill (Plackett-Luce) rating: ``mu``, ``sigma`` and ``ordinal = mu − 3·sigma``.

    The overall board of :func:`mafialab.analysis.rate_games` (self-play games left out); an
    entry without a rated game keeps the prior (``mu`` 25, ``sigma`` 25/3).
    """

    mu: float
    sigma: float
    ordinal: float


class EntryStats(BaseModel):
    """Leaderboard row of one roster entry (a "model").

    Attributes:
        name: Entry name.
        agent: Agent spec.
        games: Counted games with at least one seat.
        seats: Seat-games played (the unit of the rates below).
        overall: Wins over all seat-games.
        as_mafia: Wins over mafia seat-games.
        as_town: Wins over town seat-games.
        deception: Mean judge deception (mafia seat-games).
        detection: Mean judge detection (town seat-games).
        influence: Mean judge influence (all seat-games).
        mvp: Games whose ensemble MVP sat in one of this entry's seats.
        judge_spread: Per axis, the mean over seat-games of the spread (max − min) between
            judges; ``None`` without scores (0 with one judge).
        by_judge: Judge → axis → this entry's mean score from that judge alone (to spot a
            judge favouring its own model family).
        rating: OpenSkill rating after the season's rated games in order (the overall board of
            ``SeasonIndex.ratings``).
        prompt_tokens: Prompt tokens of the entry's calls (from ``calls.jsonl``).
        completion_tokens: Completion tokens.
        calls: Calls counted.
        cost_usd: Cost of those calls from the season's ``prices`` by each call's model
            (``None`` without calls or when a model has no price).
    """

    name: str
    agent: str
    games: int
    seats: int
    overall: WinRate
    as_mafia: WinRate
    as_town: WinRate
    deception: Mean
    detection: Mean
    influence: Mean
    mvp: int
    judge_spread: dict[str, float | None] = Field(default_factory=dict)
    by_judge: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    rating: Rating
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = None


class GameRow(BaseModel):
    """One game of the season in the index."""

    slot: int
    game_id: str
    seed: int
    path: str
    winner: Team | None
    rounds: int | None
    degraded: bool
    counted: bool
    answered_share: float | None
    winner_name: str | None = None
    """The winner as the season's rule set names the team (``Werewolves``); ``None`` until played."""
    headline: str | None = None
    mvp: str | None = None
    mvp_entry: str | None = None
    judges_ok: list[str] = Field(default_factory=list)
    judges_missing: list[str] = Field(default_factory=list)
    seats: list[str] = Field(default_factory=list)
    replaces: list[str] = Field(default_factory=list)


class JudgeCost(BaseModel):
    """Tokens and cost of one judge over the season."""

    judge: str
    verdicts_ok: int
    verdicts_missing: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None = None


class SeasonIndex(BaseModel):
    """``index.json`` of a season directory.

    Attributes:
        kind: Always ``season_index``.
        season: Season name.
        rules_id: Rule-set id.
        seed: Season seed.
        games_planned: ``K``.
        games_counted: Finished, non-degraded games used in the leaderboard.
        replacements: Replacement games played.
        leaderboard: Entries ordered by rating ordinal (then overall win rate); entries without
            a counted game come last.
        games: Every slot's current game.
        discarded: Discarded and incomplete attempts (not counted).
        judges: Judge tokens and cost.
        created: Unix time.
        effects: Name and speaking-position effects on winning, from the counted games
            (:func:`mafialab.analysis.seat_effects`; ``docs/arena.md``).
        ratings: Elo and OpenSkill overall, per side and per role with bootstrap intervals
            (:func:`mafialab.analysis.rate_games`; games in slot order, self-play left out
            and counted).
        gte: Kaggle's GTE over per-role win-rate tasks (:func:`mafialab.analysis.gte_ratings`,
            :data:`GTE_RESAMPLES` resamples); ``None`` without the ``gte`` extra, and
            ``gte_note`` then says how to get it (or why there is none).
    """

    kind: str = "season_index"
    season: str
    rules_id: str
    seed: int
    games_planned: int
    games_counted: int
    replacements: int
    leaderboard: list[EntryStats]
    games: list[GameRow]
    discarded: list[dict[str, Any]]
    judges: list[JudgeCost]
    created: float
    effects: dict[str, Any] | None = None
    ratings: Ratings | None = None
    gte: GteRatings | None = None
    gte_note: str | None = None


def _avg(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def win_rate(wins: int, n: int, games: int | None = None) -> WinRate:
    """Win rate with its 95 % Wilson interval.

    Args:
        wins: Seat-games won (0..n).
        n: Seat-games played.
        games: Games those seat-games come from; with fewer than two there is no interval
            (:func:`mafialab.analysis.no_interval_reason`). ``None``: treat the seat-games as
            independent games (``games = n``).
    """
    if n == 0:
        return WinRate(wins=0, n=0, games=0 if games is None else games)
    g = n if games is None else games
    r = rate(wins, n, clusters=g, confidence=CONFIDENCE)
    return WinRate(wins=r.hits, n=r.n, rate=r.rate, low=r.lo, high=r.hi, games=g, no_interval=r.no_interval)


def bootstrap_mean(values: list[float], rng: np.random.Generator, games: int | None = None) -> Mean:
    """Mean with a 95 % percentile bootstrap interval (``BOOTSTRAP_RESAMPLES`` resamples).

    ``games``: games the values come from (``None``: one each); fewer than two: no interval.
    """
    if not values:
        return Mean(n=0, games=0 if games is None else games)
    arr = np.asarray(values, dtype=float)
    g = len(arr) if games is None else games
    why = no_interval_reason(g)
    if why is not None:
        return Mean(n=len(arr), mean=float(arr.mean()), games=g, no_interval=why)
    low, high = bootstrap_mean_ci(arr, rng, BOOTSTRAP_RESAMPLES, CONFIDENCE) or (None, None)
    return Mean(
        n=len(arr),
        mean=float(arr.mean()),
        low=low,
        high=high,
        games=g,
    )


def _num(d: Any, *keys: str) -> int:
    for k in keys:
        if isinstance(d, dict) and isinstance(d.get(k), (int, float)):
            return int(d[k])
    return 0


def read_calls(game_dir: Path) -> list[tuple[int | None, str, int, int, int]]:
    """Model calls of a game from ``calls.jsonl`` (absent file: none).

    Reads :class:`~mafialab.record`'s call records (``seat``, ``model``, ``prompt_tokens``,
    ``completion_tokens``, ``cached_tokens``) and tolerates older layouts (``meta.seat``,
    ``usage.*``). Judge and preflight calls are skipped (judge usage is in the verdicts).

    Returns:
        ``(seat or None, model, prompt_tokens, completion_tokens, cached_tokens)`` per call.
    """
    out = []
    for _, rec in iter_call_records(Path(game_dir)):
        if rec.get("kind", "call") != "call":
            continue  # the closing call_summary record
        meta: dict[str, Any] = rec["meta"] if isinstance(rec.get("meta"), dict) else {}
        if rec.get("purpose", meta.get("purpose")) in ("judge", "preflight"):
            continue
        seat = rec.get("seat", meta.get("seat"))
        usage = rec.get("usage") if isinstance(rec.get("usage"), dict) else {}
        out.append(
            (
                int(seat) if isinstance(seat, int) and seat >= 0 else None,
                str(rec.get("model") or ""),
                _num(usage, "prompt_tokens") or _num(rec, "prompt_tokens"),
                _num(usage, "completion_tokens") or _num(rec, "completion_tokens"),
                _num(usage, "cached_tokens") or _num(rec, "cached_tokens"),
            )
        )
    return out


class _Tally:
    """Running totals of a season, per roster entry (index ``e``), filled game by game."""

    def __init__(self, cfg: SeasonConfig) -> None:
        n = len(cfg.roster)
        self.cfg = cfg
        self.outcomes: list[GameOutcome] = []
        self.games_with: list[set[str]] = [set() for _ in range(n)]
        self.games_as: dict[str, list[set[str]]] = {k: [set() for _ in range(n)] for k in ("all", "mafia", "town")}
        self.scored_in: dict[str, list[set[str]]] = {a: [set() for _ in range(n)] for a in JUDGE_AXES}
        self.seats = [0] * n
        self.wins: dict[str, list[int]] = {k: [0] * n for k in ("all", "mafia", "town")}
        self.tries: dict[str, list[int]] = {k: [0] * n for k in ("all", "mafia", "town")}
        self.scores: dict[str, list[list[float]]] = {a: [[] for _ in range(n)] for a in JUDGE_AXES}
        self.spreads: dict[str, list[list[float]]] = {a: [[] for _ in range(n)] for a in JUDGE_AXES}
        self.per_judge: list[dict[str, dict[str, list[float]]]] = [
            defaultdict(lambda: {a: [] for a in JUDGE_AXES}) for _ in range(n)
        ]
        self.mvp = [0] * n
        self.tokens = [[0, 0, 0] for _ in range(n)]
        self.cost: list[float | None] = [0.0] * n
        self.judge_tok: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])

    def add_judge_usage(self, verdicts: list[Verdict]) -> None:
        """Count each judge's verdicts (ok / missing) and tokens."""
        for v in verdicts:
            jt = self.judge_tok[v.judge]
            jt[0 if v.status == "ok" else 1] += 1
            jt[2] += v.prompt_tokens
            jt[3] += v.completion_tokens

    def add_seats(self, slot: Slot, game: GameLog, ens: Ensemble, verdicts: list[Verdict]) -> None:
        """Wins, tries and judge scores of every seat of a counted game."""
        by_seat = {p.seat: p for p in ens.players}
        for s, info in enumerate(game.header.roster):
            e = slot.seating[s]
            won = int(info.team == game.winner)
            self.seats[e] += 1
            self.games_with[e].add(slot.game_id)
            for k in ("all", info.team):
                self.wins[k][e] += won
                self.tries[k][e] += 1
                self.games_as[k][e].add(slot.game_id)
            p = by_seat.get(s)
            if p is not None:
                for axis in JUDGE_AXES:
                    stat = getattr(p, axis)
                    if stat is not None:
                        self.scores[axis][e].append(stat.mean)
                        self.scored_in[axis][e].add(slot.game_id)
                        self.spreads[axis][e].append(stat.spread)
            for v in verdicts:
                if v.status == "ok" and s < len(v.players):
                    for axis in JUDGE_AXES:
                        x = getattr(v.players[s], axis)
                        if x is not None:
                            self.per_judge[e][v.judge][axis].append(float(x))

    def add_calls(self, slot: Slot, gdir: Path) -> None:
        """Tokens, calls and cost of the game's model calls, per entry (``None`` cost once unpriced)."""
        for seat, call_model, pt, ct, cached in read_calls(gdir):
            if seat is None or seat >= len(slot.seating):
                continue
            e = slot.seating[seat]
            tok = self.tokens[e]
            tok[0] += pt
            tok[1] += ct
            tok[2] += 1
            price = self.cfg.price(call_model or self.cfg.roster[e].agent)
            c = self.cost[e]
            self.cost[e] = None if price is None or c is None else c + price.cost(pt, ct, cached)

    def rate_match(self, slot: Slot, game: GameLog) -> None:
        """Keep a counted game for the ratings: per seat its entry, role, team and result."""
        seats = [
            SeatOutcome(agent=self.cfg.roster[slot.seating[s]].name, role=info.role, team=info.team,
                        won=info.team == game.winner)
            for s, info in enumerate(game.header.roster)
        ]  # fmt: skip
        self.outcomes.append(GameOutcome(game_id=slot.game_id, order=slot.slot, seats=tuple(seats)))

    def leaderboard(self, rng: np.random.Generator, ratings: Ratings) -> list[EntryStats]:
        """One row per roster entry, best rating first."""
        overall = {r.agent: (r.mu, r.sigma) for r in ratings.boards.get("overall", [])}
        board = []
        for e, entry in enumerate(self.cfg.roster):
            mu, sigma = overall.get(entry.name, (OPENSKILL_MU, OPENSKILL_SIGMA))
            pt, ct, calls = self.tokens[e]
            board.append(
                EntryStats(
                    name=entry.name,
                    agent=entry.agent,
                    games=len(self.games_with[e]),
                    seats=self.seats[e],
                    overall=win_rate(self.wins["all"][e], self.tries["all"][e], len(self.games_as["all"][e])),
                    as_mafia=win_rate(self.wins["mafia"][e], self.tries["mafia"][e], len(self.games_as["mafia"][e])),
                    as_town=win_rate(self.wins["town"][e], self.tries["town"][e], len(self.games_as["town"][e])),
                    deception=bootstrap_mean(self.scores["deception"][e], rng, len(self.scored_in["deception"][e])),
                    detection=bootstrap_mean(self.scores["detection"][e], rng, len(self.scored_in["detection"][e])),
                    influence=bootstrap_mean(self.scores["influence"][e], rng, len(self.scored_in["influence"][e])),
                    mvp=self.mvp[e],
                    judge_spread={
                        a: (sum(v) / len(v) if v else None) for a, v in ((a, self.spreads[a][e]) for a in JUDGE_AXES)
                    },
                    by_judge={
                        j: {a: (sum(v) / len(v) if v else None) for a, v in axes.items()}
                        for j, axes in self.per_judge[e].items()
                    },
                    rating=Rating(mu=mu, sigma=sigma, ordinal=mu - 3 * sigma),
                    prompt_tokens=pt,
                    completion_tokens=ct,
                    calls=calls,
                    cost_usd=self.cost[e] if calls else None,
                )
            )
        # an entry that played no counted game keeps its prior rating, which can exceed the rating
        # of entries that lost games: it is listed after every entry that played
        board.sort(key=lambda x: (x.games == 0, -x.rating.ordinal, -(x.overall.rate or 0.0), x.name))
        return board

    def judge_costs(self) -> list[JudgeCost]:
        """Verdicts, tokens and cost per judge model."""
        return [
            JudgeCost(
                judge=j,
                verdicts_ok=t[0],
                verdicts_missing=t[1],
                prompt_tokens=t[2],
                completion_tokens=t[3],
                cost_usd=None if (jp := self.cfg.price(j)) is None else jp.cost(t[2], t[3]),
            )
            for j, t in self.judge_tok.items()
        ]


def _game_row(slot: Slot, names: list[str]) -> GameRow:
    """The index row of a slot before its game is read (not yet counted)."""
    return GameRow(
        slot=slot.slot,
        game_id=slot.game_id,
        seed=slot.seed,
        path=f"{GAMES_DIR}/{slot.game_id}",
        winner=slot.winner,
        rounds=slot.rounds,
        degraded=slot.degraded,
        counted=False,
        answered_share=slot.answered_share,
        seats=names,
        replaces=[a.game_id for a in slot.history if a.outcome == "discarded"],
    )


def build_index(out: Path) -> SeasonIndex:
    """Compute the season index from ``season.json`` and the logs beside it.

    Counted games are the slots whose current game finished and is not degraded. The unit
    of every rate is the seat-game (an entry holding two seats in a game counts twice);
    judge scores per seat-game are the ensemble mean over the judges; the OpenSkill update
    treats each game as a two-team match (winner rank 1), each seat a player carrying its
    entry's rating; an entry with several seats in a game takes the mean of its seats'
    updated ``mu`` and ``sigma``.

    Raises:
        SeasonError: No readable manifest.
    """
    m = load_manifest(out)
    cfg = m.config
    out = Path(out)
    rng = np.random.default_rng(cfg.seed)
    tally = _Tally(cfg)
    rows: list[GameRow] = []
    discarded: list[dict[str, Any]] = []
    season_rules: RuleSet | None = None  # from the games' headers: every game of a season has the same
    seat_games: list[dict[str, Any]] = []  # rows of the name and speaking-position effects
    for slot in m.slots:
        gdir = out / GAMES_DIR / slot.game_id
        discarded += [{"slot": slot.slot, **a.model_dump()} for a in slot.history]
        names = [cfg.roster[e].name for e in slot.seating]
        row = _game_row(slot, names)
        rows.append(row)
        if slot.status == "pending" or not (gdir / GAME_FILE).exists():
            continue
        game: GameLog = read_game(gdir)
        season_rules = game.header.rules
        verdicts = latest_verdicts(read_verdicts(gdir))
        tally.add_judge_usage(verdicts)
        if game.winner is None or slot.degraded:
            continue
        row.counted = True
        row.winner = "town" if game.winner == "town" else "mafia"
        ens: Ensemble = game_ensemble(gdir)
        row.headline, row.judges_ok, row.judges_missing = ens.headline, ens.judges, ens.missing
        if ens.mvp_seat is not None:
            row.mvp = ens.mvp
            row.mvp_entry = names[ens.mvp_seat]
            tally.mvp[slot.seating[ens.mvp_seat]] += 1
        tally.add_seats(slot, game, ens, verdicts)
        tally.add_calls(slot, gdir)
        tally.rate_match(slot, game)
        cluster = slot.game_id if slot.block is None else f"block{slot.block}"  # a deal block shares its deal
        seat_games += [{**r, "cluster": cluster} for r in seat_rows(game)]
    if season_rules is not None:
        for row in rows:
            row.winner_name = winner_name(row.winner, season_rules) if row.winner is not None else None
    ratings = rate_games(tally.outcomes, seed=cfg.seed)
    gte, gte_note = _season_gte(tally.outcomes, ratings, cfg.seed)
    return SeasonIndex(
        season=cfg.name,
        rules_id=m.rules_id,
        seed=cfg.seed,
        games_planned=cfg.games,
        games_counted=sum(r.counted for r in rows),
        replacements=m.replacements,
        leaderboard=tally.leaderboard(rng, ratings),
        games=rows,
        discarded=discarded,
        judges=tally.judge_costs(),
        created=round(time.time(), 3),
        effects=seat_effects(seat_games),
        ratings=ratings,
        gte=gte,
        gte_note=gte_note,
    )


def _season_gte(outcomes: list[GameOutcome], ratings: Ratings, seed: int) -> tuple[GteRatings | None, str | None]:
    """GTE of the season's rated games, or ``None`` and why (no extra, no game, a failed solve)."""
    if not gte_available():
        return None, GTE_EXTRA_HINT
    if not ratings.games_rated:
        return None, "GTE: no rated game"
    try:
        return gte_ratings(outcomes, resamples=GTE_RESAMPLES, seed=seed), None
    except Exception as e:  # a solver failure must not lose the leaderboard
        log.warning("GTE failed: %s", e)
        return None, f"GTE failed: {e}"


def _fmt_rate(r: WinRate) -> str:
    return fmt_rate(Rate.from_dict(r.model_dump()), "percent", missing="–")


def _fmt_mean(x: Mean) -> str:
    if x.mean is None:
        return "–"
    if x.low is None or x.high is None:
        return f"{x.mean:.1f} ({x.no_interval or 'no interval'})"
    return f"{x.mean:.1f} [{x.low:.1f}, {x.high:.1f}]"


def leaderboard_rows(index: SeasonIndex) -> tuple[list[str], list[list[str]]]:
    """Header and text rows of the leaderboard table (shared by rich and Markdown)."""
    head = [
        "#",
        "entry",
        "games",
        "win rate",
        "as mafia",
        "as town",
        "deception",
        "detection",
        "influence",
        "MVP",
        "rating μ±σ",
        "tokens",
        "cost $",
    ]
    rows = []
    for i, e in enumerate(index.leaderboard, start=1):
        rows.append(
            [
                str(i) if e.games else "–",  # unplayed entries are listed last, unranked
                e.name,
                f"{e.games} ({e.seats} seats)" if e.seats != e.games else str(e.games),
                _fmt_rate(e.overall),
                _fmt_rate(e.as_mafia),
                _fmt_rate(e.as_town),
                _fmt_mean(e.deception),
                _fmt_mean(e.detection),
                _fmt_mean(e.influence),
                str(e.mvp),
                f"{e.rating.mu:.1f}±{e.rating.sigma:.1f}",
                f"{e.prompt_tokens + e.completion_tokens}",
                "–" if e.cost_usd is None else f"{e.cost_usd:.4f}",
            ]
        )
    return head, rows


def _short_rate(r: WinRate) -> str:
    return fmt_rate(Rate.from_dict(r.model_dump()), "compact", missing="–")


def _short_mean(x: Mean) -> str:
    if x.mean is None:
        return "–"
    if x.low is None or x.high is None:
        return f"{x.mean:.1f}†"
    return f"{x.mean:.1f} [{x.low:.1f},{x.high:.1f}]"


def terminal_tables(index: SeasonIndex) -> list[tuple[str, list[str], list[list[str]]]]:
    """The leaderboard split into tables that read at 80 columns (``season leaderboard``).

    Results (games, win rates, MVP) and judge scores with cost are separate tables with
    short cells (``33% 3/9 [15,65]``: rate, wins/seats, 95 % interval in percent); a value
    whose interval is missing (fewer than 2 games) carries ``†``, explained under the table.
    Entry names are never shortened (the caller folds long ones). ``--markdown`` keeps the
    one wide table of :func:`leaderboard_rows`.

    Returns:
        ``[(title, header, rows)]``.
    """
    ranks = [str(i) if e.games else "–" for i, e in enumerate(index.leaderboard, start=1)]
    results = [
        [rank, e.name, f"{e.games}/{e.seats}", _short_rate(e.overall), _short_rate(e.as_mafia),
         _short_rate(e.as_town), str(e.mvp)]
        for rank, e in zip(ranks, index.leaderboard, strict=True)
    ]  # fmt: skip
    scores = [
        [rank, e.name, _short_mean(e.deception), _short_mean(e.detection), _short_mean(e.influence),
         f"{e.rating.mu:.1f}±{e.rating.sigma:.1f}"]
        for rank, e in zip(ranks, index.leaderboard, strict=True)
    ]  # fmt: skip
    tables = [
        ("Results", ["#", "entry", "games/seats", "win rate", "as mafia", "as town", "MVP"], results),
        ("Judge scores (0-10) and rating", ["#", "entry", "deception", "detection", "influence", "rating"], scores),
    ]
    if any(e.prompt_tokens + e.completion_tokens or e.cost_usd for e in index.leaderboard):
        cost = [
            [rank, e.name, str(e.prompt_tokens), str(e.completion_tokens),
             "–" if e.cost_usd is None else f"{e.cost_usd:.4f}"]
            for rank, e in zip(ranks, index.leaderboard, strict=True)
        ]  # fmt: skip
        tables.append(("Tokens and cost", ["#", "entry", "prompt tokens", "completion tokens", "cost $"], cost))
    return tables + rating_tables(index)


OVERLAP_MARK = "~"
RATINGS_NOTE = (
    "ratings: Elo and OpenSkill μ with [95% bootstrap interval over games]; games = rated games the "
    f"rating rests on; {OVERLAP_MARK} its interval overlaps the next one down (order not settled); "
    "self-play games (an entry on both teams) are not rated"
)
BOARD_TITLES = {"overall": "Ratings", "side": "Ratings by side", "role": "Ratings by role"}


def _fmt_rating(value: float, low: float | None, high: float | None, overlaps: bool | None, digits: int) -> str:
    mark = OVERLAP_MARK if overlaps else ""
    if low is None or high is None:
        return f"{value:.{digits}f}{mark}†"
    return f"{value:.{digits}f} [{low:.{digits}f},{high:.{digits}f}]{mark}"


def rating_tables(index: SeasonIndex) -> list[tuple[str, list[str], list[list[str]]]]:
    """The rating boards as tables: overall, by side, by role (``(title, header, rows)``).

    Rows within a group are best OpenSkill μ first; a rating whose 95 % interval overlaps the
    next one down carries :data:`OVERLAP_MARK`; ``†`` marks a rating without an interval (one
    game). The GTE column (overall table) is filled when the ``gte`` extra is installed.
    """
    r = index.ratings
    if r is None:
        return []
    gte = {g.agent: g for g in index.gte.rows} if index.gte else {}
    out = []
    for name in r.boards:
        rows: list[RatingRow] = r.boards[name]
        head = ["#", "entry", *(["side" if name == "side" else "role"] if name != "overall" else []), "games",
                "Elo", "OpenSkill μ"]  # fmt: skip
        table = []
        rank, group = 0, None
        for row in rows:
            rank = 1 if row.group != group else rank + 1
            group = row.group
            cells = [str(rank), row.agent, *([row.group] if name != "overall" else []), str(row.games),
                     _fmt_rating(row.elo, row.elo_low, row.elo_high, row.elo_overlaps_next, 0),
                     _fmt_rating(row.mu, row.mu_low, row.mu_high, row.mu_overlaps_next, 1)]  # fmt: skip
            if name == "overall":
                g = gte.get(row.agent)
                cells.append("–" if g is None else _fmt_rating(g.rating, g.low, g.high, None, 3))
            table.append(cells)
        if name == "overall":
            head.append("GTE")
        title = f"{BOARD_TITLES.get(name, name)} ({r.games_rated} games rated, {r.self_play_games} self-play left out)"
        out.append((title, head, table))
    return out


def terminal_game_rows(index: SeasonIndex) -> tuple[list[str], list[list[str]]]:
    """The per-game table at 80 columns: id, winner (``degraded`` marked), rounds, MVP, headline."""
    rows = [
        [g.game_id, (g.winner_name or g.winner or "–") + (" (degraded)" if g.degraded else ""),
         "–" if g.rounds is None else str(g.rounds), f"{g.mvp} ({g.mvp_entry})" if g.mvp else "–", g.headline or "–"]
        for g in index.games
    ]  # fmt: skip
    return ["game", "winner", "rounds", "MVP", "headline"], rows


def game_rows(index: SeasonIndex) -> tuple[list[str], list[list[str]]]:
    """Header and text rows of the per-game table."""
    head = ["game", "seed", "winner", "rounds", "degraded", "MVP", "headline"]
    rows = []
    for g in index.games:
        mvp = f"{g.mvp} ({g.mvp_entry})" if g.mvp else "–"
        rows.append(
            [
                g.game_id,
                str(g.seed),
                g.winner_name or g.winner or "–",
                "–" if g.rounds is None else str(g.rounds),
                "yes" if g.degraded else "no",
                mvp,
                g.headline or "–",
            ]
        )
    return head, rows


def _md_cell(text: str) -> str:
    """Escape a table cell: model text may hold pipes, newlines or HTML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|").replace("\n", " ")


def render_markdown(index: SeasonIndex) -> str:
    """The leaderboard and the games as Markdown tables (model text is escaped for tables)."""

    def table(head: list[str], rows: list[list[str]]) -> list[str]:
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
        return out

    lines = [
        f"# Season {index.season}",
        "",
        f"Rules `{index.rules_id}`, seed {index.seed}: {index.games_counted} of {index.games_planned} games counted, "
        f"{count(index.replacements, 'replacement')}. Rates are per seat-game with 95 % Wilson intervals; judge scores "
        "(0–10) are means with 95 % bootstrap intervals (no interval from fewer than 2 games); rating is "
        "OpenSkill Plackett–Luce; entries without a counted game are listed last, unranked (–).",
        "",
        "## Leaderboard",
        "",
        *table(*leaderboard_rows(index)),
        "",
    ]
    for title, head, rows in rating_tables(index):
        lines += [f"## {title}", "", *table(head, rows), ""]
    if index.ratings is not None:
        lines += [RATINGS_NOTE + (f"; {index.gte_note}" if index.gte_note else "") + ".", ""]
    lines += ["## Games", "", *table(*game_rows(index)), ""]
    if index.judges:
        lines += ["## Judges", ""]
        jt = [
            [
                j.judge,
                str(j.verdicts_ok),
                str(j.verdicts_missing),
                str(j.prompt_tokens + j.completion_tokens),
                "–" if j.cost_usd is None else f"{j.cost_usd:.4f}",
            ]
            for j in index.judges
        ]
        lines += [*table(["judge", "ok", "missing", "tokens", "cost $"], jt), ""]
    if index.effects is not None:
        lines += ["## Name and speaking-position effects", "", *table(*effect_rows(index.effects)), ""]
    return "\n".join(lines)


def write_index(out: Path) -> SeasonIndex:
    """Build the index and write ``index.json`` and ``leaderboard.md`` (atomically)."""
    index = build_index(out)
    write_atomic(Path(out) / INDEX_FILE, json.dumps(index.model_dump(mode="json"), indent=1, ensure_ascii=False))
    write_atomic(Path(out) / LEADERBOARD_MD, render_markdown(index))
    return index
