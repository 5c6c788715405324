"""The viewer replays a mission game: the mission track, proposals and votes, each seat seeing only its own."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from mafialab.agents import make_agent
from mafialab.engine import visible_events
from mafialab.harness import play_game
from mafialab.record import read_game
from mafialab.rules import BUILTIN
from mafialab.viewer import build_site, viewer_templates
from mafialab.viewer._build import site_rows


def _load(path: Path) -> dict:
    m = re.fullmatch(r'MAFIALAB_DATA\(("[^"]*"),("(?:[^"\\]|\\.)*"),(.*)\);\n', path.read_text(encoding="utf-8"), re.S)
    assert m
    return json.loads(m.group(3))


def test_the_viewer_shows_the_mission_track_proposals_and_votes(tmp_path: Path) -> None:
    rules = BUILTIN["avalon5"]
    agents = [make_agent("scripted", s, rules, 2) for s in range(rules.n_seats)]
    res = asyncio.run(play_game(rules, agents, 2, out=tmp_path / "logs"))
    build_site(tmp_path / "logs", tmp_path / "site")
    (row,) = site_rows(tmp_path / "site")
    log = read_game(res.path)  # type: ignore[arg-type]
    assert row["winner"] == log.winner
    game = _load(tmp_path / "site" / "data" / "g" / f"{row['file']}.js")
    text = json.dumps(game)
    for kind in ("team_proposal", "team_vote", "team_vote_tally", "mission_card", "mission_result"):
        assert f'"{kind}"' in text, kind
    style = viewer_templates()["style"]["kinds"]
    assert style["mission_result"][0]["css"] == "mission" and style["team_proposal"][0]["css"] == "proposal"
    for seat in range(rules.n_seats):  # a seat's file holds exactly what the engine shows it
        seen = _load(tmp_path / "site" / "data" / "s" / row["file"] / f"{seat}.js")
        cards = [e for e in json.loads(json.dumps(seen)).get("events", []) if e.get("kind") == "mission_card"]
        assert all(c["seat"] == seat for c in cards)
        mine = [e for e in visible_events(log.events, seat) if e.kind == "mission_card"]
        assert len(cards) == len(mine)
