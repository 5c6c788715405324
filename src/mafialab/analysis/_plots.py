"""PNG plots of a report (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mafialab._words import count


def plot_caption(rep: dict[str, Any], corpus: str | None = None) -> str:
    """What every plot of a report is titled with: the corpus, method, games and resamples."""
    where = f"{corpus} · " if corpus else ""
    games, resamples = count(rep["games"], "game"), count(rep["resamples"], "game resample")
    return f"{where}method {rep['method']} · {games} · 95% CI: {resamples}"


def write_plots(rep: dict[str, Any], out_dir: Path, corpus: str | None = None) -> list[Path]:
    """Write the report's plots as PNG files, each titled with the corpus and method.

    Files: ``reliability.png`` (F2 reliability diagram: accuracy against mean confidence per
    bin, with the diagonal of perfect calibration and bin counts) and ``by_round.png`` (F1
    committed accuracy and hidden-team recall by round, each with its chance line and 95 %
    interval).

    Args:
        rep: A report from :func:`mafialab.analysis.compute_report`.
        out_dir: Directory to write into (created).
        corpus: Name of the corpus the report covers (the report directory's name), shown in
            every plot's title with the method (:func:`plot_caption`).

    Returns:
        The paths written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []

    cal = rep["calibration"]
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    xs = [b["mean_confidence"] / 100 for b in cal["bins"]]
    ys = [b["accuracy"] for b in cal["bins"]]
    for b in cal["bins"]:
        ax.bar((b["lo"] + b["hi"]) / 200, b["accuracy"], width=(b["hi"] - b["lo"]) / 100 * 0.9, alpha=0.25, color="C0")
        ax.annotate(f"n={b['n']}", ((b["lo"] + b["hi"]) / 200, 0.02), ha="center", fontsize=8)
    ax.plot(xs, ys, marker="o", color="C0", label="observed")
    ece = cal["ece"]
    ax.set_title(f"F2 reliability (ECE={ece:.3f}, n={cal['n']})" if ece is not None else "F2 reliability (no data)")
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy of committed guesses")
    fig.suptitle(plot_caption(rep, corpus), fontsize=9)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(loc="upper left")
    p = out / "reliability.png"
    fig.savefig(p, dpi=120, bbox_inches="tight")
    plt.close(fig)
    paths.append(p)

    rounds = sorted(rep["first_order"], key=int)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, key, chance, title in (
        (axes[0], "committed_accuracy", "accuracy_chance", "committed accuracy"),
        (axes[1], "recall", "recall_chance", "recall of the hidden team"),
    ):
        xs2 = [int(r) for r in rounds if rep["first_order"][r][key] is not None]
        ys2 = [rep["first_order"][str(r)][key] for r in xs2]
        cis = [rep["first_order"][str(r)]["ci95"][key] for r in xs2]
        lo = [y - c[0] if c else 0 for y, c in zip(ys2, cis, strict=True)]
        hi = [c[1] - y if c else 0 for y, c in zip(ys2, cis, strict=True)]
        ax.errorbar(xs2, ys2, yerr=[lo, hi], marker="o", capsize=3, label=title)
        cx = [int(r) for r in rounds if rep["first_order"][r][chance] is not None]
        ax.plot(cx, [rep["first_order"][str(r)][chance] for r in cx], linestyle="--", color="grey", label="chance")
        ax.set_title(title)
        ax.set_xlabel("round")
        ax.set_xticks([int(r) for r in rounds])
        ax.set_ylim(0, 1)
        ax.legend()
    axes[0].set_ylabel("rate")
    fig.suptitle("F1 by round · " + plot_caption(rep, corpus), fontsize=9)
    p = out / "by_round.png"
    fig.savefig(p, dpi=120, bbox_inches="tight")
    plt.close(fig)
    paths.append(p)
    return paths
