"""Kaggle Game Arena's Werewolf metrics on mafialab logs, defined as its evaluator defines them.

Source: kaggle-environments 1.33.2, ``kaggle_environments/envs/werewolf/eval/metrics.py``
(``GameSetEvaluator.evaluate``, ``AgentMetrics``, ``_mean_sem``) and ``eval/loaders.py``
(``GameResult._precompute_voting_results``). Per agent (the roster's agent, Kaggle's display
name) over its games: win rate (its team won), KSR (alive at the end), WD-KSR (won and alive),
IRP (a town-team seat's day vote names a mafia-team seat), VSS (on a day a mafia-team seat was
voted out, a town-team seat's vote names it), WD-IRP and WD-VSS (the same, scored 0 unless the
town won), margin of win (living members of the winning team / its size, games won only) and
speed of win (1 / the last day, games won only), each as a mean and its standard error (sample
standard deviation / sqrt(n); 0 for fewer than two values). Per agent and role: games, win
rate, KSR, WD-KSR. Elo, OpenSkill and the game-theoretic rating (GTE) are
:func:`~mafialab.analysis.rate_games` and :func:`~mafialab.analysis.gte_ratings`' (one
definition), applied by :func:`kaggle_figures` to the same games in Kaggle's evaluator's game
order (the order of its ``os.walk`` over the replay folder, recorded by the importer as
``meta.kaggle_order``), every game rated (self-play included, as the evaluator rates it).

The figures read only the roster, the votes, the day eliminations and the end of a game, so
they apply to any elimination game, imported from Kaggle or played here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mafialab.analysis._ratings import (
    GTE_EXTRA_HINT,
    GameOutcome,
    RatingRow,
    SeatOutcome,
    gte_available,
    gte_ratings,
    rate_games,
)
from mafialab.record import GameLog

GTE_RESAMPLES = 20
"""Bootstrap resamples of the GTE of ``report --by agent`` (each one equilibrium solve)."""


@dataclass(frozen=True)
class KaggleGame:
    """What Kaggle's evaluator reads of one game (small: a few numbers per seat).

    Attributes:
        agents: Agent per seat. roles: Role name per seat. teams: Team per seat.
        winner: Winning team. alive: Seats alive at the end. last_day: Kaggle's ``last_day``,
            the round the game ended in (Kaggle counts a day on leaving a night, before it
            checks the end, so a game ending at night d, mafialab's round d+1, has last day d+1).
        day_votes: ``(round, voter, target or None)`` for every day vote.
        exiled: ``round -> seat`` voted out that day.
        game_id: The game's id. order: Its place in Kaggle's evaluator's game order
            (``meta.kaggle_order`` of an imported game; 0 otherwise).
    """

    agents: tuple[str, ...]
    roles: tuple[str, ...]
    teams: tuple[str, ...]
    winner: str
    alive: frozenset[int]
    last_day: int
    day_votes: tuple[tuple[int, int, int | None], ...]
    exiled: dict[int, int] = field(default_factory=dict)
    game_id: str = ""
    order: float = 0.0

    def outcome(self) -> GameOutcome:
        """The game as the ratings read it (seats in roster order, as the evaluator's players)."""
        seats = tuple(
            SeatOutcome(agent=a, role=r, team=t, won=t == self.winner)  # type: ignore[arg-type]
            for a, r, t in zip(self.agents, self.roles, self.teams, strict=True)
        )
        return GameOutcome(game_id=self.game_id or "game", order=self.order, seats=seats)


def kaggle_game(log: GameLog) -> KaggleGame | None:
    """The evaluator's view of a finished game; ``None`` for an unfinished one."""
    end = next((e for e in log.events if e.kind == "game_end"), None)
    if end is None:
        return None
    roster = sorted(log.header.roster, key=lambda s: s.seat)
    votes = tuple((e.round, e.seat, e.target) for e in log.events if e.kind == "vote" and e.stage == "vote")  # type: ignore[union-attr]
    deaths = [e for e in log.events if e.kind == "elimination"]
    exiled = {e.round: e.seat for e in deaths if e.cause == "vote"}  # type: ignore[union-attr]
    return KaggleGame(
        agents=tuple(s.agent for s in roster),
        roles=tuple(s.role for s in roster),
        teams=tuple(s.team for s in roster),
        winner=str(end.winner),  # type: ignore[union-attr]
        alive=frozenset(end.alive),  # type: ignore[union-attr]
        last_day=int(end.rounds),  # type: ignore[union-attr]
        day_votes=votes,
        exiled=exiled,
        game_id=log.header.game_id,
        order=_order(log.header.meta),
    )


def _order(meta: Any) -> float:
    order = meta.get("kaggle_order", 0) if isinstance(meta, dict) else 0
    return float(order) if isinstance(order, (int, float)) and not isinstance(order, bool) else 0.0


def mean_sem(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error as Kaggle's ``_mean_sem``: ``(0, 0)`` when empty, SEM 0 for one value."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = sum(values) / n
    if n < 2:
        return float(mean), 0.0
    var = max(0.0, sum(v * v for v in values) / n - mean * mean) * n / (n - 1)
    return float(mean), math.sqrt(var) / math.sqrt(n)


_SCORES = ("win_rate", "irp", "vss", "ksr", "wd_ksr", "wd_irp", "wd_vss", "margin_of_win", "speed_of_win")
_ROLE_SCORES = ("win_rate", "ksr", "wd_ksr")


def kaggle_metrics(games: Iterable[KaggleGame]) -> dict[str, Any]:
    """Kaggle's per-agent and per-agent-and-role figures over ``games`` (in any order).

    Returns:
        ``{agent: {"games": n, "<score>": [mean, sem], ..., "by_role": {role: {"games": n,
        "win_rate": [mean, sem], "ksr": ..., "wd_ksr": ...}}}}`` with the scores of
        :data:`_SCORES`, agents and roles sorted by name.
    """
    raw: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_role: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for g in games:
        winners = [s for s, t in enumerate(g.teams) if t == g.winner]
        margin = sum(1 for s in winners if s in g.alive) / len(winners) if winners else 0.0
        speed = 1.0 / g.last_day if g.last_day > 0 else 0.0
        for s, agent in enumerate(g.agents):
            won, alive = float(g.teams[s] == g.winner), float(s in g.alive)
            r, rr = raw[agent], by_role[agent][g.roles[s]]
            for key, v in (("win_rate", won), ("ksr", alive), ("wd_ksr", won * alive)):
                r[key].append(v)
                rr[key].append(v)
            if won:
                r["margin_of_win"].append(margin)
                r["speed_of_win"].append(speed)
        town_won = g.winner == "town"
        for rnd, voter, target in g.day_votes:
            if g.teams[voter] != "town":
                continue
            agent = g.agents[voter]
            irp = float(target is not None and g.teams[target] == "mafia")
            raw[agent]["irp"].append(irp)
            raw[agent]["wd_irp"].append(irp if town_won else 0.0)
            wolf = g.exiled.get(rnd)
            if wolf is not None and g.teams[wolf] == "mafia":
                vss = float(target == wolf)
                raw[agent]["vss"].append(vss)
                raw[agent]["wd_vss"].append(vss if town_won else 0.0)
    out: dict[str, Any] = {}
    for agent in sorted(raw):
        r = raw[agent]
        row: dict[str, Any] = {"games": len(r["win_rate"])}
        row.update({k: list(mean_sem(r[k])) for k in _SCORES})
        row["by_role"] = {
            role: {"games": len(rs["win_rate"]), **{k: list(mean_sem(rs[k])) for k in _ROLE_SCORES}}
            for role, rs in sorted(by_role[agent].items())
        }
        out[agent] = row
    return out


def _rating_fields(row: RatingRow) -> dict[str, Any]:
    return {
        "elo": row.elo,
        "elo_ci": [row.elo_low, row.elo_high] if row.elo_low is not None else None,
        "openskill_mu": row.mu,
        "openskill_sigma": row.sigma,
        "openskill_mu_ci": [row.mu_low, row.mu_high] if row.mu_low is not None else None,
    }


def kaggle_ratings(
    outcomes: Sequence[GameOutcome], figures: dict[str, Any], *, resamples: int = 0, seed: int = 0, gte: bool = True
) -> str | None:
    """Add Elo, OpenSkill (and GTE) of :func:`~mafialab.analysis.rate_games` to ``figures`` in place.

    Every game is rated (self-play included, as Kaggle's evaluator rates it) in ``(order,
    game_id)`` order. Per agent (overall board): ``elo``, ``openskill_mu``, ``openskill_sigma``,
    ``elo_ci`` and ``openskill_mu_ci`` (95 % bootstrap intervals over ``resamples`` resamples,
    ``None`` without); per agent and role (role board) the same under ``by_role``; with
    ``gte`` and ``polarix`` importable, ``gte`` = ``[rating, low, high]`` (Kaggle's GTE over
    per-role win-rate tasks, :data:`GTE_RESAMPLES` resamples seeded by ``seed``).

    Returns:
        Why there is no GTE (the extra's install hint, or a failed solve), else ``None``.
    """
    if not outcomes:
        return None
    ratings = rate_games(outcomes, boards=("overall", "role"), include_self_play=True, resamples=resamples, seed=seed)
    for row in ratings.boards["overall"]:
        if row.agent in figures:
            figures[row.agent].update(_rating_fields(row))
    for row in ratings.boards["role"]:
        by_role = figures.get(row.agent, {}).get("by_role", {})
        if row.group in by_role:
            by_role[row.group].update(_rating_fields(row))
    if not gte:
        return None
    if not gte_available():
        return GTE_EXTRA_HINT
    try:
        g = gte_ratings(outcomes, include_self_play=True, resamples=GTE_RESAMPLES, seed=seed)
    except Exception as e:  # a solver failure must not lose the report
        return f"GTE failed: {e}"
    for r in g.rows:
        if r.agent in figures:
            figures[r.agent]["gte"] = [r.rating, r.low, r.high]
    return None


def kaggle_figures(
    directories: Sequence[Any],
    problems: list[str] | None = None,
    *,
    ratings: bool = False,
    resamples: int = 0,
    seed: int = 0,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """:func:`kaggle_metrics` over every finished game under ``directories`` (read one at a time).

    Games that cannot be read or are unfinished are left out (a line in ``problems`` for the first).
    With ``ratings``, each agent's Elo, OpenSkill and GTE are added (:func:`kaggle_ratings`;
    why GTE is missing goes to ``notes``). Only a few numbers per game are held.
    """
    from mafialab.record import LogFormatError, LogVersionError, iter_game_dirs, read_game

    outcomes: list[GameOutcome] = []

    def games() -> Iterable[KaggleGame]:
        for root in directories:
            for d in iter_game_dirs(root):
                try:
                    g = kaggle_game(read_game(d))
                except (LogFormatError, LogVersionError, OSError) as err:
                    if problems is not None:
                        problems.append(f"{d}: {err}")
                    continue
                if g is not None:
                    if ratings:
                        outcomes.append(g.outcome())
                    yield g

    figures = kaggle_metrics(games())
    if ratings:
        note = kaggle_ratings(outcomes, figures, resamples=resamples, seed=seed)
        if note is not None and notes is not None:
            notes.append(note)
    return figures
