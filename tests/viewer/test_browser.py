"""The built site in a real headless browser (Debian chromium driven by Playwright).

No browser is downloaded: Playwright's Python package drives ``/usr/bin/chromium``
(``scripts/setup.sh`` installs it). Screenshots go to ``test-artifacts/viewer/``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mafialab.record import GameStatus, JsonlWriter, read_game
from mafialab.viewer import SiteServer, build_site
from tests.browser import require_browser
from tests.conftest import ROOT
from tests.viewer_games import XSS_IMG, XSS_SCRIPT, copy_game, inject_message, play_probed

pytestmark = pytest.mark.xdist_group("browser")  # one headless Chromium at a time (tests/conftest.py)

ARTIFACTS = ROOT / "test-artifacts" / "viewer"

require_browser(module=True)

from playwright.sync_api import Browser, ConsoleMessage, Page  # noqa: E402

NATIVE = "arena12-probed-s3"
XSS_GAME = "mafiascope7-probed-s1"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logs")

    async def make() -> None:
        d = await play_probed(root, 1, "mafiascope7", inject=XSS_IMG)
        inject_message(d, "hello " + XSS_IMG + " and " + XSS_SCRIPT)
        await play_probed(root, 3, "arena12")

    asyncio.run(make())
    src = root / XSS_GAME
    copy_game(src, root, "empty-game", setup_only=True)
    copy_game(src, root, "unfinished-game", keep=25)
    deg = copy_game(src, root, "degraded-game")
    n = len(read_game(deg).events)
    with JsonlWriter(deg / "game.jsonl") as w:
        w.write(GameStatus(seq=n + 1, degraded=True, answered_share=0.5, decisions=40, fallbacks=20))
    return root


class Console:
    def __init__(self, page: Page):
        self.errors: list[str] = []
        page.on("console", self._on)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

    def _on(self, msg: ConsoleMessage) -> None:
        if msg.type in ("error", "warning"):
            self.errors.append(f"{msg.type}: {msg.text}")


@pytest.fixture
def page(browser: Browser) -> Iterator[tuple[Page, Console]]:
    ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
    pg = ctx.new_page()
    con = Console(pg)
    yield pg, con
    ctx.close()


def url(site: Path, frag: str) -> str:
    return (site / "index.html").as_uri() + frag


def shot(pg: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def rows(pg: Page) -> list[str]:
    return pg.eval_on_selector_all("#games tbody tr", "els => els.map(e => e.dataset.game)")


def visible_transcript(pg: Page) -> list[str]:
    return pg.eval_on_selector_all("#transcript li:not([hidden])", "els => els.map(e => e.textContent)")


def test_dashboard_lists_every_game_and_sorts(site: Path, logs: Path, page: tuple[Page, Console]) -> None:
    pg, con = page
    pg.goto(url(site, "#/"))
    pg.wait_for_selector("#games tbody tr")
    want = sorted(read_game(d).game_id for d in logs.iterdir())
    assert sorted(rows(pg)) == want
    assert rows(pg) == sorted(want)  # default: by game id ascending
    shot(pg, "dashboard")
    pg.click("th[data-col=probes] a")
    pg.wait_for_selector("#games[data-sort='probes:asc']")
    by_probes = rows(pg)
    pg.click("th[data-col=probes] a")
    pg.wait_for_selector("#games[data-sort='probes:desc']")
    assert rows(pg)[0] == NATIVE  # arena12 has the most probes
    assert by_probes != rows(pg)
    deg = pg.text_content("tr[data-game='degraded-game']")
    assert deg is not None and "yes" in deg
    # corpus metrics: numbers from the analysis layer, or a clear "unavailable"
    assert pg.locator("#metrics-unavailable, .corpus-metrics").count() == 1
    assert pg.locator("svg.calib .bin").count() >= 1
    assert con.errors == []


def test_scrubbing_changes_transcript_and_metrics_strip_seeks(site: Path, page: tuple[Page, Console]) -> None:
    pg, con = page
    pg.goto(url(site, f"#/game/{NATIVE}/step/1"))
    pg.wait_for_selector("#transcript li")
    first = visible_transcript(pg)
    label0 = pg.text_content("#steplabel")
    pg.fill("#scrubber", "40")
    after = visible_transcript(pg)
    assert len(after) > len(first)
    assert after[: len(first)] == first
    assert pg.text_content("#steplabel") != label0
    hash40 = pg.evaluate("location.hash")
    assert hash40.startswith(f"#/game/{NATIVE}/step/") and hash40 != f"#/game/{NATIVE}/step/1"
    pg.click("#prev")
    assert len(visible_transcript(pg)) < len(after)
    # the step fragment is a citable address: reloading it shows the same state
    pg.goto(url(site, hash40))
    pg.reload()
    pg.wait_for_selector("#transcript li")
    assert visible_transcript(pg) == after
    shot(pg, "game")
    # clicking the metrics strip seeks the timeline
    box = pg.locator("#strip").bounding_box()
    assert box is not None
    pg.mouse.click(box["x"] + box["width"] * 0.95, box["y"] + box["height"] / 2)
    late = pg.evaluate("location.hash")
    pg.mouse.click(box["x"] + box["width"] * 0.1, box["y"] + box["height"] / 2)
    early = pg.evaluate("location.hash")
    assert int(late.rsplit("/", 1)[1]) > int(early.rsplit("/", 1)[1])
    assert pg.locator("#panels .card").count() == 12
    assert con.errors == []


def test_metrics_strip_axis_titles_sit_outside_the_plot(site: Path, page: tuple[Page, Console]) -> None:
    # they were SVG text inside the plot, the y title drawn over the tick labels and lines
    pg, con = page
    pg.goto(url(site, f"#/game/{NATIVE}/step/1"))
    pg.wait_for_selector("svg#strip")
    plot = pg.locator("svg#strip").bounding_box()
    assert plot is not None
    assert pg.locator("svg#strip text.axis-title").count() == 0
    titles = {t: pg.locator(f".stripbox .axis-title.{t}").bounding_box() for t in ("x", "y")}
    assert pg.text_content(".stripbox .axis-title.y") == "share (0–1)"
    y, x = titles["y"], titles["x"]
    assert y is not None and x is not None
    assert y["x"] + y["width"] <= plot["x"] + 0.5  # left of the plot
    assert y["height"] > y["width"]  # written upwards
    assert x["y"] >= plot["y"] + plot["height"] - 0.5  # under the plot
    assert con.errors == []


def _seat_data(game_dir: Path) -> tuple[Any, int, int]:
    glog = read_game(game_dir)
    town = next(s for s in glog.header.roster if s.team == "town" and s.role == "Town")
    # a step after the first mafia chat and a kill, before the end (roles revealed at the end)
    chat = next(e.seq for e in glog.events if e.kind == "mafia_chat")
    step = next(e.seq for e in glog.events if e.kind == "speech" and e.seq > chat)
    return glog, town.seat, step


def test_impersonating_town_hides_roles_and_mafia_chat(site: Path, logs: Path, page: tuple[Page, Console]) -> None:
    pg, con = page
    glog, seat, step = _seat_data(logs / NATIVE)
    pg.goto(url(site, f"#/game/{NATIVE}/as/{seat}/step/{step}"))
    pg.wait_for_selector("#ego-actual")
    text = pg.text_content("#app") or ""
    chats = [e.text for e in glog.events if e.kind == "mafia_chat"]
    assert chats and not any(c in text for c in chats)
    assert pg.locator("#transcript li.mafia_chat, #transcript li.kill_chosen").count() == 0
    # no other seat is shown as known: only the impersonated seat's own role
    subs = pg.eval_on_selector_all("#subjective g.node", "els => els.map(e => [e.dataset.seat, e.textContent])")
    known = [int(s) for s, t in subs if "(known)" in t]
    dead_revealed = {e.seat for e in glog.events if e.kind == "elimination" and e.role and e.seq <= step}
    assert set(known) == {seat} | dead_revealed
    # the page never loaded the moderator's file
    loaded = pg.eval_on_selector_all("script[src]", "els => els.map(e => e.src)")
    assert not any("/data/g/" in x for x in loaded)
    assert any("/data/s/" in x and x.endswith(f"/{seat}.js") for x in loaded)
    assert "Second-order agreement" in (pg.text_content("#agreement") or "")
    shot(pg, "impersonate-town")
    assert con.errors == []


def test_impersonating_mafia_shows_the_chat(site: Path, logs: Path, page: tuple[Page, Console]) -> None:
    pg, con = page
    glog = read_game(logs / NATIVE)
    maf = next(s.seat for s in glog.header.roster if s.team == "mafia")
    pg.goto(url(site, f"#/game/{NATIVE}/as/{maf}"))
    pg.wait_for_selector("#transcript li")
    assert pg.locator("#transcript li.mafia_chat").count() == sum(1 for e in glog.events if e.kind == "mafia_chat")
    assert con.errors == []


def test_impersonating_a_werewolf_names_its_teammate_by_role(tmp_path: Path, page: tuple[Page, Console]) -> None:
    # a teammate known from the team reveal read "Werewolves (known)" (the team's name), the
    # seat itself "Werewolf (known)": a seat is labelled with its role, singular
    pg, con = page
    with ThreadPoolExecutor(1) as pool:  # Playwright's loop runs in this thread
        game = pool.submit(asyncio.run, play_probed(tmp_path / "logs", 2, "werewolf7")).result()
    build_site(tmp_path / "logs", tmp_path / "site")
    glog = read_game(game)
    wolves = {s.seat for s in glog.header.roster if s.team == "mafia"}
    me = min(wolves)
    pg.goto(url(tmp_path / "site", f"#/game/{glog.game_id}/as/{me}/step/1"))
    pg.wait_for_selector("#subjective g.node")
    subs = dict(pg.eval_on_selector_all("#subjective g.node", "els => els.map(e => [+e.dataset.seat, e.textContent])"))
    for w in wolves:
        assert subs[w].endswith("Werewolf (known)"), subs[w]
    assert not any("Werewolves" in t for t in subs.values())
    assert con.errors == []


def test_injected_markup_is_text_and_never_runs(site: Path, page: tuple[Page, Console]) -> None:
    pg, con = page
    pg.goto(url(site, f"#/game/{XSS_GAME}/step/999"))
    pg.wait_for_selector("#transcript li")
    pg.wait_for_timeout(300)
    assert pg.evaluate("window.__xss") is None
    assert pg.evaluate("window.__xss2") is None
    assert pg.locator("#app img").count() == 0 and pg.locator("#app script").count() == 0
    assert XSS_IMG in (pg.text_content("#transcript") or "")
    # the injected probe reason is kept verbatim as hover text
    titles = pg.eval_on_selector_all("#panels li.hoverreason", "els => els.map(e => e.title)")
    assert any(XSS_IMG in t for t in titles)
    pg.goto(url(site, f"#/game/{XSS_GAME}/as/0/step/999"))
    pg.wait_for_selector("#ego-actual")
    assert pg.evaluate("window.__xss") is None
    shot(pg, "xss-as-text")
    assert con.errors == []


@pytest.mark.parametrize(
    ("game", "codes"),
    [
        ("empty-game", {"empty", "unfinished", "no_probes"}),
        ("unfinished-game", {"unfinished", "no_probes"}),
        ("degraded-game", {"degraded", "no_probes"}),
    ],
)
def test_edge_case_games_render_with_an_explanation(
    site: Path, page: tuple[Page, Console], game: str, codes: set[str]
) -> None:
    pg, con = page
    pg.goto(url(site, f"#/game/{game}"))
    pg.wait_for_selector(".notes .note")
    shown = set(pg.eval_on_selector_all(".notes .note", "els => els.map(e => e.dataset.code)"))
    assert shown == codes
    assert len(pg.text_content("#app") or "") > 200
    shot(pg, game)
    pg.goto(url(site, f"#/game/{game}/as/0"))
    pg.wait_for_selector(".notes .note")
    assert con.errors == []


def _game_payload(site: Path, game_id: str) -> dict[str, Any]:
    """The moderator payload of ``game_id`` in a built site (``MAFIALAB_DATA("game", id, payload);``)."""
    for p in (site / "data" / "g").glob("*.js"):
        m = re.fullmatch(r'MAFIALAB_DATA\("game",("(?:[^"\\]|\\.)*"),(.*)\);\n', p.read_text(encoding="utf-8"), re.S)
        if m and json.loads(m.group(1)) == game_id:
            return json.loads(m.group(2))  # type: ignore[no-any-return]
    raise AssertionError(f"{game_id} not in {site}")


def _first_vote(g: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The units of the first counted tally and the seq of its last vote."""
    units = g["vote_predictions"]
    first = sorted((u for u in units if u["tally"] == units[0]["tally"]), key=lambda u: u["vote"])
    return first, first[-1]["vote"]


def test_vote_panel_shows_probe_and_transcript_predictions(site: Path, page: tuple[Page, Console]) -> None:
    pg, con = page
    g = _game_payload(site, XSS_GAME)
    first, last_vote = _first_vote(g)
    names = [r["name"] for r in g["roster"]]
    pg.goto(url(site, f"#/game/{XSS_GAME}/step/{last_vote}"))
    pg.wait_for_selector("#votepanel tbody tr")
    cells = pg.eval_on_selector_all(
        "#votepanel tbody tr", "trs => trs.map(tr => [...tr.cells].map(c => c.textContent))"
    )
    want = []
    for u in first:
        row = [names[u["voter"]], names[u["target"]]]
        for k in ("probe", "mentioned", "accused", "previous"):
            p = u[k]
            row.append("—" if p is None else names[p] + (" ✓" if p == u["target"] else " ✗"))
        want.append(row)
    assert cells == want
    # before the first vote of the game there is nothing to show
    pg.goto(url(site, f"#/game/{XSS_GAME}/step/1"))
    pg.wait_for_selector("#votepanel")
    assert pg.locator("#votepanel tbody tr").count() == 0
    assert con.errors == []


def test_vote_panel_names_are_text(tmp_path: Path, logs: Path, page: tuple[Page, Console]) -> None:
    evil = 'Al<img src=x onerror="window.__xss3=1">ex'
    d = copy_game(logs / XSS_GAME, tmp_path / "logs", "evil-names")
    lines = []
    for line in (d / "game.jsonl").read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["kind"] == "game_start":
            obj["roster"][0]["name"] = evil
        elif obj["kind"] == "seating":
            obj["names"][0] = evil
        lines.append(json.dumps(obj))
    (d / "game.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_site(tmp_path / "logs", tmp_path / "site")
    _, last_vote = _first_vote(_game_payload(tmp_path / "site", "evil-names"))
    pg, con = page
    pg.goto(url(tmp_path / "site", f"#/game/evil-names/step/{last_vote}"))
    pg.wait_for_selector("#votepanel tbody tr")
    pg.wait_for_timeout(200)
    assert pg.evaluate("window.__xss3") is None and pg.locator("#votepanel img").count() == 0
    assert evil in (pg.text_content("#votepanel") or "")
    shot(pg, "vote-panel")
    assert con.errors == []


def test_calibration_view_and_unknown_game(site: Path, page: tuple[Page, Console]) -> None:
    pg, con = page
    pg.goto(url(site, "#/calibration"))
    pg.wait_for_selector("#calib-table tbody tr")
    groups = pg.eval_on_selector_all("ul.groups a", "els => els.map(e => e.textContent)")
    assert any(g.startswith("all:") for g in groups) and any(g.startswith("model: scripted") for g in groups)
    n_rows = pg.locator("#calib-table tbody tr").count()
    assert pg.locator("svg.calib .bin").count() == n_rows
    small = pg.locator("#calib-table tbody tr.small").count()
    assert pg.locator("svg.calib .bin.small").count() == small
    # each bin's interval, or why there is none (fewer than 2 games), never a made-up one
    cells = pg.eval_on_selector_all("#calib-table td.ci", "els => els.map(e => e.textContent)")
    games = pg.eval_on_selector_all("#calib-table tbody tr td:nth-child(3)", "els => els.map(e => +e.textContent)")
    assert len(cells) == n_rows and all(
        (c.startswith("[") if g >= 2 else c.startswith("no interval")) for c, g in zip(cells, games, strict=True)
    )
    assert "outside the hidden team" in (pg.text_content("#calib-population") or "")
    shot(pg, "calibration")
    pg.goto(url(site, "#/game/no-such-game"))
    pg.wait_for_selector("#error")
    assert "no-such-game" in (pg.text_content("#error") or "")
    assert con.errors == []


def test_site_over_http_on_loopback(site: Path, page: tuple[Page, Console]) -> None:
    pg, con = page
    with SiteServer(site, 0) as srv:
        pg.goto(srv.url + "#/")
        pg.wait_for_selector("#games tbody tr")
        assert len(rows(pg)) == 5
    assert con.errors == []


def test_imported_mafiascope_en_demo(tmp_path: Path, page: tuple[Page, Console], mafiascope_dir: Path) -> None:
    from mafialab.record import import_mafiascope as importer

    src = mafiascope_dir / "en_demo"
    importer(src, tmp_path / "logs")
    build_site(tmp_path / "logs", tmp_path / "site")
    site = tmp_path / "site"
    pg, con = page
    pg.goto(url(site, "#/"))
    pg.wait_for_selector("#games tbody tr")
    want = sorted(p.name for p in src.iterdir() if p.is_dir())
    assert sorted(rows(pg)) == want
    shot(pg, "en-demo-dashboard")
    gid = want[0]
    pg.goto(url(site, f"#/game/{gid}/step/1"))
    pg.wait_for_selector("#transcript li")
    n0 = len(visible_transcript(pg))
    pg.fill("#scrubber", "30")
    assert len(visible_transcript(pg)) > n0
    shot(pg, "en-demo-game")
    glog = read_game(tmp_path / "logs" / gid) if (tmp_path / "logs" / gid).exists() else None
    if glog is None:
        glog = read_game(next(p for p in (tmp_path / "logs").rglob("game.jsonl") if gid in str(p)).parent)
    town = next(s.seat for s in glog.header.roster if s.team == "town")
    pg.goto(url(site, f"#/game/{gid}/as/{town}/step/30"))
    pg.wait_for_selector("#ego-actual")
    assert pg.locator("#transcript li.mafia_chat").count() == 0
    shot(pg, "en-demo-impersonate")
    assert con.errors == []


def test_event_lines_come_from_the_exported_templates(site: Path, logs: Path, page: tuple[Page, Console]) -> None:
    # app.js renders every event with the pack's "viewer" style (data/templates.js), the same
    # templates the Python renderer reads: lines without player text read exactly alike
    from mafialab.render import EventRenderer, load_event_templates

    pg, con = page
    glog = read_game(logs / NATIVE)
    names = [s.name for s in glog.header.roster]
    r = EventRenderer(load_event_templates().viewer, glog.header.rules.lexicon, names)
    expected = {}
    for ev in glog.events:
        line = r.render(ev)
        if ev.kind != "seating" and line is not None and line.player_text is None:
            expected[ev.seq] = line.text
    pg.goto(url(site, f"#/game/{NATIVE}/step/{len(glog.events)}"))
    pg.wait_for_selector("#transcript li")
    shown = pg.eval_on_selector_all("#transcript li", "els => els.map(e => [+e.dataset.seq, e.textContent])")
    checked = 0
    for seq, text in shown:
        if seq in expected:
            assert text.endswith(" " + expected[seq]), (seq, text, expected[seq])
            checked += 1
    assert checked >= 50 and {"phase_started", "vote_tally", "elimination", "game_end"} <= {
        ev.kind for ev in glog.events if ev.seq in expected
    }
    assert not con.errors
