"""Per-game summaries: what the report reads from one game, computed once and cached by content.

``mafialab report`` reduces each game to a :class:`GameSummary` (a few kilobytes: per-game sums
of every metric, the instrument's row, the keys ``--by`` groups on) and computes the corpus
from summaries only, one game at a time, so its memory grows with the number of games, not
with their records. A summary is cached (:class:`SummaryCache`) under a key made of the bytes
of the game's log files, :data:`METRIC_VERSION`, the method and the ``--by`` seat keys; it is
recomputed only when one of them changes. The game's folder is only read.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from mafialab.analysis._baselines import transcript_baselines
from mafialab.analysis._coverage import usable_answers
from mafialab.analysis._data import GameData, game_data, restrict
from mafialab.analysis._dynamics import belief_dynamics
from mafialab.analysis._instrument import game_instrument
from mafialab.analysis._metrics import Method, first_order, get_method, parse_counts, second_order, vote_coupling
from mafialab.analysis._quadrants import QUADRANT_NAMES, vote_quadrants
from mafialab.analysis._readouts import readout_sums
from mafialab.record import (
    CALLS_FILE,
    GAME_FILE,
    PROBES_FILE,
    GameLog,
    read_game,
    write_atomic,
)

log = logging.getLogger(__name__)

METRIC_VERSION = 5
"""Version of what a summary holds and how it is computed; raise it whenever a metric's
definition or the summary's shape changes, so every cached summary is recomputed.
2: the instrument row carries the quality signals (``quality``).
3: junk speeches among the quality signals; an answer failing its schema check is not usable
(loss cause ``schema_failed``).
4: stated and logprob readouts side by side (``readouts``).
5: mission games are scored (F4 on approve/reject team votes)."""

SUMMARY_INPUTS = (GAME_FILE, PROBES_FILE, CALLS_FILE)
"""The log files a summary is computed from (their bytes key the cache)."""

SEAT_KEYS = ("model", "agent", "role", "team")
"""``--by`` keys that group a game's seats (observers) rather than whole games."""


class Stats(BaseModel):
    """Per-game sufficient statistics of every report section (of all seats, or of a group of seats).

    Every vector is a sum over the game's observations, laid out as the metric function
    that computes it documents, so games pool by adding and the bootstrap re-weights them.

    Attributes:
        probe_records: Probe records (:func:`~mafialab.analysis.parse_counts`).
        parsed: Records whose answer reads as JSON.
        first_order: Round -> F1 vector (``F1_FIELDS``; rounds with a recognised guess).
        calibration: F2 sums (``[hits, n, confidence sum] * bins + [brier sum, n]``).
        second_order: Predictor side -> F3 vector (``F3_FIELDS``).
        vote_coupling: ``"<voter side> <measure>"`` -> ``[hits, n, chance sum]``.
        baselines: ``"<voter side> <predictor>"`` -> ``[hits, n]``.
        increment: ``"<voter side> <predictor>"`` -> ``[n, probe_hits, baseline_hits, b, c]``.
        dynamics: ``"<group kind>:<value>"`` (``all:``, ``model:<m>``, ``round:<r>``) ->
            ``DYNAMICS_FIELDS`` sums.
        quadrants: Voter model -> ``[votes, assessed, *QUADRANT_NAMES counts]``.
        instrument: The game's instrument row (:func:`~mafialab.analysis._instrument.game_instrument`).
        usable: Probe id -> usable answers (:func:`~mafialab.analysis.coverage`).
        readouts: Stated and logprob readouts' sums (:func:`~mafialab.analysis._readouts.readout_sums`).
    """

    model_config = ConfigDict(frozen=True)

    probe_records: int
    parsed: int
    first_order: dict[int, list[float]]
    calibration: list[float]
    second_order: dict[str, list[float]]
    vote_coupling: dict[str, list[float]]
    baselines: dict[str, list[float]]
    increment: dict[str, list[float]]
    dynamics: dict[str, list[float]]
    quadrants: dict[str, list[int]]
    instrument: dict[str, Any]
    usable: dict[str, int]
    readouts: list[float] = []


class Seat(BaseModel):
    """The values ``--by`` groups a seat on.

    Attributes:
        name: Player name.
        model: Recorded model (else the agent label).
        agent: Agent label.
        role: Role.
        team: ``mafia`` or ``town``.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    model: str
    agent: str
    role: str
    team: str

    def value(self, key: str) -> str:
        """The seat's value for a key of :data:`SEAT_KEYS`."""
        return str(getattr(self, key))


class GameSummary(BaseModel):
    """Everything the corpus report reads from one game.

    Attributes:
        key: Cache key (:func:`summary_key`; ``""`` when computed without the logs' bytes).
        method: Name of the method the statistics were computed under.
        game_id: Game id.
        path: The game's folder (where it was read from this time).
        root: Bootstrap cluster: the root game's id (a branch's first ancestor that is not a
            branch), or ``<id>@<path>`` for a later copy of a repeated id.
        branch: Whether the game is a fork of another.
        family: Game family (``skipped`` when the metrics skip it).
        skipped: Whether the metrics skip the family (no statistics then).
        degraded: Whether the integrity gate marked the game degraded (no statistics then).
        winner: Winning team id, ``None`` if unfinished.
        rules_id: Rule set id.
        team_names: The rule set's names of ``town`` and ``mafia``.
        battery: Probe battery fingerprint, ``None`` without one.
        models: The models (or agent labels) of the roster, sorted, without repeats.
        seats: ``--by`` values per seat, in roster order.
        seat_keys: The seat keys ``groups`` was computed for (empty: none).
        stats: Statistics over all seats (``None`` for a skipped or degraded game).
        groups: Seat label (``"model=x, role=y"``) -> statistics over those seats only.
    """

    model_config = ConfigDict(frozen=True)

    key: str = ""
    method: str
    game_id: str
    path: str
    root: str
    branch: bool
    family: str
    skipped: bool
    degraded: bool
    winner: str | None
    rules_id: str
    team_names: dict[str, str]
    battery: str | None
    models: list[str]
    seats: list[Seat]
    seat_keys: list[str] = []
    stats: Stats | None
    groups: dict[str, Stats | None] = {}


def _vec(x: Any) -> list[float]:
    return [float(v) for v in x]


def game_stats(game: GameData, method: Method) -> Stats:
    """The per-game statistics of every report section (the metric functions, run once).

    Args:
        game: A flattened game (possibly restricted to some seats,
            :func:`mafialab.analysis._data.restrict`).
        method: Reading of the definitions.
    """
    per_round, calib = first_order(game, method)
    base, inc = transcript_baselines(game, method)
    quads: dict[str, list[int]] = {}
    for v in vote_quadrants(game, method):
        q = quads.setdefault(v.model, [0] * (2 + len(QUADRANT_NAMES)))
        q[0] += 1
        if v.quadrant is not None:
            q[1] += 1
            q[2 + QUADRANT_NAMES.index(v.quadrant)] += 1
    records, parsed = parse_counts(game, method)
    return Stats(
        probe_records=records,
        parsed=parsed,
        first_order={r: _vec(v) for r, v in per_round.items()},
        calibration=_vec(calib),
        second_order={s: _vec(v) for s, v in second_order(game, method).items()},
        vote_coupling={f"{s} {m}": _vec(v) for (s, m), v in vote_coupling(game, method).items()},
        baselines={f"{s} {p}": _vec(v) for (s, p), v in base.items()},
        increment={f"{s} {p}": _vec(v) for (s, p), v in inc.items()},
        dynamics={f"{k}:{v}": _vec(x) for (k, v), x in belief_dynamics(game, method).items()},
        quadrants=quads,
        instrument=game_instrument(game, method),
        usable=usable_answers(game, method),
        readouts=_vec(readout_sums(game)),
    )


def _seats(game: GameData) -> list[Seat]:
    return [
        Seat(
            name=n,
            model=game.models.get(n) or game.agents.get(n, "?"),
            agent=game.agents.get(n, "?"),
            role=game.role.get(n, "?"),
            team="mafia" if n in game.mafia else "town",
        )
        for n in game.names
    ]


def seat_groups(seats: Sequence[Seat], keys: Sequence[str]) -> dict[str, list[str]]:
    """The seats' names per seat label (``"model=x, role=y"``), in roster order of first seat.

    Raises:
        ValueError: A key not in :data:`SEAT_KEYS`.
    """
    bad = [k for k in keys if k not in SEAT_KEYS]
    if bad:
        raise ValueError(f"seat key {bad[0]!r}: use one of {', '.join(SEAT_KEYS)}")
    out: dict[str, list[str]] = {}
    for s in seats:
        out.setdefault(", ".join(f"{k}={s.value(k)}" for k in keys), []).append(s.name)
    return out


def summarise_game(
    game: GameData | Path,
    method: Method | str = "default",
    seat_keys: Sequence[str] = (),
    *,
    key: str = "",
    warn: bool = True,
) -> GameSummary:
    """Reduce one game to what the corpus report reads from it.

    Args:
        game: A flattened game, or a game's folder (read with
            :func:`mafialab.record.read_game` and :func:`mafialab.analysis.game_data`).
        method: ``"default"``, ``"mafiascope"`` or a :class:`Method`.
        seat_keys: Keys of :data:`SEAT_KEYS` to also compute per-seat-group statistics for
            (``--by model`` and the like); empty: none.
        key: The cache key to record (:func:`summary_key`).
        warn: Log what is wrong in the logs as they are read (``False``: a caller that read
            the game too and logged it already).

    Returns:
        The summary; a skipped-family or degraded game has no statistics (the report only
        lists it).

    Raises:
        mafialab.record.LogFormatError: ``game`` is a folder without a readable game log.
        ValueError: On an unknown method name or seat key.
    """
    m = get_method(method) if isinstance(method, str) else method
    g = game if isinstance(game, GameData) else game_data(read_game(Path(game), warn=warn))
    seats = _seats(g)
    groups = seat_groups(seats, seat_keys) if seat_keys else {}
    used = not g.skipped and not g.degraded
    return GameSummary(
        key=key,
        method=m.name,
        game_id=g.game_id,
        path=str(g.path),
        root=g.root or g.game_id,
        branch=g.branch,
        family=g.family,
        skipped=g.skipped,
        degraded=g.degraded,
        winner=g.winner,
        rules_id=g.rules.id,
        team_names={t: g.rules.lexicon.team_name(t) for t in ("town", "mafia")},
        battery=g.battery,
        models=sorted(set((g.models or g.agents).values())),
        seats=seats,
        seat_keys=list(seat_keys),
        stats=game_stats(g, m) if used else None,
        groups={label: game_stats(restrict(g, names), m) if used else None for label, names in groups.items()},
    )


def logs_digest(game_dir: Path) -> str:
    """SHA-256 (hex) of the bytes of the game's log files (:data:`SUMMARY_INPUTS`; absent ones count as absent).

    Raises:
        OSError: A log file cannot be read.
    """
    h = hashlib.sha256()
    for name in SUMMARY_INPUTS:
        p = Path(game_dir) / name
        if not p.is_file():
            h.update(f"{name}\0absent\0".encode())
            continue
        h.update(f"{name}\0{p.stat().st_size}\0".encode())
        with p.open("rb") as fh:
            h.update(hashlib.file_digest(fh, "sha256").digest())
    return h.hexdigest()


def summary_key(game_dir: Path, method: Method, seat_keys: Sequence[str] = ()) -> str:
    """The cache key of a game's summary: its logs' bytes, :data:`METRIC_VERSION`, the method, the seat keys.

    The method counts by every option (``repr``), so a changed :class:`Method` is a new key.
    """
    h = hashlib.sha256(f"v{METRIC_VERSION}\0{method!r}\0{','.join(seat_keys)}\0".encode())
    h.update(logs_digest(game_dir).encode())
    return h.hexdigest()


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/mafialab/summaries`` (``~/.cache`` when ``XDG_CACHE_HOME`` is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mafialab" / "summaries"


class SummaryCache:
    """Game summaries stored as JSON files in ``folder`` (``<key[:2]>/<key>.json``), written atomically.

    Args:
        folder: The cache folder (created on the first write).

    Attributes:
        hits: Summaries read from the cache since construction.
        misses: Summaries that had to be computed (absent or unreadable entries).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.hits = 0
        self.misses = 0

    def path(self, key: str) -> Path:
        """Where the summary with ``key`` is stored."""
        return self.folder / key[:2] / f"{key}.json"

    def load(self, key: str) -> GameSummary | None:
        """The cached summary, or ``None`` when there is none or it cannot be read (logged; it will be rewritten)."""
        p = self.path(key)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, UnicodeDecodeError) as err:
            log.warning("%s: unreadable cached summary (%s); recomputing it", p, err)
            self.misses += 1
            return None
        try:
            s = GameSummary.model_validate_json(text)
        except ValidationError as err:
            log.warning("%s: corrupt cached summary (%d errors); recomputing it", p, err.error_count())
            self.misses += 1
            return None
        if s.key != key:
            log.warning("%s: cached summary holds key %s; recomputing it", p, s.key[:12])
            self.misses += 1
            return None
        self.hits += 1
        return s

    def store(self, summary: GameSummary) -> None:
        """Write ``summary`` under its key; a cache that cannot be written is logged and skipped."""
        try:
            write_atomic(self.path(summary.key), summary.model_dump_json())
        except OSError as err:
            log.warning("%s: summary not cached (%s)", self.path(summary.key), err)


def cached_summary(
    game_dir: Path,
    method: Method | str = "default",
    seat_keys: Sequence[str] = (),
    cache: SummaryCache | None = None,
    *,
    warn: bool = True,
    game_log: GameLog | None = None,
) -> GameSummary:
    """The summary of the game in ``game_dir``: from ``cache`` when its logs are unchanged, else computed (and stored).

    The returned summary's ``path`` is ``game_dir`` (a cached summary may have been made from
    a copy elsewhere). ``warn``: as :func:`summarise_game`'s. ``game_log``: the game's log as
    :func:`mafialab.record.read_game` read it from ``game_dir`` (by a caller that needed it
    too), so a summary to compute does not read it again; its ``probes.jsonl`` is read as
    without it.

    Raises:
        mafialab.record.LogFormatError: The game's log cannot be read.
    """
    m = get_method(method) if isinstance(method, str) else method

    def compute(key: str = "") -> GameSummary:
        game: GameData | Path = Path(game_dir) if game_log is None else game_data(game_log)
        return summarise_game(game, m, seat_keys, key=key, warn=warn)

    if cache is None:
        return compute()
    key = summary_key(game_dir, m, seat_keys)
    s = cache.load(key)
    if s is None:
        s = compute(key)
        cache.store(s)
    if s.path != str(game_dir):
        s = s.model_copy(update={"path": str(game_dir)})
    return s
