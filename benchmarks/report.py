"""Import and report speed on the shared MafiaScope corpora, and bootstrap speed at scale.

Usage: python benchmarks/report.py [SHARED_MAFIASCOPE_DIR]
Prints JSON: seconds to import en_demo (5 games, 3,208 probe records) and corpus_v2 (147
games), to compute the full report on en_demo with 1,000 resamples under each method, and to
bootstrap one pooled ratio over 10,000 synthetic games with 1,000 resamples.
Targets: a 1,000-resample report on en_demo in under 5 s; the 10,000-game bootstrap in under 5 s.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mafialab.analysis import cluster_bootstrap_ci, compute_report, load_games
from mafialab.record import import_mafiascope


def main() -> None:
    default_src = Path(__file__).resolve().parents[1].parent / "shared/data/mafiascope"
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else default_src
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in ("en_demo", "corpus_v2"):
            t0 = time.perf_counter()
            import_mafiascope(src / corpus, Path(tmp) / corpus)
            out[f"import_{corpus}_s"] = round(time.perf_counter() - t0, 3)
        games = load_games(Path(tmp) / "en_demo")
        for method in ("mafiascope", "default"):
            t0 = time.perf_counter()
            compute_report(games, method, resamples=1000, seed=0)
            out[f"report_en_demo_{method}_1000_s"] = round(time.perf_counter() - t0, 3)
    rng = np.random.default_rng(0)
    den = rng.integers(1, 50, size=10_000).astype(float)
    per_game = np.stack([np.floor(den * rng.random(10_000)), den], axis=1)
    t0 = time.perf_counter()
    cluster_bootstrap_ci(per_game, lambda x: x[..., 0] / x[..., 1], resamples=1000, seed=0)
    out["bootstrap_10000_games_1000_s"] = round(time.perf_counter() - t0, 3)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
