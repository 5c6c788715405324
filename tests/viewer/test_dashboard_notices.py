"""The dashboard says once what it cannot show and why: games played by the embedded model (a
tiny model for trying the tool) and games without probe answers (with how to record them),
instead of only empty metric rows and a "Not computed" line per metric."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.models import EMBEDDED_NOTE
from mafialab.record import GAME_FILE
from mafialab.viewer import build_site
from tests.browser import launch, require_browser
from tests.llm_helpers import stand_in_embedded

pytestmark = pytest.mark.xdist_group("browser")  # one headless Chromium at a time (tests/conftest.py)


def _index(site: Path) -> dict[str, Any]:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    m = re.fullmatch(r'MAFIALAB_DATA\("index","index",(.*)\);\n', text, re.S)
    assert m
    return json.loads(m.group(1))


def _notices(site: Path) -> dict[str, str]:
    return {n["code"]: n["text"] for n in _index(site)["notices"]}


@pytest.fixture
def embedded_game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A game of `mafialab play` with no options (the embedded backend stood in by a mock): probed."""
    stand_in_embedded(monkeypatch)
    out = tmp_path / "embedded"
    res = CliRunner().invoke(app, ["play", "--seed", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return next(out.glob(f"*/{GAME_FILE}")).parent


def test_an_unprobed_game_says_once_how_to_record_probes(game_dir: Path, tmp_path: Path) -> None:
    build_site(game_dir.parent, tmp_path / "site", jobs=1)
    index = _index(tmp_path / "site")
    notes = _notices(tmp_path / "site")
    assert set(notes) == {"no_probes"}  # scripted seats: no embedded-model note
    assert notes["no_probes"].startswith("This game has no probe answers: ")
    assert "Record beliefs with mafialab play --probes suspicion" in notes["no_probes"]
    (block,) = index["corpus_metrics"]["corpora"].values()
    assert block["probe_records"] == 0  # the page shows one line there instead of a line per missing metric


def test_games_of_the_embedded_model_carry_its_note(embedded_game: Path, tmp_path: Path) -> None:
    build_site(embedded_game.parent, tmp_path / "site", jobs=1)
    notes = _notices(tmp_path / "site")
    assert notes == {"embedded_model": f"Every game here was played by local/smollm2: {EMBEDDED_NOTE}."}
    (block,) = _index(tmp_path / "site")["corpus_metrics"]["corpora"].values()
    assert block["probe_records"] > 0


def test_a_mixed_folder_counts_the_games_each_note_is_about(
    embedded_game: Path, game_dir: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(embedded_game, logs / "embedded" / embedded_game.name)
    shutil.copytree(game_dir, logs / "scripted" / game_dir.name)
    build_site(logs, tmp_path / "site", jobs=1)
    notes = _notices(tmp_path / "site")
    assert notes["embedded_model"].startswith("1 game of 2 here has seats played by local/smollm2: ")
    assert notes["no_probes"].startswith("1 of 2 games here has no probe answers: ")  # the verb agrees with 1


def test_the_no_probes_note_agrees_with_its_count() -> None:
    """It said "1 of 2 games here have no probe answers"."""
    from mafialab.viewer._build import dashboard_notes

    def lead(probes: list[int]) -> str:
        rows = [{"models": ["scripted"], "probes": p} for p in probes]
        (note,) = dashboard_notes(rows)
        return note["text"].split(":", 1)[0]

    assert lead([0, 4]) == "1 of 2 games here has no probe answers"
    assert lead([0, 0, 4]) == "2 of 3 games here have no probe answers"
    assert lead([0, 0]) == "None of the 2 games here has probe answers"


def test_the_dashboard_shows_the_notes_and_one_line_for_no_probes(game_dir: Path, tmp_path: Path) -> None:
    require_browser()
    build_site(game_dir.parent, tmp_path / "site", jobs=1)
    with launch() as b:
        pg = b.new_page()
        pg.goto((tmp_path / "site" / "index.html").as_uri())
        pg.wait_for_selector("#notices")
        assert "--probes suspicion" in pg.inner_text("#notices")
        assert len(pg.query_selector_all(".corpus-metrics .no-probes")) == 1
        assert pg.query_selector_all(".corpus-metrics .missing-metric") == []
        # the notes column shows words, not the codes (no_probes)
        cell = pg.eval_on_selector("#games tbody tr", "tr => tr.cells[tr.cells.length - 1].textContent")
        assert cell == "no probes"


def test_a_rows_notes_come_with_short_words(game_dir: Path, tmp_path: Path) -> None:
    """The dashboard's notes column showed raw codes: "no_probes, problems"."""
    from mafialab.viewer._build import note_words, site_rows

    build_site(game_dir.parent, tmp_path / "site", jobs=1)
    (row,) = site_rows(tmp_path / "site")
    assert (row["notes"], row["note_words"]) == (["no_probes"], ["no probes"])
    assert [note_words(c) for c in ("problems", "empty", "some_new_code")] == [
        "log problems",
        "no steps",
        "some new code",
    ]
