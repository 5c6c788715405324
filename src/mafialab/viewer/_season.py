"""Seasons in the viewer: leaderboard, verdicts (headline, recap, MVP, scores) and per-game links."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mafialab.arena import INDEX_FILE, SeasonIndex, leaderboard_rows
from mafialab.judge import game_ensemble
from mafialab.record import LogFormatError, latest_verdicts, read_verdicts

log = logging.getLogger(__name__)


def _axis(x: Any) -> float | None:
    return None if x is None else round(float(x.mean), 2)


def season_payloads(
    root: Path, rows: Sequence[dict[str, Any]], warnings: list[str] | None = None
) -> list[dict[str, Any]]:
    """Every season under ``root`` (an ``index.json`` written by ``mafialab season``).

    Args:
        root: The directory the site is built from.
        rows: The dashboard rows (a game links to its row by ``game_id``, or ``id``).
        warnings: Receives one line per ``index.json`` that is not a readable season index.

    Returns:
        ``[{"name", "rules", "planned", "counted", "replacements", "dir", "leaderboard":
        {"head", "rows"}, "games": [{"slot", "game_id", "key" (site key of the game, or
        None when it is not in the site), "winner", "winner_name" (the rule set's team name),
        "rounds", "degraded", "counted", "headline", "recap", "mvp", "mvp_entry", "judges", "missing",
        "scores": [{"name",
        "entry", "role", "team", "deception", "detection", "influence"}]}]}]``; judge text is
        model output (the page escapes it).
    """
    by_id = {r.get("game_id", r["id"]): r["id"] for r in rows}
    out = []
    for path in sorted(Path(root).rglob(INDEX_FILE)):
        try:
            idx = SeasonIndex.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError) as err:
            msg = f"{path}: not a season index ({type(err).__name__}); not shown"
            log.info(msg)
            if warnings is not None and '"season_index"' in path.read_text(encoding="utf-8", errors="replace"):
                warnings.append(msg)
            continue
        if idx.kind != "season_index":
            continue
        season_dir = path.parent
        games = []
        for g in idx.games:
            gdir = season_dir / g.path
            scores: list[dict[str, Any]] = []
            recap = None
            judges: list[str] = []
            missing: list[str] = []
            entries = dict(enumerate(g.seats))
            if gdir.is_dir():
                try:
                    ens = game_ensemble(gdir)
                    judges, missing = ens.judges, ens.missing
                    scores = [
                        {"name": p.name, "entry": entries.get(p.seat), "role": p.role, "team": p.team,
                         "deception": _axis(p.deception), "detection": _axis(p.detection),
                         "influence": _axis(p.influence)}
                        for p in ens.players
                    ]  # fmt: skip
                    ok = [v for v in latest_verdicts(read_verdicts(gdir)) if v.status == "ok" and v.recap]
                    recap = ok[0].recap if ok else None
                except (LogFormatError, ValidationError, OSError) as err:
                    log.warning("%s: verdicts unreadable: %s", gdir, err)
            games.append(
                {"slot": g.slot, "game_id": g.game_id, "key": by_id.get(g.game_id), "winner": g.winner,
                 "winner_name": g.winner_name, "rounds": g.rounds, "degraded": g.degraded, "counted": g.counted,
                 "headline": g.headline,
                 "recap": recap, "mvp": g.mvp, "mvp_entry": g.mvp_entry, "judges": judges, "missing": missing,
                 "scores": scores}
            )  # fmt: skip
        head, board = leaderboard_rows(idx)
        try:
            where = season_dir.relative_to(root).as_posix() or season_dir.name
        except ValueError:
            where = season_dir.as_posix()
        out.append(
            {"name": idx.season, "rules": idx.rules_id, "planned": idx.games_planned, "counted": idx.games_counted,
             "replacements": idx.replacements, "dir": where, "leaderboard": {"head": head, "rows": board},
             "games": games}
        )  # fmt: skip
    return out
