"""``--seat N=human-web``: a person plays a seat in a browser page served by the agent API.

Driven by Playwright with Debian's chromium (no browser download), as the viewer's browser tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mafialab.agents import make_agent
from mafialab.engine import GameState, Vote
from mafialab.harness import play_game
from mafialab.remote import SeatServer, SeatTicket
from mafialab.rules import load_rules
from tests.browser import launch, require_browser

pytestmark = pytest.mark.xdist_group("browser")  # one headless Chromium at a time (tests/conftest.py)

require_browser(module=True)


SEAT = 3


class GameThread:
    """A game with a human-web seat, and its agent API, in their own thread and event loop."""

    def __init__(self, out: Path):
        self.out = out
        self.rules = load_rules("mafiascope7")
        self.state = GameState(self.rules, 7)
        self.ticket: SeatTicket | None = None
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as err:  # reported to the test
            self.error = err
            self.ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        async with SeatServer(port=0) as seats:
            agents = [make_agent("scripted", s, self.rules, 7) for s in range(self.rules.n_seats)]
            agents[SEAT] = make_agent("human-web?timeout=60", SEAT, self.rules, 7)
            (self.ticket,) = seats.open_game("web", agents, self.out / "web")
            self._task = asyncio.create_task(
                play_game(
                    self.rules,
                    agents,
                    7,
                    out=self.out,
                    game_id="web",
                    state=self.state,
                    observers=[seats.observer("web")],
                )
            )
            self.ready.set()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def __enter__(self) -> GameThread:
        self._thread.start()
        assert self.ready.wait(30), "game did not start"
        if self.error:
            raise self.error
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(30)

    def my_votes(self) -> list[Vote]:
        return [e for e in list(self.state.events) if isinstance(e, Vote) and e.seat == SEAT]


@pytest.fixture
def game(tmp_path: Path) -> Iterator[GameThread]:
    with GameThread(tmp_path) as g:
        yield g


def test_a_person_votes_from_the_browser_page(game: GameThread) -> None:
    t = game.ticket
    assert t is not None and t.kind == "human-web"
    assert "#token=" in t.page and "?" not in t.page
    page_html = httpx.get(f"{t.url}/play", timeout=10)
    assert page_html.status_code == 200 and t.token not in page_html.text
    assert "script-src 'self'" in page_html.headers["content-security-policy"]
    seen_paths: list[str] = []
    with launch() as browser:
        pg = browser.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.on("request", lambda r: seen_paths.append(r.url))
        pg.goto(t.page)
        pg.wait_for_selector("#title:has-text('You are')", timeout=20_000)
        assert "Role:" in pg.inner_text("#me")
        chosen = None
        deadline = time.monotonic() + 120
        while not game.my_votes() and time.monotonic() < deadline:
            pg.wait_for_selector("#decision:not([hidden])", timeout=60_000)
            assert "s left" in pg.inner_text("#countdown")
            radios = pg.locator("input[name=target]")
            if radios.count():
                chosen = radios.nth(0).get_attribute("value")
                radios.nth(0).check()
            if pg.is_visible("#text"):
                pg.fill("#text", "I have been watching Nobody closely.")
            rid = pg.get_attribute("#decision", "data-request")
            pg.click("#submit")
            # accepted: the question closes, or the next one already replaced it
            try:
                pg.wait_for_function(
                    "rid => { const d = document.getElementById('decision');"
                    " return d.hidden || d.dataset.request !== rid; }",
                    arg=rid,
                    timeout=20_000,
                )
            except Exception as err:
                raise AssertionError(f"answer to {rid} not accepted: {pg.inner_text('#error')!r}") from err
        assert errors == []
        lines = pg.locator("#events li").all_inner_texts()
        assert lines, "the page shows the seat's events"
    votes = game.my_votes()
    assert votes, "no vote was cast from the browser"
    v = votes[0]
    assert not v.fallback and chosen is not None and game.state.names[v.target] == chosen
    # the token never travelled in a path or a query
    assert not [u for u in seen_paths if t.token in u.split("#")[0]]


def test_the_seat_token_leaves_the_address_bar_and_a_reload_keeps_the_seat(game: GameThread) -> None:
    t = game.ticket
    assert t is not None
    with launch() as browser:
        pg = browser.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(t.page)
        pg.wait_for_selector("#title:has-text('You are')", timeout=20_000)
        assert pg.url == f"{t.url}/play" and t.token not in pg.evaluate("location.href")
        assert pg.evaluate("history.state") is None and pg.evaluate("location.hash") == ""
        pg.wait_for_selector("#decision:not([hidden])", timeout=60_000)  # the page still plays
        pg.reload()  # the token is kept for this tab, never in the address bar
        pg.wait_for_selector("#title:has-text('You are')", timeout=20_000)
        assert "Role:" in pg.inner_text("#me") and t.token not in pg.url
        assert errors == []
