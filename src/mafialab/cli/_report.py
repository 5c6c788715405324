"""``mafialab report``: belief metrics F1-F4 with confidence intervals over a log directory."""

from __future__ import annotations

import csv
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from mafialab.analysis import MIN_CLUSTERS, compute_report, load_games
from mafialab.cli._app import app, console, err_console, fail
from mafialab.record import LogFormatError


class _Fmt(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


class _Method(StrEnum):
    default = "default"
    mafiascope = "mafiascope"


def _f(x: Any, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _ci(ci: list[float] | None, value: Any = None) -> str:
    """An interval, or why there is none (a value without an interval: < 2 games behind it)."""
    if ci is not None:
        return f"[{ci[0]:.3f}, {ci[1]:.3f}]"
    return "" if value is None else f"n/a (<{MIN_CLUSTERS} games)"


def flat_rows(rep: dict[str, Any]) -> list[dict[str, Any]]:
    """The report as rows ``section, group, name, value, ci_lo, ci_hi`` (the CSV format)."""
    rows: list[dict[str, Any]] = []

    def add(section: str, group: str, name: str, value: Any, ci: list[float] | None = None) -> None:
        rows.append(
            {
                "section": section,
                "group": group,
                "name": name,
                "value": value,
                "ci_lo": None if ci is None else ci[0],
                "ci_hi": None if ci is None else ci[1],
            }
        )

    for k in ("games", "probe_records", "parsed"):
        add("summary", "", k, rep[k])
    for w, n in rep["winners"].items():
        add("summary", "winners", w, n)
    for r, v in rep["first_order"].items():
        for k, x in v.items():
            if k != "ci95":
                add("first_order", f"round {r}", k, x, v["ci95"].get(k))
    cal = rep["calibration"]
    for k in ("n", "ece", "brier"):
        add("calibration", "", k, cal[k], cal["ci95"].get(k))
    for b in cal["bins"]:
        for k in ("n", "accuracy", "mean_confidence"):
            add("calibration", f"bin {b['lo']}-{b['hi']}", k, b[k])
    for side, v in rep["second_order"].items():
        for k, x in v.items():
            if k != "ci95":
                add("second_order", side, k, x, v["ci95"].get(k))
    for side, v in rep["vote_coupling"].items():
        for metric, x in v.items():
            for k in ("hits", "n", "rate", "chance"):
                add("vote_coupling", f"{side} {metric}", k, x[k], x["ci95"] if k == "rate" else None)
    return rows


def _print_tables(rep: dict[str, Any]) -> None:
    console.print(
        f"[bold]{rep['games']} games[/] (method {rep['method']}, {rep['resamples']} resamples, seed {rep['seed']}); "
        f"winners {rep['winners']}; probe records {rep['probe_records']}, parsed {rep['parsed']}"
        + (f"; skipped {len(rep['skipped'])}" if rep["skipped"] else "")
    )
    if rep.get("no_interval"):
        console.print(
            f"[yellow]{rep['no_interval']}: a bootstrap over fewer than {MIN_CLUSTERS} games has no spread, "
            "so every 95% CI below is n/a[/]"
        )
    if rep["probe_records"] == 0:
        console.print("[yellow]no probe records in these games: the belief metrics are empty[/]")
    t = Table("round", "committed acc (n)", "95% CI", "chance", "Unknown (n)", "recall (n)", "95% CI", "chance",
              title="F1 first-order (non-mafia observers)")  # fmt: skip
    for r, v in rep["first_order"].items():
        t.add_row(
            r,
            f"{_f(v['committed_accuracy'])} ({v['committed_n']})",
            _ci(v["ci95"]["committed_accuracy"], v["committed_accuracy"]),
            _f(v["accuracy_chance"]),
            f"{_f(v['unknown_rate'])} ({v['unknown_n']})",
            f"{_f(v['recall'])} ({v['recall_n']})",
            _ci(v["ci95"]["recall"], v["recall"]),
            _f(v["recall_chance"]),
        )
    console.print(t)
    cal = rep["calibration"]
    t = Table("confidence", "n", "accuracy", "mean confidence", title="F2 calibration")
    for b in cal["bins"]:
        hi = f"{b['hi']}]" if b["hi"] == 100 else f"{b['hi']})"
        t.add_row(f"[{b['lo']}, {hi}", str(b["n"]), _f(b["accuracy"]), _f(b["mean_confidence"], 2))
    console.print(t)
    console.print(
        f"n={cal['n']}  ECE={_f(cal['ece'])} {_ci(cal['ci95']['ece'], cal['ece'])}  "
        f"Brier={_f(cal['brier'])} {_ci(cal['ci95']['brier'], cal['brier'])}"
    )
    t = Table("predictor", "pairs", "over-prediction", "95% CI", "pred/actual suspects", "accuracy", "majority",
              title="F3 second-order")  # fmt: skip
    for side, v in rep["second_order"].items():
        t.add_row(
            side,
            str(v["pairs"]),
            _f(v["overprediction_ratio"]),
            _ci(v["ci95"]["overprediction_ratio"], v["overprediction_ratio"]),
            f"{v['predicted_suspects']}/{v['actual_suspects']}",
            _f(v["accuracy"]),
            _f(v["majority_baseline"]),
        )
    console.print(t)
    t = Table("voters", "measure", "hits/n", "rate", "95% CI", "chance", title="F4 vote coupling")
    for side, v in rep["vote_coupling"].items():
        for metric, x in v.items():
            t.add_row(side, metric, f"{x['hits']}/{x['n']}", _f(x["rate"]), _ci(x["ci95"], x["rate"]), _f(x["chance"]))
    console.print(t)


@app.command()
def report(
    directory: Path = typer.Argument(..., help="Directory of game logs (searched recursively for game.jsonl)."),
    method: _Method = typer.Option(_Method.default, "--method", "-m", help="default, or mafiascope (exact reference)."),
    fmt: _Fmt = typer.Option(_Fmt.table, "--format", "-f", help="table, json or csv (to stdout)."),
    plots: Path | None = typer.Option(None, "--plots", help="Write PNG plots into this directory."),
    seed: int = typer.Option(0, "--seed", min=0, help="Bootstrap seed (>= 0)."),
    resamples: int = typer.Option(1000, "--resamples", min=1, help="Bootstrap resamples."),
) -> None:
    """Belief metrics F1-F4 with 95% game-level cluster-bootstrap intervals (docs/metrics.md)."""
    try:
        games = load_games(directory)
    except (FileNotFoundError, LogFormatError) as err:
        fail(str(err))
    rep = compute_report(games, method.value, resamples=resamples, seed=seed)
    if fmt is _Fmt.json:
        sys.stdout.write(json.dumps(rep, indent=2, ensure_ascii=False) + "\n")
    elif fmt is _Fmt.csv:
        w = csv.DictWriter(sys.stdout, fieldnames=["section", "group", "name", "value", "ci_lo", "ci_hi"])
        w.writeheader()
        w.writerows(flat_rows(rep))
    else:
        _print_tables(rep)
    if plots is not None:
        from mafialab.analysis import write_plots

        for p in write_plots(rep, plots):
            err_console.print(f"wrote {p}", style="dim")
