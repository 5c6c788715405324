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
rate, KSR, WD-KSR. Elo, OpenSkill and the game-theoretic rating are in ``analysis._ratings``.

The figures read only the roster, the votes, the day eliminations and the end of a game, so
they apply to any elimination game, imported from Kaggle or played here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mafialab.record import GameLog


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
    """

    agents: tuple[str, ...]
    roles: tuple[str, ...]
    teams: tuple[str, ...]
    winner: str
    alive: frozenset[int]
    last_day: int
    day_votes: tuple[tuple[int, int, int | None], ...]
    exiled: dict[int, int] = field(default_factory=dict)


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
    )


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


def kaggle_figures(directories: Sequence[Any], problems: list[str] | None = None) -> dict[str, Any]:
    """:func:`kaggle_metrics` over every finished game under ``directories`` (read one at a time).

    Games that cannot be read or are unfinished are left out (a line in ``problems`` for the first).
    """
    from mafialab.record import LogFormatError, LogVersionError, iter_game_dirs, read_game

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
                    yield g

    return kaggle_metrics(games())
