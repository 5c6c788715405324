"""Rendered pages in headless Chromium: seat labels, long messages and wide names stay readable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import GAME_FILE, read_game
from mafialab.viewer import build_site
from tests.browser import launch, require_browser

pytestmark = pytest.mark.xdist_group("browser")  # one headless Chromium at a time (tests/conftest.py)


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    (dst / GAME_FILE).write_bytes((src / GAME_FILE).read_bytes())
    return dst


def test_impersonating_a_seat_the_game_lacks_says_so(game_dir: Path, tmp_path: Path) -> None:
    # `#/game/<id>/as/99` used to try data/s/<file>/99.js and report "could not load ... (was the
    # site built completely?)" with a console error; the dashboard row now carries the seat count
    require_browser()

    logs = _copy(game_dir, tmp_path / "logs" / "g1").parent
    site = tmp_path / "site"
    summary = build_site(logs, site, jobs=1)
    (gid,) = summary.games
    n = len(read_game(logs / "g1").header.roster)
    with launch() as b:
        pg = b.new_page()
        errors: list[str] = []
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.on("pageerror", lambda e: errors.append(str(e)))
        for seat in ("99", "-1", "x", str(n)):
            pg.goto((site / "index.html").as_uri() + f"#/game/{gid}/as/{seat}/step/5")
            pg.wait_for_selector("#error")
            text = pg.inner_text("#error")
            assert f"in game {json.dumps(gid)} (seats 0–{n - 1})" in text, text
        # a seat that exists still renders its view
        pg.goto((site / "index.html").as_uri() + f"#/game/{gid}/as/{n - 1}")
        pg.wait_for_selector("text=What")
        assert pg.query_selector("#error") is None
    assert errors == []


def test_twelve_seat_graph_labels_do_not_collide(tmp_path: Path) -> None:
    # arena12's ring (R = 120 for every table size) put "Town (known)" under one seat across its
    # neighbour's circle; the ring now grows with the table and long labels are shortened
    require_browser()

    logs = tmp_path / "logs"
    res = CliRunner().invoke(app, ["play", "-r", "arena12", "-a", "scripted", "-s", "0", "-o", str(logs)])
    assert res.exit_code == 0, res.output
    (gid,) = build_site(logs, tmp_path / "site", jobs=1).games
    with launch() as b:
        pg = b.new_page(viewport={"width": 1400, "height": 900})
        for frag in (f"#/game/{gid}", f"#/game/{gid}/as/1"):
            pg.goto((tmp_path / "site" / "index.html").as_uri() + frag)
            pg.wait_for_selector("svg.graph g.node")
            boxes = pg.evaluate(
                """() => [...document.querySelectorAll('svg.graph g.node')].map((g) =>
                    [...g.querySelectorAll('circle, text')].map((e) => {
                        const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }))"""
            )
            assert len(boxes) == 12
            for i, a in enumerate(boxes):
                for j, other in enumerate(boxes):
                    if i == j:
                        continue
                    for x in a:
                        for y in other:
                            overlap = (
                                min(x[2], y[2]) - max(x[0], y[0]) > 0.5 and min(x[3], y[3]) - max(x[1], y[1]) > 0.5
                            )
                            assert not overlap, (frag, i, j, x, y)


def test_a_very_long_message_is_clamped_in_the_transcript(game_dir: Path, tmp_path: Path) -> None:
    # a 30,000-character model message filled the whole transcript; each entry now scrolls on its own
    require_browser()

    g = _copy(game_dir, tmp_path / "logs" / "g1")
    lines = (g / GAME_FILE).read_text(encoding="utf-8").splitlines()
    i = next(k for k, line in enumerate(lines) if json.loads(line)["kind"] == "speech")
    ev = json.loads(lines[i])
    ev["text"] = "very long " * 3000
    lines[i] = json.dumps(ev)
    (g / GAME_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (gid,) = build_site(g.parent, tmp_path / "site", jobs=1).games
    with launch() as b:
        pg = b.new_page(viewport={"width": 1400, "height": 900})
        pg.goto((tmp_path / "site" / "index.html").as_uri() + f"#/game/{gid}/step/{ev['seq']}")
        li = pg.wait_for_selector(f"#transcript li[data-seq='{ev['seq']}']")
        assert li is not None
        client, scroll, font = li.evaluate(
            "(e) => [e.clientHeight, e.scrollHeight, parseFloat(getComputedStyle(e).fontSize)]"
        )
        assert client <= 31 * font < scroll  # clamped to 30em (+ padding), the rest scrolls
        assert "very long" in li.inner_text()


def test_dashboard_does_not_scroll_sideways_for_long_model_paths(game_dir: Path, tmp_path: Path) -> None:
    # a local model path as the agent label ("/home/…/hf_mirror/qwen_Qwen3-8B") and a long corpus
    # name widened the games table past a 1400-px window, pushing the notes column off screen
    require_browser()

    g = _copy(game_dir, tmp_path / "logs" / "_".join(["game_family_showcase"] * 3) / "g1")
    lines = (g / GAME_FILE).read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    for seat in head["roster"]:
        seat["agent"] = (
            "/home/someone/hf_mirror/" + "_".join(["qwen_Qwen3_8B_Instruct_Q4_K_M"] * 4) + f"_{seat['seat']}"
        )
    lines[0] = json.dumps(head)
    (g / GAME_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_site(tmp_path / "logs", tmp_path / "site", jobs=1)
    with launch() as b:
        pg = b.new_page(viewport={"width": 1400, "height": 900})
        pg.goto((tmp_path / "site" / "index.html").as_uri() + "#/")
        pg.wait_for_selector("table.games td")
        scroll, client = pg.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll <= client
