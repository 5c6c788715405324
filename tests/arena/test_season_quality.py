"""Seasons show the quality signals of each game: a warning, and a gate only when the season file sets a threshold."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from mafialab.arena import load_manifest, run_season, season_from_dict
from mafialab.arena._season import GAMES_DIR
from mafialab.models import ChatRequest, MockModel, register_backend
from mafialab.record import read_game

OWN = "I watched the last vote closely and I still cannot tell who leads the other side here."


def _echo(req: ChatRequest) -> dict[str, Any]:
    """Speeches copy the system prompt (then a sentence of the seat's own); targets are legal."""
    props = req.json_schema["properties"]
    if "text" in props:
        return {"text": f"{req.messages[0].content[:400]} {OWN}"}
    out: dict[str, Any] = {"target": props["target"]["enum"][0]}
    if "statement" in props:
        out["statement"] = OWN
    return out


register_backend("echoseason", lambda model, **kw: MockModel(_echo, name=f"echoseason/{model}"))


def _cfg(**limits: Any) -> Any:
    return season_from_dict(
        {
            "name": "q",
            "rules": "werewolf7",
            "games": 1,
            "seed": 5,
            "roster": ["echoseason/m"],
            "limits": {"preflight": False, **limits},
        }
    )


async def test_copied_speeches_are_a_warning_by_default(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mafialab.arena._season"):
        await run_season(_cfg(), tmp_path / "s")
    m = load_manifest(tmp_path / "s")
    (slot,) = m.slots
    assert m.replacements == 0 and not slot.degraded and not slot.history
    assert len(slot.quality) == 1 and slot.quality[0].startswith("copied speeches: echoseason/m ")
    assert f"game {slot.game_id}: quality: copied speeches: echoseason/m" in caplog.text


async def test_a_quality_threshold_in_the_season_file_is_a_gate(tmp_path: Path) -> None:
    await run_season(_cfg(max_copied_share=0.5, max_replacements=1), tmp_path / "s")
    m = load_manifest(tmp_path / "s")
    (slot,) = m.slots
    # every game of the echoing model copies: the first is discarded, the replacement kept and flagged
    (a,) = slot.history
    assert a.outcome == "discarded" and "copy the seat's prompt (> max_copied_share 50%)" in a.reason
    assert m.replacements == 1 and slot.degraded
    g = read_game(tmp_path / "s" / GAMES_DIR / slot.game_id)
    assert g.status is not None and g.status.degraded
    assert "max_copied_share" in g.status.detail["reason"]


def test_threshold_fields_are_checked() -> None:
    with pytest.raises(Exception, match="max_copied_share"):
        _cfg(max_copied_share=1.5)
