"""The dashboard pages through a large corpus: precomputed pages of rows, one page drawn at a time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mafialab.viewer import build_site
from mafialab.viewer._build import PAGE_SIZE, _write_js, write_pages
from tests.browser import launch, require_browser

pytestmark = pytest.mark.xdist_group("browser")  # one headless Chromium at a time (tests/conftest.py)


def _load(path: Path) -> tuple[str, str, Any]:
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(",")
    key, _, payload = rest.partition(",")
    return json.loads(head[len("MAFIALAB_DATA(") :]), json.loads(key), json.loads(payload[: -len(");\n")])


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"id": f"g{i:03d}", "file": f"f{i}"} for i in reversed(range(n))]  # not in id order


def test_450_games_give_three_pages_of_rows_in_id_order(tmp_path: Path) -> None:
    assert PAGE_SIZE == 200
    count, size = write_pages(tmp_path, _rows(450))
    assert count == 3 and size > 0
    pages = [_load(tmp_path / "pages" / f"{n}.js") for n in (1, 2, 3)]
    assert [(kind, key) for kind, key, _ in pages] == [("page", "1"), ("page", "2"), ("page", "3")]
    assert [len(p["rows"]) for _, _, p in pages] == [200, 200, 50]
    ids = [r["id"] for _, _, p in pages for r in p["rows"]]
    assert ids == [f"g{i:03d}" for i in range(450)]
    assert all(p["pages"] == 3 and p["total"] == 450 and p["size"] == 200 for _, _, p in pages)
    # fewer games: the pages beyond the last are removed
    assert write_pages(tmp_path, _rows(150))[0] == 1
    assert sorted(p.name for p in (tmp_path / "pages").iterdir()) == ["1.js"]
    assert write_pages(tmp_path, [])[0] == 1 and _load(tmp_path / "pages" / "1.js")[2]["rows"] == []


@pytest.fixture(scope="module")
def big_site(game_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site of one game whose index then lists 450 (copies of its row under other ids)."""
    site = tmp_path_factory.mktemp("site")
    build_site(game_dir.parent, site, jobs=1)
    data = site / "data"
    _, _, index = _load(data / "index.js")
    row = index["games"][0]
    rows = [{**row, "id": f"g{i:03d}"} for i in range(450)]
    index["games"] = rows
    index["pages"]["count"] = write_pages(data, rows)[0]
    _write_js(data / "index.js", "index", "index", index)
    return site


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_browser()
    with launch() as b:
        yield b


def test_the_dashboard_draws_one_page_of_rows_and_pages_through(big_site: Path, browser: Any) -> None:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    ids = "els => els.map(e => e.dataset.game)"
    try:
        pg.goto((big_site / "index.html").as_uri() + "#/")  # file://: no server
        pg.wait_for_selector("#games[data-page='1'] tbody tr")
        first = pg.eval_on_selector_all("#games tbody tr", ids)
        assert first == [f"g{i:03d}" for i in range(200)]  # test fails before: all 450 rows drawn
        assert pg.get_attribute("#pager", "data-pages") == "3"
        assert "Games (450)" in (pg.text_content("h1") or "")
        pg.click("#page-next")
        pg.wait_for_selector("#games[data-page='2']")
        assert pg.eval_on_selector_all("#games tbody tr", ids)[0] == "g200"
        pg.click("#pager a[data-page='3']")
        pg.wait_for_selector("#games[data-page='3']")
        assert pg.eval_on_selector_all("#games tbody tr", ids) == [f"g{i:03d}" for i in range(400, 450)]
        assert pg.locator("#page-next").count() == 0  # the last page has no next link
        pg.click("th[data-col=id] a")  # sorting orders the rows of this page
        pg.wait_for_selector("#games[data-sort='id:desc']")
        assert pg.eval_on_selector_all("#games tbody tr", ids)[:2] == ["g449", "g448"]
        assert pg.get_attribute("#games", "data-page") == "3"
        assert errors == []
    finally:
        ctx.close()
