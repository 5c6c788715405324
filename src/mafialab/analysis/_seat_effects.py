"""Name and speaking-position effects on winning, estimated from a season's own games.

A logistic model (``statsmodels`` GLM, binomial family, logit link) of a seat-game's win on
its team and either its speaking position or its table name, with standard errors
clustered by game (the seats of one game share its outcome). Mini-Mafia measured both a
name bias and a last-speaker advantage; Kaggle's Game Arena shuffles names against the
first. Definitions and how to read them: ``docs/arena.md``, "Name and speaking-position
effects".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mafialab.record import GameLog

MIN_GAMES = 30
"""Counted games below which no effect is estimated (the report says so instead)."""
CONFIDENCE = 0.95


def opening_order(game: GameLog) -> list[int]:
    """Seats in the order they spoke in the first discussion round of the first day (round >= 1).

    Empty when no day discussion was played. The intro day (round 0, seat order) is skipped.
    """
    first = None
    order: list[int] = []
    for e in game.events:
        if e.kind != "speech" or e.round < 1 or getattr(e, "discussion", 1) != 1:
            continue
        if first is None:
            first = e.round
        if e.round != first:
            break
        seat = int(e.seat)  # type: ignore[attr-defined]
        if seat not in order:
            order.append(seat)
    return order


def seat_rows(game: GameLog) -> list[dict[str, Any]]:
    """One row per seat of a finished game: ``game``, ``won``, ``mafia``, ``name``, ``position``, ``last``.

    ``position`` is the seat's place in the first day's opening round as a share (0 first,
    1 last; ``None`` when it did not speak there), ``last`` whether it spoke last there.
    """
    order = opening_order(game)
    k = len(order)
    rows = []
    for s, info in enumerate(game.header.roster):
        pos = order.index(s) if s in order else None
        rows.append(
            {
                "game": game.game_id,
                "won": int(info.team == game.winner),
                "mafia": int(info.team == "mafia"),
                "name": info.name,
                "position": None if pos is None or k < 2 else pos / (k - 1),
                "last": None if pos is None or k < 2 else int(pos == k - 1),
            }
        )
    return rows


def _fit(y: np.ndarray, x: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Logit fit with game-clustered covariance: ``(coefficients, covariance)``."""
    import statsmodels.api as sm

    res = sm.GLM(y, x, family=sm.families.Binomial()).fit(cov_type="cluster", cov_kwds={"groups": groups})
    return np.asarray(res.params), np.asarray(res.cov_params())


def _effect(b: float, var: float) -> dict[str, Any]:
    from scipy.stats import norm

    se = math.sqrt(max(var, 0.0))
    z = norm.ppf(0.5 + CONFIDENCE / 2)
    p = float(2 * norm.sf(abs(b) / se)) if se > 0 else None
    return {
        "log_odds": b,
        "odds_ratio": math.exp(b),
        "low": math.exp(b - z * se),
        "high": math.exp(b + z * se),
        "p": p,
    }


def _codes(groups: Sequence[str]) -> np.ndarray:
    index: dict[str, int] = {}
    return np.array([index.setdefault(g, len(index)) for g in groups])


def _cluster(r: dict[str, Any]) -> str:
    return str(r.get("cluster") or r["game"])


def _position(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    use = [r for r in rows if r[key] is not None]
    if len({_cluster(r) for r in use}) < MIN_GAMES:
        return {"no_estimate": f"speaking order known in fewer than {MIN_GAMES} independent games"}
    y = np.array([r["won"] for r in use], dtype=float)
    x = np.column_stack([np.ones(len(use)), [r["mafia"] for r in use], [float(r[key]) for r in use]])
    try:
        b, v = _fit(y, x, _codes([_cluster(r) for r in use]))
    except Exception as err:  # separation, singular design: said, not guessed
        return {"no_estimate": f"the model could not be fitted ({type(err).__name__}: {err})"}
    return {**_effect(float(b[2]), float(v[2, 2])), "seat_games": len(use)}


def _names(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from scipy.stats import f as f_dist

    names = sorted({r["name"] for r in rows})
    if len(names) < 2:
        return {"no_estimate": "one table name only"}
    k = len(names)
    # sum (deviation) coding: each name's effect is its log-odds against the average name
    dev = np.zeros((len(rows), k - 1))
    for i, r in enumerate(rows):
        j = names.index(r["name"])
        if j < k - 1:
            dev[i, j] = 1.0
        else:
            dev[i, :] = -1.0
    y = np.array([r["won"] for r in rows], dtype=float)
    x = np.column_stack([np.ones(len(rows)), [r["mafia"] for r in rows], dev])
    try:
        groups = _codes([_cluster(r) for r in rows])
        b, v = _fit(y, x, groups)
        bn, vn = b[2:], v[2:, 2:]
        stat = float(bn @ np.linalg.solve(vn, bn))
    except Exception as err:
        return {"no_estimate": f"the model could not be fitted ({type(err).__name__}: {err})"}
    contrast = np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])  # name j's effect = contrast[j] · bn
    per = []
    for j, nm in enumerate(names):
        c = contrast[j]
        per.append({"name": nm, **_effect(float(c @ bn), float(c @ vn @ c))})
    largest = max(per, key=lambda e: abs(e["log_odds"]))
    g = int(groups.max()) + 1
    # few clusters make the clustered Wald chi-square anti-conservative: its F form on (k-1, G-1) df
    p = float(f_dist.sf(stat / (k - 1), k - 1, g - 1))
    return {"wald_chi2": stat, "df": k - 1, "clusters": g, "p": p, "largest": largest, "per_name": per}


def seat_effects(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Name and speaking-position effects on winning, with 95 % intervals.

    Three logistic models of ``won`` (GLM binomial, logit link, ``statsmodels``), each with the
    seat's team (``mafia``) as a covariate and covariance clustered by game:

    - ``position``: on the seat's place in the first day's opening round (0 first … 1
      last); the odds ratio compares always-last to always-first;
    - ``last_speaker``: on whether the seat spoke last in that round;
    - ``names``: on the seat's table name (deviation coding: each name against the average
      name); a Wald test that no name matters (``wald_chi2``, ``df``; ``p`` from its F form,
      ``wald_chi2 / df`` on ``(df, clusters - 1)`` degrees of freedom, as few clusters make the
      chi-square anti-conservative), every name's odds ratio and the largest.

    Args:
        rows: :func:`seat_rows` of the counted games (or synthetic rows with those keys), each
            with an optional ``cluster`` key (default: ``game``).

    Returns:
        ``{games, seat_games, min_games, position, last_speaker, names}``; an effect is
        ``{log_odds, odds_ratio, low, high, p, ...}`` or ``{no_estimate: why}`` (fewer than
        :data:`MIN_GAMES` clusters, or a fit that fails, e.g. perfect separation).
    """
    games = len({r["game"] for r in rows})
    clusters = len({_cluster(r) for r in rows})
    out: dict[str, Any] = {"games": games, "clusters": clusters, "seat_games": len(rows), "min_games": MIN_GAMES}
    if clusters < MIN_GAMES:
        what = f"{clusters} counted games" if clusters == games else f"{clusters} deal blocks in {games} games"
        why = f"too few games: {what}; an estimate needs {MIN_GAMES}"
        return {**out, **{k: {"no_estimate": why} for k in ("position", "last_speaker", "names")}}
    return {**out, "position": _position(rows, "position"), "last_speaker": _position(rows, "last"),
            "names": _names(rows)}  # fmt: skip
