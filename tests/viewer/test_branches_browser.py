"""Branch views in a real headless browser (Debian chromium driven by Playwright, no download).

The static site is built from the committed fixture ``tests/data/viewer_branches``; one
browser serves the whole module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab._words import team_wins
from mafialab.analysis import fmt_p
from mafialab.cli import app
from mafialab.viewer import build_site
from mafialab.viewer._build import site_rows
from tests.browser import page_with_errors, require_browser
from tests.conftest import ROOT

pytestmark = pytest.mark.xdist_group("browser")  # one headless Chromium at a time (tests/conftest.py)

FIXTURE = ROOT / "tests" / "data" / "viewer_branches"
ARTIFACTS = ROOT / "test-artifacts" / "viewer"

require_browser(module=True)

from playwright.sync_api import Browser, Page  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site(FIXTURE, out, jobs=1)
    return out


@pytest.fixture
def page(browser: Browser) -> Iterator[tuple[Page, list[str]]]:
    with page_with_errors(browser) as got:
        yield got


def url(site: Path, frag: str) -> str:
    return (site / "index.html").as_uri() + frag


def index_of(site: Path) -> dict[str, Any]:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    return json.loads(text[len('MAFIALAB_DATA("index","index",') : -3])


def test_tree_branch_page_and_static_build_has_no_branch_button(site: Path, page: tuple[Page, list[str]]) -> None:
    pg, errors = page
    index = index_of(site)
    pg.goto(url(site, "#/"))
    pg.wait_for_selector("tr.treerow ul.branchtree")
    # branches are drawn under their parent, not as rows of their own
    assert pg.locator("#games tbody tr:not([hidden]):not(.treerow)").count() == 1
    assert pg.locator("tr.treerow li.batchnode").count() == len(index["batches"])
    inject = next(b for b in index["batches"] if b["intervention"]["type"] == "inject" and b["replicas"] == 4)
    node = pg.locator(f"li.batchnode[data-batch='{inject['batch']}']")
    text = node.text_content() or ""
    assert f"step {inject['step']}" in text and "4 replicas" in text
    # counts and winners named as the parent's rule set names its teams (not "town"/"mafia")
    teams = next(r for r in site_rows(site) if r["id"] == inject["parent"])["teams"]
    assert f"{teams['town']} {inject['town']['k']} / {teams['mafia']} {inject['mafia']['k']}" in text
    for gid, won in zip(inject["games"], inject["winners"], strict=True):
        branch = node.locator(f"li.branchnode[data-game='{gid}']").first.text_content() or ""
        assert f"→ {teams[won]}" in branch if won else "→ unfinished" in branch
    # a branch page: breadcrumb back to the parent, prefix dimmed, fork step marked
    gid = inject["games"][0]
    row = next(r for r in site_rows(site) if r["id"] == gid)
    fs = row["parent"]["fork_seq"]
    pg.goto(url(site, f"#/game/{gid}"))
    pg.wait_for_selector("#forknote")
    crumbs = pg.eval_on_selector_all("#breadcrumb a", "els => els.map(e => e.textContent)")
    assert crumbs == ["Dashboard", "parent", gid]
    seqs = pg.eval_on_selector_all("#transcript li.prefix", "els => els.map(e => +e.dataset.seq)")
    assert seqs and max(seqs) == fs - 1 and all(q < fs for q in seqs)
    assert pg.eval_on_selector("#transcript li.forkstep", "e => +e.dataset.seq") == fs
    assert pg.locator("#branch-button").count() == 0  # read-only static build
    pg.click("#breadcrumb a[data-game='parent']")
    pg.wait_for_selector("#sensitivity")
    assert pg.evaluate("location.hash") == f"#/game/parent/step/{fs}"
    assert errors == []


def test_outcome_strip_and_comparison(site: Path, page: tuple[Page, list[str]]) -> None:
    pg, errors = page
    index = index_of(site)
    bs = [b for b in index["batches"] if b["parent"] == "parent"]
    a, b = bs[0], next(x for x in bs[1:] if x["town"]["p"] != bs[0]["town"]["p"])
    pg.goto(url(site, f"#/batch/{a['batch']}"))
    pg.wait_for_selector("#outcome")
    widths = pg.eval_on_selector_all("#outcome rect.seg", "els => els.map(e => +e.getAttribute('width'))")
    assert widths[0] == pytest.approx(600 * a["town"]["k"] / a["replicas"])
    legend = pg.text_content(".outcome-legend") or ""
    assert f"n = {a['n']} finished" in legend
    teams = next(r for r in site_rows(site) if r["id"] == "parent")["teams"]
    assert f"P({team_wins(teams['town'])})" in legend and f"P({team_wins(teams['mafia'])})" in legend
    listed = pg.eval_on_selector_all("#batch-branches li", "els => els.map(e => e.textContent)")
    assert listed == [f"{g} → {teams[w] if w else 'unfinished'}" for g, w in zip(a["games"], a["winners"], strict=True)]
    pg.click(f"a[href='#/compare/{a['batch']}/{b['batch']}']")
    pg.wait_for_selector("#delta")
    res = CliRunner().invoke(
        app,
        ["fork", "compare", str(FIXTURE), str(FIXTURE), "--batch-a", a["batch"], "--batch-b", b["batch"], "--format", "json"],
    )  # fmt: skip
    want = json.loads(res.stdout)
    d = want["difference"]["town"]
    cells = pg.eval_on_selector_all("#delta tr[data-team=town] td", "els => els.map(e => e.textContent)")
    assert cells[3] == f"{d['diff']:.3f}" and cells[4] == f"[{d['lo']:.3f}, {d['hi']:.3f}]"
    assert pg.locator("#outcome-a, #outcome-b").count() == 2
    assert errors == []


def _cells(pg: Page, team: str) -> list[str]:
    return pg.eval_on_selector_all(f"#delta tr[data-team={team}] td", "els => els.map(e => e.textContent)")


def test_comparison_is_shown_in_url_order(site: Path, page: tuple[Page, list[str]]) -> None:
    """``#/compare/B/A`` of a pair the site stores as ``A|B``: A is the batch named first, each
    difference and interval as ``fork compare B A`` prints them, the same Fisher p."""
    pg, errors = page
    index = index_of(site)
    bs = [b for b in index["batches"] if b["parent"] == "parent"]
    # a pair with different winners' counts, named against the site's order (which is bs order)
    first, second = next((x, y) for i, x in enumerate(bs) for y in bs[i + 1 :] if x["town"]["k"] != y["town"]["k"])
    for a, b in ((second, first), (first, second)):
        pg.goto(url(site, f"#/compare/{a['batch']}/{b['batch']}"))
        pg.wait_for_selector("#delta")
        res = CliRunner().invoke(
            app,
            ["fork", "compare", str(FIXTURE), str(FIXTURE), "--batch-a", a["batch"], "--batch-b", b["batch"], "--format", "json"],
        )  # fmt: skip
        want = json.loads(res.stdout)
        assert pg.locator("#swap").count() == 0
        assert (pg.text_content(".side[data-side=a] h3") or "").startswith(f"A: {a['batch']} ")
        assert pg.locator(f".side[data-side=a] .outcomebox[data-batch='{a['batch']}']").count() == 1
        for team in ("town", "mafia"):
            d, cells = want["difference"][team], _cells(pg, team)
            k_a, k_b = want["a"][team]["k"], want["b"][team]["k"]
            assert cells[1].startswith(f"{k_a}/{want['a']['n']} ") and cells[2].startswith(f"{k_b}/{want['b']['n']} ")
            assert cells[3] == f"{d['diff']:.3f}"
            assert cells[4] == f"[{d['lo']:.3f}, {d['hi']:.3f}]"
            assert cells[5] == fmt_p(d["fisher_p"])
    assert errors == []


def test_p_values_follow_the_cli_rule(site: Path, page: tuple[Page, list[str]]) -> None:
    """The viewer's ``pval`` prints every p as :func:`mafialab.analysis.fmt_p` does (the CLI's rule)."""
    pg, errors = page
    pg.goto(url(site, "#/"))
    pg.wait_for_selector("#games")
    ps = [1.0830e-05, 0.0, 1e-300, 0.0009995, 0.001, 0.0625, 0.1875, 0.04321, 0.5, 0.99951, 1.0]
    got = pg.evaluate("ps => ps.map((p) => window.MAFIALAB_VIEWER.pval(p))", ps)
    assert got == [fmt_p(p) for p in ps]
    assert got[:2] == ["1.083e-05", "0.000e+00"] and got[5] == "0.062"
    assert pg.evaluate("window.MAFIALAB_VIEWER.pval(null)") == "–"
    assert errors == []


def test_sensitivity_strip_and_bifurcation_panel(site: Path, page: tuple[Page, list[str]]) -> None:
    pg, errors = page
    rep = json.loads(CliRunner().invoke(app, ["bifurcate", "report", str(FIXTURE / "bif"), "--format", "json"]).stdout)
    (point,) = rep["points"]
    pg.goto(url(site, "#/game/parent"))
    pg.wait_for_selector("#sensitivity rect.cell")
    towns = pg.eval_on_selector_all("#sensitivity rect.cell", "els => els.map(e => e.dataset.town)")
    assert len(towns) >= 2 and len(set(towns)) > 1
    assert pg.locator("#dynamics svg.dyn").count() == 1 and pg.locator("#retest-floor").count() == 1
    pg.click(f"#bif-badges a[data-point='{point['point_id']}']")
    pg.wait_for_selector("#bifpanel")
    assert pg.evaluate("location.hash").endswith(f"/bif/{point['point_id']}")
    assert f"{point['modal_concentration']:.3f}" in (pg.text_content("#lockin") or "")
    assert f"{point['flips']}/{point['forks']} = {point['flip_share']:.3f}" in (pg.text_content("#flipgauge") or "")
    counts = dict(
        pg.eval_on_selector_all("#targets tr", "els => els.map(e => [e.dataset.target, +e.children[1].textContent])")
    )
    assert counts == point["target_counts"]
    assert pg.locator("#variants tbody tr").count() == point["forks"]
    # an injected <img onerror> stays text
    assert pg.locator("#variants img, #bifpanel img").count() == 0
    assert any("<img" in t for t in pg.eval_on_selector_all("#variants td.vtext", "els => els.map(e => e.textContent)"))
    assert pg.evaluate("window.__xss") is None
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / "bifurcation.png"), full_page=True)
    # the fragment reopens the panel; a variant opens its fork
    pg.reload()
    pg.wait_for_selector("#bifpanel")
    pg.click("#variants a.forklink >> nth=1")
    pg.wait_for_selector("#forknote")
    assert errors == []


def test_served_branch_button_forks_and_the_branch_appears(tmp_path: Path, page: tuple[Page, list[str]]) -> None:
    import shutil

    from mafialab.counterfactual import fork_steps
    from mafialab.record import read_game
    from mafialab.viewer import SiteServer

    pg, errors = page
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURE / "parent", logs / "parent")
    build_site(logs, tmp_path / "site", jobs=1)
    speak = next(s for s in fork_steps(read_game(logs / "parent")) if s.kind == "speak" and s.round == 1)
    evil = '<img src=x onerror="window.__xss=1"> hello'
    with SiteServer(tmp_path / "site", 0, logs=logs) as srv:
        pg.goto(srv.url + "#/game/parent")
        pg.wait_for_selector("#branch-button")
        assert pg.locator("li.batchnode").count() == 0
        pg.click("#branch-button")
        pg.wait_for_selector("#branch-step")
        pg.select_option("#branch-step", str(speak.id))
        pg.select_option("#branch-kind", "inject")
        pg.fill("#branch-text", evil)
        pg.fill("#branch-n", "2")
        pg.fill("#branch-agents", "scripted")
        pg.wait_for_selector("#branch-estimate:has-text('Estimate')")
        pg.click("#branch-go")
        pg.wait_for_selector("#branch-status[data-state=done]", timeout=60_000)
        pg.wait_for_selector("li.batchnode")
        node = pg.locator("li.batchnode")
        assert node.count() == 1 and node.locator("li.branchnode").count() == 2
        assert "<img" in (node.locator(".ivlabel").text_content() or "")
        pg.click("li.branchnode a >> nth=0")
        pg.wait_for_selector("#forknote")
        spoken = pg.eval_on_selector_all("#transcript li.forkstep", "els => els.map(e => e.textContent)")
        assert spoken and "<img" in spoken[0]
        assert pg.locator("#app img").count() == 0 and pg.evaluate("window.__xss") is None
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / "served-branch.png"), full_page=True)
    assert errors == []


def test_served_page_with_a_wrong_token_gets_401(tmp_path: Path, page: tuple[Page, list[str]]) -> None:
    import shutil

    from mafialab.viewer import SiteServer

    pg, errors = page
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURE / "parent", logs / "parent")
    build_site(logs, tmp_path / "site", jobs=1)
    with SiteServer(tmp_path / "site", 0, logs=logs, token="s3cret") as srv:
        pg.goto(srv.url + "#/game/parent")
        pg.click("#branch-button")
        pg.fill("#branch-token", "wrong")
        pg.click("#branch-token-ok")
        pg.wait_for_selector("#branch-error")
        assert "HTTP 401" in (pg.text_content("#branch-error") or "")
        pg.click("#branch-button")  # the wrong token was forgotten: asked again, the right one works
        pg.fill("#branch-token", "s3cret")
        pg.click("#branch-token-ok")
        pg.wait_for_selector("#branch-step")
    assert [e for e in errors if "401" not in e] == []
