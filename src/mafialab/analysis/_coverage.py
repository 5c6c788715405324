"""What a probe battery supports: which metrics the recorded answers can give, and what is missing.

A battery asks some probes and not others (``suspicion`` asks only ``suspicion_ranking``);
each metric reads particular probes (``docs/metrics.md``). Rather than empty tables, the
report and the viewer say which metric needs which probe.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mafialab.analysis._data import GameData, game_data
from mafialab.analysis._dynamics import suspicion_series
from mafialab.analysis._instrument import usable as usable_answer
from mafialab.analysis._metrics import Method, get_method
from mafialab.record import read_game

METRIC_PROBES: dict[str, tuple[str, ...]] = {
    "first_order": ("role_assessment",),
    "calibration": ("role_assessment",),
    "second_order": ("role_assessment", "social_map"),
    "vote_coupling.top1": ("suspicion_ranking",),
    "vote_coupling.post_vote_top1": ("suspicion_ranking",),
    "vote_coupling.committed_set": ("role_assessment",),
    "dynamics": ("suspicion_ranking",),
    "quadrants": ("role_assessment",),
}
"""Report section (or F4 measure) -> the probe ids whose answers it reads (all of them needed).

Sources: MafiaScope's F1-F4 definitions and §6-§7 (``docs/metrics.md``): F1/F2 read
``role_assessment``; F3 compares ``social_map`` predictions with ``role_assessment``
attitudes; F4 top-1 reads the last ``suspicion_ranking``, the committed set the last
``role_assessment``; belief dynamics read consecutive ``suspicion_ranking`` answers; the
quadrant table classifies votes by the voter's ``role_assessment``."""

METRIC_NAMES: dict[str, str] = {
    "first_order": "F1 first-order accuracy and recall",
    "calibration": "F2 calibration",
    "second_order": "F3 second-order agreement",
    "vote_coupling.top1": "F4 vote coupling (top-1 suspect)",
    "vote_coupling.post_vote_top1": "F4 vote coupling (post-vote top-1)",
    "vote_coupling.committed_set": "F4 vote coupling (committed set)",
    "dynamics": "belief dynamics",
    "quadrants": "quadrant table of innocent votes",
}
"""Report section -> its name in words."""

DYNAMICS_NEEDS_PAIRS = "belief dynamics: needs two rankings by one seat; none here"
"""Why belief dynamics are not computed although rankings were answered (no seat gave two)."""


def coverage(games: Sequence[GameData], method: Method | str = "default") -> dict[str, Any]:
    """Which metrics the games' probe answers support, and which probe each missing one needs.

    Args:
        games: Flattened games (skipped-family and degraded games are not counted).
        method: Reading of the answers (usable: :func:`mafialab.analysis._instrument.usable`,
            parsed and carrying information; an empty ranking is not usable).

    Returns:
        ``{"batteries": [fingerprints recorded in the headers], "answers": {probe id:
        usable answers}, "metrics": {section: {"name", "needs": [probe ids], "computed":
        bool, "missing": [needed probe ids without a usable answer], "why": sentence | None}}}``;
        belief dynamics count as computed only when one seat gave two or more usable
        rankings (a pair to compare; ``missing`` empty, ``why``
        :data:`DYNAMICS_NEEDS_PAIRS` otherwise).
    """
    m = get_method(method) if isinstance(method, str) else method
    used = [g for g in games if not g.skipped and not g.degraded]
    usable: Counter[str] = Counter()
    pairs = 0
    for g in used:
        usable.update(usable_answers(g, m))
        pairs += ranking_pairs(g, m)
    return coverage_of(usable, {g.battery for g in used if g.battery}, pairs=pairs)


def coverage_at(dirs: Iterable[Path], method: Method | str = "default") -> dict[str, Any]:
    """:func:`coverage` of the games in ``dirs``, read one at a time (memory: one game).

    What ``mafialab play`` says a run recorded: the probe answers and the metrics they give.

    Args:
        dirs: Game directories (each holding ``game.jsonl``, and ``probes.jsonl`` when probed).
        method: As for :func:`coverage`.

    Returns:
        :func:`coverage`'s mapping plus ``"records"``: probe records read in every game,
        usable or not (degraded games included; their answers are not counted as usable).

    Raises:
        mafialab.record.LogFormatError: A game's log cannot be read.
    """
    m = get_method(method) if isinstance(method, str) else method
    usable: Counter[str] = Counter()
    batteries: set[str] = set()
    records = pairs = 0
    for d in dirs:
        g = game_data(read_game(Path(d)))
        records += len(g.probes)
        if g.skipped or g.degraded:
            continue
        usable.update(usable_answers(g, m))
        pairs += ranking_pairs(g, m)
        if g.battery:
            batteries.add(g.battery)
    return {**coverage_of(usable, batteries, pairs=pairs), "records": records}


def ranking_pairs(game: GameData, method: Method) -> int:
    """Consecutive pairs of one seat's suspicion rankings in one game, the pairs belief dynamics compare.

    Rankings as :func:`~mafialab.analysis._dynamics.suspicion_series` reads them (scores that
    sum to more than 0); a seat with ``k`` of them gives ``k - 1`` pairs.
    """
    return sum(max(len(series) - 1, 0) for series in suspicion_series(game, method).values())


def usable_answers(game: GameData, method: Method) -> dict[str, int]:
    """Usable answers per probe id in one game.

    Usable: parsed and informative (:func:`~mafialab.analysis._instrument.usable`).
    """
    usable: Counter[str] = Counter()
    for p in game.probes:
        if usable_answer(p, method):
            usable[p.probe_id] += 1
    return dict(usable)


def coverage_of(usable: Mapping[str, int], batteries: Iterable[str], *, pairs: int | None = None) -> dict[str, Any]:
    """:func:`coverage` from the usable answers per probe id and the batteries of the games counted.

    ``pairs``: the games' :func:`ranking_pairs`; ``None`` (not counted) leaves belief dynamics
    to the probes alone.
    """
    shown = sorted(set(batteries))
    asked = ", ".join(shown) if shown else "no battery recorded"
    metrics: dict[str, Any] = {}
    for key, needs in METRIC_PROBES.items():
        missing = [pid for pid in needs if not usable.get(pid)]
        why = None
        if missing:
            why = (
                f"{METRIC_NAMES[key]} needs {' and '.join(needs)} answers; these games have no usable "
                f"{' or '.join(missing)} answer (probe battery: {asked})"
            )
        elif key == "dynamics" and pairs == 0:
            why = DYNAMICS_NEEDS_PAIRS
        metrics[key] = {"name": METRIC_NAMES[key], "needs": list(needs), "computed": why is None,
                        "missing": missing, "why": why}  # fmt: skip
    return {"batteries": shown, "answers": dict(sorted(usable.items())), "metrics": metrics}
