"""A mission game in the viewer reads "mission", never "day" (the step label, the vote panel)."""

from __future__ import annotations

import asyncio
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mafialab.viewer import build_site
from tests.browser import page_with_errors, require_browser
from tests.viewer_games import play_probed

pytestmark = pytest.mark.xdist_group("browser")
require_browser(module=True)

from playwright.sync_api import Browser  # noqa: E402


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logs")
    asyncio.run(play_probed(root, 0, "resistance5", battery="mission"))
    return root


def _first_team_vote(site: Path) -> int:
    [js] = (site / "data" / "g").glob("resistance5-probed-s0*.js")
    text = js.read_text(encoding="utf-8")
    g = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return next(ev["seq"] for ev in g["events"] if ev["kind"] == "team_vote")


def test_mission_game_step_label_and_vote_panel_say_mission(site: Path, browser: Browser) -> None:
    seq = _first_team_vote(site)
    with page_with_errors(browser) as (pg, errors):
        pg.goto((site / "index.html").as_uri() + f"#/game/resistance5-probed-s0/step/{seq}")
        pg.wait_for_selector("#votepanel")
        label = pg.text_content("#steplabel") or ""
        assert f"· R1 mission · #{seq} " in label
        assert "day" not in label
        panel = pg.text_content(".votesection") or ""
        assert "day vote" not in panel
        assert (
            "Votes against the transcript: not applicable to this rule set (a mission game has no elimination vote)."
            in panel
        )
    assert errors == []


def test_team_vote_bifurcation_panel_shows_choices(logs: Path, site: Path, browser: Browser, tmp_path: Path) -> None:
    from mafialab.counterfactual import plan_points, run_bifurcation
    from mafialab.record import read_game

    root = tmp_path / "logs"
    shutil.copytree(logs / "resistance5-probed-s0", root / "resistance5-probed-s0")
    point = plan_points(read_game(root / "resistance5-probed-s0"), "innocent-votes")[0]
    step = str(point.step.id)
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's event loop
        pool.submit(
            asyncio.run, run_bifurcation(root / "resistance5-probed-s0", step, root / "bif", resamples=3, keep=2)
        ).result()
    out = tmp_path / "site"
    build_site(root, out)
    want = point.factual_choice
    with page_with_errors(browser) as (pg, errors):
        pg.goto((out / "index.html").as_uri() + f"#/game/resistance5-probed-s0/bif/{point.point_id}")
        pg.wait_for_selector("#bifpanel")
        head = pg.text_content("#bifpanel p.muted") or ""
        assert f"factual choice {want}" in head and "factual target" not in head
        assert pg.text_content("#bifpanel h4") == "Resample choices (3 samples)"
        assert pg.eval_on_selector_all(
            "#targets tr", "trs => trs.map(tr => tr.cells[0].textContent + ':' + tr.cells[1].textContent)"
        ) == [f"{want}:3"]
        cols = pg.eval_on_selector_all("#variants thead th", "ths => ths.map(th => th.textContent)")
        assert cols[2] == "choice"
        assert pg.eval_on_selector_all("#variants tbody tr", "trs => trs.map(tr => tr.cells[2].textContent)") == [want]
    assert errors == []
