"""Every report plot is titled with the corpus and the method."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mafialab.analysis import compute_report, load_games, write_plots
from mafialab.record import import_mafiascope


def test_plots_name_corpus_and_method(mafiascope_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.figure

    import_mafiascope(mafiascope_dir / "ru_clean", tmp_path / "ru_clean")
    rep = compute_report(load_games(tmp_path / "ru_clean"), "mafiascope", resamples=20)
    titles: list[str] = []
    real = matplotlib.figure.Figure.savefig

    def spy(self: Any, *a: Any, **k: Any) -> Any:
        titles.append(self._suptitle.get_text() if self._suptitle is not None else "")
        return real(self, *a, **k)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
    paths = write_plots(rep, tmp_path / "plots", corpus="ru_clean")
    assert len(titles) == len(paths) == 2
    assert all("ru_clean" in t and "method mafiascope" in t for t in titles)
