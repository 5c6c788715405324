"""A mission game in the viewer reads "mission", never "day" (the step label, the vote panel)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mafialab.viewer import build_site
from tests.browser import launch, require_browser
from tests.viewer_games import play_probed

pytestmark = pytest.mark.xdist_group("browser")
require_browser(module=True)

from playwright.sync_api import Browser  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logs = tmp_path_factory.mktemp("logs")
    asyncio.run(play_probed(logs, 0, "resistance5", battery="mission"))
    out = tmp_path_factory.mktemp("site")
    build_site(logs, out)
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch() as b:
        yield b


def _first_team_vote(site: Path) -> int:
    [js] = (site / "data" / "g").glob("resistance5-probed-s0*.js")
    text = js.read_text(encoding="utf-8")
    g = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return next(ev["seq"] for ev in g["events"] if ev["kind"] == "team_vote")


def test_mission_game_step_label_and_vote_panel_say_mission(site: Path, browser: Browser) -> None:
    seq = _first_team_vote(site)
    ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto((site / "index.html").as_uri() + f"#/game/resistance5-probed-s0/step/{seq}")
    pg.wait_for_selector("#votepanel")
    label = pg.text_content("#steplabel") or ""
    assert f"· R1 mission · #{seq} " in label
    assert "day" not in label
    panel = pg.text_content(".votesection") or ""
    assert "day vote" not in panel
    assert "Votes against the transcript: not applicable to this rule set (a mission game has no elimination vote)." in panel
    ctx.close()
    assert errors == []
