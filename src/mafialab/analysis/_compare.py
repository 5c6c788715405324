"""Compare, don't pool: the report per group of games (or of observers), side by side.

``mafialab report DIR --by model|agent|rules|role|team|corpus`` and ``mafialab report A B``
compute :func:`mafialab.analysis.compute_report` once per group, so every interval is a
bootstrap by game within its group, and a directory that mixes rule sets or models gets a
warning naming what was pooled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from mafialab.analysis._data import GameData, restrict
from mafialab.analysis._metrics import Method
from mafialab.analysis._report import ReportBuilder, compute_report, report_rows
from mafialab.analysis._report_model import ReportRow
from mafialab.analysis._summary import SEAT_KEYS, GameSummary, Stats
from mafialab.config import read_config
from mafialab.record import RetestRecord

BY_KEYS = ("model", "agent", "rules", "role", "team", "corpus")
"""What ``--by`` groups on. ``rules`` and ``corpus`` group games; ``model``, ``agent``,
``role`` and ``team`` group observers (the seats played by a model, holding a role, on a
team): each group keeps only those seats' probe answers and votes, and holds every game
that has such a seat."""

_SEAT_KEYS = SEAT_KEYS

SUMMARY_ROWS: tuple[tuple[str, str, str], ...] = (
    ("summary", "", "games"),
    ("summary", "", "probe_records"),
    ("first_order", "*", "committed_accuracy"),
    ("first_order", "*", "recall"),
    ("calibration", "", "n"),
    ("calibration", "", "ece"),
    ("calibration", "", "brier"),
    ("second_order", "all", "overprediction_ratio"),
    ("second_order", "all", "accuracy"),
    ("vote_coupling", "innocents top1", "rate"),
    ("vote_coupling", "innocents committed_set", "rate"),
    ("vote_coupling", "mafia top1", "rate"),
    ("vote_coupling", "innocents baseline most_mentioned", "rate"),
    ("vote_coupling", "innocents baseline most_accused", "rate"),
    ("dynamics", "all", "volatility"),
    ("dynamics", "all", "flip_rate"),
)
"""The rows of the side-by-side table (``*``: every round); JSON and CSV hold everything."""


def corpus_of(game: GameData | GameSummary, root: Path) -> str:
    """The corpus of a game: its directory's parent relative to ``root`` (``root``'s name at the top)."""
    try:
        rel = Path(game.path).parent.relative_to(root)
    except ValueError:
        rel = Path()
    return rel.as_posix() if rel.parts else Path(root).resolve().name


def _seat_value(game: GameData, name: str, key: str) -> str:
    if key == "model":
        return game.models.get(name) or game.agents.get(name, "?")
    if key == "agent":
        return game.agents.get(name, "?")
    if key == "role":
        return game.role.get(name, "?")
    return "mafia" if name in game.mafia else "town"


def group_games(
    games: Sequence[GameData], by: Sequence[str], roots: Mapping[str, Path] | None = None
) -> dict[str, list[GameData]]:
    """Split games (and, for seat keys, their observers) into groups, in a stable order.

    Args:
        games: Flattened games.
        by: Keys from :data:`BY_KEYS` (several: every combination that occurs).
        roots: ``game_id -> report root`` for ``corpus`` (default: the game's parent folder).

    Returns:
        ``{label: games}``; a label reads ``model=x, rules=y``.

    Raises:
        ValueError: An unknown key (the message lists the known ones).
    """
    bad = [k for k in by if k not in BY_KEYS]
    if bad:
        raise ValueError(f"--by: unknown key {bad[0]!r}; use one of {', '.join(BY_KEYS)}")
    game_keys = [k for k in by if k not in _SEAT_KEYS]
    seat_keys = [k for k in by if k in _SEAT_KEYS]
    out: dict[str, list[GameData]] = {}
    for g in games:
        fixed = []
        for k in game_keys:
            if k == "rules":
                fixed.append(f"rules={g.rules.id}")
            else:
                root = (roots or {}).get(g.game_id, Path(g.path).parent.parent)
                fixed.append(f"corpus={corpus_of(g, root)}")
        if not seat_keys:
            out.setdefault(", ".join(fixed), []).append(g)
            continue
        seats: dict[tuple[str, ...], list[str]] = {}
        for name in g.names:
            seats.setdefault(tuple(_seat_value(g, name, k) for k in seat_keys), []).append(name)
        for values, names in seats.items():
            label = ", ".join(fixed + [f"{k}={v}" for k, v in zip(seat_keys, values, strict=True)])
            out.setdefault(label, []).append(restrict(g, names))
    return dict(sorted(out.items()))


def pooled_mix(games: Sequence[GameData]) -> str | None:
    """One line naming what a pooled report mixes (rule sets, models), or ``None``."""
    used = [g for g in games if not g.skipped]
    return mix_line({g.rules.id for g in used}, {m for g in used for m in (g.models or g.agents).values()})


def mix_line(rules: Iterable[str], models: Iterable[str]) -> str | None:
    """:func:`pooled_mix` from the rule set ids and models of the games pooled (skipped families left out)."""
    rules = sorted(set(rules))
    models = sorted(set(models))
    parts = []
    if len(rules) > 1:
        parts.append(f"{len(rules)} rule sets ({', '.join(rules)})")
    if len(models) > 1:
        shown = ", ".join(models[:6]) + (", …" if len(models) > 6 else "")
        parts.append(f"{len(models)} models ({shown})")
    if not parts:
        return None
    hint = " / ".join(f"--by {k}" for k, on in (("rules", len(rules) > 1), ("model", len(models) > 1)) if on)
    return f"pooled over {' and '.join(parts)}; compare them with {hint}"


def summary_groups(summary: GameSummary, by: Sequence[str], root: Path | None = None) -> list[tuple[str, Stats | None]]:
    """The groups of :func:`group_games` one game counts in, from its summary, with the statistics to count.

    Args:
        summary: The game's summary, computed with the seat keys of ``by`` (in order).
        by: Keys from :data:`BY_KEYS`.
        root: The report root for ``corpus`` (default: the game's parent folder).

    Returns:
        ``[(label, statistics)]``; the statistics are ``None`` where the game's own
        (``summary.stats``) count, and are ``None`` anyway for a skipped or degraded game.

    Raises:
        ValueError: An unknown key, or a summary computed for other seat keys.
    """
    bad = [k for k in by if k not in BY_KEYS]
    if bad:
        raise ValueError(f"--by: unknown key {bad[0]!r}; use one of {', '.join(BY_KEYS)}")
    seat_keys = [k for k in by if k in _SEAT_KEYS]
    fixed = []
    for k in by:
        if k == "rules":
            fixed.append(f"rules={summary.rules_id}")
        elif k == "corpus":
            fixed.append(f"corpus={corpus_of(summary, root or Path(summary.path).parent.parent)}")
    if not seat_keys:
        return [(", ".join(fixed), None)]
    if summary.seat_keys != seat_keys:
        raise ValueError(f"summary of {summary.game_id} holds groups by {summary.seat_keys}, not by {seat_keys}")
    return [(", ".join([*fixed, part]), stats) for part, stats in summary.groups.items()]


def compare(
    groups: Mapping[str, Sequence[GameData]],
    method: Method | str = "default",
    *,
    by: Sequence[str] = (),
    resamples: int = 1000,
    seed: int = 0,
    retests: Sequence[RetestRecord] = (),
    branches_left_out: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The report of every group (:func:`compute_report`; bootstrap by game within the group).

    Args:
        groups: Group label -> its games.
        method: ``"default"``, ``"mafiascope"`` or a :class:`Method`.
        by: The keys the groups were made by (recorded).
        resamples: Bootstrap resamples.
        seed: Bootstrap seed.
        retests: Test-retest records.
        branches_left_out: Group label -> ids of the fork branches left out of it (each
            group's ``inclusion`` states them).

    Returns:
        ``{"by": [...], "groups": [{"group": label, "games": n, "report": Report}]}``
        (:class:`~mafialab.analysis._report_model.Report`; :func:`comparison_json` gives
        the JSON object ``report --by --format json`` prints).
    """
    out = []
    left = branches_left_out or {}
    for label, gs in groups.items():
        rep = compute_report(
            gs, method, resamples=resamples, seed=seed, retests=retests, branches_left_out=left.get(label, ())
        )
        out.append({"group": label, "games": rep.games, "report": rep})
    return {"by": list(by), "groups": out}


def compare_built(
    builders: Mapping[str, ReportBuilder],
    *,
    by: Sequence[str] = (),
    resamples: int = 1000,
    seed: int = 0,
    retests: Sequence[RetestRecord] = (),
    branches_left_out: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """:func:`compare` from one :class:`~mafialab.analysis._report.ReportBuilder` per group (in the order given).

    ``branches_left_out``: per group label, the fork branches of its games left out (stated
    in each group's ``inclusion``).
    """
    out = []
    for label, b in builders.items():
        left = (branches_left_out or {}).get(label, ())
        rep = b.report(resamples=resamples, seed=seed, retests=retests, branches_left_out=left)
        out.append({"group": label, "games": rep.games, "report": rep})
    return {"by": list(by), "groups": out}


def compare_rows(cmp: Mapping[str, Any]) -> list[dict[str, Any]]:
    """CSV rows of a comparison: :func:`report_rows` of each group with a leading ``by`` column."""
    return [{"by": g["group"], **row.csv_fields()} for g in cmp["groups"] for row in report_rows(g["report"])]


def comparison_json(cmp: Mapping[str, Any]) -> dict[str, Any]:
    """A comparison (:func:`compare`) as JSON: each group's report as its ``model_dump(mode="json")``."""
    groups = [{**g, "report": g["report"].model_dump(mode="json")} for g in cmp["groups"]]
    return {**cmp, "groups": groups}


def summary_table(
    cmp: Mapping[str, Any], reference: Mapping[str, Any] | None = None
) -> tuple[list[str], list[list[str]]]:
    """The side-by-side table: a header (metric, then one column per group) and its rows.

    Each cell is ``value [low, high]`` (3 decimals; ``-`` for no value, the interval left
    out when there is none). ``reference`` (:func:`load_reference`) adds one column per
    published corpus.
    """
    cols = [g["group"] or "all" for g in cmp["groups"]]
    tables = [{(r.section, r.group, r.name): r for r in report_rows(g["report"])} for g in cmp["groups"]]
    refs = list((reference or {}).get("corpora", {}).items())
    named = [(c, v) for c, v in refs if any(c == part.split("=")[-1] or c == Path(part).name for col in cols
                                           for part in col.split(", "))]  # fmt: skip
    refs = named or refs  # the published corpus these games are, else every published one
    header = (
        ["metric", *cols, *[f"{reference['name']} {c} (published)" for c, _ in refs]]
        if reference
        else ["metric", *cols]
    )
    keys: list[tuple[str, str, str]] = []
    for sec, grp, name in SUMMARY_ROWS:
        if grp == "*":
            rounds = sorted({k[1] for t in tables for k in t if k[0] == sec and k[2] == name}, key=_round_key)
            rounds += sorted(
                {g for _, v in refs for g in v.get(sec, {}) if name in v[sec][g]} - set(rounds), key=_round_key
            )
            keys.extend((sec, r, name) for r in rounds)
        else:
            keys.append((sec, grp, name))
    rows = []
    for key in keys:
        cells = [_cell(t.get(key)) for t in tables]
        cells += [_ref_cell(v, key) for _, v in refs]
        if any(c != "-" for c in cells):
            rows.append([_label(key), *cells])
    return header, rows


def _round_key(group: str) -> int:
    try:
        return int(group.split()[-1])
    except ValueError:
        return 0


_LABELS = {
    ("summary", "games"): "games",
    ("summary", "probe_records"): "probe records",
    ("first_order", "committed_accuracy"): "F1 {r} accuracy",
    ("first_order", "recall"): "F1 {r} recall",
    ("calibration", "n"): "F2 answers",
    ("calibration", "ece"): "F2 ECE",
    ("calibration", "brier"): "F2 Brier",
    ("second_order", "overprediction_ratio"): "F3 over-prediction",
    ("second_order", "accuracy"): "F3 accuracy",
    ("dynamics", "volatility"): "volatility",
    ("dynamics", "flip_rate"): "top-suspect flips",
}


def _label(key: tuple[str, str, str]) -> str:
    sec, grp, name = key
    if sec == "vote_coupling":
        side, measure = grp.split(" ", 1)
        if measure.startswith("baseline "):  # the transcript predictor of the innocents' votes
            return f"F4 transcript {measure.removeprefix('baseline ').replace('_', ' ')}"
        return f"F4 {side} {measure.replace('_', ' ').replace('top1', 'top-1')}"
    return _LABELS.get((sec, name), f"{sec} {grp} {name}").format(r=grp.replace("round ", "r"))


def _num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) >= 2):
        return str(int(x))
    return f"{x:.3f}"


def _short(x: float) -> str:
    t = f"{x:.2f}"
    return t[1:] if t.startswith("0.") else t


def _cell(row: ReportRow | None) -> str:
    if row is None or row.value is None:
        return "-"
    if row.ci is None:
        return _num(row.value)
    return f"{_num(row.value)} [{_short(row.ci[0])},{_short(row.ci[1])}]"


def _ref_cell(ref: Mapping[str, Any], key: tuple[str, str, str]) -> str:
    sec, grp, name = key
    if sec == "summary":
        return _num(ref.get(name))
    node = ref.get(sec, {})
    return _num((node.get(grp, {}) if grp else node).get(name))


REFERENCES = ("mafiascope",)
"""Published figures shipped with the package (``analysis/reference/<name>.yaml``)."""


def load_reference(name: str) -> dict[str, Any]:
    """Published figures to show beside ours (``--reference``), with their source.

    The numbers are the published reference values (facts, transcribed), keyed like the
    report's CSV rows: ``corpora.<corpus>.<section>.<group>.<name>``.

    Raises:
        ValueError: An unknown reference name (the message lists the known ones).
    """
    if name not in REFERENCES:
        raise ValueError(f"--reference: unknown {name!r}; use one of {', '.join(REFERENCES)}")
    data = read_config(resources.files("mafialab.analysis") / "reference" / f"{name}.yaml")
    return {"name": name, **data}
