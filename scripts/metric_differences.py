"""Measure each difference between the `mafiascope` and `default` metric methods.

Imports the shared MafiaScope corpora into a temporary directory, computes the report with
the `mafiascope` method, with each `default` option switched on alone, and with `default`,
and prints a Markdown table of the headline numbers that change (used in docs/metrics.md).

    python scripts/metric_differences.py [SHARED_MAFIASCOPE_DIR]
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from pathlib import Path

from mafialab.analysis import DEFAULT, MAFIASCOPE, Report, compute_report, load_games
from mafialab.record import import_mafiascope

CORPORA = ("en_demo", "ru_clean", "ablation_demand")
OPTIONS = [f.name for f in dataclasses.fields(MAFIASCOPE) if f.name != "name"
           and getattr(MAFIASCOPE, f.name) != getattr(DEFAULT, f.name)]  # fmt: skip


def headline(rep: Report) -> dict[str, str]:
    out = {"parsed": str(rep.parsed)}
    for r, v in rep.first_order.items():
        out[f"F1 r{r} acc (n)"] = f"{v.committed_accuracy:.4f} ({v.committed_n})"
        out[f"F1 r{r} Unknown (n)"] = f"{v.unknown_rate:.4f} ({v.unknown_n})"
        out[f"F1 r{r} recall (n)"] = f"{v.recall:.4f} ({v.recall_n})"
        out[f"F1 r{r} acc chance"] = f"{v.accuracy_chance:.4f}"
    c = rep.calibration
    out["F2 n / ECE / Brier"] = f"{c.n} / {c.ece:.4f} / {c.brier:.4f}"
    for side, f3 in rep.second_order:
        ratio = "-" if f3.overprediction_ratio is None else f"{f3.overprediction_ratio:.4f}"
        out[f"F3 {side} pairs / ratio / acc"] = f"{f3.pairs} / {ratio} / {f3.accuracy:.4f}"
    for side, f4 in rep.vote_coupling:
        for m, x in f4.measures().items():  # the F4 measures (not the transcript baselines)
            ch = "-" if x.chance is None else f"{x.chance:.4f}"
            out[f"F4 {side} {m}"] = f"{x.hits}/{x.n} (chance {ch})"
    return out


def main() -> None:
    src = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[1].parent / "shared/data/mafiascope"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in CORPORA:
            import_mafiascope(src / corpus, Path(tmp) / corpus)
            games = load_games(Path(tmp) / corpus)
            base = headline(compute_report(games, MAFIASCOPE, resamples=1))
            print(f"\n### {corpus}\n")
            print("| option switched to default | measure | mafiascope | with the option |")
            print("|---|---|---|---|")
            for opt in OPTIONS:
                alt = headline(compute_report(games, MAFIASCOPE.with_(**{opt: getattr(DEFAULT, opt)}), resamples=1))
                changed = [k for k in base if alt.get(k) != base[k]] + [k for k in alt if k not in base]
                if not changed:
                    print(f"| `{opt}={getattr(DEFAULT, opt)}` | (no change) | | |")
                for k in changed:
                    print(f"| `{opt}={getattr(DEFAULT, opt)}` | {k} | {base.get(k, '-')} | {alt.get(k, '-')} |")
            full = headline(compute_report(games, DEFAULT, resamples=1))
            for k in base:
                if full.get(k) != base[k]:
                    print(f"| **all (default)** | {k} | {base[k]} | {full.get(k, '-')} |")


if __name__ == "__main__":
    main()
