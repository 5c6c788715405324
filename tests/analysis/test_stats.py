"""The one statistics module: rates, Wilson, Newcombe, Fisher, McNemar, means, and their formatters.

Known values are computed by hand (the closed forms in the comments) or taken from the
papers the methods come from."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import mafialab.analysis._stats as stats_module
from mafialab.analysis import (
    EMPTY_STAT,
    MIN_CLUSTERS,
    Rate,
    TestResult,
    bootstrap_mean_ci,
    cluster_bootstrap_ci,
    combine,
    compute_report,
    diff_ci,
    fisher_exact,
    fmt_p,
    fmt_rate,
    load_games,
    mcnemar_exact,
    mean_ci,
    newcombe,
    no_interval_reason,
    rate,
    wilson,
)
from mafialab.analysis._stats import clusters_with_data
from mafialab.arena import build_index, run_season, season_from_dict
from mafialab.arena._leaderboard import bootstrap_mean, leaderboard_rows, render_markdown, win_rate
from mafialab.beliefshift import build_report
from mafialab.cli import app
from mafialab.counterfactual import rate as fork_rate
from mafialab.record import import_mafiascope
from tests.arena.test_season import make_judge, season
from tests.beliefshift_fixtures import result
from tests.conftest import ROOT

Z = 1.959963984540054  # the 97.5 % normal quantile


def _wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    # Wilson (1927): (k + z²/2 ± z·sqrt(k(n-k)/n + z²/4)) / (n + z²)
    mid, half = k + Z * Z / 2, Z * math.sqrt(k * (n - k) / n + Z * Z / 4)
    return (mid - half) / (n + Z * Z), (mid + half) / (n + Z * Z)


def test_wilson_7_of_10_is_the_closed_form() -> None:
    lo, hi = wilson(7, 10)
    assert (lo, hi) == pytest.approx(_wilson_by_hand(7, 10), abs=1e-12)
    assert (round(lo, 4), round(hi, 4)) == (0.3968, 0.8922)


def test_wilson_matches_textbook_values() -> None:
    # Wilson (1927) score interval, 95 %: 5/10 -> [0.2366, 0.7634]; 0/10 -> [0, 0.2775]
    lo, hi = wilson(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    lo0, hi0 = wilson(0, 10)
    assert lo0 == 0.0 and round(hi0, 4) == 0.2775
    lo90, hi90 = wilson(5, 10, confidence=0.9)
    assert lo < lo90 < hi90 < hi


def test_an_empty_sample_has_no_rate_and_no_interval() -> None:
    # the one rule: n = 0 gives None, never the uninformative [0, 1] that analysis.wilson gave
    assert wilson(0, 0) is None
    assert rate(0, 0) == Rate(hits=0, n=0, rate=None, ci=None, method=None)
    assert rate(0, 0).lo is None and rate(0, 0).hi is None
    assert newcombe(0, 0, 3, 10) is None and newcombe(3, 10, 0, 0) is None
    assert fisher_exact(0, 0, 3, 10) == TestResult(None, None, "fisher exact, two-sided")
    assert mcnemar_exact(0, 0).p is None
    assert fmt_rate(rate(0, 0)) == "-" and fmt_rate(rate(0, 0), "percent", missing="–") == "–"
    # every caller follows it: fork outputs, the season index, the bifurcation report
    assert fork_rate(0, 0) == {"k": 0, "n": 0, "p": None, "lo": None, "hi": None}
    assert (win_rate(0, 0).rate, win_rate(0, 0).low, win_rate(0, 0).high) == (None, None, None)


def test_rate_carries_its_wilson_interval_or_says_why_not() -> None:
    r = rate(7, 10)
    assert (r.hits, r.n, r.rate, r.method) == (7, 10, 0.7, "wilson")
    assert r.ci == wilson(7, 10) and (r.lo, r.hi) == r.ci
    assert rate(7, 10, interval=False) == Rate(7, 10, 0.7)
    one_game = rate(1, 2, clusters=1)
    assert one_game.ci is None and one_game.no_interval == "no interval: 1 game"
    with pytest.raises(ValueError, match="0 <= hits <= n"):
        rate(11, 10)
    with pytest.raises(ValueError):
        rate(0, -1)


def test_every_serialised_rate_reads_back_as_the_same_rate() -> None:
    r = rate(7, 10)
    assert Rate.from_dict(fork_rate(7, 10)) == r  # fork compare / sweep
    season = Rate.from_dict(win_rate(7, 10).model_dump())  # a season's index.json
    assert season == r
    assert Rate.from_dict({"hits": 7, "n": 10, "rate": 0.7}) == Rate(7, 10, 0.7)  # bifurcation report
    assert Rate.from_dict(win_rate(1, 2, games=1).model_dump()).no_interval == "no interval: 1 game"


def test_one_formatter_prints_every_rate_style() -> None:
    r = rate(7, 10)
    assert fmt_rate(r) == "0.700 [0.397, 0.892] (7/10)"  # fork compare, fork sweep
    assert fmt_rate(r, "percent") == "70% [40%, 89%] (7/10)"  # leaderboard
    assert fmt_rate(r, "compact") == "70% 7/10 [40,89]"  # narrow leaderboard
    assert fmt_rate(r, "count") == "7/10 = 70.0 %"  # bifurcation report
    one = rate(1, 2, clusters=1)
    assert fmt_rate(one, "percent") == "50% (1/2; no interval: 1 game)"
    assert fmt_rate(one, "compact") == "50% 1/2†"
    assert fmt_rate(Rate(1, 2, 0.5)) == "0.500 (1/2)"
    with pytest.raises(ValueError, match="unknown rate style"):
        fmt_rate(r, "fraction")  # type: ignore[arg-type]


def test_newcombe_matches_the_paper() -> None:
    # Newcombe (1998) table II example (a): 56/70 vs 48/80 -> difference 0.2, interval 0.0524 to 0.3339
    lo, hi = newcombe(56, 70, 48, 80)
    assert lo == pytest.approx(0.0524, abs=1e-4) and hi == pytest.approx(0.3339, abs=1e-4)
    # method 10 by hand: d - sqrt((p1-l1)² + (u2-p2)²), d + sqrt((u1-p1)² + (p2-l2)²)
    (l1, u1), (l2, u2) = _wilson_by_hand(56, 70), _wilson_by_hand(48, 80)
    p1, p2 = 0.8, 0.6
    assert lo == pytest.approx(0.2 - math.hypot(p1 - l1, u2 - p2), abs=1e-12)
    assert hi == pytest.approx(0.2 + math.hypot(u1 - p1, p2 - l2), abs=1e-12)


def test_fisher_exact_2x2_by_hand() -> None:
    # the lady tasting tea, [[3, 1], [1, 3]]: hypergeometric P(k) = C(4,k) C(4,4-k) / C(8,4)
    # = 1, 16, 36, 16, 1 (/70); tables no more likely than k = 3: (1 + 16 + 16 + 1) / 70
    res = fisher_exact(3, 4, 1, 4)
    assert res.p == pytest.approx(34 / 70, abs=1e-12)
    assert res.stat == pytest.approx(9.0)  # sample odds ratio (3·3)/(1·1)
    # policy-gap 2x2 of the MafiaScope guided experiment: 7/46 vs 2/114, two-sided p = 0.0025
    assert fisher_exact(7, 46, 2, 114).p == pytest.approx(0.0025, abs=5e-4)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [(4, 1, 0.375), (4, 2, 0.6875), (6, 0, 0.03125), (0, 1, 1.0), (2, 1, 1.0), (1, 9, 22 / 1024)],
)
def test_mcnemar_exact(b: int, c: int, p: float) -> None:
    # two-sided exact: 2 * P(X <= min(b, c)) for X ~ Bin(b + c, 1/2), capped at 1
    assert mcnemar_exact(b, c).p == pytest.approx(p)
    assert mcnemar_exact(b, c).stat == b


def test_mcnemar_without_discordant_pairs_is_none() -> None:
    assert mcnemar_exact(0, 0).p is None


def test_student_t_mean_and_welch_difference_by_hand() -> None:
    # [1, 2, 3]: mean 2, s = 1, t(0.975, 2) = 4.302653 -> half 4.302653 / sqrt(3)
    m = mean_ci([1.0, 2.0, 3.0])
    assert (m.mean, m.n) == (2.0, 3) and m.half == pytest.approx(4.302653 / math.sqrt(3), abs=1e-6)
    assert mean_ci([]) is EMPTY_STAT and math.isnan(mean_ci([5.0]).half)
    # equal sizes and variances: Welch df = 4, se = sqrt(2/3), t(0.975, 4) = 2.776445
    d = diff_ci([4.0, 5.0, 6.0], [1.0, 2.0, 3.0])
    assert d.mean == 3.0 and d.half == pytest.approx(2.776445 * math.sqrt(2 / 3), abs=1e-6)
    g = combine([m, mean_ci([2.0, 4.0])])
    assert g.n == 2 and g.mean == 2.5


def test_bootstrap_mean_resamples_with_replacement() -> None:
    vals = [0.0, 10.0, 5.0, 5.0]
    lo, hi = bootstrap_mean_ci(vals, np.random.default_rng(1), 2000)
    assert 0.0 <= lo < 5.0 < hi <= 10.0
    assert bootstrap_mean_ci([], np.random.default_rng(1), 10) is None
    assert bootstrap_mean_ci([3.0, 3.0], np.random.default_rng(1), 10) == (3.0, 3.0)


def test_scipy_and_statsmodels_load_only_when_a_function_needs_them() -> None:
    tree = ast.parse(Path(stats_module.__file__).read_text(encoding="utf-8"))
    top = [
        (n.module if isinstance(n, ast.ImportFrom) else n.names[0].name) or ""
        for n in tree.body
        if isinstance(n, ast.Import | ast.ImportFrom)
    ]
    assert not [m for m in top if m.split(".")[0] in {"scipy", "statsmodels"}]


def test_newcombe_keeps_the_bits_fork_compare_printed() -> None:
    # fork compare always asked statsmodels for alpha = 0.05 exactly; 1 - 0.95 differs in the last bit
    from statsmodels.stats.proportion import confint_proportions_2indep

    for k1, n1, k2, n2 in ((3, 3, 3, 3), (0, 3, 3, 3), (7, 46, 2, 114)):
        lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=0.05)
        assert newcombe(k1, n1, k2, n2) == (float(lo), float(hi))


# Statistics never overstate certainty: fewer than two games (clusters) give no interval, and say why.


FIXTURES = Path(__file__).resolve().parents[1] / "data" / "mafiascope"


def test_the_rule():
    assert MIN_CLUSTERS == 2
    assert no_interval_reason(0) == "no interval: 0 games"
    assert no_interval_reason(1) == "no interval: 1 game"
    assert no_interval_reason(2) is None and no_interval_reason(40) is None
    x = np.array([[3.0, 4.0], [0.0, 0.0], [0.0, 0.0]])  # one game with data, two without
    assert clusters_with_data(x) == 1

    def ratio(p: np.ndarray) -> np.ndarray:
        return p[..., 0] / p[..., 1]

    assert cluster_bootstrap_ci(x, ratio, resamples=50) is None  # was [0.75, 0.75]
    x[1] = [1.0, 4.0]
    lo, hi = cluster_bootstrap_ci(x, ratio, resamples=200)  # type: ignore[misc]
    assert lo < hi


@pytest.fixture(scope="module")
def one_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one")
    import_mafiascope(FIXTURES / "en_demo" / "0a7f3c10-1111-4aaa-8aaa-000000000001", out)
    return out


def test_report_on_one_game_has_no_interval_and_says_why(one_game: Path):
    rep = compute_report(load_games(one_game), resamples=100).model_dump(mode="json")
    assert rep["games"] == 1 and rep["no_interval"] == "no interval: 1 game"
    cis: list = []

    def collect(node: object) -> None:  # every interval anywhere in the report
        if isinstance(node, dict):
            for k, v in node.items():
                if "ci95" in k:
                    cis.extend(v.values() if isinstance(v, dict) else [v])
                else:
                    collect(v)
        elif isinstance(node, list):
            for v in node:
                collect(v)

    collect(rep)
    assert len(cis) > 20 and all(c is None for c in cis)
    assert rep["first_order"]["1"]["committed_accuracy"] is not None  # the point estimate stays
    res = CliRunner().invoke(app, ["report", str(one_game), "--resamples", "50"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "no interval: 1 game" in text and "n/a (<2 games)" in text
    j = json.loads(CliRunner().invoke(app, ["report", str(one_game), "-f", "json", "--resamples", "50"]).stdout)
    assert j["no_interval"] == "no interval: 1 game" and j["calibration"]["ci95"] == {"ece": None, "brier": None}


def test_report_on_two_games_keeps_intervals(tmp_path: Path):
    import_mafiascope(FIXTURES / "en_demo", tmp_path)
    rep = compute_report(load_games(tmp_path), resamples=100).model_dump(mode="json")
    assert rep["games"] == 2 and rep["no_interval"] is None
    assert rep["first_order"]["1"]["ci95"]["committed_accuracy"] is not None


def test_beliefshift_cluster_interval_needs_two_games():
    recs = [result("M", i, "town", "mafia", "accuse", (0, i % 3), (0, i % 3)) for i in range(1, 6)]
    one = build_report(recs, ci="cluster").quantities["M"]["t1.village.accuse.target"]
    assert one.n == 5 and math.isnan(one.half)  # five responses, one game: was ± 0.00
    recs[0] = recs[0].model_copy(update={"game_id": "g2"})
    two = build_report(recs, ci="cluster")
    assert not math.isnan(two.quantities["M"]["t1.village.accuse.target"].half)
    assert "fewer than 2 games" in two.tables["table1_models"].notes[1]


def test_leaderboard_interval_needs_two_games():
    r = win_rate(1, 2, games=1)  # an entry with two seats in one game
    assert r.rate == 0.5 and r.low is None and r.high is None and r.no_interval == "no interval: 1 game"
    r2 = win_rate(1, 2, games=2)
    assert r2.low is not None and r2.low < 0.5 < r2.high
    m = bootstrap_mean([3.0, 7.0], np.random.default_rng(0), games=1)
    assert m.mean == 5.0 and m.low is None and m.no_interval == "no interval: 1 game"
    assert bootstrap_mean([3.0, 7.0], np.random.default_rng(0), games=2).low is not None


async def test_leaderboard_lists_unplayed_entries_last(tmp_path: Path):
    # 13 entries for 12 seats and one game: one entry never plays
    roster = [{"agent": "scripted", "name": f"e{i:02d}"} for i in range(13)]
    cfg = season_from_dict(season(games=1, roster=roster, parallelism={"games": 1}))
    await run_season(cfg, tmp_path / "s", judges={"mock/judge": make_judge()})
    index = build_index(tmp_path / "s")
    played = [e for e in index.leaderboard if e.games]
    unplayed = [e for e in index.leaderboard if not e.games]
    assert len(unplayed) == 1 and index.leaderboard[-1] is unplayed[0]
    # its untouched prior rating beats the rating of the losers: it used to rank above them
    assert unplayed[0].rating.ordinal > min(e.rating.ordinal for e in played)
    ordinals = [e.rating.ordinal for e in played]
    assert ordinals == sorted(ordinals, reverse=True)
    _, rows = leaderboard_rows(index)
    assert rows[-1][0] == "–" and rows[-1][1] == unplayed[0].name and rows[0][0] == "1"
    # every played entry sat in one game: its rates and scores have no interval, and say so
    assert all(e.overall.low is None and e.overall.no_interval == "no interval: 1 game" for e in played)
    assert "no interval: 1 game" in render_markdown(index)


# One rule prints a p-value everywhere: three decimals, scientific notation below 0.001.


FIXTURE = ROOT / "tests" / "data" / "viewer_branches"


runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_small_p_is_never_zero() -> None:
    assert fmt_p(1.0830e-05) == "1.083e-05"
    assert fmt_p(0.0009995) == "9.995e-04"
    assert fmt_p(0.001) == "0.001"
    assert fmt_p(0.04321) == "0.043"
    assert fmt_p(1.0) == "1.000"
    assert fmt_p(None) == "-" and fmt_p(math.nan) == "-" and fmt_p(None, missing="–") == "–"


def test_fork_compare_prints_p_by_the_rule() -> None:
    # branch folders are named <parent>~<batch>-<replica>
    batches = sorted({p.name.split("~")[1].split("-")[0] for p in (FIXTURE / "forks").glob("parent~*")})
    args = ["fork", "compare", str(FIXTURE), str(FIXTURE), "--batch-a", batches[0], "--batch-b", batches[-1]]
    want = json.loads(runner.invoke(app, [*args, "--format", "json"]).stdout)
    text = " ".join(runner.invoke(app, args).stdout.split())
    for team in ("town", "mafia"):
        p = want["difference"][team]["fisher_p"]
        assert f"Fisher exact p = {fmt_p(p)} (two-sided)" in text
