"""Kaggle's own metrics on imported games: the same numbers as its evaluator (tests/data/kaggle).

``evaluator_figures.json`` holds ``GameSetEvaluator`` (kaggle-environments 1.33.2,
``envs/werewolf/eval/metrics.py``, no bootstrap) run by ``scripts/check_kaggle.sh`` on the replays
of ``tests/data/kaggle/replays``; the same replays imported and measured by mafialab must give
the same per-agent and per-role figures (mean and standard error). Elo and OpenSkill are
``analysis._ratings``'.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafialab.analysis import kaggle_figures
from mafialab.analysis._kaggle import mean_sem
from mafialab.record import import_kaggle

DATA = Path(__file__).resolve().parents[1] / "data" / "kaggle"
SCORES = ("win_rate", "irp", "vss", "ksr", "wd_ksr", "wd_irp", "wd_vss", "margin_of_win", "speed_of_win")


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("kaggle-metrics")
    import_kaggle(DATA / "replays", out)
    return kaggle_figures([out])


def test_per_agent_figures_equal_the_evaluators(ours: dict) -> None:
    theirs = json.loads((DATA / "evaluator_figures.json").read_text(encoding="utf-8"))
    assert sorted(ours) == sorted(theirs)
    for agent, m in theirs.items():
        assert ours[agent]["games"] == m["games"], agent
        for key in SCORES:
            assert ours[agent][key] == pytest.approx(m[key], abs=1e-12), (agent, key)


def test_per_role_figures_equal_the_evaluators(ours: dict) -> None:
    theirs = json.loads((DATA / "evaluator_figures.json").read_text(encoding="utf-8"))
    for agent, m in theirs.items():
        assert sorted(ours[agent]["by_role"]) == sorted(m["by_role"])
        for role, x in m["by_role"].items():
            mine = ours[agent]["by_role"][role]
            assert mine["games"] == x["games"]
            for key in ("win_rate", "ksr", "wd_ksr"):
                assert mine[key] == pytest.approx(x[key], abs=1e-12), (agent, role, key)


def test_mean_sem_is_kaggles() -> None:
    assert mean_sem([]) == (0.0, 0.0) and mean_sem([1.0]) == (1.0, 0.0)
    m, s = mean_sem([1.0, 0.0, 0.0, 1.0, 1.0])
    assert m == pytest.approx(0.6) and s == pytest.approx(0.3**0.5 / 5**0.5)  # sample variance 0.24 * 5 / 4
