"""The Arena panel of the served site in a real headless browser (Debian chromium driven by Playwright, no download)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from mafialab.viewer import SiteServer, build_site
from mafialab.viewer._build import site_rows
from tests.browser import page_with_errors, require_browser
from tests.conftest import ROOT

pytestmark = pytest.mark.xdist_group("browser")  # one headless Chromium at a time (tests/conftest.py)

FIXTURE = ROOT / "tests" / "data" / "viewer_branches"
ARTIFACTS = ROOT / "test-artifacts" / "viewer"

require_browser(module=True)

from playwright.sync_api import Browser, Page  # noqa: E402


@pytest.fixture
def page(browser: Browser) -> Iterator[tuple[Page, list[str]]]:
    with page_with_errors(browser) as got:
        yield got


def site_of(tmp_path: Path) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURE / "parent", logs / "parent")
    build_site(logs, tmp_path / "site", jobs=1)
    return logs, tmp_path / "site"


def test_arena_panel_estimates_launches_and_the_games_appear(tmp_path: Path, page: tuple[Page, list[str]]) -> None:
    pg, errors = page
    logs, site = site_of(tmp_path)
    # the static build has no panel and no link to it
    pg.goto((site / "index.html").as_uri() + "#/arena")
    pg.wait_for_selector("#error")
    assert pg.locator("#nav-arena").count() == 0 and "served site only" in (pg.text_content("#error") or "")
    with SiteServer(site, 0, logs=logs, allow_agents=["scripted", "random"], arena_games=3) as srv:
        pg.goto(srv.url + "#/")
        pg.click("#nav-arena")
        pg.wait_for_selector("#arena-estimate[data-cost]")
        pg.select_option("#arena-rules", "werewolf7")
        assert pg.locator("select.arena-seat").count() == 7
        # only the allowed specs are offered
        assert pg.eval_on_selector_all("select.arena-seat >> nth=0 >> option", "os => os.map(o => o.value)") == [
            "scripted",
            "random",
        ]
        pg.select_option("select.arena-seat >> nth=6", "random")
        pg.fill("#arena-games", "4")
        pg.dispatch_event("#arena-games", "change")
        pg.wait_for_selector("#arena-estimate[data-cost='no cost']:has-text('4 games')")
        pg.click("#arena-go")
        pg.wait_for_selector("#arena-status:has-text('Refused')")
        assert "429" in (pg.text_content("#arena-status") or "") and "--max-arena-games" in (
            pg.text_content("#arena-status") or ""
        )
        pg.fill("#arena-games", "2")
        pg.click("#arena-go")
        pg.wait_for_selector("li.arenajob[data-state=done]", timeout=60_000)
        links = pg.eval_on_selector_all("li.arenajob a", "as => as.map(a => a.textContent)")
        assert len(links) == 2
        rows = {r["id"]: r for r in site_rows(site)}
        assert set(links) <= set(rows)
        assert all(rows[g]["corpus"] == "arena" and rows[g]["rules"] == "werewolf7-v1" for g in links)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / "arena-panel.png"), full_page=True)
        # the dashboard lists the new games without a rebuild; a game opens
        pg.click("#nav-dashboard")
        for g in links:
            pg.wait_for_selector(f"tr[data-game='{g}']")
        pg.goto(srv.url + f"#/game/{links[0]}")
        pg.wait_for_selector("#transcript li")
        # a season of the line-up's agents: its page shows the arena's leaderboard once it is done
        pg.click("#nav-arena")
        pg.wait_for_selector("#arena-estimate[data-cost]")
        pg.select_option("#arena-kind", "season")
        pg.fill("#arena-games", "2")
        pg.dispatch_event("#arena-games", "change")
        pg.wait_for_selector("#arena-estimate[data-cost='no cost']:has-text('2 games')")
        pg.click("#arena-go")
        pg.wait_for_selector("li.arenajob[data-state=done] a.seasonlink", timeout=60_000)
        pg.click("a.seasonlink")
        pg.wait_for_selector("#season-board tbody tr")
        entries = pg.eval_on_selector_all(
            "#season-board tbody tr td:nth-child(2)", "tds => tds.map(t => t.textContent)"
        )
        assert sorted(entries) == ["random", "scripted"]
    assert [e for e in errors if "429" not in e] == []
