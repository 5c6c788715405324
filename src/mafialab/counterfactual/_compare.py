"""Reading batches of branches back, comparing two batches, and the sensitivity sweep."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mafialab.analysis import fisher_exact, newcombe
from mafialab.analysis import rate as _rate
from mafialab.record import GameLog, iter_game_dirs, read_game
from mafialab.rules import Team

TEAMS: tuple[Team, ...] = ("town", "mafia")


@dataclass
class BatchSummary:
    """Outcomes of one batch of branches read from disk.

    Attributes:
        batch: Batch id.
        parent_id: Parent game id.
        root_id: Root game id.
        step: Fork step (decision id), ``None`` for imported forks.
        intervention: The intervention record.
        games: Branch game ids.
        winners: Winner per branch (``None`` for an unfinished branch).
    """

    batch: str
    parent_id: str
    root_id: str
    step: int | None
    intervention: dict[str, Any]
    games: list[str] = field(default_factory=list)
    winners: list[str | None] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Finished branches (those with a winner): the n behind every rate."""
        return sum(1 for w in self.winners if w is not None)

    def wins(self, team: str) -> int:
        """Finished branches won by ``team``."""
        return sum(1 for w in self.winners if w == team)


def read_batches(path: Path) -> list[BatchSummary]:
    """Every batch of branches under ``path`` (branch directories, found recursively), by batch id.

    Root games (no ``parent`` header block) are skipped.
    """
    out: dict[str, BatchSummary] = {}
    for d in iter_game_dirs(Path(path)):
        g: GameLog = read_game(d)
        p = g.header.parent
        if p is None:
            continue
        b = out.setdefault(
            p.batch,
            BatchSummary(batch=p.batch, parent_id=p.game_id, root_id=p.root, step=p.step, intervention=p.intervention),
        )
        b.games.append(g.game_id)
        b.winners.append(g.winner)
    return sorted(out.values(), key=lambda b: (b.parent_id, b.step if b.step is not None else -1, b.batch))


def one_batch(path: Path, batch: str | None = None) -> BatchSummary:
    """The one batch of branches under ``path`` (the one with id ``batch`` when given).

    Args:
        path: A folder of branches (the ``--out`` of ``mafialab fork run``).
        batch: A batch id, when ``path`` holds several batches.

    Returns:
        The batch's :class:`BatchSummary` (its branches' winners, step and intervention).

    Raises:
        ValueError: ``path`` does not exist, holds no branches (of ``batch``), or holds
            several batches and ``batch`` is not given; the message starts with ``path``.
    """
    if not Path(path).exists():  # (iter_game_dirs finds no games in it: "no branches" hid the typo)
        raise ValueError(f"{path} does not exist: expected a folder of branches")
    found = read_batches(path)
    if batch is not None:
        found = [b for b in found if b.batch == batch]
    if not found:
        raise ValueError(f"{path}: no branches" + (f" of batch {batch}" if batch else ""))
    if len(found) > 1:
        ids = ", ".join(f"{b.batch} (step {b.step}, n={b.n})" for b in found)
        raise ValueError(f"{path}: holds {len(found)} batches ({ids}); name one with --batch-a/--batch-b")
    return found[0]


def rate(k: int, n: int) -> dict[str, Any]:
    """``{"k", "n", "p", "lo", "hi"}``: a proportion with its 95 % Wilson interval, as fork outputs write it.

    Computed by :func:`mafialab.analysis.rate` (``p``, ``lo``, ``hi`` None when ``n`` is 0);
    :meth:`mafialab.analysis.Rate.from_dict` reads it back.
    """
    r = _rate(k, n)
    return {"k": k, "n": n, "p": r.rate, "lo": r.lo, "hi": r.hi}


def compare_batches(
    a: Path | BatchSummary, b: Path | BatchSummary, batch_a: str | None = None, batch_b: str | None = None
) -> dict[str, Any]:
    """Compare the outcomes of two batches (``fork compare``).

    Per batch: P(each team wins) over finished branches with a Wilson interval; per team the
    difference A - B with a Newcombe interval and a two-sided Fisher exact p-value, and the
    n behind them.

    Returns:
        ``{"a": {batch, parent, step, intervention, n, unfinished, town: rate, mafia: rate},
        "b": {...}, "difference": {team: {"diff", "lo", "hi", "fisher_p"}}}``.

    Raises:
        ValueError: A directory does not exist or holds no branch, several batches and none was named, or both
            sides are the same batch (a comparison with itself says nothing).
    """
    sa = a if isinstance(a, BatchSummary) else one_batch(Path(a), batch_a)
    sb = b if isinstance(b, BatchSummary) else one_batch(Path(b), batch_b)
    if sa.batch == sb.batch:
        raise ValueError(f"both sides are batch {sa.batch}: compare two different batches")

    def side(s: BatchSummary) -> dict[str, Any]:
        return {
            "batch": s.batch,
            "parent": s.parent_id,
            "step": s.step,
            "intervention": s.intervention,
            "n": s.n,
            "unfinished": len(s.winners) - s.n,
            **{t: rate(s.wins(t), s.n) for t in TEAMS},
        }

    diff: dict[str, Any] = {}
    for t in TEAMS:
        k1, k2 = sa.wins(t), sb.wins(t)
        ci = newcombe(k1, sa.n, k2, sb.n)
        d = (k1 / sa.n - k2 / sb.n) if sa.n and sb.n else None
        lo, hi = ci if ci is not None else (None, None)
        diff[t] = {"diff": d, "lo": lo, "hi": hi, "fisher_p": fisher_exact(k1, sa.n, k2, sb.n).p}
    return {"a": side(sa), "b": side(sb), "difference": diff}
