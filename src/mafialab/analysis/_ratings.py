"""Ratings of agents from game results: Elo, OpenSkill and GTE, overall, per side and per role.

The input is neutral (:class:`GameOutcome`: game id, order key, per seat the agent, role,
team and whether it won), so a season's games and imported Kaggle Game Arena games feed the
same code. Three boards are rated from the same games:

- ``overall``: one rating per agent;
- ``side``: one rating per agent and team (an agent's town play and mafia play are rated as
  two players, as Foaster keeps wolf and villager Elo apart);
- ``role``: one rating per agent and role (``Doctor``, ``Seer`` …), the agents × per-role
  tasks of Kaggle's evaluator.

A game is a two-team match (town against mafia). The updates are those of Kaggle Game
Arena's werewolf evaluator (``kaggle_environments/envs/werewolf/eval/metrics.py`` of
``kaggle-environments`` 1.33.2, ``GameSetEvaluator._compute_elo_ratings`` and
``_compute_openskill_ratings``), applied to the games in order of their ``order`` key:

- **Elo**: every rating starts at 1200; each team's strength is the mean rating of its seats;
  the town's expected score is ``1 / (1 + 10 ** ((mafia − town) / 400))`` (exponent clipped
  to ±40); ``K = 32`` points times (result − expected) go to the town, split equally over its
  seats, and the same total is taken from the mafia's seats (zero-sum). A player at two seats
  of a team gets both shares.
- **OpenSkill**: Plackett-Luce with the library's defaults (``openskill.models.PlackettLuce``,
  ``mu = 25``, ``sigma = 25/3``; Weng & Lin 2011, "A Bayesian approximation method for online
  ranking", JMLR 12), the winning team ranked first; a player at several seats of a game keeps
  the update of its last seat (town seats first when the town won, else mafia seats first).

**Self-play** (one agent seated on both teams of a game) makes the match partly a match
against itself; such games are left out of every rating by default and counted apart
(``include_self_play=True`` keeps them, as Kaggle's evaluator does).

**Intervals.** Each rating carries a 95 % percentile interval from the cluster bootstrap over
games of :mod:`mafialab.analysis._stats` (:func:`bootstrap_weights`, :func:`percentile_ci`):
each resample draws the games with replacement and replays them in their order, a game drawn
``k`` times played ``k`` times in a row; a rating resting on fewer than two games has no
interval (:func:`no_interval_reason`).

**GTE** (:func:`gte_ratings`, needs the ``gte`` extra, ``polarix``): Kaggle's game-theoretic
rating, the agents' payoff in the maximum-entropy correlated equilibrium of the game between
agents and per-role win-rate tasks, averaged over bootstrap resamples as Kaggle computes it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mafialab.analysis._stats import bootstrap_weights, no_interval_reason, percentile_ci

ELO_START = 1200.0
"""Starting Elo of every player (Kaggle's evaluator, ``_default_elo``)."""
ELO_K = 32.0
"""Points exchanged per game (Kaggle's evaluator, ``k = 32``)."""
ELO_SCALE = 400.0
"""Rating difference for 10:1 odds."""
ELO_EXPONENT_CLIP = 40.0
"""Bound on ``(mafia − town) / 400`` (Kaggle's evaluator)."""
RATING_RESAMPLES = 1000
"""Bootstrap resamples of a rating interval (the replay of every resample is sequential)."""
RATING_CONFIDENCE = 0.95
Board = Literal["overall", "side", "role"]
BOARDS: tuple[Board, ...] = ("overall", "side", "role")
GTE_EXTRA_HINT = "GTE needs `pip install 'mafialab[gte]'`"


class SeatOutcome(BaseModel):
    """One seat of a rated game.

    Attributes:
        agent: Who played the seat (model string or roster entry name); the rated identity.
        role: Role name as the rule set spells it (``Villager``, ``Seer`` …).
        team: ``town`` or ``mafia``.
        won: Whether the seat's team won.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    agent: str = Field(min_length=1)
    role: str = Field(min_length=1)
    team: Literal["town", "mafia"]
    won: bool


class GameOutcome(BaseModel):
    """One finished game as the ratings read it.

    Attributes:
        game_id: Unique id.
        order: Order key; games are rated in increasing ``(order, game_id)``.
        seats: Every seat; both teams present; the seats of the winning team (and only those)
            have ``won`` true.

    Raises:
        pydantic.ValidationError: On a missing team, or ``won`` not matching one winning team.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    game_id: str = Field(min_length=1)
    order: float = 0.0
    seats: tuple[SeatOutcome, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _one_winner(self) -> GameOutcome:
        teams = {s.team for s in self.seats}
        if teams != {"town", "mafia"}:
            raise ValueError(f"game {self.game_id!r}: seats must hold both teams (got {sorted(teams)})")
        winners = {s.team for s in self.seats if s.won}
        if len(winners) != 1 or any(s.won != (s.team in winners) for s in self.seats):
            raise ValueError(f"game {self.game_id!r}: seats.won must be true for exactly the seats of one team")
        return self

    @property
    def winner(self) -> str:
        """The winning team."""
        return next(s.team for s in self.seats if s.won)

    @property
    def self_play(self) -> bool:
        """Whether an agent sits on both teams."""
        town = {s.agent for s in self.seats if s.team == "town"}
        return any(s.agent in town for s in self.seats if s.team == "mafia")


def outcomes_from_json(data: Mapping[str, Any] | Sequence[Any]) -> list[GameOutcome]:
    """Game outcomes from the neutral results JSON (``{"games": [GameOutcome, …]}`` or a list).

    Raises:
        ValueError: The data is not of that shape, or a game is invalid (the message names
            the game's index and field), or two games share an id.
    """
    games = data.get("games") if isinstance(data, Mapping) else data
    if not isinstance(games, Sequence) or isinstance(games, (str, bytes)):
        raise ValueError("results: expected a list of games under 'games'")
    out: list[GameOutcome] = []
    for i, g in enumerate(games):
        try:
            out.append(GameOutcome.model_validate(g))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"games.{i}{'.' + where if where else ''}: {first['msg']}") from None
    ids = [g.game_id for g in out]
    if len(set(ids)) != len(ids):
        dup = next(x for x in ids if ids.count(x) > 1)
        raise ValueError(f"games: game_id {dup!r} appears twice")
    return out


class RatingRow(BaseModel):
    """One player's ratings on one board.

    Attributes:
        agent: The agent.
        group: ``""`` on the overall board, the team on the side board, the role on the role board.
        games: Rated games this rating rests on; ``seats``: its seat-games in them.
        wins: Seat-games won; ``win_rate`` = wins / seats.
        elo: Elo after every rated game; ``elo_low``/``elo_high`` its 95 % bootstrap interval.
        mu, sigma: OpenSkill Plackett-Luce rating; ``mu_low``/``mu_high`` the interval of ``mu``.
        no_interval: Why there is no interval (fewer than two games), else ``None``.
        elo_overlaps_next / mu_overlaps_next: The interval overlaps the interval of the next
            lower rating of the same kind in this group (the ranking of the two is not settled);
            ``None`` for the last one or without intervals.
    """

    agent: str
    group: str = ""
    games: int
    seats: int
    wins: int
    win_rate: float
    elo: float
    elo_low: float | None = None
    elo_high: float | None = None
    mu: float
    sigma: float
    mu_low: float | None = None
    mu_high: float | None = None
    no_interval: str | None = None
    elo_overlaps_next: bool | None = None
    mu_overlaps_next: bool | None = None


class Ratings(BaseModel):
    """Every board of a set of games.

    Attributes:
        boards: Board name (``overall``, ``side``, ``role``) → rows, within each group best
            OpenSkill ``mu`` first (groups in name order).
        games_rated: Games in the ratings; ``self_play_games``: games with an agent on both
            teams (rated only when ``self_play_included``).
        resamples: Bootstrap resamples behind the intervals (0: none).
    """

    boards: dict[str, list[RatingRow]]
    games_rated: int
    self_play_games: int
    self_play_included: bool
    resamples: int


def _player(seat: SeatOutcome, board: str) -> tuple[str, str]:
    if board == "overall":
        return (seat.agent, "")
    return (seat.agent, seat.team if board == "side" else seat.role)


def _teams(game: GameOutcome, board: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    town = [_player(s, board) for s in game.seats if s.team == "town"]
    mafia = [_player(s, board) for s in game.seats if s.team == "mafia"]
    return town, mafia


OPENSKILL_MU = 25.0
"""OpenSkill starting ``mu`` (``openskill.models.PlackettLuce`` default)."""
OPENSKILL_SIGMA = 25.0 / 3.0
OPENSKILL_BETA = 25.0 / 6.0
OPENSKILL_TAU = 25.0 / 300.0
OPENSKILL_KAPPA = 0.0001


class _Match:
    """One game on one board as player indices.

    The seats of the winning and of the losing team, in seat order.
    """

    def __init__(self, game: GameOutcome, board: str, index: dict[tuple[str, str], int]) -> None:
        win = [index[_player(s, board)] for s in game.seats if s.won]
        lose = [index[_player(s, board)] for s in game.seats if not s.won]
        self.town_won = game.winner == "town"
        self.win, self.lose = np.array(win), np.array(lose)


def _elo_update(elo: np.ndarray, m: _Match, rows: np.ndarray) -> None:
    """Kaggle's team Elo update (``GameSetEvaluator._compute_elo_ratings``) on resamples ``rows``."""
    town, mafia = (m.win, m.lose) if m.town_won else (m.lose, m.win)
    e = elo[rows]
    avg_t = e[:, town].mean(axis=1)
    avg_m = e[:, mafia].mean(axis=1)
    exponent = np.clip((avg_m - avg_t) / ELO_SCALE, -ELO_EXPONENT_CLIP, ELO_EXPONENT_CLIP)
    total = ELO_K * ((1.0 if m.town_won else 0.0) - 1.0 / (1.0 + 10.0**exponent))
    for p in town:  # a player at two seats gets both shares
        e[:, p] += total / len(town)
    for p in mafia:
        e[:, p] -= total / len(mafia)
    elo[rows] = e


def _openskill_update(mu: np.ndarray, sigma: np.ndarray, m: _Match, rows: np.ndarray) -> None:
    """Plackett-Luce update of a two-team game, winner ranked first, on resamples ``rows``.

    The computation of ``openskill.models.PlackettLuce.rate`` (6.x, default options) for two
    teams, as Kaggle's evaluator calls it (one rating object per player, so a player at ``k``
    seats of a game is one object seen ``k`` times): ``tau`` is added to its sigma once per
    seat; each team counts the sum of its seats' mu and sigma squared; ``c``, ``omega`` and
    ``delta`` (with ``gamma = sqrt(team sigma squared) / c``) per team; then the seats, winners
    first, each move the player's current mu and sigma in turn (``kappa`` floor). Equality
    with the library is tested.
    """
    seats = np.concatenate([m.win, m.lose])
    cur_mu = mu[rows]
    cur_s2 = sigma[rows] ** 2
    for p in seats:
        cur_s2[:, p] += OPENSKILL_TAU**2
    nw = len(m.win)
    team_mu = (cur_mu[:, m.win].sum(axis=1), cur_mu[:, m.lose].sum(axis=1))
    team_s2 = (cur_s2[:, m.win].sum(axis=1), cur_s2[:, m.lose].sum(axis=1))
    c = np.sqrt(team_s2[0] + team_s2[1] + 2 * OPENSKILL_BETA**2)
    e_w, e_l = np.exp(team_mu[0] / c), np.exp(team_mu[1] / c)
    p_w, p_l = e_w / (e_w + e_l), e_l / (e_w + e_l)
    omega = ((1 - p_w) * team_s2[0] / c, -p_l * team_s2[1] / c)
    delta = (
        p_w * (1 - p_w) * team_s2[0] / c**2 * (np.sqrt(team_s2[0]) / c),
        p_l * (1 - p_l) * team_s2[1] / c**2 * (np.sqrt(team_s2[1]) / c),
    )
    cur_sigma = np.sqrt(cur_s2)
    for k, p in enumerate(seats):
        t = 0 if k < nw else 1
        share = cur_sigma[:, p] ** 2 / team_s2[t]
        cur_mu[:, p] += share * omega[t]
        cur_sigma[:, p] *= np.sqrt(np.maximum(1 - share * delta[t], OPENSKILL_KAPPA))
    mu[rows], sigma[rows] = cur_mu, cur_sigma


def _replay(
    matches: Sequence[_Match], n_players: int, repeats: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Elo, mu and sigma ``(resamples, players)`` after replaying the games in order.

    Game ``j`` is played ``repeats[r, j]`` times in a row in resample ``r``.
    """
    n = repeats.shape[0]
    elo = np.full((n, n_players), ELO_START)
    mu = np.full((n, n_players), OPENSKILL_MU)
    sigma = np.full((n, n_players), OPENSKILL_SIGMA)
    for j, m in enumerate(matches):
        for k in range(int(repeats[:, j].max(initial=0))):
            rows = np.flatnonzero(repeats[:, j] > k)
            _elo_update(elo, m, rows)
            _openskill_update(mu, sigma, m, rows)
    return elo, mu, sigma


def _overlap_flags(rows: list[RatingRow], value: str, low: str, high: str, flag: str) -> None:
    ranked = sorted(rows, key=lambda r: -getattr(r, value))
    for a, b in pairwise(ranked):
        lo_a, hi_b = getattr(a, low), getattr(b, high)
        setattr(a, flag, None if lo_a is None or hi_b is None else bool(lo_a <= hi_b))


def _board_rows(games: Sequence[GameOutcome], board: str, weights: np.ndarray | None) -> list[RatingRow]:
    players = sorted({_player(s, board) for g in games for s in g.seats})
    index = {p: i for i, p in enumerate(players)}
    matches = [_Match(g, board, index) for g in games]
    played = np.zeros((len(games), len(players)))
    seats = np.zeros((len(players), 2), dtype=int)
    for j, g in enumerate(games):
        for s in g.seats:
            i = index[_player(s, board)]
            played[j, i] = 1
            seats[i] += (1, int(s.won))
    elo, mu, sigma = _replay(matches, len(players), np.ones((1, len(games)), dtype=int))
    if weights is not None:
        b_elo, b_mu, _ = _replay(matches, len(players), weights)
        absent = (weights @ played) == 0  # not drawn in that resample: no rating
        b_elo[absent], b_mu[absent] = np.nan, np.nan
    rows = []
    for i, p in enumerate(players):
        n_games = int(played[:, i].sum())
        why = no_interval_reason(n_games) if weights is not None else "no bootstrap"
        e_ci = percentile_ci(b_elo[:, i], RATING_CONFIDENCE) if why is None else None
        m_ci = percentile_ci(b_mu[:, i], RATING_CONFIDENCE) if why is None else None
        rows.append(
            RatingRow(
                agent=p[0], group=p[1], games=n_games, seats=int(seats[i, 0]), wins=int(seats[i, 1]),
                win_rate=seats[i, 1] / seats[i, 0], elo=float(elo[0, i]), mu=float(mu[0, i]),
                sigma=float(sigma[0, i]), elo_low=e_ci[0] if e_ci else None, elo_high=e_ci[1] if e_ci else None,
                mu_low=m_ci[0] if m_ci else None, mu_high=m_ci[1] if m_ci else None, no_interval=why,
            )
        )  # fmt: skip
    out: list[RatingRow] = []
    for group in sorted({r.group for r in rows}):
        in_group = sorted((r for r in rows if r.group == group), key=lambda r: (-r.mu, -r.elo, r.agent))
        _overlap_flags(in_group, "elo", "elo_low", "elo_high", "elo_overlaps_next")
        _overlap_flags(in_group, "mu", "mu_low", "mu_high", "mu_overlaps_next")
        out += in_group
    return out


def rated_games(games: Iterable[GameOutcome], include_self_play: bool = False) -> tuple[list[GameOutcome], int]:
    """The games the ratings use, in rating order, and the number of self-play games.

    Returns:
        ``(games sorted by (order, game_id), self-play games)``; self-play games are in the
        list only with ``include_self_play``.
    """
    ordered = sorted(games, key=lambda g: (g.order, g.game_id))
    n_self = sum(g.self_play for g in ordered)
    return ([g for g in ordered if include_self_play or not g.self_play], n_self)


def rate_games(
    games: Iterable[GameOutcome],
    *,
    boards: Sequence[Board] = BOARDS,
    include_self_play: bool = False,
    resamples: int = RATING_RESAMPLES,
    seed: int = 0,
) -> Ratings:
    """Elo and OpenSkill of every agent on each board, with bootstrap intervals over games.

    Definitions and sources: the module docstring (Kaggle Game Arena's evaluator, OpenSkill
    Plackett-Luce). Point values equal Kaggle's evaluator on the same games in the same order
    (``include_self_play=True``; tested against figures frozen from ``kaggle-environments``
    1.33.2 in ``tests/data/ratings``).

    Args:
        games: Finished games (any order; rated in ``(order, game_id)`` order).
        boards: Which boards to rate (``overall``, ``side``, ``role``).
        include_self_play: Rate games with an agent on both teams too.
        resamples: Bootstrap resamples (0: no intervals).
        seed: Seed of the resampling.

    Returns:
        :class:`Ratings`; a board is empty when no game is rated.

    Raises:
        ValueError: An unknown board name.
    """
    bad = [b for b in boards if b not in BOARDS]
    if bad:
        raise ValueError(f"boards: unknown board {bad[0]!r} (known: {', '.join(BOARDS)})")
    used, n_self = rated_games(games, include_self_play)
    weights = bootstrap_weights(len(used), resamples, seed) if used and resamples > 0 else None
    return Ratings(
        boards={b: (_board_rows(used, b, weights) if used else []) for b in boards},
        games_rated=len(used),
        self_play_games=n_self,
        self_play_included=include_self_play,
        resamples=0 if weights is None else resamples,
    )


# --- GTE ---------------------------------------------------------------------------------


class GteRow(BaseModel):
    """One agent's GTE rating: the mean over resamples and the 95 % percentile interval."""

    agent: str
    rating: float
    low: float | None = None
    high: float | None = None
    games: int


class GteRatings(BaseModel):
    """Kaggle's game-theoretic rating of every agent.

    Attributes:
        rows: Best rating first.
        tasks: The per-role win-rate tasks (``WinRate-<role>``).
        resamples: Bootstrap resamples (the rating is their mean, as Kaggle computes it).
    """

    rows: list[GteRow]
    tasks: list[str]
    resamples: int
    games_rated: int


def gte_available() -> bool:
    """Whether ``polarix`` (the ``gte`` extra) can be imported."""
    import importlib.util

    return importlib.util.find_spec("polarix") is not None


def _gte_tensor(games: Sequence[GameOutcome], agents: list[str], tasks: list[str]) -> np.ndarray:
    """``(games, agents, tasks)`` win (1/0) of the agent in that role, NaN where it did not play it."""
    a_idx = {a: i for i, a in enumerate(agents)}
    t_idx = {t: i for i, t in enumerate(tasks)}
    x = np.full((len(games), len(agents), len(tasks)), np.nan)
    for g_i, g in enumerate(games):
        for s in g.seats:
            x[g_i, a_idx[s.agent], t_idx[f"WinRate-{s.role}"]] = 1.0 if s.won else 0.0
    return x


def _weighted_mean_std(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample std over the games of a resample with game counts ``w``.

    Kaggle's formulas (``_compute_mean_std_sem``); 0 where there is no value.
    """
    mask = ~np.isnan(x)
    clean = np.where(mask, x, 0.0)
    count = np.einsum("g,gat->at", w, mask.astype(float))
    total = np.einsum("g,gat->at", w, clean)
    total_sq = np.einsum("g,gat->at", w, clean**2)
    mean = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
    mean_sq = np.divide(total_sq, count, out=np.zeros_like(total), where=count > 0)
    var = np.maximum(0.0, mean_sq - mean**2)
    sample_var = np.divide(var * count, count - 1, out=np.zeros_like(var), where=count > 1)
    return mean, np.sqrt(sample_var)


def _gte_solve(mean: np.ndarray, std: np.ndarray, agents: list[str], tasks: list[str], rng: np.random.Generator):  # type: ignore[no-untyped-def]
    """Agents' ratings in the max-entropy CE of one agents × tasks game.

    Kaggle's ``_gte_bootstrap_worker_fast``: a column equal for every agent gets noise of 1e-6.
    """
    import polarix as plx

    mean, std = mean.copy(), std.copy()
    for j in range(mean.shape[1]):
        if np.ptp(mean[:, j]) < 1e-9:
            mean[:, j] += rng.random(mean.shape[0]) * 1e-6
            std[:, j] += rng.random(mean.shape[0]) * 1e-6
    game = plx.agent_vs_task_game(
        agents=agents, tasks=tasks, agent_vs_task=mean, agent_vs_task_stddev=std,
        task_player="metric", normalizer="winrate",
    )  # fmt: skip
    res = plx.solve(game, plx.ce_maxent, disable_progress_bar=True)
    return list(game.actions[1]), np.asarray(res.ratings[1], dtype=float)


def gte_ratings(
    games: Iterable[GameOutcome], *, include_self_play: bool = False, resamples: int = 100, seed: int = 42
) -> GteRatings:
    """Kaggle Game Arena's GTE rating of each agent over per-role win-rate tasks.

    Source: ``kaggle_environments/envs/werewolf/eval/metrics.py`` (1.33.2),
    ``GameSetEvaluator._run_gte_evaluation`` with ``gte_tasks="role_win_rates"``: the tasks are
    ``WinRate-<role>`` for each role in the games (in name order); for each bootstrap resample
    of games (:func:`bootstrap_weights` with this seed draws the same games as Kaggle's
    ``default_rng(seed).integers``) the agents × tasks matrix of mean wins and their standard
    deviations is solved with ``polarix`` (``agent_vs_task_game``, ``normalizer="winrate"``,
    ``solve(..., ce_maxent)``: the maximum-entropy correlated equilibrium; Marris et al. 2025,
    "Re-evaluating open-ended evaluation of large language models", ICLR); an agent's
    rating is its mean payoff over the resamples and the interval the 2.5-97.5 percentiles.

    Args:
        games: Finished games.
        include_self_play: Rate self-play games too (Kaggle's evaluator does).
        resamples: Bootstrap resamples (Kaggle's ``--gte-samples``), >= 1.
        seed: Seed of the resampling (Kaggle's default 42).

    Raises:
        ImportError: ``polarix`` is missing (install ``mafialab[gte]``).
        ValueError: No game to rate.
    """
    if not gte_available():
        raise ImportError(GTE_EXTRA_HINT)
    used, _ = rated_games(games, include_self_play)
    if not used:
        raise ValueError("gte: no game to rate")
    agents = sorted({s.agent for g in used for s in g.seats})
    tasks = [f"WinRate-{r}" for r in sorted({s.role for g in used for s in g.seats})]
    x = _gte_tensor(used, agents, tasks)
    rng = np.random.default_rng(seed)
    per_sample: list[dict[str, float]] = []
    for w in bootstrap_weights(len(used), resamples, seed):
        mean, std = _weighted_mean_std(x, w.astype(float))
        names, vals = _gte_solve(mean, std, agents, tasks, rng)
        per_sample.append(dict(zip(names, vals.tolist(), strict=True)))
    played = {a: len({g.game_id for g in used if any(s.agent == a for s in g.seats)}) for a in agents}
    rows = []
    for a in agents:
        v = np.array([d.get(a, math.nan) for d in per_sample])
        ci = percentile_ci(v, RATING_CONFIDENCE) if resamples > 1 else None
        rows.append(GteRow(agent=a, rating=float(np.nanmean(v)), low=ci[0] if ci else None,
                           high=ci[1] if ci else None, games=played[a]))  # fmt: skip
    rows.sort(key=lambda r: (-r.rating, r.agent))
    return GteRatings(rows=rows, tasks=tasks, resamples=resamples, games_rated=len(used))
