"""The name and speaking-position effects as table rows (``season leaderboard``, ``leaderboard.md``).

The figures are computed once, by :func:`mafialab.analysis.seat_effects`; this only words them.
"""

from __future__ import annotations

from typing import Any

EFFECTS_NOTE = (
    "odds ratio of winning, team held fixed, 95% interval clustered by game (by deal block with duplicate "
    "deals or role rotation); 1 = no effect; an interval that excludes 1 says the effect is there"
)


def _or(e: dict[str, Any]) -> str:
    return f"{e['odds_ratio']:.2f} [{e['low']:.2f}, {e['high']:.2f}]"


def _p(e: dict[str, Any]) -> str:
    return "–" if e.get("p") is None else f"{e['p']:.3f}"


def effect_rows(effects: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: position, last speaker, names (joint test and the largest name effect).

    An effect without an estimate (too few games, a failed fit) shows the reason instead of a
    number.
    """
    head = ["effect", "odds ratio [95% interval]", "p", "note"]
    rows = []
    for key, label in (("position", "speaking position (last vs first)"), ("last_speaker", "speaking last")):
        e = effects.get(key) or {}
        if "no_estimate" in e:
            rows.append([label, "–", "–", e["no_estimate"]])
        else:
            rows.append([label, _or(e), _p(e), f"{e['seat_games']} seat-games, first day's opening round"])
    e = effects.get("names") or {}
    if "no_estimate" in e:
        rows.append(["table name", "–", "–", e["no_estimate"]])
    else:
        big = e["largest"]
        rows.append(
            [
                "table name",
                f"{big['name']}: {_or(big)}",
                f"{e['p']:.3f}",
                f"Wald χ²={e['wald_chi2']:.1f}, df={e['df']} (no name matters); the largest name effect, "
                "against the average name",
            ]
        )
    return head, rows
