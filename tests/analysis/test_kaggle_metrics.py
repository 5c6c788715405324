"""Kaggle's own metrics on imported games: the same numbers as its evaluator (tests/data/kaggle).

``evaluator_figures.json`` holds ``GameSetEvaluator`` (kaggle-environments 1.33.2,
``envs/werewolf/eval/metrics.py``, no bootstrap) run by ``scripts/check_kaggle.sh`` on the replays
of ``tests/data/kaggle/replays``; the same replays imported and measured by mafialab must give
the same per-agent and per-role figures (mean and standard error). Elo and OpenSkill
(``analysis.rate_games``, rated in the evaluator's game order: ``evaluator_order.json`` is the
order its ``os.walk`` listed the replays in when the figures were frozen) equal its point values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import kaggle_figures
from mafialab.analysis._kaggle import kaggle_game, mean_sem
from mafialab.cli import app
from mafialab.record import _import_kaggle, import_kaggle, iter_game_dirs, read_game

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


@pytest.fixture(scope="module")
def imported_in_evaluator_order(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture replays imported as if their folder listed them as it did for the evaluator.

    The evaluator rates in ``os.walk`` order, which the file system decides; the importer
    records the order it sees (``meta.kaggle_order``). Here it is handed the listing the
    evaluator saw when ``evaluator_figures.json`` was frozen.
    """
    order = json.loads((DATA / "evaluator_order.json").read_text(encoding="utf-8"))
    out = tmp_path_factory.mktemp("kaggle-rated")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_import_kaggle, "evaluator_order", lambda src: [src / name for name in order])
        import_kaggle(DATA / "replays", out)
    return out


def test_the_importer_records_the_evaluators_game_order(imported_in_evaluator_order: Path) -> None:
    order = json.loads((DATA / "evaluator_order.json").read_text(encoding="utf-8"))
    for d in iter_game_dirs(imported_in_evaluator_order):
        meta = read_game(d).header.meta
        assert meta["kaggle_order"] == order.index(meta["source_file"])
    # without a listing handed in, it is the folder's os.walk order (the evaluator's own enumeration)
    walk = _import_kaggle.evaluator_order(DATA / "replays")
    assert sorted(p.name for p in walk) == sorted(order)


def test_report_by_agent_gives_the_evaluators_elo_and_openskill(imported_in_evaluator_order: Path) -> None:
    runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
    res = runner.invoke(
        app, ["report", str(imported_in_evaluator_order), "--by", "agent", "--format", "json", "--resamples", "50"]
    )
    assert res.exit_code == 0, res.output
    ours = json.loads(res.stdout)["kaggle"]
    theirs = json.loads((DATA / "evaluator_figures.json").read_text(encoding="utf-8"))
    assert sorted(ours) == sorted(theirs)
    for agent, m in theirs.items():
        assert ours[agent]["elo"] == pytest.approx(m["elo"], abs=1e-9), agent
        assert ours[agent]["openskill_mu"] == pytest.approx(m["openskill_mu"], abs=1e-9), agent
        assert ours[agent]["openskill_sigma"] == pytest.approx(m["openskill_sigma"], abs=1e-9), agent
        lo, hi = ours[agent]["elo_ci"]
        assert lo <= hi  # a bootstrap interval (ours; Kaggle's need not match)
        for role, x in m["by_role"].items():
            mine = ours[agent]["by_role"][role]
            assert mine["games"] == x["games"], (agent, role)
            assert mine["win_rate"] == pytest.approx(x["win_rate"], abs=1e-12), (agent, role)
    assert ours["model-a"]["elo"] == pytest.approx(1206.216437483401, abs=1e-9)  # the frozen value, spelled out


def test_the_tables_show_ratings_and_the_gte_hint_without_polarix(imported_in_evaluator_order: Path) -> None:
    runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
    res = runner.invoke(app, ["report", str(imported_in_evaluator_order), "--by", "agent", "--resamples", "20"])
    assert res.exit_code == 0, res.output
    assert (
        "Kaggle Game Arena ratings by agent" in res.stdout and "1206.2" in res.stdout and "22.05 (8.28)" in res.stdout
    )
    from mafialab.analysis import GTE_EXTRA_HINT, gte_available

    assert (GTE_EXTRA_HINT in res.stdout) != gte_available()


def test_elo_depends_on_the_order_the_importer_carries(imported_in_evaluator_order: Path) -> None:
    from mafialab.analysis import rate_games

    games = [kaggle_game(read_game(d)) for d in iter_game_dirs(imported_in_evaluator_order)]
    outs = [g.outcome() for g in games if g is not None]
    theirs = json.loads((DATA / "evaluator_figures.json").read_text(encoding="utf-8"))
    rated = rate_games(outs, boards=("overall",), include_self_play=True, resamples=0)
    assert {r.agent: r.elo for r in rated.boards["overall"]} == pytest.approx({a: m["elo"] for a, m in theirs.items()})
    reversed_ = [o.model_copy(update={"order": -o.order}) for o in outs]
    other = rate_games(reversed_, boards=("overall",), include_self_play=True, resamples=0)
    assert {r.agent: r.elo for r in other.boards["overall"]} != pytest.approx({a: m["elo"] for a, m in theirs.items()})
