"""The viewer says what a probe battery supports, with the report's words (the suspicion battery)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.viewer import build_site
from mafialab.viewer._build import site_rows


@pytest.fixture(scope="module")
def suspicion_games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sus")
    res = CliRunner().invoke(app, ["play", "-a", "scripted", "-p", "suspicion", "-k", "2", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_the_viewer_says_the_same(suspicion_games: Path, tmp_path: Path) -> None:
    build_site(suspicion_games, tmp_path / "site", jobs=1)
    text = (tmp_path / "site" / "data" / "index.js").read_text(encoding="utf-8")
    index = json.loads(re.fullmatch(r'MAFIALAB_DATA\("index","index",(.*)\);\n', text, re.S).group(1))  # type: ignore[union-attr]
    (block,) = index["corpus_metrics"]["corpora"].values()
    assert any("needs role_assessment" in why for why in block["missing"])
    assert any(r["name"].startswith("F4 innocents top1") and r["n"] for r in block["metrics"])
    row = site_rows(tmp_path / "site")[0]
    game = (tmp_path / "site" / "data" / "g" / f"{row['file']}.js").read_text(encoding="utf-8")
    payload = json.loads(game[game.index(",", game.index(",") + 1) + 1 : -3])
    assert payload["coverage"]["answers"]["suspicion_ranking"] == row["probes"]
    assert "role_assessment" in payload["coverage"]["missing"]["first_order"]
    assert payload["dynamics"]["all"]["volatility_pairs"] > 0
