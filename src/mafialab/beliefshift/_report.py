"""Aggregation of results into the paper's tables (per model and per group)."""

from __future__ import annotations

import math
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mafialab._quality import CONSTANT_MIN_ANSWERS
from mafialab.analysis import EMPTY_STAT as EMPTY
from mafialab.analysis import Stat, bootstrap_weights, cluster_bootstrap_ci, combine, diff_ci, mean_ci
from mafialab.beliefshift._inspect_log import is_inspect_log, read_inspect_results
from mafialab.beliefshift._io import read_results
from mafialab.beliefshift._schema import (
    SCALE,
    SHIFT_RANGE_INDEPENDENT,
    ResultRecord,
    constant_stages,
    label_of,
    too_few_to_judge,
    trust_bin,
)
from mafialab.beliefshift._tables import Cell, Table
from mafialab.config import ConfigError, load_config, read_config

CIMethod = Literal["t", "cluster"]
"""How per-model CIs are computed: Student t over responses, or game-level cluster bootstrap."""

SIZE_GROUPS: tuple[str, ...] = ("<5B", "5-<10B", "10-<30B", ">=30B")
"""Size groups by parameter count (the paper's ≤4B, 5–9B, 10–29B, ≥30B without gaps)."""
AVG_GROUP = "Avg."
"""Group of all size-grouped models (all models when none has a size), as the paper's "Avg." row."""

TEAMS = (("town", "village"), ("mafia", "wolf"))
CATEGORIES = (("suspect", "Sus."), ("accuse", "Acc."))
BINS = (("trust", "Trust"), ("neutral", "Neutral"), ("distrust", "Distrust"))
CAUSES = ("transport", "length", "empty", "non_json", "schema", "out_of_scale")


def size_group(params_b: float) -> str:
    """Size group of a model with ``params_b`` billion parameters.

    ``< 5`` -> ``"<5B"``, ``5 <= p < 10`` -> ``"5-<10B"``, ``10 <= p < 30`` -> ``"10-<30B"``,
    ``>= 30`` -> ``">=30B"``.
    """
    if params_b < 5:
        return "<5B"
    if params_b < 10:
        return "5-<10B"
    if params_b < 30:
        return "10-<30B"
    return ">=30B"


@dataclass(frozen=True)
class ModelInfo:
    """What ``models.yaml`` says about a configuration.

    Attributes:
        label: Configuration label (as given to ``beliefshift run --label``, or the model string).
        params_b: Parameter count in billions, or ``None``.
        reasoning: Reasoning mode (``on``/``off``), or ``None``.
        group: Named group (e.g. ``frontier``); overrides the size group.
    """

    label: str
    params_b: float | None = None
    reasoning: str | None = None
    group: str | None = None


class ModelsFileError(ConfigError):
    """``models.yaml`` is malformed (the message names the file and the field)."""


class _ModelEntry(BaseModel):
    """One entry of ``models.yaml`` (``checkpoint`` and ``note`` are free text, not used)."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1)
    params_b: float | None = None
    reasoning: Literal["on", "off"] | None = None
    group: str | None = None
    checkpoint: str | None = None
    note: str | None = None

    @field_validator("params_b", mode="before")
    @classmethod
    def _number(cls, v: Any) -> Any:
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v <= 0):
            raise ValueError(f"must be a finite number > 0, got {v!r}")
        return v

    @field_validator("reasoning", mode="before")
    @classmethod
    def _on_off(cls, v: Any) -> Any:
        if isinstance(v, bool):  # YAML reads a bare on/off as a boolean
            return "on" if v else "off"
        if v is not None and v not in ("on", "off"):
            raise ValueError(f"must be on or off, got {v!r}")
        return v


class _ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: list[_ModelEntry]

    @field_validator("models")
    @classmethod
    def _unique(cls, v: list[_ModelEntry]) -> list[_ModelEntry]:
        seen: set[str] = set()
        for m in v:
            if m.label in seen:
                raise ValueError(f"duplicate label {m.label!r}")
            seen.add(m.label)
        return v


def load_models_yaml(path: Path) -> dict[str, ModelInfo]:
    """Read ``models.yaml``.

    Format: ``models:`` followed by a list of mappings with ``label`` (required), ``params_b``
    (number > 0), ``reasoning`` (``on``/``off``; YAML booleans accepted), ``group``, and the
    free-text ``checkpoint`` and ``note``.

    Raises:
        ModelsFileError: Unreadable file or invalid field (the message names the file and the
            field, e.g. ``models.yaml: models[0].params_b: …``).
    """
    parsed = load_config(Path(path), _ModelsFile, error=ModelsFileError)
    return {m.label: ModelInfo(m.label, m.params_b, m.reasoning, m.group) for m in parsed.models}


@dataclass
class Config:
    """One evaluated configuration (label x protocol) and its valid observations."""

    key: str
    label: str
    model: str
    protocol: str
    info: ModelInfo
    group: str
    records: list[ResultRecord] = field(default_factory=list)
    total: int = 0
    causes: Counter[str] = field(default_factory=Counter)
    shortened: int = 0


def _match(label: str, model: str, infos: dict[str, ModelInfo]) -> ModelInfo | None:
    for k in (label, model, label.rsplit("/", 1)[-1], model.rsplit("/", 1)[-1]):
        if k in infos:
            return infos[k]
    return None


def collect(results: Sequence[ResultRecord], infos: dict[str, ModelInfo] | None = None) -> list[Config]:
    """Group result records into configurations.

    The last record of each (label, protocol, item, observer) wins (a resumed run appends).
    With ``infos`` (from ``models.yaml``), a model goes to its named group, else to its size
    group; a model the file does not list, or listed without size or group, is its own
    group. Without ``infos`` every model is its own group.
    """
    last: dict[tuple[str, str, str, int], ResultRecord] = {}
    for r in results:
        last[(r.label, r.protocol, r.item_id, r.observer.seat)] = r
    protocols = {r.protocol for r in last.values()}
    mixed = len(protocols) > 1
    configs: dict[tuple[str, str], Config] = {}
    for (label, protocol, _, _), r in last.items():
        c = configs.get((label, protocol))
        if c is None:
            info = _match(label, r.model, infos or {}) or ModelInfo(label)
            key = f"{label} [{protocol}]" if mixed else label
            if info.group:
                group = info.group
            elif info.params_b is not None:
                group = size_group(info.params_b)
            else:
                group = key
            if mixed and group != key:
                group = f"{group} [{protocol}]"
            c = configs[(label, protocol)] = Config(key, label, r.model, protocol, info, group)
        c.total += 1
        c.shortened += r.history_dropped > 0
        if r.ok and r.prior is not None and r.shift is not None:
            c.records.append(r)
        else:
            c.causes[r.cause or "unknown"] += 1
    return sorted(configs.values(), key=lambda c: (c.info.params_b or math.inf, c.key))


def _team(t: str) -> str:
    return "village" if t == "town" else "wolf"


def model_quantities(
    records: Sequence[ResultRecord], protocol: str = "anchored", ci: CIMethod = "t", *, seed: int = 0
) -> dict[str, Stat]:
    """Every reported quantity of one configuration, from its valid observations.

    Keys (``team`` is the accuser's true team, ``village``/``wolf``; ``who`` is ``target`` or
    ``accuser``; shifts are positive toward wolf):

    * ``prior.wolf`` / ``prior.village``: mean prior about players truly on that side (both
      the accuser and the target priors of every observation, pooled); ``prior.separation``:
      their difference.
    * ``t1.<team>.<suspect|accuse>.<who>``: mean shift (paper Table 1).
    * ``t2.<team>.<trust|neutral|distrust>.<who>``: mean shift by the trust bin of the
      prior about the accuser (paper Table 2).
    * ``t2c.<correct|incorrect>.<team>.<bin>.<who>``: the same split by whether the target
      is truly wolf-aligned.
    * ``dist.prior.<level>`` / ``dist.shift.<level>`` (and ``dist.posterior.<level>``
      under the independent protocol): % of answers at each level (no CI).

    Args:
        records: Valid observations of one configuration.
        protocol: Their protocol (sets the shift levels of the distributions).
        ci: ``"t"``: Student-t over responses treated as independent (:func:`mean_ci`; Welch
            for the separation); ``"cluster"``: game-level cluster bootstrap (1,000 resamples,
            percentile interval, reported as the larger distance from the mean to a bound).
            Either way fewer than two clusters give no interval (half-width ``nan``), as
            everywhere in mafialab: fewer than two responses (``t``), or values from fewer
            than two games (``cluster``; see :func:`mafialab.analysis.no_interval_reason`).
        seed: Seed of the bootstrap resamples.
    """
    q: dict[str, Stat] = {}
    wolf = [(r.game_id, float(v)) for r in records for p, v in _priors(r) if p == "mafia"]
    vill = [(r.game_id, float(v)) for r in records for p, v in _priors(r) if p == "town"]
    games = sorted({r.game_id for r in records})
    weights = bootstrap_weights(len(games), 1000, seed) if ci == "cluster" and games else None
    gidx = {g: i for i, g in enumerate(games)}

    def mean(xs: list[tuple[str, float]]) -> Stat:
        if weights is None:
            return mean_ci([v for _, v in xs])
        return _cluster_stat([xs], gidx, weights)

    q["prior.wolf"] = mean(wolf)
    q["prior.village"] = mean(vill)
    if weights is None:
        q["prior.separation"] = diff_ci([v for _, v in wolf], [v for _, v in vill])
    else:
        q["prior.separation"] = _cluster_stat([wolf, vill], gidx, weights)
    buckets: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for r in records:
        assert r.prior is not None and r.shift is not None
        team = _team(r.accuser.team)
        b: str = trust_bin(r.prior.accuser)
        corr = "correct" if r.target.team == "mafia" else "incorrect"
        for who, v in (("target", r.shift.target), ("accuser", r.shift.accuser)):
            buckets[f"t1.{team}.{r.category}.{who}"].append((r.game_id, v))
            buckets[f"t2.{team}.{b}.{who}"].append((r.game_id, v))
            buckets[f"t2c.{corr}.{team}.{b}.{who}"].append((r.game_id, v))
    for team in ("village", "wolf"):
        for who in ("target", "accuser"):
            for cat, _ in CATEGORIES:
                q[f"t1.{team}.{cat}.{who}"] = mean(buckets.get(f"t1.{team}.{cat}.{who}", []))
            for b, _ in BINS:
                q[f"t2.{team}.{b}.{who}"] = mean(buckets.get(f"t2.{team}.{b}.{who}", []))
                for corr in ("correct", "incorrect"):
                    q[f"t2c.{corr}.{team}.{b}.{who}"] = mean(buckets.get(f"t2c.{corr}.{team}.{b}.{who}", []))
    for kind, levels, values in _distributions(records, protocol):
        n = len(values)
        cnt = Counter(values)
        for lv in levels:
            q[f"dist.{kind}.{label_of(lv)}"] = Stat(100.0 * cnt[lv] / n, math.nan, n) if n else EMPTY
    return q


def _cluster_stat(parts: list[list[tuple[str, float]]], gidx: dict[str, int], weights: Any) -> Stat:
    """Mean of ``parts[0]`` (minus that of ``parts[1]``) with a game-level bootstrap interval.

    Uses :func:`mafialab.analysis.cluster_bootstrap_ci` on per-game sums and counts.
    """
    import numpy as np

    n = sum(len(p) for p in parts)
    if any(not p for p in parts):
        return EMPTY
    sums = np.zeros((len(gidx), 2 * len(parts)))
    for j, p in enumerate(parts):
        for g, v in p:
            sums[gidx[g], 2 * j] += v
            sums[gidx[g], 2 * j + 1] += 1
    total = sums.sum(axis=0)
    means = [total[2 * j] / total[2 * j + 1] for j in range(len(parts))]
    m = means[0] - means[1] if len(parts) == 2 else means[0]

    def stat(x: Any) -> Any:
        a = x[..., 0] / x[..., 1]
        return a - x[..., 2] / x[..., 3] if len(parts) == 2 else a

    ci = cluster_bootstrap_ci(sums, stat, weights=weights)
    if ci is None or n < 2:
        return Stat(float(m), math.nan, n)
    return Stat(float(m), max(float(m) - ci[0], ci[1] - float(m)), n)


def _priors(r: ResultRecord) -> list[tuple[str, int]]:
    assert r.prior is not None
    return [(r.accuser.team, r.prior.accuser), (r.target.team, r.prior.target)]


def _distributions(records: Sequence[ResultRecord], protocol: str) -> list[tuple[str, tuple[int, ...], list[int]]]:
    priors = [v for r in records if r.prior for v in (r.prior.accuser, r.prior.target)]
    shifts = [v for r in records if r.shift for v in (r.shift.accuser, r.shift.target)]
    out = [("prior", SCALE, priors)]
    if protocol == "independent":
        posts = [v for r in records if r.posterior for v in (r.posterior.accuser, r.posterior.target)]
        out += [("posterior", SCALE, posts), ("shift", SHIFT_RANGE_INDEPENDENT, shifts)]
    else:
        out.append(("shift", SCALE, shifts))
    return out


@dataclass
class Report:
    """All tables of a report, the configurations and their groups.

    Attributes:
        configs: The configurations, smallest first.
        groups: Group name -> configuration keys, in display order.
        quantities: Configuration key -> quantity key -> stat.
        group_quantities: Group name -> quantity key -> stat (see :func:`combine`).
        tables: Table name -> table.
        benches: Benchmark ids the results come from (more than one: not comparable).
    """

    configs: list[Config]
    groups: dict[str, list[str]]
    quantities: dict[str, dict[str, Stat]]
    group_quantities: dict[str, dict[str, Stat]]
    tables: dict[str, Table]
    benches: list[str] = field(default_factory=list)


def _group_order(configs: Sequence[Config]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for c in configs:
        groups[c.group].append(c.key)
    sized = [c.key for c in configs if c.info.group is None and c.info.params_b is not None]
    order: list[str] = []
    for g in SIZE_GROUPS:
        order += [k for k in groups if k == g or k.startswith(g + " [")]
    order += [g for g in groups if g not in order and any(c.group == g and c.info.group for c in configs)]
    order += [g for g in groups if g not in order]
    out = {g: groups[g] for g in order}
    protocols = sorted({c.protocol for c in configs})
    for proto in protocols:
        members = [c for c in configs if c.protocol == proto]
        if len(members) < 2:
            continue
        sized_p = [c.key for c in members if c.key in sized]
        name = AVG_GROUP if len(protocols) == 1 else f"{AVG_GROUP} [{proto}]"
        out[name] = sized_p or [c.key for c in members]
    return out


def build_report(
    results: Sequence[ResultRecord], infos: dict[str, ModelInfo] | None = None, ci: CIMethod = "t"
) -> Report:
    """Aggregate result records into every table.

    Group rows average the per-model means (each model counts once; see
    :func:`mafialab.beliefshift.combine`); ``n`` in a group row is the number of models.

    Args:
        results: Result records of one or more configurations.
        infos: ``models.yaml`` entries by label (``None``: each model is its own group).
        ci: Per-model CI method (see :func:`model_quantities`).
    """
    configs = collect(results, infos)
    quantities = {c.key: model_quantities(c.records, c.protocol, ci) for c in configs}
    groups = _group_order(configs)
    gq: dict[str, dict[str, Stat]] = {}
    for g, keys in groups.items():
        allk = {k for key in keys for k in quantities[key]}
        gq[g] = {k: combine([quantities[key].get(k, EMPTY) for key in keys]) for k in sorted(allk)}
    protocols = sorted({c.protocol for c in configs})
    benches = sorted({r.bench_id for r in results})
    note_p = f"Protocol: {', '.join(protocols) or 'none'}. Benchmark: {', '.join(benches) or 'none'}."
    if len(benches) > 1:
        note_p += " Warning: the results come from different benchmarks, so models saw different items."
    how = "Student t over responses" if ci == "t" else "game-level cluster bootstrap, 1,000 resamples"
    note_ci = (
        f"Model rows: mean ± 95 % CI ({how}). Group rows: unweighted average of the "
        "models' means ± CI propagated from the models' CIs (models fixed); n = models. "
        + (
            "A mean without ± has no interval: fewer than 2 responses"
            if ci == "t"
            else "A mean without ± has no interval: its responses come from fewer than 2 games"
        )
        + ", or every response is the same value (zero variance)."
    )
    tables: dict[str, Table] = {}
    tables["completion"] = _completion_table(configs, note_p)
    indep = "independent" in protocols
    for scope in ("models", "groups"):
        rows: list[tuple[str, str, dict[str, Stat]]]
        if scope == "models":
            rows = [(c.key, c.group, quantities[c.key]) for c in configs]
        else:
            rows = [(g, "", gq[g]) for g in groups]
        notes = [note_p, note_ci]
        tables[f"prior_discrimination_{scope}"] = _prior_table(scope, rows, notes)
        tables[f"table1_{scope}"] = _table1(scope, rows, notes)
        tables[f"table2_{scope}"] = _table2(scope, rows, notes, None)
        tables[f"table2_correctness_{scope}"] = _table2(scope, rows, notes, ("correct", "incorrect"))
        tables[f"table9_{scope}"] = _table9(scope, rows, [note_p], indep)
    tables["spearman"] = _spearman(configs, quantities, note_p)
    return Report(configs, groups, quantities, gq, tables, benches)


def _n(scope: str, s: Stat | None) -> int:
    return 0 if s is None else s.n


def _first_col(scope: str) -> str:
    return "model" if scope == "models" else "group"


def _prior_table(scope: str, rows: list[tuple[str, str, dict[str, Stat]]], notes: list[str]) -> Table:
    cols = [_first_col(scope)] + (["group"] if scope == "models" else []) + ["n", "wolves", "villagers", "separation"]
    t = Table(f"prior_discrimination_{scope}", f"Prior discrimination ({scope}): mean prior about true wolves and "
              "true villagers (-3 strongly village ... +3 strongly wolf)", cols, notes=list(notes))  # fmt: skip
    for name, group, q in rows:
        n = (
            q.get("prior.separation", EMPTY).n
            if scope == "groups"
            else _n(scope, q.get("prior.wolf")) + _n(scope, q.get("prior.village"))
        )
        row: list[Any] = [name] + ([group] if scope == "models" else [])
        row += [n, q.get("prior.wolf", EMPTY), q.get("prior.village", EMPTY), q.get("prior.separation", EMPTY)]
        t.rows.append(row)
    if scope == "models":
        t.notes.append("n = priors rated (two per observation: accuser and target).")
    return t


def _table1(scope: str, rows: list[tuple[str, str, dict[str, Stat]]], notes: list[str]) -> Table:
    cols = ["accuser", _first_col(scope), "n"] + [
        f"{who} {lab}" for who in ("target", "accuser") for _, lab in CATEGORIES
    ]
    t = Table(f"table1_{scope}", f"Mean shift by accuser team and message strength ({scope}; paper Table 1)", cols,
              notes=list(notes))  # fmt: skip
    for _, team in TEAMS:
        for name, _, q in rows:
            cells = [q.get(f"t1.{team}.{cat}.{who}", EMPTY) for who in ("target", "accuser") for cat, _ in CATEGORIES]
            n = (
                max(c.n for c in cells)
                if scope == "groups"
                else sum(q.get(f"t1.{team}.{c}.target", EMPTY).n for c, _ in CATEGORIES)
            )
            t.rows.append([team, name, n, *cells])
    if scope == "models":
        t.notes.append("n = observations with an accuser of that team.")
    return t


def _table2(
    scope: str, rows: list[tuple[str, str, dict[str, Stat]]], notes: list[str], split: tuple[str, str] | None
) -> Table:
    cols = (["target is"] if split else []) + ["accuser", _first_col(scope), "n"]
    cols += [f"{who} {lab}" for who in ("target", "accuser") for _, lab in BINS]
    name = f"table2_correctness_{scope}" if split else f"table2_{scope}"
    title = "Mean shift by trust bin of the prior about the accuser"
    title += ", split by accusation correctness" if split else ""
    t = Table(name, f"{title} ({scope}; paper Table 2)", cols, notes=list(notes))
    t.notes.append("Trust bins: Trust {-3,-2}, Neutral {-1,0,+1}, Distrust {+2,+3}.")
    for part in split or (None,):
        for _, team in TEAMS:
            for nm, _, q in rows:
                pre = f"t2c.{part}." if part else "t2."
                cells = [q.get(f"{pre}{team}.{b}.{who}", EMPTY) for who in ("target", "accuser") for b, _ in BINS]
                n = (
                    max(c.n for c in cells)
                    if scope == "groups"
                    else sum(q.get(f"{pre}{team}.{b}.target", EMPTY).n for b, _ in BINS)
                )
                label = {"correct": "wolf (correct)", "incorrect": "village (incorrect)"}.get(part or "", "")
                head: list[Cell] = [label] if split else []
                t.rows.append([*head, team, nm, n, *cells])
    return t


def _table9(scope: str, rows: list[tuple[str, str, dict[str, Stat]]], notes: list[str], indep: bool) -> Table:
    levels = SHIFT_RANGE_INDEPENDENT if indep else SCALE
    cols = ["answer", _first_col(scope)] + [label_of(lv) for lv in levels]
    t = Table(f"table9_{scope}", f"Response distribution (%) over the levels ({scope}; paper Table 9)", cols,
              notes=list(notes), digits=1)  # fmt: skip
    kinds = ("prior", "posterior", "shift") if indep else ("prior", "shift")
    for kind in kinds:
        for nm, _, q in rows:
            cells: list[Any] = []
            for lv in levels:
                st = q.get(f"dist.{kind}.{label_of(lv)}")
                cells.append(st.mean if st is not None and st.n else math.nan)
            t.rows.append([kind, nm, *cells])
    t.notes.append(
        "Priors and shifts about the accuser and the target pooled. Group rows average the models' percentages."
        + (" Independent protocol: shift = posterior - prior, -6..+6." if indep else "")
    )
    return t


def _completion_table(configs: Sequence[Config], note: str) -> Table:
    cols = ["model", "params (B)", "reasoning", "protocol", "group", "observations", "valid", "informative"]
    cols += ["completion %", *CAUSES, "shortened"]
    t = Table("completion", "Completion per model (target >= 95 %)", cols, notes=[note], digits=1)
    flagged, few = [], []
    for c in configs:
        ok = len(c.records)
        same = constant_stages(c.records)
        if too_few_to_judge(ok) is not None:
            few.append(f"{c.key} ({ok})")
        informative = 0 if same else ok
        if same:
            flagged.append(f"{c.key} (" + ", ".join(f"every {k} {v}" for k, v in same.items()) + ")")
        size = c.info.params_b if c.info.params_b is not None else ""
        rate = 100.0 * informative / c.total if c.total else math.nan
        row: list[Cell] = [c.key, size, c.info.reasoning or "", c.protocol, c.group, c.total, ok, informative, rate]
        t.rows.append([*row, *(c.causes.get(x, 0) for x in CAUSES), c.shortened])
    t.notes.append("Failure causes of observations that did not complete; shortened = history cut to fit the context.")
    t.notes.append(
        "Completion counts informative observations: valid ones, none of a model whose answers do not vary "
        "(one value over 10 or more valid observations at a stage)."
    )
    if flagged:
        t.notes.append("Answers that do not vary (flagged, not informative): " + "; ".join(flagged) + ".")
    if few:
        t.notes.append(
            f"Too few valid observations (under {CONSTANT_MIN_ANSWERS}) to judge whether the answers vary "
            "(a note, not a flag; counted informative): " + "; ".join(few) + "."
        )
    return t


_SPEARMAN_EXACT_MAX = 8
"""Up to this many models the Spearman p-value is exact (all n! orderings, 40,320 at 8)."""


def _spearman_exact_p(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Exact two-sided permutation p-value of Spearman's rho for a few (x, y) pairs.

    The t approximation that ``scipy.stats.spearmanr`` uses is badly wrong for a handful of
    models (three models in perfect order give p = 0, when only 2 of the 3! = 6 orderings
    are that extreme: p = 1/3). Here p is the share of the n! orderings of the y ranks
    (average ranks for ties) whose |rho| is at least the observed |rho| (Kendall & Gibbons,
    *Rank Correlation Methods*, 5th ed., ch. 4).

    Args:
        xs: Model sizes (n >= 2).
        ys: The quantity per model, same length.

    Returns:
        p in (0, 1]; NaN when either side is constant.
    """
    import itertools

    import numpy as np
    from scipy.stats import rankdata

    rx, ry = rankdata(xs), rankdata(ys)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = math.sqrt(float((rx * rx).sum()) * float((ry * ry).sum()))
    if den == 0:
        return math.nan
    obs = abs(float((rx * ry).sum())) / den
    perms = np.array(list(itertools.permutations(ry)))
    rhos = np.abs(perms @ rx) / den
    return float(np.mean(rhos >= obs - 1e-12))


def _spearman(configs: Sequence[Config], quantities: dict[str, dict[str, Stat]], note: str) -> Table:
    from scipy.stats import spearmanr

    t = Table("spearman", "Spearman rank correlation between model size and each quantity",
              ["quantity", "models", "rho", "p"], notes=[note], digits=3)  # fmt: skip
    sized = [c for c in configs if c.info.params_b is not None]
    keys = sorted({k for c in configs for k in quantities[c.key]}, key=_qorder)
    for k in keys:
        pairs = [
            (c.info.params_b, quantities[c.key][k].mean)
            for c in sized
            if k in quantities[c.key] and quantities[c.key][k].n > 0 and not math.isnan(quantities[c.key][k].mean)
        ]
        rho = p = math.nan
        if len(pairs) >= 3:
            xs, ys = zip(*pairs, strict=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = spearmanr(xs, ys)
            rho, p = float(res.statistic), float(res.pvalue)
            if len(pairs) <= _SPEARMAN_EXACT_MAX and not math.isnan(rho):
                p = _spearman_exact_p(xs, ys)
        t.rows.append([k, len(pairs), rho, p])
    t.notes.append("Over models with params_b in models.yaml (at least 3 needed); per-model means.")
    t.notes.append(
        f"p: two-sided; exact over all orderings for at most {_SPEARMAN_EXACT_MAX} models, "
        "otherwise the t approximation of scipy.stats.spearmanr."
    )
    return t


def _qorder(k: str) -> tuple[int, str]:
    return ({"prior": 0, "t1": 1, "t2": 2, "t2c": 3, "dist": 4}.get(k.split(".")[0], 9), k)


def read_all_results(paths: Sequence[Path]) -> tuple[list[ResultRecord], list[str]]:
    """Read every results file, or Inspect log of ``mafialab/beliefshift``: ``(records, problems)``.

    A path ending in ``.eval``, or a ``.json`` file holding one JSON object, is read as an
    Inspect AI log (:func:`read_inspect_results`; needs ``mafialab[inspect]``); anything
    else as a results file (JSONL).

    Raises:
        mafialab.beliefshift.BeliefShiftFormatError: An invalid file.
        ImportError: An Inspect log given without Inspect AI installed (says what to install).
    """
    recs: list[ResultRecord] = []
    problems: list[str] = []
    for p in paths:
        if is_inspect_log(Path(p)):
            r, pr = read_inspect_results(Path(p))
        else:
            _, r, pr = read_results(Path(p))
        recs += r
        problems += pr
    return recs, problems


def plot_prior_discrimination(report: Report, path: Path) -> Path:
    """PNG of mean priors about true wolves and true villagers (95 % CIs), per group.

    Groups are used when there is more than one model; otherwise the single model.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if len(report.configs) > 1:
        names = list(report.groups)
        qs = [report.group_quantities[g] for g in names]
    else:
        names = [c.key for c in report.configs]
        qs = [report.quantities[c.key] for c in report.configs]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(names) + 2), 3.6), dpi=120)
    xs = list(range(len(names)))
    for off, key, color, lab in (
        (-0.12, "prior.wolf", "#c0392b", "true wolves"),
        (0.12, "prior.village", "#2471a3", "true villagers"),
    ):
        m = [q.get(key, EMPTY).mean for q in qs]
        h = [0.0 if math.isnan(q.get(key, EMPTY).half) else q.get(key, EMPTY).half for q in qs]
        ax.errorbar([x + off for x in xs], m, yerr=h, fmt="o", color=color, capsize=3, label=lab)
    ax.axhline(0, color="grey", lw=0.5)
    ax.set_xticks(xs, names, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(-3.2, 3.2)
    ax.set_ylabel("mean prior (-3 village ... +3 wolf)")
    ax.set_title("Prior discrimination")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


PUBLISHED_TABLES = ("table1", "table2")
"""Tables whose published rows ``beliefshift report --published`` places beside ours."""


def load_published() -> dict[str, Any]:
    """The published Tables 1 and 2 (group means, as numbers) shipped as package data.

    Returns:
        ``{"source": str, "table1" | "table2": {"columns": [...], "rows": [{"accuser":
        "village" | "wolf", "group", "models", "values": [mean | [mean, half], ...]}]}}``.
    """
    data: dict[str, Any] = read_config(resources.files("mafialab.beliefshift") / "published.yaml")
    return data


def add_published(report: Report) -> int:
    """Append the published group rows to Tables 1 and 2 (per group and per model), labelled.

    Each published row reads ``published <group>`` (``≤4B`` ... ``frontier``) with ``n`` the
    number of evaluated models behind it and cells ``mean ± half`` as published, so a new
    model's row sits beside the published models' rows under the same protocol.

    Returns:
        Rows added.
    """
    pub = load_published()
    added = 0
    for table in PUBLISHED_TABLES:
        spec = pub[table]
        for scope in ("groups", "models"):
            t = report.tables.get(f"{table}_{scope}")
            if t is None:
                continue
            for row in spec["rows"]:
                cells: list[Cell] = [
                    Stat(float(v[0]), float(v[1]), row["models"]) if isinstance(v, list)
                    else Stat(float(v), math.nan, row["models"])
                    for v in row["values"]
                ]  # fmt: skip
                t.rows.append([row["accuser"], f"published {row['group']}", row["models"], *cells])
                added += 1
            t.notes.append(f"Rows 'published <group>': {pub['source']}.")
    return added


def write_report(report: Report, out_dir: Path) -> list[Path]:
    """Write the report files under ``out_dir`` and return their paths.

    Every table as ``<name>.md``, ``.tex`` and ``.csv``; all Markdown tables together in
    ``report.md``; the figure as ``prior_discrimination.png``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, t in report.tables.items():
        for ext, text in (("md", t.to_markdown()), ("tex", t.to_latex()), ("csv", t.to_csv())):
            p = out_dir / f"{name}.{ext}"
            p.write_text(text, encoding="utf-8")
            written.append(p)
    md = "# Belief-shift report\n\n" + "\n".join(t.to_markdown() for t in report.tables.values())
    (out_dir / "report.md").write_text(md, encoding="utf-8")
    written.append(out_dir / "report.md")
    written.append(plot_prior_discrimination(report, out_dir / "prior_discrimination.png"))
    return written
