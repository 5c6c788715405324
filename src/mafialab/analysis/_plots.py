"""PNG plots of a report (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path

from mafialab._words import count
from mafialab.analysis._report_model import FirstOrder, Report


def plot_caption(rep: Report, corpus: str | None = None) -> str:
    """What every plot of a report is titled with: the corpus, method, games and resamples."""
    where = f"{corpus} · " if corpus else ""
    games, resamples = count(rep.games, "game"), count(rep.resamples, "game resample")
    return f"{where}method {rep.method} · {games} · 95% CI: {resamples}"


def write_plots(rep: Report, out_dir: Path, corpus: str | None = None) -> list[Path]:
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

    cal = rep.calibration
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    xs = [b.mean_confidence / 100 for b in cal.bins]
    ys = [b.accuracy for b in cal.bins]
    for b in cal.bins:
        ax.bar((b.lo + b.hi) / 200, b.accuracy, width=(b.hi - b.lo) / 100 * 0.9, alpha=0.25, color="C0")
        ax.annotate(f"n={b.n}", ((b.lo + b.hi) / 200, 0.02), ha="center", fontsize=8)
    ax.plot(xs, ys, marker="o", color="C0", label="observed")
    ece = cal.ece
    ax.set_title(f"F2 reliability (ECE={ece:.3f}, n={cal.n})" if ece is not None else "F2 reliability (no data)")
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

    first = rep.first_order
    rounds = sorted(first, key=int)

    def accuracy(f: FirstOrder) -> tuple[float | None, float | None, list[float] | None]:
        return f.committed_accuracy, f.accuracy_chance, f.ci95.committed_accuracy

    def recall(f: FirstOrder) -> tuple[float | None, float | None, list[float] | None]:
        return f.recall, f.recall_chance, f.ci95.recall

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, pick, title in (
        (axes[0], accuracy, "committed accuracy"),
        (axes[1], recall, "recall of the hidden team"),
    ):
        points = [(int(r), *pick(first[r])) for r in rounds]
        shown = [(x, y, c) for x, y, _, c in points if y is not None]
        xs2, ys2 = [x for x, _, _ in shown], [y for _, y, _ in shown]
        lo = [y - c[0] if c else 0 for _, y, c in shown]
        hi = [c[1] - y if c else 0 for _, y, c in shown]
        ax.errorbar(xs2, ys2, yerr=[lo, hi], marker="o", capsize=3, label=title)
        chances = [(x, ch) for x, _, ch, _ in points if ch is not None]
        ax.plot([x for x, _ in chances], [ch for _, ch in chances], linestyle="--", color="grey", label="chance")
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
