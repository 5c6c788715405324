"""``mafialab report``: belief metrics F1-F4 with confidence intervals over a log directory."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.progress import Progress, TaskID
from rich.table import Table
from rich.text import Text

from mafialab.analysis import (
    BY_KEYS,
    MIN_CLUSTERS,
    NONE_FIRED,
    SEAT_KEYS,
    Instrument,
    InstrumentGame,
    InstrumentPooled,
    Quality,
    Report,
    ReportBuilder,
    TokenCounts,
    compare_built,
    compare_rows,
    comparison_json,
    find_retests,
    fmt_p,
    iter_summaries,
    kaggle_figures,
    load_reference,
    mix_line,
    quality_lines,
    report_rows,
    summary_groups,
    summary_table,
)
from mafialab.analysis import split_branches as split_branches
from mafialab.cli._app import console, count, err_console, progress_bar
from mafialab.cli._options import (
    Format,
    Games,
    InPath,
    Keys,
    OutDir,
    cache_option,
    checked,
    keys_once,
    no_cache_option,
    ray_option,
    refusing,
    seed_option,
    summary_cache,
)
from mafialab.harness import RayConnectError
from mafialab.record import RETEST_FILE, LogFormatError, read_retests
from mafialab.rules import RuleSet, winners_line


class _Method(StrEnum):
    default = "default"
    mafiascope = "mafiascope"


NO_PROBES = (
    "no probe records in these games: F1-F3, F4's probe measures, belief dynamics and the quadrant table "
    "need a probe battery (mafialab play --probes default)"
)
"""What a report of games without probe records says instead of its probe tables."""


def _f(x: Any, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _ci(ci: list[float] | None, value: Any = None) -> str:
    """An interval, or why there is none (a value without an interval: < 2 games behind it)."""
    if ci is not None:
        return f"[{ci[0]:.3f}, {ci[1]:.3f}]"
    return "" if value is None else f"n/a (<{MIN_CLUSTERS} games)"


def _tok(t: TokenCounts | None) -> str:
    return "-" if t is None else f"{t.prompt}+{t.completion}"


LOSS_LEGEND = "transport/empty/cut/unparseable/shape/schema"
"""The causes in the ``lost`` column of the instrument's answers table, in order."""


def whole_table(title: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    """A table whose values are never cut ("wer…") nor broken inside a word at 80 columns.

    Each column is as wide as its longest value, or longest line of a value (a value with its
    interval takes two lines: :func:`_with_ci`), and as its header when that still fits the
    console (else a header wraps at its spaces). A table that does not fit the console with
    rules drops its vertical rules and outer padding; one still too wide should be split by
    its caller (as the instrument is).
    """
    values = [max([len(line) for r in rows for line in r[k].splitlines()], default=0) for k in range(len(head))]
    whole = [max(v, len(h)) for v, h in zip(values, head, strict=True)]  # headers on one line
    words = [max([v, *(len(w) for w in h.split())]) for v, h in zip(values, head, strict=True)]  # headers wrapped
    n = len(head)
    layouts = [(True, whole), (True, words), (False, whole), (False, words)]  # the first that fits
    fits = [(r, w) for r, w in layouts if sum(w) + (3 * n + 1 if r else 3 * n - 3) <= console.width]
    ruled, widths = fits[0] if fits else layouts[-1]
    t = Table(title=title) if ruled else Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for h, w in zip(head, widths, strict=True):
        t.add_column(h, width=w, overflow="fold")
    for r in rows:
        t.add_row(*(Text(c) for c in r))  # game ids, model names: text, never console markup
    return t


def _print_instrument(ins: Instrument, probed: bool = True) -> None:
    """The instrument's cost and loss, pooled then per game, as two tables that fit 80 columns."""
    rows: list[tuple[str, str, InstrumentPooled | InstrumentGame]] = [
        ("pooled", "", ins.pooled),
        *((g.game_id, g.calls_source, g) for g in ins.games),
    ]
    cost = [
        [
            gid,
            f"{row.game_calls}+{row.probe_calls}" + ("*" if source == "game log" else ""),
            _f(row.multiplier, 1),
            _tok(row.tokens.game),
            _tok(row.tokens.probe),
        ]
        for gid, source, row in rows
    ]
    console.print(whole_table("Instrument: cost", ["game", "calls", "x", "game tokens", "probe tokens"], cost))
    console.print(
        "calls: game + probe calls (* counted from the game log: no calls.jsonl); x: all calls per game call; "
        "tokens: prompt+completion (- when not recorded)",
        style="dim",
        highlight=False,
    )
    _print_quality(ins.pooled.quality)
    if not probed:
        return
    loss = [
        [
            gid,
            str(row.probe_answers.raw),
            str(row.probe_answers.repaired),
            str(row.probe_answers.unusable),
            "/".join(str(n) for _, n in row.lost),
        ]
        for gid, _, row in rows
    ]
    console.print(whole_table("Instrument: probe answers", ["game", "raw", "repaired", "unusable", "lost"], loss))
    console.print(f"lost: unusable answers by cause, {LOSS_LEGEND}", style="dim", highlight=False)
    failures = ins.pooled.probe_failures
    if failures:
        console.print(
            "probe failures (no answer: the call failed, or the probe task did), by probe: "
            + ", ".join(f"{k} {n}" for k, n in failures.items()),
            highlight=False,
        )


def _print_quality(q: Quality | None) -> None:
    """The quality signals over the scored games, one line each (a warning, never a gate), or a line saying none."""
    if q is None:
        return
    lines = quality_lines(q.model_dump(mode="json"))
    if not lines:
        console.print(NONE_FIRED, style="dim", highlight=False)
    for line in lines:
        console.print(f"[yellow]quality:[/] {escape(line)}", highlight=False)


def _missing(rep: Report, *keys: str) -> bool:
    """Print why a section is not computed (the probe it needs); ``True`` when all ``keys`` are missing."""
    cov = rep.coverage.metrics
    whys = [cov[k].why for k in keys if k in cov and not cov[k].computed]
    for why in whys:
        console.print(f"[yellow]not computed:[/] {escape(str(why))}", highlight=False)
    return len(whys) == len(keys)


def _print_tables(rep: Report, rules: Sequence[RuleSet | Mapping[str, str]]) -> None:
    """The pooled report as tables; ``rules``: the games' rule sets, or their team names (they name the winners)."""
    winners: dict[str | None, int] = {team: n for team, n in rep.winners.items()}
    won = escape(winners_line(winners, rules))
    # the heading as short lines, one phrase each: at 80 columns (a pipe) one long line was cut mid-phrase
    console.print(
        f"[bold]{count(rep.games, 'game')}[/] "
        f"(method {rep.method}, {count(rep.resamples, 'resample')}, seed {rep.seed})"
    )
    console.print(f"winners {won}", highlight=False)
    console.print(
        f"probe records {rep.probe_records}, parsed {rep.parsed}"
        + (f"; skipped {len(rep.skipped)}" if rep.skipped else "")
    )
    console.print(rep.inclusion.rule, highlight=False)
    if rep.no_interval:
        console.print(
            f"[yellow]{rep.no_interval}: a bootstrap over fewer than {MIN_CLUSTERS} games has no spread, "
            "so every 95% CI below is n/a[/]"
        )
    probed = rep.probe_records > 0
    if not probed:  # one line, not a table (or a reason) per metric that has nothing to show
        console.print(f"[yellow]{NO_PROBES}[/]")
    cov = rep.coverage
    if cov.answers:
        console.print(
            "usable answers (parsed, not empty): "
            + ", ".join(f"{k} {v}" for k, v in cov.answers.items())
            + (f" (battery {', '.join(cov.batteries)})" if cov.batteries else ""),
            highlight=False,
        )
    if probed and not _missing(rep, "first_order"):
        _print_f1(rep)
    if probed and not _missing(rep, "calibration"):
        _print_f2(rep)
    if probed and not _missing(rep, "second_order"):
        _print_f3(rep)
    _print_f4(rep, probed)
    if probed:
        _missing(rep, "vote_coupling.top1", "vote_coupling.committed_set")
    _print_instrument(rep.instrument, probed)
    if probed:
        _missing(rep, "dynamics", "quadrants")
        _print_dynamics(rep)
    if rep.readouts is not None:
        _print_readouts(rep)


def _with_ci(value: str, ci: str) -> str:
    """A value with its 95% interval on the line below (one line when there is no interval)."""
    return f"{value}\n{ci}" if ci else value


def _print_f1(rep: Report) -> None:
    rows = [
        [
            r,
            _with_ci(f"{_f(v.committed_accuracy)} ({v.committed_n})",
                     _ci(v.ci95.committed_accuracy, v.committed_accuracy)),
            _f(v.accuracy_chance),
            f"{_f(v.unknown_rate)} ({v.unknown_n})",
            _with_ci(f"{_f(v.recall)} ({v.recall_n})", _ci(v.ci95.recall, v.recall)),
            _f(v.recall_chance),
        ]
        for r, v in rep.first_order.items()
    ]  # fmt: skip
    head = ["round", "committed accuracy (n)", "chance", "Unknown (n)", "recall (n)", "chance"]
    console.print(whole_table("F1 first-order (non-mafia observers)", head, rows))
    console.print("95% CI under each value", style="dim", highlight=False)


def _print_f2(rep: Report) -> None:
    cal = rep.calibration
    t = Table("confidence", "n", "games", "accuracy", "95% CI", "mean confidence", title="F2 calibration")
    for b in cal.bins:
        hi = f"{b.hi}]" if b.hi == 100 else f"{b.hi})"
        t.add_row(f"[{b.lo}, {hi}", str(b.n), str(b.games), _f(b.accuracy),
                  _ci(b.ci95) or b.no_interval or "", _f(b.mean_confidence, 2))  # fmt: skip
    console.print(t)
    console.print(
        f"n={cal.n} in {count(cal.games, 'game')}  ECE={_f(cal.ece)} {_ci(cal.ci95.ece, cal.ece)}  "
        f"Brier={_f(cal.brier)} {_ci(cal.ci95.brier, cal.brier)}"
    )
    console.print(f"counted: {cal.population}", style="dim", highlight=False)


def _print_f3(rep: Report) -> None:
    rows = [
        [
            side,
            str(v.pairs),
            _with_ci(_f(v.overprediction_ratio), _ci(v.ci95.overprediction_ratio, v.overprediction_ratio)),
            f"{v.predicted_suspects}/{v.actual_suspects}",
            _f(v.accuracy),
            _f(v.majority_baseline),
        ]
        for side, v in rep.second_order
    ]
    head = ["predictor", "pairs", "over-prediction (95% CI)", "pred/actual suspects", "accuracy", "majority"]
    console.print(whole_table("F3 second-order", head, rows))


def _print_f4(rep: Report, probed: bool = True) -> None:
    """F4 and its increment over the transcript baselines; rows without a vote (n = 0) are left out."""
    rows = []
    for side, v in rep.vote_coupling:
        for metric, x in v.measures().items():
            if x.n:
                rate = _with_ci(_f(x.rate), _ci(x.ci95, x.rate))
                rows.append([side, metric, f"{x.hits}/{x.n}", rate, _f(x.chance)])
        for pred, bl in v.baselines:
            if bl.n:
                rate = _with_ci(_f(bl.rate), _ci(bl.ci95, bl.rate))
                rows.append([side, f"transcript: {pred}", f"{bl.hits}/{bl.n}", rate, ""])
    if rows:
        console.print(whole_table("F4 vote coupling", ["voters", "measure", "hits/n", "rate (95% CI)", "chance"], rows))
        if rep.not_applicable:  # mission games: approve/reject team votes
            console.print(
                "team votes: a vote is coupled when it rejects a team holding the voter's suspect or approves one "
                "without; chance 1/2",
                style="dim",
                highlight=False,
            )
    else:
        console.print("F4 vote coupling: no counted vote in these games", highlight=False)
    if "vote_coupling_baselines" in rep.not_applicable:
        console.print(f"F4 against the transcript: {rep.not_applicable['vote_coupling_baselines']}", highlight=False)
        return
    sides = {
        side: [
            [pred, str(x.n), f"{x.probe_hits}/{x.baseline_hits}", f"{x.b}/{x.c}", fmt_p(x.mcnemar_p),
             _f(x.diff), _ci(x.diff_ci95, x.diff)]
            for pred, x in v.increment
            if x.n
        ]
        for side, v in rep.vote_coupling
    }  # fmt: skip
    if not any(sides.values()):
        if probed:
            console.print("F4 against the transcript: no vote where both the probe and a baseline predict")
        return
    head = ["vs", "n", "probe/base", "b/c", "McNemar p", "diff", "95% CI"]
    for side, inc in sides.items():  # one table per side of voters: each fits 80 columns
        title = f"F4 against the transcript ({side} voters)"
        if inc:
            console.print(whole_table(title, head, inc))
    console.print(
        "the probe's increment over each transcript baseline, on votes where both predict; probe/base: votes each "
        "predicts; b/c: probe right and base wrong / the reverse",
        style="dim",
        highlight=False,
    )


def _print_readouts(rep: Report) -> None:
    """Stated vs logprob readouts of the same question at the same steps (analysis._readouts)."""
    ro = rep.readouts
    if ro is None:
        return
    rows = []
    for name, v in (("stated", ro.stated), ("logprob", ro.logprob)):
        rows.append(
            [
                name,
                str(v.n),
                _with_ci(_f(v.accuracy), _ci(v.ci95.accuracy, v.accuracy)),
                _f(v.mean_confidence),
                _with_ci(_f(v.ece), _ci(v.ci95.ece, v.ece)),
                _with_ci(_f(v.brier), _ci(v.ci95.brier, v.brier)),
                _with_ci(f"{_f(v.vote_coupling)} ({v.vote_n})", _ci(v.ci95.vote_coupling, v.vote_coupling)),
            ]
        )
    head = ["readout", "n", "accuracy", "mean conf.", "ECE", "Brier", "vote coupling (n)"]
    console.print(whole_table("Top suspect: stated vs log-probability readout", head, rows))
    bins = [
        [f"[{a.lo:.1f}, {a.hi:.1f}{']' if a.hi >= 1 else ')'}",
         f"{a.n}", _f(a.accuracy), f"{b.n}", _f(b.accuracy)]
        for a, b in zip(ro.stated.bins, ro.logprob.bins, strict=True)
        if a.n or b.n
    ]  # fmt: skip
    if bins:
        head = ["confidence", "stated n", "stated accuracy", "logprob n", "logprob accuracy"]
        console.print(whole_table("Reliability, side by side", head, bins))
    d = ro.dynamics
    agree = _ci(ro.agreement_ci95, ro.agreement)
    console.print(
        f"agreement (same top suspect): {_f(ro.agreement)} of {ro.pairs} paired steps {agree}\n"
        f"logprob dynamics: volatility {_f(d.volatility)}, top-suspect flips {_f(d.flip_rate)} ({d.steps} pairs); "
        f"retest floor {_f(d.retest_floor)} (no sampling: the same context gives the same distribution)",
        highlight=False,
    )


def _print_dynamics(rep: Report) -> None:
    dyn, quad = rep.dynamics, rep.quadrants
    if dyn.volatility_pairs:
        floor = dyn.retest
        rows = []
        groups = [
            ("all", dyn),
            *((f"model {k}", v) for k, v in dyn.by_model.items()),
            *((f"round {k}", v) for k, v in dyn.by_round.items()),
        ]
        for name, v in groups:
            if name == "all":
                fl = "-" if floor is None else f"{_f(floor.flip_rate)} ({floor.pairs})"
            elif name.startswith("round ") and floor is not None and name[6:] in floor.by_round:
                r = floor.by_round[name[6:]]
                fl = f"{_f(r.flip_rate)} ({r.pairs})"
            else:
                fl = ""
            rows.append(
                [
                    name,
                    _with_ci(f"{_f(v.volatility)} ({v.volatility_pairs})", _ci(v.ci95.volatility, v.volatility)),
                    _with_ci(f"{_f(v.flip_rate)} ({v.flip_pairs})", _ci(v.ci95.flip_rate, v.flip_rate)),
                    fl,
                    f"{_f(v.return_rate)} ({v.flips})",
                ]
            )
        head = ["group", "volatility (pairs)", "top-suspect flips (pairs)", "retest floor", "return rate (flips)"]
        console.print(whole_table("Belief dynamics (suspicion rankings)", head, rows))
        console.print("95% CI under each value", style="dim", highlight=False)
        if floor is not None and floor.flip_rate_reweighted is not None:
            console.print(
                f"retest floor reweighted to the observed pairs per round: {_f(floor.flip_rate_reweighted)} "
                f"(observed {_f(dyn.flip_rate)})"
            )
    if quad.assessed:
        rows = [
            [name, str(v.votes), str(v.assessed), *[f"{c.n} ({_f(c.share, 2)})" for c in v.cells().values()]]
            for name, v in [("all", quad), *quad.by_model.items()]
        ]
        head = ["voters", "votes", "assessed", "correct_good", "policy gap", "perception gap", "luck"]
        console.print(whole_table("Innocent day votes by quadrant (assessment right? x move good?)", head, rows))
    elif "quadrants" in rep.not_applicable:
        console.print(f"Innocent day votes by quadrant: {rep.not_applicable['quadrants']}", highlight=False)


def _print_comparison(cmp: dict[str, Any], reference: dict[str, Any] | None) -> None:
    header, rows = summary_table(cmp, reference)
    by = ", ".join(cmp["by"]) or "directory"
    t = Table(*header, title=f"Side by side (by {by})")  # a title as wide as a narrow table: not cut in two
    for row in rows:
        t.add_row(*row)
    console.print(t)
    console.print("95% CI: bootstrap by game within each group", style="dim", highlight=False)
    reports: list[tuple[str, Report]] = [(g["group"] or "all", g["report"]) for g in cmp["groups"]]
    for label, rep in reports:  # the inclusion rule, stated for every column
        console.print(f"{label}: {rep.inclusion.rule}", style="dim", highlight=False)
    for label, rep in reports:
        cov = rep.coverage
        lost = [f"{v.name} (needs {' and '.join(v.needs)})" for v in cov.metrics.values() if not v.computed]
        if lost:
            bat = f"; battery {', '.join(cov.batteries)}" if cov.batteries else ""
            console.print(
                f"[yellow]{escape(label)}: not computed{escape(bat)}:[/] {escape('; '.join(lost))}",
                highlight=False,
            )
    if reference is not None:
        console.print(f"published figures: {reference['source']} (method {reference['method']})", style="dim")


def _counted(items: Iterator[Any], bar: Progress, task: TaskID) -> Iterator[Any]:
    """``items`` as they come, each one counted on ``task`` of ``bar``."""
    for item in items:
        bar.advance(task)
        yield item


@checked
def report(
    directories: Annotated[list[Path], Games()] = typer.Argument(
        ...,
        metavar="DIR...",
        help="Directory of game logs (searched recursively for game.jsonl); several are compared side by side.",
    ),
    method: _Method = typer.Option(_Method.default, "--method", "-m", help="default, or mafiascope (exact reference)."),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table, json or csv (to stdout)."),
    by: Annotated[list[str], Keys(BY_KEYS)] = typer.Option(
        [],
        "--by",
        help=f"Report per group instead of pooled: {', '.join(BY_KEYS)} (repeatable, or comma-separated); "
        "each group bootstraps by its own games.",
    ),
    reference: str | None = typer.Option(
        None, "--reference", help="Show published figures beside ours: mafiascope (numbers shipped with mafialab)."
    ),
    plots: Annotated[Path | None, OutDir()] = typer.Option(
        None, "--plots", help="Write PNG plots into this directory."
    ),
    seed: int = seed_option("Bootstrap seed (>= 0)."),
    resamples: int = typer.Option(1000, "--resamples", min=1, help="Bootstrap resamples."),
    retest: Annotated[list[Path] | None, InPath()] = typer.Option(
        None, "--retest", help="Test-retest answers (retest.jsonl, or its directory) outside DIRECTORY; repeatable."
    ),
    include_branches: bool = typer.Option(
        False, "--include-branches", help="Keep forks (branches); the bootstrap then clusters on their root game."
    ),
    cache: Path | None = cache_option("Folder of per-game summaries, reused while a game's logs are unchanged"),
    no_cache: bool = no_cache_option(),
    ray: str | None = ray_option(
        "Compute the per-game summaries the cache lacks",
        "workers read DIR at the same path (shared storage) and the report is the local run's",
    ),
) -> None:
    """Belief metrics F1-F4 with 95% game-level cluster-bootstrap intervals (docs/metrics.md).

    One directory: the pooled report (a warning names what it pools when it mixes rule sets
    or models). --by KEY: one report per group, side by side. Several directories: one
    column per directory (combined with --by, per directory and group). A game that cannot
    be read (no valid header, a newer log schema) is skipped with a line naming its file, as
    `view` skips it; a directory none of whose games can be read is refused. Each game is
    reduced once to a small summary, cached by the bytes of its logs (--cache); the game
    folders are only read. With --ray the summaries are computed on a Ray cluster and this
    process aggregates them (docs/scaling.md).
    """
    keys = keys_once(by)
    ref = None
    if reference is not None:
        with refusing(ValueError):
            ref = load_reference(reference)
    store = summary_cache(cache, no_cache)
    retest_paths = [p for d in directories for p in find_retests(d)]
    retest_paths += [p / RETEST_FILE if p.is_dir() else p for p in retest or []]
    corpus = _Corpus(method.value, keys, pooled=len(directories) == 1 and not keys and ref is None)
    for directory in directories:
        corpus.read(directory, len(directories) > 1, store, include_branches, ray)
    problems: list[str] = []
    retests = read_retests(retest_paths, problems)
    for why in problems:
        err_console.print(f"[yellow]skipped:[/] {escape(str(why))}", highlight=False, soft_wrap=True)
    if corpus.pooled:
        mix = mix_line(corpus.mixed_rules, corpus.mixed_models)
        if mix is not None:
            err_console.print(f"[yellow]warning:[/] {mix}", highlight=False, soft_wrap=True)
        rep = corpus.builder.report(resamples=resamples, seed=seed, retests=retests, branches_left_out=corpus.left_out)
        _print_pooled(rep, fmt, list(corpus.teams.values()))
        if plots is not None:
            from mafialab.analysis import write_plots

            for p in write_plots(rep, plots, corpus=directories[0].resolve().name):
                err_console.print(f"wrote {escape(str(p))}", style="dim")
        return
    cmp = compare_built(
        corpus.builders,
        by=keys,
        resamples=resamples,
        seed=seed,
        retests=retests,
        branches_left_out=corpus.left_by_label,
    )
    if ref is not None:
        cmp["reference"] = ref
    kaggle = None
    notes: list[str] = []
    if {"agent", "role"} & set(keys):
        skipped: list[str] = []
        kaggle = kaggle_figures(directories, skipped, ratings=True, resamples=resamples, seed=seed, notes=notes)
    _print_compared(cmp, fmt, ref, kaggle, "role" in keys, notes)
    if plots is not None:
        err_console.print("--plots draws one pooled report; run it without --by on one directory", style="yellow")


class _Corpus:
    """The games of ``report``'s directories, summarised into report builders as they are read.

    ``pooled``: one builder for everything; else one per directory and ``--by`` group (``builders``).
    """

    def __init__(self, method: str, keys: list[str], *, pooled: bool) -> None:
        self.method, self.keys, self.pooled = method, keys, pooled
        self.seat_keys = [k for k in keys if k in SEAT_KEYS]
        self.builder = ReportBuilder(method)
        self.builders: dict[str, ReportBuilder] = {}
        self.teams: dict[tuple[str, str], dict[str, str]] = {}  # the rule sets' team names, for the winners line
        self.mixed_rules: set[str] = set()
        self.mixed_models: set[str] = set()
        self.left_by_label: dict[str, list[str]] = {}  # each group's branches left out (by their root game)
        self.left_out: list[str] = []  # the last directory's branches left out

    def read(self, directory: Path, named: bool, store: Any, include_branches: bool, ray: str | None) -> None:
        """Add the games under ``directory`` (``named``: its groups are labelled with it), saying what was left out."""
        self.left_out = []
        dups: list[str] = []
        unread: list[str] = []
        mine: dict[str, ReportBuilder] = {}
        left_roots: dict[str, str] = {}  # branch left out -> its root game
        labels_of: dict[str, set[str]] = {}  # root game -> the groups it is counted in
        dir_errors = refusing(FileNotFoundError, LogFormatError, name="DIR")
        with refusing(ImportError, RayConnectError), dir_errors, progress_bar() as bar:
            task = bar.add_task(f"{escape(directory.name or str(directory))}: games read", total=None)
            summaries = iter_summaries(
                directory,
                self.method,
                seat_keys=self.seat_keys,
                cache=store,
                include_branches=include_branches,
                left_out=self.left_out,
                left_out_roots=left_roots,
                warnings=dups,
                skipped=unread,
                ray=ray,
            )
            for s in _counted(summaries, bar, task):
                self._add(s, directory, mine, labels_of)
        for why in unread:  # as `view` does: a game that cannot be read is skipped, named
            err_console.print(f"[yellow]skipped:[/] {escape(why)}", highlight=False, soft_wrap=True)
        for why in dups:
            err_console.print(f"[yellow]warning:[/] {escape(str(why))}", highlight=False, soft_wrap=True)
        if self.left_out:
            err_console.print(
                f"{escape(str(directory))}: left out {count(len(self.left_out), 'branch', 'branches')} (forks); "
                "--include-branches keeps them",
                style="dim",
            )
        name = str(directory) if named else ""
        for label in sorted(mine):
            full = ", ".join(x for x in (name, label) if x) or directory.resolve().name
            self.builders[full] = mine[label]
            self.left_by_label[full] = sorted(b for b, r in left_roots.items() if label in labels_of.get(r, ()))

    def _add(self, s: Any, directory: Path, mine: dict[str, ReportBuilder], labels_of: dict[str, set[str]]) -> None:
        """Count one game's summary ``s`` (pooled, or in each of its groups)."""
        self.teams.setdefault((s.team_names["town"], s.team_names["mafia"]), s.team_names)
        if not s.skipped:
            self.mixed_rules.add(s.rules_id)
            self.mixed_models.update(s.models)
        if self.pooled:
            self.builder.add(s)
            return
        for label, stats in summary_groups(s, self.keys, directory):
            mine.setdefault(label, ReportBuilder(self.method)).add(s, stats)
            labels_of.setdefault(s.root or s.game_id, set()).add(label)


def _print_pooled(rep: Report, fmt: Format, teams: list[dict[str, str]]) -> None:
    """The pooled report on stdout as ``fmt`` (tables, JSON or CSV)."""
    if fmt is Format.json:
        sys.stdout.write(json.dumps(rep.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n")
    elif fmt is Format.csv:
        w = csv.DictWriter(sys.stdout, fieldnames=["section", "group", "name", "value", "ci_lo", "ci_hi"])
        w.writeheader()
        w.writerows(row.csv_fields() for row in report_rows(rep))
    else:
        _print_tables(rep, teams)


def _print_compared(
    cmp: dict[str, Any],
    fmt: Format,
    ref: dict[str, Any] | None,
    kaggle: dict[str, Any] | None = None,
    by_role: bool = False,
    notes: Sequence[str] = (),
) -> None:
    """The side-by-side report on stdout as ``fmt`` (tables, JSON or CSV); Kaggle's figures with ``--by agent/role``."""
    if fmt is Format.json:
        data = comparison_json(cmp)
        if kaggle is not None:
            data["kaggle"] = kaggle
            if notes:
                data["kaggle_notes"] = list(notes)
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    elif fmt is Format.csv:
        w = csv.DictWriter(sys.stdout, fieldnames=["by", "section", "group", "name", "value", "ci_lo", "ci_hi"])
        w.writeheader()
        w.writerows(compare_rows(cmp))
    else:
        _print_comparison(cmp, ref)
        if kaggle:
            _print_kaggle(kaggle, by_role, notes)


def _ms(v: list[float]) -> str:
    return f"{v[0]:.3f}±{v[1]:.3f}"


def _rating_cells(m: dict[str, Any]) -> list[str]:
    """Elo and OpenSkill μ (σ) with their 95 % intervals, as analysis.kaggle_ratings gives them."""
    if "elo" not in m:
        return ["–", "–"]
    e, mu = m.get("elo_ci"), m.get("openskill_mu_ci")
    elo = f"{m['elo']:.1f}" + (f" [{e[0]:.1f}, {e[1]:.1f}]" if e else "")
    os_ = f"{m['openskill_mu']:.2f} ({m['openskill_sigma']:.2f})" + (f" [{mu[0]:.2f}, {mu[1]:.2f}]" if mu else "")
    return [elo, os_]


def _print_kaggle(fig: dict[str, Any], by_role: bool, notes: Sequence[str] = ()) -> None:
    """Kaggle Game Arena's figures (analysis._kaggle, as its eval/metrics.py defines them).

    Mean ± SEM, then Elo, OpenSkill and GTE (analysis.rate_games / gte_ratings, in the
    evaluator's game order).
    """
    head = ["agent", "games", "win rate", "IRP", "VSS", "KSR", "WD-KSR", "WD-IRP", "WD-VSS", "margin", "speed"]
    keys = ["win_rate", "irp", "vss", "ksr", "wd_ksr", "wd_irp", "wd_vss", "margin_of_win", "speed_of_win"]
    rows = [[escape(a), str(m["games"]), *(_ms(m[k]) for k in keys)] for a, m in fig.items()]
    console.print(whole_table("Kaggle Game Arena metrics by agent (mean ± SEM; eval/metrics.py)", head, rows))
    if any("elo" in m for m in fig.values()):
        has_gte = any("gte" in m for m in fig.values())
        head = ["agent", "games", "Elo [95% CI]", "OpenSkill μ (σ) [95% CI of μ]"]
        head += ["GTE [95% CI]"] if has_gte else []
        rows = []
        for a, m in sorted(fig.items(), key=lambda kv: -kv[1].get("openskill_mu", 0.0)):
            g = m.get("gte")
            gte = [f"{g[0]:.4f}" + (f" [{g[1]:.4f}, {g[2]:.4f}]" if g[1] is not None else "")] if g else ["–"]
            rows.append([escape(a), str(m["games"]), *_rating_cells(m), *(gte if has_gte else [])])
        title = "Kaggle Game Arena ratings by agent (every game, in the evaluator's order; analysis.rate_games)"
        console.print(whole_table(title, head, rows))
    for note in notes:
        console.print(escape(note), style="dim")
    if by_role:
        rows = [
            [
                escape(a),
                escape(r),
                str(x["games"]),
                *(_ms(x[k]) for k in ("win_rate", "ksr", "wd_ksr")),
                *_rating_cells(x),
            ]
            for a, m in fig.items()
            for r, x in m["by_role"].items()
        ]
        head = ["agent", "role", "games", "win rate", "KSR", "WD-KSR", "Elo (role board)", "OpenSkill μ (σ)"]
        console.print(whole_table("Kaggle Game Arena metrics by agent and role (mean ± SEM)", head, rows))
