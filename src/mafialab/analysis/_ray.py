"""Per-game work as Ray tasks (``report``, ``view`` and ``export parquet`` with ``--ray``).

Workers read each game's logs from storage they share with the driver (the path as the
driver was given it), do one game's work and return a small result: a
:class:`~mafialab.analysis.GameSummary`, or one game's Arrow record batches. The driver
takes the results in the order of the game directories, so what it aggregates or writes is
what a local run aggregates or writes. The tasks go through
:func:`mafialab.harness.ray_map` with a window: at most :func:`default_window` games are in
flight or waiting to be taken, so the driver's memory does not grow with the corpus.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

from mafialab.analysis._metrics import Method
from mafialab.analysis._summary import GameSummary, SummaryCache, summarise_game, summary_key
from mafialab.record import LogFormatError

T = TypeVar("T")

WINDOW_PER_CPU = 2
"""Games in flight per CPU of the cluster (:func:`default_window`): each CPU has the next game
queued while it works on one."""


def default_window(address: str) -> int:
    """The number of games :func:`map_games` keeps in flight: :data:`WINDOW_PER_CPU` per CPU of the cluster.

    Raises:
        ImportError: Ray is not installed (the message says how to install it).
        mafialab.harness.RayConnectError: No cluster at ``address``.
    """
    from mafialab.harness import connect_ray

    ray = connect_ray(address)
    return max(2, WINDOW_PER_CPU * int(ray.cluster_resources().get("CPU", 1)))


def _or_unreadable(fn: Callable[[Path], T], game_dir: str) -> T | LogFormatError:
    """``fn(game_dir)`` on a worker; a game that cannot be read is returned (the driver decides), not raised."""
    try:
        return fn(Path(game_dir))
    except LogFormatError as err:
        return err


def map_games(
    fn: Callable[[Path], T], dirs: Sequence[Path], *, address: str, window: int | None = None
) -> Generator[T | LogFormatError, None, None]:
    """``fn(d)`` for every game directory of ``dirs`` as Ray tasks, yielded in the order of ``dirs``.

    A game that cannot be read yields its :class:`~mafialab.record.LogFormatError` (the
    caller skips it or raises it, as it does locally); any other error of ``fn`` is raised
    here as the worker raised it, and the other tasks are cancelled.

    Args:
        fn: One game's work, picklable (a module-level function or a ``functools.partial``
            of one); it reads the game from the path the driver passes (shared storage).
        dirs: Game directories, as the workers reach them.
        address: The ``--ray`` address (:func:`mafialab.harness.connect_ray`).
        window: Most games in flight or waiting to be yielded; ``None``: :func:`default_window`.

    Yields:
        ``fn``'s result, or the game's ``LogFormatError``, per directory in order.

    Raises:
        ImportError: Ray is not installed (the message says how to install it).
        mafialab.harness.RayConnectError: No cluster at ``address``.
    """
    from mafialab.harness import ray_map

    if not dirs:
        return
    w = window if window is not None else default_window(address)
    jobs = ((fn, str(d)) for d in dirs)
    for _, got in ray_map(_or_unreadable, jobs, address=address, window=w, ordered=True):
        yield got


def _summarise(method: Method, seat_keys: Sequence[str], key: str, game_dir: Path) -> GameSummary:
    """One game's summary on a worker (``key``: the cache key the driver computed, recorded in it)."""
    return summarise_game(game_dir, method, seat_keys, key=key)


def ray_summaries(
    dirs: Sequence[Path],
    method: Method,
    seat_keys: Sequence[str] = (),
    cache: SummaryCache | None = None,
    *,
    address: str,
    window: int | None = None,
) -> Iterator[GameSummary | LogFormatError]:
    """The summary of each game of ``dirs``, in order, the ones the cache lacks computed as Ray tasks.

    The driver computes each game's cache key (it reads the logs' bytes to hash them),
    reads the summaries the cache holds itself and sends only the others to the workers;
    it stores what they return in ``cache``. The summaries equal those of
    :func:`mafialab.analysis.cached_summary` (``path`` is the directory as given).

    Args:
        dirs: Game directories on storage the workers share.
        method: The method the summaries are computed under.
        seat_keys: Seat keys to compute per-group statistics for.
        cache: Where summaries are read and stored (by the driver); ``None``: none.
        address: The ``--ray`` address.
        window: As :func:`map_games`.

    Yields:
        A summary, or the ``LogFormatError`` of a game that cannot be read, per directory.

    Raises:
        ImportError: Ray is not installed (the message says how to install it).
        mafialab.harness.RayConnectError: No cluster at ``address``.
    """
    from mafialab.harness import ray_map

    if not dirs:
        return
    w = window if window is not None else default_window(address)
    plan: deque[tuple[Path, str, bool]] = deque()  # (directory, key, whether the cache holds it), in order

    def jobs() -> Iterator[tuple[Callable[[Path], GameSummary], str]]:
        for d in dirs:
            key = summary_key(d, method, seat_keys) if cache is not None else ""
            hit = cache is not None and cache.path(key).is_file()
            plan.append((d, key, hit))  # a few strings per game: the summaries are read when taken
            if not hit:
                yield partial(_summarise, method, seat_keys, key), str(d)

    results = ray_map(_or_unreadable, jobs(), address=address, window=w, ordered=True)
    try:
        early: deque[GameSummary | LogFormatError] = deque()
        while True:
            if not plan:  # the next games are not planned yet: the tasks read them (or they are all done)
                got = next(results, None)
                if got is not None:
                    early.append(got[1])
                if not plan:
                    return
            d, key, hit = plan.popleft()
            s = cache.load(key) if hit and cache is not None else None
            if hit and s is None:  # unreadable after all (logged by load): computed here, as a local run does
                try:
                    s = summarise_game(d, method, seat_keys, key=key)
                except LogFormatError as err:
                    yield err
                    continue
                if cache is not None:
                    cache.store(s)
            if s is None:
                done = early.popleft() if early else next(results)[1]
                if isinstance(done, LogFormatError):
                    yield done
                    continue
                s = done
                if cache is not None:
                    cache.misses += 1
                    cache.store(s)
            yield s if s.path == str(d) else s.model_copy(update={"path": str(d)})
    finally:
        results.close()  # the caller stopped early: the tasks not taken are cancelled now
