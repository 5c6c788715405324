"""Ensembles of judges: per-player scores averaged over judges, with the spread between them."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from mafialab.judge._judge import DEFAULT_ATTEMPTS, judge_game, resolve_judges
from mafialab.models import ChatModel
from mafialab.record import JUDGE_AXES, GameLog, Verdict, latest_verdicts, read_game, read_verdicts
from mafialab.rules import Team


class AxisStat(BaseModel):
    """One axis of one player over the judges that scored it.

    Attributes:
        mean: Mean score (0-10).
        spread: Max − min over the judges (0 with one judge); the disagreement reported
            as the mitigation for a judge favouring its own model family.
        n: Judges that gave a score.
    """

    model_config = ConfigDict(frozen=True)

    mean: float
    spread: float
    n: int = Field(ge=1)


class EnsemblePlayer(BaseModel):
    """A player's ensemble scores (``None`` on an axis no judge scored or that does not apply)."""

    seat: int
    name: str
    role: str
    team: Team
    deception: AxisStat | None = None
    detection: AxisStat | None = None
    influence: AxisStat | None = None


class Ensemble(BaseModel):
    """The ensemble verdict of a game.

    Attributes:
        game_id: Game id.
        judges: Judges with an ``ok`` verdict (their latest one).
        missing: Judges whose latest verdict is ``missing``.
        players: Per-player ensemble scores, seat order (empty when no judge succeeded).
        mvp: The MVP named by most judges; ties go to the player named by the earliest
            judge in ``judges``; ``None`` if no judge named one.
        mvp_seat: Seat of ``mvp``.
        mvp_votes: Judges naming ``mvp``.
        headline: Headline of the first judge in ``judges`` that gave one.
    """

    game_id: str
    judges: list[str]
    missing: list[str] = Field(default_factory=list)
    players: list[EnsemblePlayer] = Field(default_factory=list)
    mvp: str | None = None
    mvp_seat: int | None = None
    mvp_votes: int = 0
    headline: str | None = None


def ensemble(verdicts: Sequence[Verdict], game_id: str | None = None) -> Ensemble:
    """Combine verdicts of one game (the latest per judge is used).

    Per player and axis: the mean and spread (max − min) of the integer scores of the judges
    that gave one.

    Args:
        verdicts: Verdicts of one game (any order, any status).
        game_id: Game id when ``verdicts`` may be empty.

    Returns:
        The ensemble.
    """
    latest = latest_verdicts(verdicts)
    ok = [v for v in latest if v.status == "ok"]
    gid = game_id or (latest[0].game_id if latest else "")
    out = Ensemble(game_id=gid, judges=[v.judge for v in ok], missing=[v.judge for v in latest if v.status != "ok"])
    if not ok:
        return out
    players = []
    for p in ok[0].players:
        fields: dict[str, AxisStat | None] = {}
        for axis in JUDGE_AXES:
            vals = [getattr(q, axis) for v in ok for q in v.players if q.seat == p.seat]
            vals = [x for x in vals if x is not None]
            fields[axis] = (
                AxisStat(mean=sum(vals) / len(vals), spread=float(max(vals) - min(vals)), n=len(vals)) if vals else None
            )
        players.append(EnsemblePlayer(seat=p.seat, name=p.name, role=p.role, team=p.team, **fields))
    out.players = players
    named = [(v.mvp_seat, v.mvp) for v in ok if v.mvp_seat is not None]
    if named:
        counts = Counter(s for s, _ in named)
        best = max(counts.values())
        seat, name = next((s, n) for s, n in named if counts[s] == best)
        out.mvp, out.mvp_seat, out.mvp_votes = name, seat, best
    out.headline = next((v.headline for v in ok if v.headline), None)
    return out


def game_ensemble(game_dir: Path) -> Ensemble:
    """The ensemble of the verdicts stored beside a game log."""
    vs = read_verdicts(Path(game_dir))
    return ensemble(vs, game_id=vs[0].game_id if vs else Path(game_dir).name)


async def judge_with_ensemble(
    game: GameLog | Path,
    judges: Sequence[ChatModel | str],
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    write: bool = True,
) -> tuple[list[Verdict], Ensemble]:
    """Judge a game with several judges concurrently and combine their verdicts.

    Args:
        game: A game log or directory.
        judges: Judge models or model strings.
        attempts: Calls per judge at most.
        write: Append each verdict to ``verdicts.jsonl``.

    Returns:
        ``(verdicts, ensemble)``, verdicts in the order of ``judges``.

    Raises:
        JudgeError: The game has not finished.
        ModelSpecError: A judge string cannot be resolved.
    """
    log_ = game if isinstance(game, GameLog) else read_game(Path(game))
    models = resolve_judges(judges)
    verdicts = list(await asyncio.gather(*(judge_game(log_, m, attempts=attempts, write=write) for m in models)))
    return verdicts, ensemble(verdicts, game_id=log_.game_id)
