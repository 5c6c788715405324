"""The dashboard pages through a large corpus: precomputed pages of rows, one page drawn at a time.

``data/index.js`` holds no rows (only the page index: count, size, total, each page's first
id); the page files hold every row once; a rebuild rewrites only the pages whose rows changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mafialab.record import GAME_FILE
from mafialab.viewer import build_site
from mafialab.viewer._build import PAGE_SIZE, _write_js, read_data_file, site_rows, write_pages

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
    pages = write_pages(tmp_path, _rows(450))
    assert (pages.count, pages.size, pages.total, pages.written) == (3, 200, 450, 3) and pages.bytes > 0
    assert pages.first == ["g000", "g200", "g400"]
    loaded = [_load(tmp_path / "pages" / f"{n}.js") for n in (1, 2, 3)]
    assert [(kind, key) for kind, key, _ in loaded] == [("page", "1"), ("page", "2"), ("page", "3")]
    assert [len(p["rows"]) for _, _, p in loaded] == [200, 200, 50]
    ids = [r["id"] for _, _, p in loaded for r in p["rows"]]
    assert ids == [f"g{i:03d}" for i in range(450)]
    assert all(p["size"] == 200 and set(p) == {"page", "size", "rows"} for _, _, p in loaded)
    assert pages.index_block() == {
        "count": 3, "size": 200, "order": "id", "total": 450, "first": ["g000", "g200", "g400"], "nested": 0,
    }  # fmt: skip
    # the same rows again: no page is written
    assert write_pages(tmp_path, _rows(450)).written == 0
    # fewer games: the pages beyond the last are removed
    assert write_pages(tmp_path, _rows(150)).count == 1
    assert sorted(p.name for p in (tmp_path / "pages").iterdir()) == ["1.js"]
    empty = write_pages(tmp_path, [])
    assert empty.count == 1 and empty.first == [] and _load(tmp_path / "pages" / "1.js")[2]["rows"] == []


def test_pages_are_in_the_order_the_page_script_compares_ids(tmp_path: Path) -> None:
    # JavaScript compares strings by UTF-16 code units: U+FF5E sorts after U+1F600 (a surrogate pair)
    ids = ["b", "a\U0001f600", "a\uff5e", "A"]
    pages = write_pages(tmp_path, [{"id": i} for i in ids], size=1)
    assert pages.first == ["A", "a\U0001f600", "a\uff5e", "b"]  # Python's own order puts U+FF5E first


def test_branch_rows_say_whether_their_parent_is_in_the_site(tmp_path: Path) -> None:
    rows = [{"id": "p"}, {"id": "p-b1", "parent": {"game_id": "p"}}, {"id": "x-b1", "parent": {"game_id": "x"}}]
    pages = write_pages(tmp_path, rows)
    got = {r["id"]: r["under_parent"] for r in _load(tmp_path / "pages" / "1.js")[2]["rows"]}
    assert got == {"p": False, "p-b1": True, "x-b1": False} and pages.nested == 1
    assert "under_parent" not in rows[1]  # the caller's rows are not changed


def _replicate(src: Path, dst: Path, new_id: str) -> None:
    """A copy of a game under a fresh game id."""
    dst.mkdir(parents=True)
    text = (src / GAME_FILE).read_text(encoding="utf-8")
    old = json.loads(text.splitlines()[0])["game_id"]
    (dst / GAME_FILE).write_text(text.replace(old, new_id), encoding="utf-8")


def _count_rows(value: Any) -> int:
    """Dashboard rows anywhere in a JSON value (a row is a dict with a ``file`` and an ``id``)."""
    if isinstance(value, dict):
        return int({"id", "file"} <= set(value)) + sum(_count_rows(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_rows(v) for v in value)
    return 0


def test_the_index_holds_no_rows_and_the_pages_hold_every_game_once(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    ids = [f"game-{i}" for i in range(5)]
    for gid in ids:
        _replicate(game_dir, logs / gid, gid)
    site = tmp_path / "site"
    summary = build_site(logs, site, jobs=1, page_size=2)
    index = read_data_file(site / "data" / "index.js")
    assert _count_rows(index) == 0  # test fails before: the index listed all 5 rows (more than a page of 2)
    assert index["pages"] == {
        "count": 3, "size": 2, "order": "id", "total": 5, "first": ["game-0", "game-2", "game-4"], "nested": 0,
    }  # fmt: skip
    assert (summary.pages, summary.pages_written) == (3, 3)
    pages = [read_data_file(site / "data" / "pages" / f"{n}.js") for n in (1, 2, 3)]
    assert [[r["id"] for r in p["rows"]] for p in pages] == [ids[:2], ids[2:4], ids[4:]]
    assert [r["id"] for r in site_rows(site)] == ids  # every game exactly once, in id order
    assert sorted(p.name for p in (site / "data" / "pages").iterdir()) == ["1.js", "2.js", "3.js"]


def test_adding_games_rewrites_only_the_pages_that_changed(game_dir: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for i in range(5):
        _replicate(game_dir, logs / f"game-{i}", f"game-{i}")
    site = tmp_path / "site"
    build_site(logs, site, jobs=1, page_size=2)
    folder = site / "data" / "pages"
    past = 1_000_000_000  # an mtime no build writes
    for p in folder.iterdir():
        os.utime(p, ns=(past, past))
    same = build_site(logs, site, jobs=1, page_size=2)
    assert same.pages_written == 0 and same.reused == 5  # nothing changed: no page written
    for i in (5, 6):  # after every earlier id: pages 1 and 2 keep their rows
        _replicate(game_dir, logs / f"game-{i}", f"game-{i}")
    again = build_site(logs, site, jobs=1, page_size=2)
    assert again.built == ["game-5", "game-6"] and again.reused == 5
    assert (again.pages, again.pages_written) == (4, 2)  # test fails before: every page was written
    mtimes = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert mtimes["1.js"] == mtimes["2.js"] == past and mtimes["3.js"] != past and mtimes["4.js"] != past
    assert [r["id"] for r in site_rows(site)] == [f"game-{i}" for i in range(7)]
    assert read_data_file(site / "data" / "index.js")["pages"]["total"] == 7
    fresh = tmp_path / "fresh"
    build_site(logs, fresh, jobs=1, page_size=2)
    for n in range(1, 5):  # the pages are those of a build from scratch
        assert (folder / f"{n}.js").read_bytes() == (fresh / "data" / "pages" / f"{n}.js").read_bytes()


@pytest.fixture(scope="module")
def big_site(game_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site of one game whose pages then list 450 (copies of its row under other ids)."""
    site = tmp_path_factory.mktemp("site")
    build_site(game_dir.parent, site, jobs=1)
    data = site / "data"
    _, _, index = _load(data / "index.js")
    (row,) = site_rows(site)
    rows = [{**row, "id": f"g{i:03d}"} for i in range(450)]
    index["pages"] = write_pages(data, rows).index_block()
    _write_js(data / "index.js", "index", "index", index)
    return site


@pytest.fixture(scope="module")
def small_pages(game_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site of 5 real games in pages of 2."""
    logs = tmp_path_factory.mktemp("logs")
    for i in range(5):
        _replicate(game_dir, logs / f"game-{i}", f"game-{i}")
    site = tmp_path_factory.mktemp("site")
    build_site(logs, site, jobs=1, page_size=2)
    return site


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
        assert "games 401–450 of 450" in (pg.text_content("#page-info") or "")
        assert pg.locator("#page-next").count() == 0  # the last page has no next link
        pg.click("th[data-col=id] a")  # sorting orders the rows of this page
        pg.wait_for_selector("#games[data-sort='id:desc']")
        assert pg.eval_on_selector_all("#games tbody tr", ids)[:2] == ["g449", "g448"]
        assert pg.get_attribute("#games", "data-page") == "3"
        assert errors == []
    finally:
        ctx.close()


def test_a_game_on_any_page_opens_from_its_id(small_pages: Path, browser: Any) -> None:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    loaded: list[str] = []
    pg.on("request", lambda r: loaded.append(r.url.rsplit("/data/", 1)[-1]) if "/data/pages/" in r.url else None)
    try:
        pg.goto((small_pages / "index.html").as_uri() + "#/game/game-3")  # on page 2 of 3
        pg.wait_for_selector("#game-facts")
        assert (pg.text_content("h1") or "") == "Game game-3"
        assert [u.split("?")[0] for u in loaded] == ["pages/2.js"]  # only the page holding the row
        pg.goto((small_pages / "index.html").as_uri() + "#/game/game-9")
        pg.wait_for_selector("#error")
        assert 'No game "game-9"' in (pg.text_content("#error") or "")
        pg.goto((small_pages / "index.html").as_uri() + "#/")
        pg.wait_for_selector("#games[data-page='1'] tbody tr")
        assert pg.eval_on_selector_all("#games tbody tr", "els => els.map(e => e.dataset.game)") == ["game-0", "game-1"]
        assert errors == []
    finally:
        ctx.close()
