"""The summaries of many games, in order: computed here or as Ray tasks, with the report's inclusion rule.

Above :mod:`mafialab.analysis._summary` (one game's summary, its cache) and
:mod:`mafialab.analysis._ray` (summaries as Ray tasks), which both build on the former.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

from mafialab.analysis._data import RepeatedIds
from mafialab.analysis._metrics import Method, get_method
from mafialab.analysis._ray import ray_summaries
from mafialab.analysis._summary import GameSummary, SummaryCache, cached_summary
from mafialab.record import LogFormatError, iter_game_dirs, no_games_message, none_readable_message

log = logging.getLogger(__name__)


def map_summaries(
    dirs: Sequence[Path],
    method: Method | str = "default",
    seat_keys: Sequence[str] = (),
    cache: SummaryCache | None = None,
    *,
    ray: str | None = None,
) -> Iterator[GameSummary | LogFormatError]:
    """Each game's summary (:func:`cached_summary`), or why it cannot be read, in the order of ``dirs``.

    Nothing else is applied (no branch rule, no repeated-id rule: :func:`iter_summaries`).

    Args:
        dirs: Game directories.
        method: ``"default"``, ``"mafiascope"`` or a :class:`Method`.
        seat_keys: Seat keys to compute per-group statistics for.
        cache: Where summaries are read and stored; ``None``: always computed, nothing stored.
        ray: A Ray cluster's address: the summaries the cache lacks are computed as Ray tasks
            (:func:`mafialab.analysis._ray.ray_summaries`); ``None``: computed here.

    Yields:
        Per directory, its summary or its :class:`~mafialab.record.LogFormatError`.

    Raises:
        ImportError: ``ray`` given and Ray is not installed (the message says how to install it).
        mafialab.harness.RayConnectError: No cluster at ``ray``.
    """
    method = get_method(method) if isinstance(method, str) else method
    if ray is not None:
        yield from ray_summaries(dirs, method, seat_keys, cache, address=ray)
        return
    for d in dirs:
        try:
            yield cached_summary(d, method, seat_keys, cache)
        except LogFormatError as err:
            yield err


def iter_summaries(
    root: Path,
    method: Method | str = "default",
    *,
    seat_keys: Sequence[str] = (),
    cache: SummaryCache | None = None,
    include_branches: bool = False,
    left_out: list[str] | None = None,
    left_out_roots: dict[str, str] | None = None,
    warnings: list[str] | None = None,
    skipped: list[str] | None = None,
    ray: str | None = None,
) -> Iterator[GameSummary]:
    """The summary of every game under ``root``, one at a time (the rules of :func:`mafialab.analysis.load_games`).

    Branches are left out unless ``include_branches``; a game id found in a second folder is
    kept as a separate game (its ``root`` becomes ``<id>@<path>``) with a warning naming both.

    Args:
        root: Folder searched recursively for ``game.jsonl``.
        method: ``"default"``, ``"mafiascope"`` or a :class:`Method`.
        seat_keys: Seat keys to compute per-group statistics for.
        cache: Where summaries are read and stored; ``None``: always computed, nothing stored.
        include_branches: Keep branches.
        left_out: Receives the ids of the branches left out.
        left_out_roots: Receives ``{branch id: its root game's id}`` of the branches left out.
        warnings: Receives the repeated-id warnings (logged when not given).
        skipped: When given, receives the reason of each game that cannot be read (which is
            left out); without it the first such game raises.
        ray: A Ray cluster's address (``auto``, ``local`` or an address,
            :func:`mafialab.harness.connect_ray`): the summaries the cache lacks are computed
            as Ray tasks whose workers read the games from ``root`` as given (shared
            storage), a bounded number at a time, and are taken in the same order, so the
            summaries are the same (:func:`mafialab.analysis._ray.ray_summaries`).
            ``None``: computed here.

    Raises:
        ImportError: ``ray`` given and Ray is not installed (the message says how to install it).
        mafialab.harness.RayConnectError: No cluster at ``ray``.
        FileNotFoundError: ``root`` holds no game.
        mafialab.record.LogFormatError: A game cannot be read (without ``skipped``), or none
            can (with it; raised once every folder was tried).
    """
    dirs = iter_game_dirs(Path(root))
    if not dirs:
        raise FileNotFoundError(no_games_message(Path(root)))
    ids = RepeatedIds()
    reasons: list[str] = []
    read = 0
    for got in map_summaries(dirs, method, seat_keys, cache, ray=ray):
        if isinstance(got, LogFormatError):
            if skipped is None:
                raise got
            reasons.append(str(got))
            continue
        s = got
        read += 1
        cluster, msg = ids.see(s.game_id, s.path, s.root, s.branch)
        if msg is not None:
            if warnings is not None:
                warnings.append(msg)
            else:
                log.warning(msg)
        if cluster != s.root:
            s = s.model_copy(update={"root": cluster})
        if s.branch and not include_branches:
            if left_out is not None:
                left_out.append(s.game_id)
            if left_out_roots is not None:
                left_out_roots[s.game_id] = s.root
            continue
        yield s
    if skipped is not None:
        skipped.extend(reasons)
        if not read:
            raise LogFormatError(none_readable_message(Path(root), dirs, reasons))
