"""``mafialab beliefshift``: annotate, agreement, freeze, run, report."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table as RichTable
from rich.text import Text

from mafialab.beliefshift import (
    DEFAULT_MODEL,
    BeliefShiftFormatError,
    ContextWindowError,
    FreezeError,
    ModelAnnotator,
    ModelsFileError,
    ResultsMismatch,
    RulesAnnotator,
    RunOptions,
    add_published,
    agreement,
    agreement_with_labels,
    annotate_games,
    build_report,
    day_messages,
    estimate_bench,
    freeze,
    is_labels_file,
    load_logs,
    load_models_yaml,
    load_prompts_text,
    read_all_results,
    read_annotations,
    read_bench,
    read_labels,
    run_bench,
    run_bench_ray,
    write_annotations,
    write_bench,
    write_report,
)
from mafialab.cli._app import console, count, fail, progress_bar, time_words
from mafialab.cli._options import (
    JSONL_FILE,
    YAML_FILE,
    Choice,
    Games,
    InPath,
    JsonLines,
    ModelString,
    OutDir,
    OutFile,
    arg_message,
    checked,
    refusing,
    seed_option,
)
from mafialab.config import read_config_text
from mafialab.harness import RayConnectError, freeze_startup_heap
from mafialab.models import get_model
from mafialab.record import LogFormatError

bs_app = typer.Typer(
    help="The Werewolf belief-shift benchmark: annotate accusations, freeze, elicit priors and shifts, report tables.",
    no_args_is_help=True,
)


@bs_app.command("annotate")
@checked
def annotate_cmd(
    logs: Annotated[list[Path], Games()] = typer.Argument(..., help="Game directories, or folders holding them."),
    annotator: Annotated[str, ModelString(also=["rules"])] = typer.Option(
        "rules", "--annotator", "-a", help="'rules' (offline patterns) or a model string."
    ),
    out: Annotated[Path, OutFile(force="force")] = typer.Option(
        ..., "--out", "-o", help="Annotation file to write (ANN.jsonl)."
    ),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Messages labelled at once (model annotator)."),
    retries: int = typer.Option(2, "--retries", min=0, help="Extra attempts per message (model annotator)."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it exists (an earlier annotation run)."),
) -> None:
    """Mark day-discussion messages that suspect or accuse a player (one record per message and target)."""
    with refusing(FileNotFoundError, LogFormatError, name="LOGS"):
        games = load_logs(logs)
    if annotator == "rules":
        ann = RulesAnnotator()
    else:
        ann = ModelAnnotator(get_model(annotator, concurrency=concurrency), retries=retries)  # type: ignore[assignment]
    total = len(games)
    n_msgs = sum(len(day_messages(g)) for g in games)
    freeze_startup_heap()  # a long driver: keep the start-up heap out of full GC passes
    with progress_bar() as progress:
        task = progress.add_task("messages", total=n_msgs)
        res = asyncio.run(
            annotate_games(games, ann, concurrency=concurrency, on_message=lambda: progress.advance(task))
        )
    write_annotations(out, res)
    n_s = sum(a.category == "suspect" for a in res.annotations)
    console.print(
        f"{count(total, 'game')}, {count(len(res.header.scanned), 'day message')}: "
        f"{count(len(res.annotations), 'annotation')} "
        f"({n_s} suspect, {len(res.annotations) - n_s} accuse), {len(res.header.failed)} failed. "
        f"Wrote {escape(str(out))}"
    )


_LABELS_LINE = (
    '{"game_id": "g1", "round": 1, "speaker": "Alex", "labels": [{"target": "Blake", "category": "suspect"}]}'
)
"""One line of a labels file, as error messages show it."""

_ANNOTATION_LINE = (
    '{"kind": "annotation", "message_id": "g1:r1:m2", "target": {"name": "Blake", ...}, "category": "suspect", ...}'
)
"""An annotation record, abridged, as error messages show it (``beliefshift annotate`` writes them)."""


def _wrong_kind_message(path: Path, *, labels_ok: bool) -> str | None:
    """Why ``path`` is neither a labels file nor an annotation file, or None when it may be one.

    Looks at the first non-blank line only: when it is a JSON object with neither format's
    fields (those ``is_labels_file`` looks at), the message names ``file:line``, the object's
    first fields, which kind of file was expected (a labels file too when ``labels_ok``) and what one of
    its lines looks like, on one line. Anything else (not JSON, torn, unreadable) is left to
    the reader, which names the line.
    """
    first: tuple[int, dict[str, object]] | None = None
    try:
        with Path(path).open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if line.strip():
                    obj = json.loads(line)
                    if isinstance(obj, dict):
                        first = (n, obj)
                    break
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if first is None:
        return None
    n, obj = first
    if any(k in obj for k in ("kind", "message_id", "speaker", "labels")):  # the fields file_kind looks at
        return None
    fields = ", ".join(list(obj)[:5]) or "none"
    want = f"a labels file (lines like {_LABELS_LINE}) or " if labels_ok else ""
    return (
        f"{path}:{n}: neither a labels line nor an annotation record (fields: {fields}); "
        f"expected {want}ANN.jsonl from `beliefshift annotate` (lines like {_ANNOTATION_LINE})"
    )


@bs_app.command("agreement")
@checked
def agreement_cmd(
    ann_a: Annotated[Path, JsonLines("a labels file or ANN.jsonl")] = typer.Argument(
        ..., help="Reference: a labels file (game_id/round/speaker/labels lines) or ANN.jsonl."
    ),
    ann_b: Annotated[Path, JsonLines("ANN.jsonl")] = typer.Argument(..., help="Annotation file to score (ANN.jsonl)."),
    errors: bool = typer.Option(False, "--errors", help="List every disagreeing (message, target) unit."),
) -> None:
    """Score annotation B against A: precision, recall, Cohen's kappa, messages fully right.

    A may be a labels file (one line per message: game_id, round, speaker, labels of
    target/category); B is joined to it by game, round and speaker name.

    A bad line in either file (not JSON, a torn line, an invalid record) is refused with its
    file:line, never skipped: a score computed on part of the data would look complete. So is
    a labels line whose speaker or target is not a player of its game, or a target that is the
    speaker. Labelled messages that B did not scan are left out and named in a note.
    """
    for name, path in (("ANN_A", ann_a), ("ANN_B", ann_b)):
        wrong = _wrong_kind_message(path, labels_ok=name == "ANN_A")  # a JSON object of neither format
        if wrong:
            fail(f"{name}: {wrong}")
    labels_a = is_labels_file(ann_a)
    if is_labels_file(ann_b):
        if not labels_a:
            fail(
                f"ANN_A and ANN_B look swapped: {ann_b} (ANN_B) looks like a labels file and {ann_a} (ANN_A) "
                "like an annotation file; give the labels file (the reference) first"
            )
        fail(
            f"ANN_B: {ann_b} looks like a labels file (game_id/round/speaker/labels lines); ANN_B is the "
            "annotation file to score (ANN.jsonl from `beliefshift annotate`), a labels file goes first as ANN_A"
        )
    with refusing(BeliefShiftFormatError, ValueError, name="ANN_A"):  # each file's errors carry its label
        if labels_a:
            ref = read_labels(ann_a)
        else:
            a = read_annotations(ann_a)
    with refusing(BeliefShiftFormatError, ValueError, name="ANN_B"):
        b = read_annotations(ann_b)
    try:
        rep = agreement_with_labels(ref, b) if labels_a else agreement(a, b)
    except (BeliefShiftFormatError, ValueError) as err:  # a label naming no player of its game (file:line)
        fail(arg_message("ANN_A", err) if labels_a else str(err))

    def num(x: float) -> str:
        return "n/a" if math.isnan(x) else f"{x:.3f}"

    t = RichTable("measure", "value", title=f"{rep.annotator_b} scored against {rep.annotator_a}")
    t.add_row("messages", str(rep.n_messages))
    t.add_row("(message, living other player) units", str(rep.n_units))
    t.add_row("precision (labelled vs none)", num(rep.precision))
    t.add_row("recall (labelled vs none)", num(rep.recall))
    t.add_row("precision (same category)", num(rep.exact_precision))
    t.add_row("recall (same category)", num(rep.exact_recall))
    t.add_row("Cohen's kappa (none/suspect/accuse)", num(rep.kappa))
    t.add_row("Cohen's kappa (labelled vs none)", num(rep.detect_kappa))
    t.add_row("agreement (none/suspect/accuse)", num(rep.agreement))
    t.add_row("messages fully right", num(rep.message_agreement))
    console.print(t)
    labels = ("suspect", "accuse", "none")
    c = RichTable("A \\ B", *labels, title="confusion (units)")
    for la in labels:
        c.add_row(la, *(str(rep.confusion.get((la, lb), 0)) for lb in labels))
    console.print(c)
    if errors:
        e = RichTable("kind", "message", "target", "A", "B", "note", title="disagreements")
        for d in sorted(rep.disagreements, key=lambda d: (d.kind, d.message_id, d.target)):
            e.add_row(*(Text(x) for x in (d.kind, d.message_id, d.target, d.label_a, d.label_b, d.note)))
        console.print(e)
    for n in rep.notes:
        console.print(f"note: {n}", markup=False)


@bs_app.command("freeze")
@checked
def freeze_cmd(
    logs: Annotated[Path, Games()] = typer.Argument(..., help="Game directory, or a folder holding game directories."),
    annotations: Annotated[Path, InPath(JSONL_FILE, "file")] = typer.Argument(..., help="Annotation file (ANN.jsonl)."),
    out: Annotated[Path, OutFile(inputs=["annotations"], force="force")] = typer.Option(
        ..., "--out", "-o", help="Benchmark file to write (BENCH.jsonl)."
    ),
    observers: int = typer.Option(2, "--observers", min=1, help="Observers per message (fewer if fewer eligible)."),
    seed: int = seed_option("Seed of the observer draws (recorded)."),
    prompts: Annotated[Path | None, InPath(YAML_FILE, "file")] = typer.Option(
        None, "--prompts", help="Prompt pack YAML (default: the shipped one)."
    ),
    include_branches: bool = typer.Option(False, "--include-branches", help="Keep forks (branches) of games."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it exists (an earlier benchmark file)."),
) -> None:
    """Write a self-contained, versioned benchmark: observers and their visible histories per message."""
    pack = None
    if prompts is not None:
        with refusing(ValueError):  # read before the games: a bad pack fails at once
            pack = load_prompts_text(read_config_text(prompts), str(prompts))
    with refusing(FileNotFoundError, LogFormatError, OSError, ValueError, name="LOGS"):
        games = load_logs([logs], include_branches=include_branches)
    with refusing(BeliefShiftFormatError, OSError, ValueError, name="ANNOTATIONS"):
        ann = read_annotations(annotations)
    with refusing(FileNotFoundError, LogFormatError, BeliefShiftFormatError, FreezeError, OSError, ValueError):
        bench = freeze(games, ann, max_observers=observers, seed=seed, prompts=pack)
    write_bench(out, bench)
    h = bench.header
    none = sum(1 for i in bench.items if not i.observers)
    console.print(
        f"bench {h.bench_id}: {count(h.n_items, 'item')}, {count(h.n_observations, 'observation')} "
        f"from {count(len(h.games), 'game')}"
        + (f" ({count(none, 'item')} without an eligible observer)" if none else "")
        + f". Wrote {escape(str(out))}"
    )


@bs_app.command("run")
@checked
def run_cmd(
    bench: Annotated[Path, InPath(JSONL_FILE, "file")] = typer.Argument(..., help="Benchmark file (BENCH.jsonl)."),
    model: Annotated[str, ModelString()] = typer.Option(
        DEFAULT_MODEL, "--model", "-m", help="Model string provider/model[?key=value&...] (e.g. ?base_url=...)."
    ),
    out: Annotated[Path, OutFile(inputs=["bench"])] = typer.Option(
        ..., "--out", "-o", help="Results file (appended; a rerun resumes)."
    ),
    protocol: Annotated[str, Choice("anchored", "independent")] = typer.Option(
        "anchored", "--protocol", help="anchored (prior shown) or independent."
    ),
    label: str | None = typer.Option(None, "--label", help="Configuration label in reports (default: the model)."),
    retries: int = typer.Option(2, "--retries", min=0, help="Extra attempts per stage after a failure."),
    concurrency: int = typer.Option(
        8, "--concurrency", min=1, help="Observations in flight (their calls run in order)."
    ),
    max_tokens: int = typer.Option(1024, "--max-tokens", min=1, help="Generation cap per call."),
    temperature: float | None = typer.Option(None, "--temperature", min=0.0, help="Default: the backend's."),
    context_window: int | None = typer.Option(
        None, "--context-window", min=256, help="Fit prompts into this many tokens (default: the model's window)."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N items (a slice)."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the observations, calls and time estimate (from OUT's results); ask nothing."
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray",
        help="Elicit in observation batches as Ray tasks: auto, local or a cluster ADDRESS; the driver writes "
        "OUT as a local run does. Needs mafialab\\[ray].",
    ),
) -> None:
    """Elicit each observer's prior and belief shift for every benchmark item."""
    with refusing(BeliefShiftFormatError, name="BENCH"):
        header, items = read_bench(bench)
    if limit is not None:
        items = items[:limit]
    chat = get_model(model, concurrency=concurrency)
    opts = RunOptions(
        protocol=protocol,  # type: ignore[arg-type]
        retries=retries,
        concurrency=concurrency,
        max_tokens=max_tokens,
        temperature=temperature,
        context_window=context_window,
        label=label,
    )
    if dry_run:
        with refusing(ResultsMismatch, ContextWindowError, BeliefShiftFormatError, out=out):
            est = estimate_bench(header, items, chat, out, opts)
        if est.why_empty is not None:
            console.print(f"nothing to run: {escape(est.why_empty)}", highlight=False, soft_wrap=True)
            return
        console.print(
            f"{chat.name} ({protocol}): {est.todo} of {count(est.total, 'observation')} to elicit, "
            f"{count(est.calls, 'call')} (up to {est.max_calls} with every retry), {time_words(est.seconds)}. "
            f"Time basis: {escape(est.basis)}",
            highlight=False,
            soft_wrap=True,
        )
        return
    n = sum(len(i.observers) for i in items)
    freeze_startup_heap()  # a long driver: keep the start-up heap out of full GC passes
    with progress_bar() as progress:
        task = progress.add_task(f"{chat.name} ({protocol})", total=n)
        # the results already in OUT (another bench, a bad line) are named by --out
        with refusing(
            ResultsMismatch, ContextWindowError, BeliefShiftFormatError, ImportError, RayConnectError, out=out
        ):
            if ray_address is not None:
                summary = run_bench_ray(
                    header, items, model, out, opts, address=ray_address, on_result=lambda r: progress.advance(task)
                )
            else:
                summary = asyncio.run(
                    run_bench(header, items, chat, out, opts, on_result=lambda r: progress.advance(task))
                )
    causes = ", ".join(f"{k} {v}" for k, v in summary.causes.most_common()) or "none"
    console.print(
        f"{chat.name}: {summary.ok}/{summary.total} observations valid, {summary.informative} informative "
        f"({100 * summary.completion:.1f} % completion), failures: {causes}; {summary.shortened} shortened to "
        f"fit the context. Wrote {escape(str(out))}"
    )
    if summary.constant:
        same = ", ".join(f"every {k} {v}" for k, v in summary.constant.items())
        console.print(
            f"[yellow]warning:[/] answers do not vary ({escape(same)} over {summary.ok} valid observations): "
            "they measure nothing, so none counts as informative (see docs/metrics.md, quality signals)",
            highlight=False,
        )
    if summary.note is not None:
        console.print(f"note: {summary.note}", highlight=False, soft_wrap=True)
    if summary.completion < 0.95:
        console.print("[yellow]completion below the 95 % target[/]")


@bs_app.command("report")
@checked
def report_cmd(
    results: Annotated[list[Path], InPath("a JSONL file or an Inspect log", "file")] = typer.Argument(
        ..., help="Results files (RESULTS.jsonl) or Inspect logs of mafialab/beliefshift (.eval, .json)."
    ),
    models: Annotated[Path | None, InPath(YAML_FILE, "file")] = typer.Option(
        None, "--models", help="models.yaml: params_b, reasoning, group per label."
    ),
    out: Annotated[Path, OutDir()] = typer.Option(
        Path("beliefshift_report"), "--out", "-o", help="Directory for the tables and figure."
    ),
    ci: Annotated[str, Choice("t", "cluster")] = typer.Option(
        "t", "--ci", help="Per-model CIs: t (Student t over responses) or cluster (game bootstrap)."
    ),
    published: bool = typer.Option(
        False,
        "--published",
        help="Add the published Tables 1 and 2 rows (size groups, frontier; shipped with mafialab) beside ours.",
    ),
) -> None:
    """Print the tables (group level) and write all of them as Markdown, LaTeX and CSV, plus a PNG."""
    with refusing(ModelsFileError, ImportError):
        infos = load_models_yaml(models) if models else None
    # an Inspect log without Inspect AI installed: the ImportError says what to install
    with refusing(ImportError), refusing(BeliefShiftFormatError, name="RESULTS"):
        recs, problems = read_all_results(results)
    for p in problems:
        console.print(f"[yellow]skipped:[/] {escape(str(p))}")
    if not recs:
        fail(f"RESULTS: no result records in {', '.join(map(str, results))}")
    rep = build_report(recs, infos, ci)  # type: ignore[arg-type]
    if len(rep.benches) > 1:
        console.print(
            f"[yellow]warning:[/] results of {len(rep.benches)} different benchmarks: {', '.join(rep.benches)}"
        )
    if published:
        add_published(rep)
    written = write_report(rep, out)
    show = ["completion", "prior_discrimination_groups", "table1_groups", "table2_groups", "table9_groups"]
    for name in show:
        console.print(rep.tables[name].to_markdown(), markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"{count(len(written), 'file')} written under {escape(str(out))}/ "
        "(per-model tables, LaTeX, CSV, prior_discrimination.png)"
    )
