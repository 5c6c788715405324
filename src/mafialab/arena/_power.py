"""Power for planning: how many games give each entry a win-rate interval of a chosen width.

``season plan FILE --interval-width W --pilot DIR | --prior-sd X``; the formula and its
assumptions are in ``docs/arena.md``, "Power for planning".
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from mafialab.arena._leaderboard import build_index

CONFIDENCE = 0.95


def pilot_sd(season_dir: Path) -> tuple[float, int]:
    """The pooled within-entry standard deviation of a seat-game's win, from a pilot season.

    ``sqrt(sum_e k_e (n_e - k_e) / n_e / sum_e (n_e - 1))`` over the entries with ``n_e >= 2``
    seat-games (``k_e`` wins): the sample variance of the 0/1 win of a seat-game around its
    entry's own win rate, pooled over entries.

    Returns:
        ``(sd, seat_games)``: the estimate and the seat-games it rests on.

    Raises:
        SeasonError: Not a season directory.
        ValueError: Fewer than two seat-games for every entry (no variance to estimate).
    """
    index = build_index(season_dir)
    ss = 0.0
    dof = 0
    n_all = 0
    for e in index.leaderboard:
        k, n = e.overall.wins, e.overall.n
        if n >= 2:
            ss += k * (n - k) / n
            dof += n - 1
            n_all += n
    if dof == 0 or ss == 0:
        raise ValueError(
            f"--pilot: {season_dir} shows no variance to plan from (no entry with two or more counted "
            "seat-games, or every entry won all or none of them); give --prior-sd instead"
        )
    return math.sqrt(ss / dof), n_all


def games_needed(
    width: float, sd: float, n_entries: int, n_seats: int, confidence: float = CONFIDENCE
) -> dict[str, Any]:
    """Games for a normal-approximation interval of ``width`` on every entry's win rate.

    ``n = ceil((2 z sd / W)^2)`` seat-games per entry (``z`` the two-sided normal quantile of
    ``confidence``: 1.96 at 95 %), and ``games = ceil(n · E / N)`` since each game gives its
    ``N`` seats to ``E`` entries evenly (the seating plan's balance).

    Args:
        width: Full interval width on the win-rate scale (0 < W <= 1; 0.2 = ±10 points).
        sd: Standard deviation of one seat-game's win (0 < sd <= 0.5; 0.5 is the largest a
            0/1 outcome has, a safe prior).
        n_entries: Roster size ``E``.
        n_seats: Seats per game ``N``.
        confidence: Interval confidence (0-1).

    Returns:
        ``{width, confidence, z, sd, seat_games_per_entry, games}``.

    Raises:
        ValueError: A value out of range (the message names the option).
    """
    from scipy.stats import norm

    if not 0 < width <= 1:
        raise ValueError(f"--interval-width: {width} is not a win-rate interval width in (0, 1]")
    if not 0 < sd <= 0.5:
        raise ValueError(f"--prior-sd: {sd} is not the standard deviation of a 0/1 win, in (0, 0.5]")
    z = float(norm.ppf(0.5 + confidence / 2))
    per_entry = math.ceil((2 * z * sd / width) ** 2 - 1e-9)
    return {
        "width": width,
        "confidence": confidence,
        "z": z,
        "sd": sd,
        "seat_games_per_entry": per_entry,
        "games": math.ceil(per_entry * n_entries / n_seats - 1e-9),
    }
