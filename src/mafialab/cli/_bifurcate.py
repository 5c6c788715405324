"""``mafialab bifurcate``: the bifurcation experiment (run it, report it)."""

from __future__ import annotations

import asyncio
import csv
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from mafialab.analysis import Rate, blocks_csv_rows, fmt_p, fmt_rate, report_bifurcation
from mafialab.cli._app import (
    console,
    count,
    err_console,
    fail,
    program,
    progress_bar,
    refuse_seats_on_ray,
    shell_word,
    time_words,
)
from mafialab.cli._options import (
    AgentSpec,
    Format,
    InPath,
    OneGame,
    OutDir,
    checked,
    game_log,
    library_message,
    ray_option,
    refusing,
    seed_option,
)

bifurcate_app = typer.Typer(
    help="The bifurcation experiment: resample a vote, keep diverse variants, fork each, report.",
    no_args_is_help=True,
)


def _f(x: Any, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _tv(fn: Any) -> Any:
    """A row of the team-vote figures: ``fn(b["team_vote"])``, or ``-`` for a block without team votes."""
    return lambda b: "-" if "team_vote" not in b else fn(b["team_vote"])


_TEAM_VOTE_ROWS: list[tuple[str, str, Any]] = [
    ("proposal_flips", "team votes: proposal flips", _tv(lambda t: f"{t['proposal_flips']}/{t['proposal_forks']}")),
    ("proposal_flip_share", "proposal flip share", lambda b: _f(b.get("team_vote", {}).get("proposal_flip_share"), 4)),
    ("town_win_when_approve", "P(town win | approve)",
     _tv(lambda t: fmt_rate(Rate.from_dict(t["town_win_when_approve"]), "count"))),
    ("town_win_when_reject", "P(town win | reject)",
     _tv(lambda t: fmt_rate(Rate.from_dict(t["town_win_when_reject"]), "count"))),
    ("team_vote_fisher_p", "Fisher exact p (approve vs reject)", _tv(lambda t: fmt_p(t["fisher_p"]))),
]  # fmt: skip
"""Rows of mission games' team-vote points (shown when a block holds any): key, label, cell."""


def _print_tables(rep: dict[str, Any]) -> None:
    blocks = [*rep["by_quadrant"].items(), ("pooled", rep["pooled"])]
    t = Table("", *[name for name, _ in blocks], title=f"{rep['experiment']} ({rep['source']})")

    def ci(b: dict[str, Any], key: str) -> str:
        c = b["ci95"].get(key)
        return "" if c is None else f" [{c[0]:.3f}, {c[1]:.3f}]"

    na = rep.get("not_applicable", {})  # every point a team vote: no vote-for-a-mafioso figures
    rows: list[tuple[str, str, Any]] = [  # report key, label, cell
        ("points", "points", lambda b: str(b["points"])),
        ("forks", "forks", lambda b: str(b["forks"])),
        ("flips", "flips", lambda b: str(b["flips"])),
        ("flip_share", "flip share", lambda b: _f(b["flip_share"], 4) + ci(b, "flip_share")),
        ("mean_point_flip_share", "mean point flip share", lambda b: _f(b["mean_point_flip_share"], 4)),
        ("town_win_when_vote_mafia", "P(town win | vote mafioso)",
         lambda b: fmt_rate(Rate.from_dict(b["town_win_when_vote_mafia"]), "count")),
        ("town_win_otherwise", "P(town win | otherwise)",
         lambda b: fmt_rate(Rate.from_dict(b["town_win_otherwise"]), "count")),
        ("fisher_p", "Fisher exact p (two-sided)", lambda b: fmt_p(b["fisher_p"])),
        ("flips_on_mafia_vote", "flips on a mafioso vote", lambda b: str(b["flips_on_mafia_vote"])),
        ("modal_concentration_mean", "modal concentration (mean)", lambda b: _f(b["modal_concentration_mean"])),
        ("factual_is_modal_points", "factual choice = modal" if na else "factual target = modal",
         lambda b: "-" if b["factual_is_modal_points"] is None else f"{b['factual_is_modal_points']}/{b['points']}"),
    ]  # fmt: skip
    labels = {key: label for key, label, _ in rows} | {"by_quadrant": "quadrants"}
    shown = [r for r in rows if r[0] not in na]
    if any("team_vote" in b for _, b in blocks):
        shown += _TEAM_VOTE_ROWS
    for _, label, fn in shown:
        t.add_row(label, *[fn(b) for _, b in blocks])
    console.print(t)
    for why in dict.fromkeys(na.values()):
        console.print(f"{', '.join(labels.get(k, k) for k, w in na.items() if w == why)}: {why}", highlight=False)
    p = Table("point", "quadrant", "voter", "factual", "forks", "flips", "flip share", "modal conc.", "factual modal")
    for r in rep["points"]:
        p.add_row(
            r["point_id"],
            r["quadrant"] or "-",
            r["voter"],
            (r.get("factual_choice") or "(blank)") if "kind" in r else (r["factual_target"] or "(no vote)"),
            str(r["forks"]),
            str(r["flips"]),
            _f(r["flip_share"]),
            _f(r["modal_concentration"]),
            "-" if r["factual_is_modal"] is None else ("yes" if r["factual_is_modal"] else "no"),
        )
    console.print(p)
    ff = rep["factual_forks"]
    console.print(f"factual forks (variant 0): {ff['flips']} of {ff['n']} flipped", highlight=False)
    if rep["unfinished_forks"]:
        console.print(f"[yellow]{count(rep['unfinished_forks'], 'fork')} without a winner left out[/]")


BIFURCATION = "a bifurcation folder (the --out of `mafialab bifurcate run`, or a MafiaScope one)"


@bifurcate_app.command("report")
@checked
def report_cmd(
    path: Annotated[Path, InPath(BIFURCATION)] = typer.Argument(
        ..., help="Bifurcation directory (mafialab's, or a MafiaScope release)."
    ),
    fmt: Format = typer.Option(Format.table, "--format", "-f", help="table, json or csv (one row per quadrant)."),
    resamples: int = typer.Option(1000, "--resamples", min=1, help="Cluster-bootstrap resamples for the ci95."),
    seed: int = seed_option("Bootstrap seed."),
) -> None:
    """Report flip shares, vote-for-a-mafioso effects and lock-in of a bifurcation run.

    Per point, per quadrant and pooled: flip share, P(town win | the variant voted for a
    mafioso) against otherwise with a two-sided Fisher exact test, modal target concentration.
    Team votes of mission games: the flip share of the winner and of the proposal's result,
    P(town win | approve) against reject; the mafioso-vote figures are not applicable.
    """
    with refusing(FileNotFoundError, ValueError, name="PATH"):
        rep = report_bifurcation(path, resamples=resamples, seed=seed)
    for p in rep["problems"]:
        err_console.print(f"[yellow]skipped:[/] {escape(str(p))}", highlight=False, soft_wrap=True)
    if fmt is Format.json:
        sys.stdout.write(json.dumps(rep, indent=1, ensure_ascii=False) + "\n")
    elif fmt is Format.csv:
        rows = blocks_csv_rows(rep)
        w = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else ["block"])
        w.writeheader()
        w.writerows(rows)
    else:
        _print_tables(rep)


@bifurcate_app.command("run")
@checked
def run_cmd(
    game: Annotated[Path, OneGame()] = typer.Argument(
        ..., help="Parent game directory (it must replay; see `fork steps`)."
    ),
    points: str = typer.Option(
        ..., "--points", help="Decision ids (12,40), innocent-votes, or random:N (a seeded control draw)."
    ),
    per_quadrant: int | None = typer.Option(
        None, "--per-quadrant", min=1, help="With innocent-votes: N policy-gap and N perception-gap votes, drawn."
    ),
    seed: int = seed_option("Seed of the draws, the resamples and the forks.", "-s"),
    resamples: int = typer.Option(500, "--resamples", "-K", min=1, help="Samples of the voter's answer per point."),
    keep: int = typer.Option(20, "--keep", "-M", min=1, help="Variants kept and forked per point (factual included)."),
    temperature: float = typer.Option(1.2, "--temperature", "-T", min=0.0, help="Temperature of the resamples."),
    embed: str = typer.Option("tfidf", "--embed", help="tfidf (offline) or openai/<model>?base_url=... (embeddings)."),
    sampler: Annotated[str | None, AgentSpec()] = typer.Option(
        None, "--sampler", help="Agent spec that resamples the voter (default: its own)."
    ),
    agents: Annotated[str | None, AgentSpec()] = typer.Option(
        None, "--agents", "-a", help="Agent spec of the continuation (default: parent's)."
    ),
    parallel: int = typer.Option(8, "--parallel", "-j", min=1, help="Resample calls and forks in flight at once."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the number of calls and the cost estimate; run nothing."
    ),
    out: Annotated[Path, OutDir()] = typer.Option(
        ..., "--out", "-o", help="Bifurcation directory (an interrupted run resumes here)."
    ),
    ray_address: str | None = ray_option(
        "Draw the resamples and play the forks", "everything lands in OUT as in a local run (and resumes so)"
    ),
) -> None:
    """Resample a vote K times, keep M diverse variants, fork each once (MafiaScope §6).

    A point is a day vote, or in a mission game a team vote (its variants: approve and reject).
    Writes samples/, points.jsonl, forks.jsonl and the fork games under forks/ as it goes; run
    the same command again to resume. Read the result with `mafialab bifurcate report OUT`.
    """
    from mafialab.counterfactual import branch_specs, estimate_bifurcation, run_bifurcation
    from mafialab.harness import PreflightError, RayConnectError, ReplayMismatch, freeze_startup_heap
    from mafialab.record import LogFormatError

    log = game_log(game)
    try:
        refuse_seats_on_ray(ray_address, [*branch_specs(log, agents), *([sampler] if sampler else [])])
        if dry_run:
            est = estimate_bifurcation(
                log,
                points,
                per_quadrant=per_quadrant,
                seed=seed,
                resamples=resamples,
                keep=keep,
                out=out,
                sampler=sampler,
                agents=agents,
            )
            if est.why_empty is not None:
                console.print(f"0 points: {escape(est.why_empty)}", highlight=False, soft_wrap=True)
                return
            cost = f"${est.cost_usd:.4f}" if est.cost_usd is not None else "unknown (unpriced)"
            basis = []
            if est.resample_calls and est.resample_timing is not None:
                basis.append(f"resamples: {est.resample_timing.basis}")
            if est.fork_calls and est.fork_timing is not None:
                basis.append(f"forks: {est.fork_timing.basis}")
            console.print(
                f"{count(est.points, 'point')}: {count(est.resample_calls, 'resample call')}, "
                f"{count(est.forks, 'fork')} or fewer of about {count(round(est.fork_calls), 'call')} together; "
                f"{count(round(est.calls), 'call')} in all; forks' estimated cost {cost}; {time_words(est.seconds)}"
                + (f". Time basis: {'; '.join(basis)}" if basis else ""),
                highlight=False,
                soft_wrap=True,
            )
            return
        freeze_startup_heap()  # a long driver: keep the start-up heap out of full GC passes
        with progress_bar() as bar:
            what = "samples and forks" if ray_address is None else f"samples and forks (ray {ray_address})"
            task = bar.add_task(what, total=None)
            res = asyncio.run(
                run_bifurcation(
                    log,
                    points,
                    out,
                    per_quadrant=per_quadrant,
                    seed=seed,
                    resamples=resamples,
                    keep=keep,
                    temperature=temperature,
                    embed=embed,
                    sampler=sampler,
                    agents=agents,
                    parallel=parallel,
                    progress=lambda kind, n: bar.advance(task, n),
                    ray=ray_address,
                )
            )
    except typer.Exit:
        raise  # a refusal already printed (typer.Exit is a RuntimeError: not to be printed again as "error: 2")
    except (
        LogFormatError,
        ReplayMismatch,
        ValueError,
        PreflightError,
        RuntimeError,
        ImportError,
        RayConnectError,
    ) as err:
        fail(library_message(err, out))
    for e in res.errors:
        err_console.print(f"[yellow]fork not played:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
    console.print(
        f"{count(len(res.points), 'point')}; {count(res.samples, 'new sample')}, {count(res.forks, 'new fork')} "
        f"in {escape(str(out))}. "
        f"Report: {escape(program())} bifurcate report {escape(shell_word(out))}",
        highlight=False,
    )
