"""Probed scripted games for the viewer tests (synthetic probe records until the probes layer lands).

Each alive seat answers ``role_assessment``, ``suspicion_ranking`` and ``social_map`` after
every public message, derived from the scripted agents' explicit suspicion scores; the
answers have the MafiaScope shapes the viewer reads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from mafialab.agents import make_agent
from mafialab.engine import Event, GameState
from mafialab.harness import play_game
from mafialab.record import PROBES_FILE, JsonlWriter, ProbeRecord
from mafialab.rules import RuleSet, load_rules

XSS_IMG = '<img src=x onerror="window.__xss=1">'
XSS_SCRIPT = "<script>window.__xss2=1</script>"


class SyntheticProber:
    """A game observer writing probe records from scripted agents' beliefs."""

    def __init__(self, agents: Sequence, rules: RuleSet, out: Path, inject: str | None = None):
        self.agents = agents
        self.rules = rules
        self.out = out
        self.inject = inject
        self.writer: JsonlWriter | None = None
        self.game_id = ""
        self.count = 0

    def _write(self, rec: ProbeRecord) -> None:
        assert self.writer is not None
        self.writer.write(rec)
        self.count += 1

    async def on_events(self, events: Sequence[Event], state: GameState) -> None:
        mafia_role = next(r.name for r in self.rules.roles if r.team == "mafia")
        town_role = next(r.name for r in self.rules.roles if r.team == "town" and r.ability is None)
        names = state.names
        for ev in events:
            if ev.kind not in ("speech", "vote") or getattr(ev, "index", None) is None:
                continue
            for a in state.alive_seats():
                sus = self.agents[a].beliefs()
                ra = []
                for t in state.alive_seats():
                    s = sus.get(t, 0.0)
                    if t == a:
                        g, c = state.roles[a], 100
                    elif s >= 20:
                        g, c = mafia_role, min(99, 50 + int(s) // 2)
                    elif s <= -20:
                        g, c = town_role, min(99, 50 + int(-s) // 2)
                    else:
                        g, c = "Unknown", 30
                    why = f"suspicion {s:.0f}"
                    if self.inject and a == 0:
                        why += " " + self.inject
                    ra.append({"player": names[t], "guessed_role": g, "confidence": c, "reason": why})
                rank = sorted((t for t in state.alive_seats() if t != a), key=lambda t: (-sus.get(t, 0.0), t))
                sr = [{"player": names[t], "score": round(sus.get(t, 0.0)), "reason": "ranked"} for t in rank]
                sm = {
                    "toward_me": [
                        {
                            "player": names[t],
                            "attitude": "suspects" if sus.get(t, 0.0) >= 20 else "neutral",
                            "confidence": 60,
                            "reason": "mirror of my suspicion",
                        }
                        for t in state.alive_seats()
                        if t != a
                    ]
                }
                for pos, (pid, ans) in enumerate(
                    (("role_assessment", ra), ("suspicion_ranking", sr), ("social_map", sm))
                ):
                    self._write(
                        ProbeRecord(
                            game_id=self.game_id,
                            round=ev.round,
                            msg_index=ev.index,
                            seat=a,
                            player=names[a],
                            role=state.roles[a],
                            probe_id=pid,
                            position=pos,
                            phase=ev.phase,
                            after_seq=ev.seq,
                            question=f"{pid}?",
                            answer_raw=json.dumps(ans),
                            answer_parsed=ans,
                            parse_ok=True,
                            model="scripted",
                        )
                    )


async def play_probed(out: Path, seed: int, rules: str = "mafiascope7", inject: str | None = None) -> Path:
    """Play one scripted game with synthetic probes under ``out``; returns the game directory."""
    rs = load_rules(rules)
    agents = [make_agent("scripted", s, rs, seed) for s in range(rs.n_seats)]
    gid = f"{rs.name}-probed-s{seed}"
    prober = SyntheticProber(agents, rs, out / gid, inject)
    prober.game_id = gid
    prober.writer = JsonlWriter(out / gid / PROBES_FILE)
    try:
        await play_game(rs, agents, seed, out=out, game_id=gid, observers=[prober])
    finally:
        prober.writer.close()
    return out / gid


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
