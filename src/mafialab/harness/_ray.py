"""Games as Ray tasks: workers play and return their records, the driver writes them."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from mafialab._files import write_atomic
from mafialab._words import count
from mafialab.agents import Agent, make_agent
from mafialab.harness._play import GameObserver, GameResult, play_game, summarize
from mafialab.harness._replay import replay
from mafialab.models import CallRecord, CallSummary, cluster_limits
from mafialab.record import CALLS_FILE, GAME_FILE, PriceTable, iter_call_records, person_seats, read_game
from mafialab.rules import RuleSet

RAY_HINT = "--ray needs Ray, an optional extra: pip install 'mafialab[ray]'"
"""What to install when ``ray`` is missing."""

R = TypeVar("R")

RayObserverFactory = Callable[[int, Sequence[Agent], Path], Sequence[GameObserver]]
"""``factory(seed, agents, out) -> observers`` for one game on a worker (``out``: where the
worker writes the game's logs before it returns them); must be picklable (a module-level
function or a ``functools.partial`` of one)."""


class RayConnectError(ConnectionError):
    """No Ray cluster could be reached at the ``--ray`` address.

    The message names the address and gives Ray's reason (no cluster there, a malformed
    address ...).
    """


def connect_ray(address: str) -> Any:
    """Import Ray and connect to a cluster (once per process; an existing connection is kept).

    Args:
        address: ``auto`` (an existing cluster: ``RAY_ADDRESS`` or the local one started with
            ``ray start``), ``local`` (start one on this machine for the run; no dashboard)
            or a cluster address (``ray://host:10001``, ``host:6379``).

    Returns:
        The ``ray`` module, connected.

    Raises:
        ImportError: Ray is not installed (the message says how to install it).
        RayConnectError: No cluster at ``address``, or ``address`` is malformed (a
            ``ConnectionError`` whose message names the address and gives Ray's reason).
    """
    try:
        import ray
    except ImportError as err:
        raise ImportError(RAY_HINT) from err
    if ray.is_initialized():
        return ray
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    reason = address_unreachable(address)
    if reason is not None:
        raise RayConnectError(f"--ray {address}: cannot connect to a Ray cluster: {reason}")
    try:
        if address == "local":  # a new instance even when RAY_ADDRESS names a cluster
            ray.init(address="local", include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except Exception as err:  # Ray raises ConnectionError, ValueError (bad address) or RuntimeError
        raise RayConnectError(f"--ray {address}: cannot connect to a Ray cluster: {err}") from err
    return ray


CONNECT_TIMEOUT_S = 5.0
"""How long :func:`address_unreachable` waits for a TCP connection to a cluster address."""


def address_unreachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why nothing answers at a ``--ray`` cluster address, or ``None`` when something does.

    Ray itself retries an unreachable address for a minute or more; this check opens one TCP
    connection first (name resolution, then connect, each within ``timeout`` seconds) so a
    wrong address fails at once. ``auto`` and ``local`` are not checked (Ray finds or starts
    the cluster); neither is an address without a port other than ``ray://host`` (port 10001).

    Args:
        address: The ``--ray`` value: ``host:port`` (the cluster's GCS) or ``ray://host[:port]``.
        timeout: Seconds for the connection attempt (> 0).

    Returns:
        ``None`` when a TCP connection could be made (or the address is not checked), else
        the reason in a few words (``cannot resolve the host nowhere``, ``nothing listens at
        127.0.0.1:1: Connection refused`` ...).
    """
    if address in ("auto", "local"):
        return None
    client = address.startswith("ray://")
    rest = address.removeprefix("ray://").rstrip("/")
    host, sep, port_text = rest.rpartition(":")
    if not sep:
        if not client:
            return None
        host, port_text = rest, "10001"
    host = host.strip("[]")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None  # malformed: Ray's own message says what is wrong
    port = int(port_text)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as err:
        return f"cannot resolve the host {host}: {err}"
    last: OSError | None = None
    for family, kind, proto, _, where in infos:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(timeout)
                sock.connect(where)
            return None
        except OSError as err:
            last = err
    return f"nothing listens at {host}:{port}: {last}"


@contextmanager
def driver_limits(address: str | None) -> Iterator[bool]:
    """The driver's own model calls under the cluster-wide per-backend limits when ``address`` is set.

    A command with ``--ray`` makes some calls on the driver (the preflight, a season's judges,
    the answers ``fork run`` draws ahead, ``bifurcate run``'s embeddings); inside this block
    they take their slots from the same slot keepers as the workers' calls
    (:func:`mafialab.models.cluster_limits`), so a backend's ``max_concurrency`` counts the
    driver and every worker together. With ``address`` ``None`` the block does nothing and
    Ray is not imported.

    Args:
        address: The ``--ray`` address (connected first with :func:`connect_ray`; a
            connection already made is kept), or ``None`` (no Ray: per-process limits).

    Yields:
        Whether the limits in the block are cluster-wide.

    Raises:
        ImportError: ``address`` given and Ray is not installed (the message says how to install it).
        RayConnectError: No cluster at ``address``.
    """
    if address is None:
        yield False
        return
    connect_ray(address)
    with cluster_limits() as on:
        yield on


def _on_worker(fn: Callable[..., R], args: tuple[Any, ...]) -> R:
    """The worker entry point of every mafialab Ray task: ``fn(*args)`` with cluster-wide limits."""
    with cluster_limits():  # nested blocks in fn reuse this one
        return fn(*args)


_TASKS: dict[tuple[int, int], Any] = {}


def _task(ray: Any, max_retries: int) -> Any:
    """The remote function of :func:`_on_worker` with ``max_retries`` (made once per process)."""
    key = (id(ray), max_retries)
    if key not in _TASKS:
        _TASKS[key] = ray.remote(max_retries=max_retries)(_on_worker)
    return _TASKS[key]


def ray_map(
    fn: Callable[..., R],
    jobs: Iterable[tuple[Any, ...]],
    *,
    address: str = "auto",
    max_retries: int = 3,
    window: int | None = None,
    ordered: bool = False,
) -> Generator[tuple[int, R], None, None]:
    """Run ``fn(*job)`` for every job as a Ray task; yield ``(index, result)`` as each finishes.

    The driver does the writing: a caller writes each result as it is yielded, so what is
    written is what finished (a resumed run skips it). ``fn`` and the jobs must be picklable
    (``fn`` a module-level function or a ``functools.partial`` of one); ``fn`` must not
    rely on the driver's files or processes. A task whose worker dies is rerun by Ray (up to
    ``max_retries`` times); an exception raised by ``fn`` is raised here as it was raised
    there (not Ray's wrapper) and the tasks not yet collected are cancelled.

    With ``window``, ``jobs`` is read lazily and at most ``window`` tasks are submitted and
    not yet yielded at any time (with ``ordered``, finished results waiting for an earlier
    one count too), so the driver holds at most ``window`` results whatever the number of
    jobs; without it every job is submitted at once.

    Args:
        fn: The work of one task.
        jobs: One argument tuple per task (any iterable; read as tasks are submitted).
        address: Where the cluster is (:func:`connect_ray`); connected before the first task
            (not at all when there is no job).
        max_retries: Reruns of a task whose worker died.
        window: Most tasks in flight (>= 1), or ``None``: all.
        ordered: Yield in the order of ``jobs`` (a finished result waits for the earlier
            ones) instead of the order tasks finish.

    Yields:
        ``(index into jobs, fn's result)``, in the order tasks finish (``ordered``: of ``jobs``).

    Raises:
        ImportError: Ray is not installed (the message says how to install it).
        ValueError: ``window`` < 1.
    """
    if window is not None and window < 1:
        raise ValueError(f"window: must be >= 1, got {window}")
    it = iter(jobs)
    first = next(it, None)
    if first is None:
        return
    ray = connect_ray(address)
    task = _task(ray, max_retries)
    refs: dict[Any, int] = {}
    pending: list[Any] = []
    waiting: dict[int, R] = {}  # ordered: finished, not yet yielded (an earlier one is running)
    submitted = 0
    yielded = 0
    head: tuple[Any, ...] | None = first

    def fill() -> None:
        nonlocal head, submitted
        while head is not None and (window is None or submitted - yielded < window):
            ref = task.remote(fn, tuple(head))
            refs[ref] = submitted
            pending.append(ref)
            submitted += 1
            head = next(it, None)

    try:
        fill()
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    got = ray.get(ref)
                except ray.exceptions.RayTaskError as err:
                    raise _cause(err) from None
                i = refs.pop(ref)
                if not ordered:
                    yielded += 1
                    yield i, got
                    continue
                waiting[i] = got
                while yielded in waiting:
                    i = yielded
                    yielded += 1
                    yield i, waiting.pop(i)
            fill()
    finally:
        for ref in pending:  # the caller stopped early (an error, Ctrl-C): nothing more to collect
            ray.cancel(ref)


async def ray_run(fn: Callable[..., R], *args: Any, address: str = "auto", max_retries: int = 3) -> R:
    """``fn(*args)`` as one Ray task, awaited without blocking the driver's event loop.

    For drivers that decide their tasks as they go (a season replaces a discarded game, a
    bifurcation forks the variants it kept); each call is one task, written by the caller
    when it returns. Same rules for ``fn`` as :func:`ray_map` (its exception is raised here as
    raised there); cancelling the await cancels the task.

    Args:
        fn: The work of the task (picklable: a module-level function or a
            ``functools.partial`` of one).
        *args: Its arguments (picklable).
        address: Where the cluster is (:func:`connect_ray`); connected on the first call.
        max_retries: Reruns of the task if its worker dies.

    Returns:
        ``fn(*args)`` as computed on the worker.

    Raises:
        ImportError: Ray is not installed (the message says how to install it).
        RayConnectError: No cluster at ``address`` (:func:`connect_ray`).
        Exception: Whatever ``fn`` raised on the worker, unwrapped.
    """
    ray = connect_ray(address)
    ref = _task(ray, max_retries).remote(fn, args)
    try:
        return await asyncio.wrap_future(ref.future())  # type: ignore[no-any-return]
    except asyncio.CancelledError:
        ray.cancel(ref)
        raise
    except ray.exceptions.RayTaskError as err:
        raise _cause(err) from None


def _cause(err: BaseException) -> BaseException:
    """The exception a task raised on its worker (Ray wraps it with the worker's traceback)."""
    cause = getattr(err, "cause", None)
    return cause if isinstance(cause, BaseException) else err


def _play_on_worker(
    rules: RuleSet,
    specs: Sequence[str],
    seed: int,
    observers: RayObserverFactory | None,
    prices: PriceTable | None,
    allow_degraded: bool,
) -> tuple[str, dict[str, bytes]]:
    """One game on a worker, logged to a temporary folder; returns its id and files' bytes.

    Run through :func:`ray_map`, whose worker entry (:func:`_on_worker`) holds
    :func:`~mafialab.models.cluster_limits` around it.
    """
    with tempfile.TemporaryDirectory(prefix="mafialab-ray-") as tmp:
        out = Path(tmp)
        agents = [make_agent(specs[s], s, rules, seed) for s in range(rules.n_seats)]
        obs = list(observers(seed, agents, out)) if observers is not None else []
        res = asyncio.run(
            play_game(rules, agents, seed, out=out, observers=obs, prices=prices, allow_degraded=allow_degraded)
        )
        assert res.path is not None
        return res.game_id, read_game_files(res.path)


def read_game_files(path: Path) -> dict[str, bytes]:
    """The files of a game directory (name → bytes), to return from a worker for :func:`write_game_files`.

    Args:
        path: A game directory (``game.jsonl``, ``calls.jsonl``, probe files ...); its
            subdirectories are not read.

    Returns:
        ``{file name: its bytes}``, names sorted.

    Raises:
        OSError: ``path`` is not a readable directory.
    """
    return {p.name: p.read_bytes() for p in sorted(Path(path).iterdir()) if p.is_file()}


def write_game_files(out: Path, game_id: str, files: dict[str, bytes]) -> Path:
    """Write a worker's game files into ``out/<game_id>/`` (each file whole, then renamed).

    Args:
        out: Parent directory of the game directories (created if missing).
        game_id: The game's id (its directory name).
        files: ``{file name: bytes}`` from :func:`read_game_files`.

    Returns:
        The game directory ``out/<game_id>``.

    Raises:
        ValueError: The game directory already holds a game log.
    """
    path = Path(out) / game_id
    if (path / GAME_FILE).exists():
        raise ValueError(f"out: {path / GAME_FILE} already exists; choose another --out or seed")
    path.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        write_atomic(path / name, data)
    return path


def result_from_logs(path: Path) -> GameResult:
    """A :class:`GameResult` rebuilt from a written game directory (replayed, so checked).

    The outcome comes from replaying ``game.jsonl``; calls and the closing call summary from
    ``calls.jsonl`` when it exists (otherwise none).

    Args:
        path: A game directory written by a run (:func:`write_game_files`, :func:`play_game`).

    Returns:
        The result a local :func:`play_game` would have returned (``degraded`` from the log's
        status record).

    Raises:
        mafialab.record.LogFormatError: The log is missing or malformed (:func:`mafialab.record.read_game`).
        ReplayMismatch: The recorded events do not replay.
    """
    log = read_game(path)
    state = replay(log)
    actions = [e for e in log.events if getattr(e, "decision", None) is not None]
    fallbacks = sum(1 for e in actions if getattr(e, "fallback", False))
    res = summarize(state, log.header.game_id, len(actions), fallbacks, path)
    res.degraded = bool(log.status is not None and log.status.degraded)
    res.person_seats = person_seats(log.header.meta.get("agents"))
    if (path / CALLS_FILE).is_file():
        lines = [rec for _, rec in iter_call_records(path, game_id=log.header.game_id)]
        res.calls = [CallRecord.model_validate(r) for r in lines if r.get("kind") == "call"]
        closing = [CallSummary.model_validate(r) for r in lines if r.get("kind") == "call_summary"]
        res.call_summary = closing[-1] if closing else None
    return res


def play_games_ray(
    rules: RuleSet,
    specs: Sequence[str],
    seeds: Sequence[int],
    *,
    out: Path,
    address: str = "auto",
    observers: RayObserverFactory | None = None,
    prices: PriceTable | None = None,
    allow_degraded: bool = False,
    max_retries: int = 3,
    on_done: Callable[[int, GameResult], None] | None = None,
) -> list[GameResult]:
    """Play one game per seed as Ray tasks; the driver writes every game's logs under ``out``.

    Each task builds its agents from ``specs`` (``make_agent``), plays the game into a
    temporary folder on its worker and returns the files; the driver writes them into
    ``out/<game_id>/`` as games finish, so the layout is the local run's and the logs are
    the same (clock fields aside). A task whose worker dies is rerun by Ray (up to
    ``max_retries`` times); a finished game is written once and never rerun. Model servers
    are reached by URL from the workers; a backend's in-flight limit (``max_concurrency``)
    holds for all workers together (:func:`mafialab.models.cluster_limits`).

    Args:
        rules: Rule set.
        specs: One agent spec per seat.
        seeds: One game per seed.
        out: Parent directory of the game directories.
        address: Where the cluster is (:func:`connect_ray`).
        observers: Builds each game's observers on its worker (e.g. probes).
        prices: Price table for call costs.
        allow_degraded: As :func:`play_game`.
        max_retries: Reruns of a task whose worker died.
        on_done: Called on the driver with the seed and result of each game written.

    Returns:
        The results in the order of ``seeds``.

    Raises:
        ImportError: Ray is not installed.
        ValueError: Wrong number of specs, or a game directory already holds a log.
    """
    if len(specs) != rules.n_seats:
        raise ValueError(f"specs: {count(len(specs), 'agent spec')} for {count(rules.n_seats, 'seat')}")
    jobs = [(rules, list(specs), seed, observers, prices, allow_degraded) for seed in seeds]
    results: dict[int, GameResult] = {}
    for i, (game_id, files) in ray_map(_play_on_worker, jobs, address=address, max_retries=max_retries):
        path = write_game_files(out, game_id, files)
        res = result_from_logs(path)
        results[seeds[i]] = res
        if on_done is not None:
            on_done(seeds[i], res)
    return [results[s] for s in seeds]
