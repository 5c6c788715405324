"""The viewer shows a season: leaderboard, verdicts (headline, recap, MVP, scores), per-game links."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.viewer import build_site
from mafialab.viewer._build import site_rows
from tests.browser import launch, require_browser

pytestmark = pytest.mark.xdist_group("browser")  # one headless Chromium at a time (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "arena_season.yaml"


@pytest.fixture(scope="module")
def season_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    runs = tmp_path_factory.mktemp("runs")
    res = CliRunner().invoke(app, ["season", "run", str(EXAMPLE), "--out", str(runs / "demo")])
    assert res.exit_code == 0, res.output
    site = tmp_path_factory.mktemp("site")
    build_site(runs, site, jobs=1)
    return runs, site


def _index(site: Path) -> dict:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    m = re.fullmatch(r'MAFIALAB_DATA\("index","index",(.*)\);\n', text, re.S)
    assert m
    return json.loads(m.group(1))


def test_the_site_data_holds_the_season(season_site: tuple[Path, Path]) -> None:
    runs, site = season_site
    index = _index(site)
    (season,) = index["seasons"]
    want = json.loads((runs / "demo" / "index.json").read_text(encoding="utf-8"))
    assert season["name"] == "demo-season" and season["counted"] == want["games_counted"] == 3
    assert [r[1] for r in season["leaderboard"]["rows"]] == [e["name"] for e in want["leaderboard"]]
    ids = {r["id"] for r in site_rows(site)}
    headlines = {g["headline"] for g in want["games"]}
    for g in season["games"]:
        assert g["key"] in ids  # a link to the game page
        assert g["headline"] in headlines and g["recap"] and g["mvp"]
        assert g["scores"] and all(
            {"name", "entry", "deception", "detection", "influence"} <= set(p) for p in g["scores"]
        )
        assert {p["entry"] for p in g["scores"]} <= {"scripted-a", "scripted-b", "random-a", "random-b"}


def test_the_season_page_renders_and_links_to_games(season_site: tuple[Path, Path]) -> None:
    require_browser()
    _, site = season_site
    with launch() as b:
        pg = b.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto((site / "index.html").as_uri() + "#/")
        pg.wait_for_selector("#seasons a")
        pg.click("#seasons a")
        pg.wait_for_selector("#season-board tbody tr")
        assert pg.locator("#season-board tbody tr").count() == 4
        assert pg.locator("#season-games section").count() == 3
        text = pg.text_content("#season-games") or ""
        assert "The town talks itself into knots" in text and "MVP: Alex" in text
        # winners as the rule set names its teams (arena12: Town, Mafia), never the canonical ids
        assert "won by Town" in text or "won by Mafia" in text
        assert "won by town" not in text and "won by mafia" not in text
        pg.click("#season-games section h3 a >> nth=0")
        pg.wait_for_selector("#strip, .strip-empty")
        # the game page's title names the game, not a team (it read "Mafia · <id>", like a winner)
        title = pg.text_content("h1") or ""
        assert title.startswith("Game demo-season-g000") and "Mafia" not in title and "Town" not in title
        facts = pg.text_content("#game-facts") or ""
        assert "won by" in facts and "rules arena12-v1" in facts
        # the metrics strip has axis titles (beside and under the plot)
        if pg.locator("svg#strip").count():
            assert pg.locator(".stripbox .axis-title").count() == 2
        assert errors == []
