"""Probed scripted games for the viewer tests, played with the real probe runner.

Scripted agents answer the probes from their explicit beliefs (``mafialab.probes``); the
small battery in ``tests/data/viewer_battery.yaml`` keeps the logs small and fast.
"""

from __future__ import annotations

import json
from pathlib import Path

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.probes import make_probe_observer
from mafialab.record import PROBES_FILE
from mafialab.rules import load_rules

XSS_IMG = '<img src=x onerror="window.__xss=1">'
XSS_SCRIPT = "<script>window.__xss2=1</script>"
BATTERY = Path(__file__).parent / "data" / "viewer_battery.yaml"


async def play_probed(
    out: Path, seed: int, rules: str = "mafiascope7", inject: str | None = None, battery: str | Path = BATTERY
) -> Path:
    """Play one probed scripted game under ``out``; returns the game directory.

    With ``inject``, that text is appended to every reason of seat 0's role assessments.
    """
    rs = load_rules(rules)
    agents = [make_agent("scripted", s, rs, seed) for s in range(rs.n_seats)]
    gid = f"{rs.name}-probed-s{seed}"
    runner = make_probe_observer(battery, agents, rs, seed, out=out, game_id=gid)
    assert runner is not None
    await play_game(rs, agents, seed, out=out, game_id=gid, observers=[runner])
    if inject:
        inject_reason(out / gid, inject)
    return out / gid


def inject_reason(game_dir: Path, text: str, seat: int = 0) -> None:
    """Append ``text`` to every reason of ``seat``'s role assessments in ``probes.jsonl``."""
    path = game_dir / PROBES_FILE
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["seat"] == seat and obj["probe_id"] == "role_assessment" and isinstance(obj["answer_parsed"], list):
            for item in obj["answer_parsed"]:
                item["reason"] = f"{item.get('reason', '')} {text}"
            obj["answer_raw"] = json.dumps(obj["answer_parsed"])
        lines.append(json.dumps(obj))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def inject_message(game_dir: Path, text: str) -> None:
    """Replace the text of the first public speech of a logged game with ``text``."""
    path = game_dir / "game.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        obj = json.loads(line)
        if obj.get("kind") == "speech":
            obj["text"] = text
            lines[i] = json.dumps(obj)
            break
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def copy_game(src: Path, dst: Path, game_id: str, keep: int | None = None, setup_only: bool = False) -> Path:
    """Copy a game log under a new id, optionally keeping only ``keep`` events or the setup."""
    dst = dst / game_id
    dst.mkdir(parents=True)
    out = []
    for line in (src / "game.jsonl").read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["kind"] == "game_start":
            obj["game_id"] = game_id
        elif (setup_only and obj["kind"] not in ("seating", "role_assigned", "team_revealed")) or (
            keep is not None and obj.get("seq", 0) > keep
        ):
            continue
        out.append(json.dumps(obj))
    (dst / "game.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    return dst


def probe_lines(game_dir: Path) -> list[dict]:
    """The probe records of a game as dicts."""
    path = game_dir / PROBES_FILE
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
