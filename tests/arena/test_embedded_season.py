"""End to end with the embedded model as judge (offline; needs the ``local`` backend)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mafialab.arena import load_manifest, run_season, season_from_dict
from mafialab.arena._season import GAMES_DIR
from mafialab.models import backend_names
from mafialab.record import read_game, read_verdicts

LOCAL_JUDGE = os.environ.get("MAFIALAB_LOCAL_JUDGE", "local/smollm2")


@pytest.mark.slow
@pytest.mark.smoke
@pytest.mark.xdist_group("embedded")
async def test_one_game_season_with_embedded_judge(tmp_path: Path):
    assert "local" in backend_names(), "the embedded `local` backend is not registered"
    cfg = season_from_dict(
        {
            "name": "embedded",
            "games": 1,
            "seed": 7,
            "roster": ["scripted"],
            "judges": [LOCAL_JUDGE],
            "limits": {"judge_max_tokens": 1024},
        }
    )
    out = tmp_path / "s"
    await run_season(cfg, out)
    index = json.loads((out / "index.json").read_text())
    assert index["games_counted"] == 1
    slot = load_manifest(out).slots[0]
    game = read_game(out / GAMES_DIR / slot.game_id)
    (v,) = read_verdicts(out / GAMES_DIR / slot.game_id)
    assert v.status in ("ok", "missing")  # a missing verdict is recorded, never invented
    c = v.condensation
    if c is not None:  # a small window: the condensation is recorded
        assert c["rule"] and c["original_tokens"] > c["budget_tokens"]
        if c["fits"]:
            assert c["final_tokens"] <= c["budget_tokens"]
        else:
            assert v.status == "missing" and v.attempts == 0
    if v.status == "ok":
        teams = {s.seat: s.team for s in game.header.roster}
        for p in v.players:
            for axis in ("deception", "detection", "influence"):
                x = getattr(p, axis)
                assert x is None or 0 <= x <= 10
            assert teams[p.seat] == "mafia" or p.deception is None
            assert teams[p.seat] != "mafia" or p.detection is None
    else:
        assert v.players == [] and v.error
