"""Screenshots of the viewer's branch views for ``docs/viewer.md`` (``docs/img/viewer-*.png``).

Builds the committed fixture ``tests/data/viewer_branches`` into a temporary site, opens it
in Debian chromium through Playwright (no browser download), and for the served site forks
a temporary copy of the fixture's parent with scripted agents.

Run: ``PYTHONPATH=src python scripts/viewer_screenshots.py [OUT_DIR]`` (default ``docs/img``).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from mafialab.counterfactual import fork_steps
from mafialab.record import read_game
from mafialab.testing import CHROMIUM, CHROMIUM_ARGS
from mafialab.viewer import SiteServer, build_site

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "viewer_branches"


def _shot(pg: Page, out: Path, name: str, selector: str | None = None) -> None:
    path = out / f"viewer-{name}.png"
    if selector:
        pg.locator(selector).first.screenshot(path=str(path))
    else:
        pg.screenshot(path=str(path))
    print(f"wrote {path}")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "img"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        build_site(FIXTURE, site, jobs=1)
        text = (site / "data" / "index.js").read_text(encoding="utf-8")
        index = json.loads(text[len('MAFIALAB_DATA("index","index",') : -3])
        batches = [b for b in index["batches"] if b["parent"] == "parent"]
        inject = next(b for b in batches if b["replicas"] == 4)
        other = next(b for b in batches if b["town"]["p"] != inject["town"]["p"] and b["replicas"] > 1)
        a, b = sorted([inject["batch"], other["batch"]], key=[x["batch"] for x in batches].index)
        point = next(iter(json.loads((FIXTURE / "bif" / "points.jsonl").read_text().splitlines()[0]).values()))
        with sync_playwright() as p:
            br = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
            pg = br.new_page(viewport={"width": 1280, "height": 860})
            base = (site / "index.html").as_uri()
            pg.goto(base + "#/game/parent")
            pg.wait_for_selector("ul.branchtree")
            _shot(pg, out, "tree", ".branch-extras")
            branch = inject["games"][0]
            fs = next(r for r in index["games"] if r["id"] == branch)["parent"]["fork_seq"]
            pg.goto(base + f"#/game/{branch}/step/{fs + 2}")
            pg.wait_for_selector("#transcript li.forkstep")
            pg.eval_on_selector("#transcript li.forkstep", "e => e.scrollIntoView({block: 'center'})")
            _shot(pg, out, "branch")
            pg.goto(base + f"#/compare/{a}/{b}")
            pg.wait_for_selector("#delta")
            _shot(pg, out, "compare", "#app")
            pg.goto(base + f"#/game/parent/step/{fs}/bif/{point}")
            pg.wait_for_selector("#bifpanel")
            pg.eval_on_selector("#sensitivity", "e => e.scrollIntoView({block: 'start'})")
            pg.evaluate("window.scrollBy(0, -140)")
            _shot(pg, out, "bifurcation")
            # the served site: fork from the page with scripted agents
            logs = Path(tmp) / "logs"
            shutil.copytree(FIXTURE / "parent", logs / "parent")
            build_site(logs, Path(tmp) / "served", jobs=1)
            speak = next(s for s in fork_steps(read_game(logs / "parent")) if s.kind == "speak" and s.round == 1)
            with SiteServer(Path(tmp) / "served", 0, logs=logs) as srv:
                pg.goto(srv.url + "#/game/parent")
                pg.click("#branch-button")
                pg.wait_for_selector("#branch-step")
                pg.select_option("#branch-step", str(speak.id))
                pg.select_option("#branch-kind", "inject")
                pg.fill("#branch-text", "I think Casey is hiding something.")
                pg.fill("#branch-n", "3")
                pg.fill("#branch-agents", "scripted")
                pg.click("#branch-go")
                pg.wait_for_selector("#branch-status[data-state=done]", timeout=60_000)
                pg.click("#branch-button")
                pg.wait_for_selector("#branch-estimate:has-text('Estimate')")
                _shot(pg, out, "serve", ".branch-extras")
            br.close()


if __name__ == "__main__":
    main()
