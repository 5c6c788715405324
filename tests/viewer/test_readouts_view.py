"""The viewer's belief panels carry the logprob readout, and the calibration view both readouts (issue 36)."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path

from mafialab.analysis import report
from mafialab.rules import WEREWOLF7
from mafialab.viewer import build_site
from mafialab.viewer._build import site_rows
from tests.probes.test_logprob_probes import _mock_game

APP_JS = Path(__file__).parents[2] / "src" / "mafialab" / "viewer" / "static" / "app.js"


def test_the_site_ships_both_readouts(tmp_path: Path) -> None:
    games = tmp_path / "games"
    for seed in (1, 2):
        asyncio.run(_mock_game(WEREWOLF7, seed, games, "logprob-suspicion"))
    build_site(games, tmp_path / "site", jobs=1)
    text = (tmp_path / "site" / "data" / "index.js").read_text(encoding="utf-8")
    index = json.loads(re.fullmatch(r'MAFIALAB_DATA\("index","index",(.*)\);\n', text, re.S).group(1))  # type: ignore[union-attr]
    (block,) = index["corpus_metrics"]["corpora"].values()
    # the calibration view's side-by-side table reads the report's own section (one definition)
    assert block["readouts"] == report(games, resamples=200).readouts.model_dump(mode="json")  # type: ignore[union-attr]
    row = site_rows(tmp_path / "site")[0]
    answers = []
    for seat_file in sorted((tmp_path / "site" / "data" / "s" / row["file"]).glob("*.js")):
        text = seat_file.read_text(encoding="utf-8")
        answers += json.loads(text[text.index(",", text.index(",") + 1) + 1 : -3])["probes"]
    scored = [p for p in answers if p.get("lp")]
    stated = [p for p in answers if p["p"] == "suspect_stated"]
    assert scored and stated and all(p["p"] == "suspect_logprob" and p["ok"] for p in scored)
    for p in scored:
        probs = [it["p"] for it in p["items"]]
        assert probs == sorted(probs, reverse=True) and abs(math.fsum(probs) - 1) <= 1e-9
        assert all(it["t"] is not None for it in p["items"])  # candidates are seats
    js = APP_JS.read_text(encoding="utf-8")
    assert 'id: "readout"' in js and "function readoutsTable" in js  # the panels' switch, the side-by-side table
