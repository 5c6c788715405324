"""Importer for MafiaScope logs (``game.jsonl``, ``introspection.jsonl``, ``state.jsonl``).

The source format is that of the public MafiaScope recordings (karpovilia/mafiascope@2177db7;
``docs/import-mafiascope.md`` maps every record kind). Every source record becomes
either an engine event with the right visibility, a :class:`~mafialab.engine.Imported`
event (foreign kinds, failed turns, private texts without an engine event), a probe record,
or, for ``state.jsonl``, a verbatim line of :data:`SNAPSHOTS_FILE`. Unreadable lines are
reported with file and line number and skipped; nothing else is dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mafialab import __version__
from mafialab._words import count
from mafialab.engine import (
    PUBLIC,
    Elimination,
    Event,
    GameEnd,
    Imported,
    InvestigationResult,
    KillChosen,
    MafiaChat,
    NightResult,
    PhaseStarted,
    RoleAssigned,
    SeatingEvent,
    Speech,
    TeamRevealed,
    Visibility,
    Vote,
    VoteTally,
)
from mafialab.record._bifurcation import (
    FORK_GAMES_DIR,
    FORKS_FILE,
    POINTS_FILE,
    is_mafiascope_bifurcation,
    read_bifurcation,
    write_header,
)
from mafialab.record._import_mafiascope_mission import MissionConverter
from mafialab.record._io import GAME_FILE, JsonlWriter, iter_jsonl
from mafialab.record._schema import PROBES_FILE, GameHeader, ParentInfo, ProbeRecord, SeatInfo
from mafialab.rules import BUILTIN, MAFIASCOPE7, Lexicon, RoleSpec, RuleSet

SNAPSHOTS_FILE = "snapshots.mafiascope.jsonl"
"""Verbatim copy of a MafiaScope ``state.jsonl`` (one agent-context snapshot per message)."""

SOURCE = "mafiascope"

_MAFIA_ROLES = {"Mafia", "Spy", "Werewolf"}
_WEREWOLF_ROLES = {"Mafia": "Werewolf", "Doctor": "Guardian", "Sheriff": "Seer"}
"""MafiaScope logs every skin's roles under the Mafia names; the Werewolf skin's prompts call them these."""
_MESSAGE_KINDS = {"intro", "day_discuss", "day_vote", "night_mafia", "night_doctor", "night_sheriff"}
_KILLED = re.compile(r"^(?P<name>.+?) was killed by the Mafia\.?$")
_SAVED = re.compile(r"^The Doctor saved (?P<name>.+?)!?$")
_VOTE = re.compile(r"VOTE:\s*\**\s*([A-Za-z][A-Za-z-]*)")
_WINNER_TEAM = {"Mafia": "mafia", "Werewolves": "mafia", "Villagers": "town", "Village": "town", "Town": "town"}


@dataclass
class GameImport:
    """What the importer did with one game directory.

    Attributes:
        game_id: Source game id.
        source: Source directory.
        out: Written mafialab game directory (``None`` if the game could not be imported).
        rules_id: Rule set the game was described with.
        events: Engine events written (header excluded).
        probes: Probe records written.
        snapshots: Snapshot lines copied.
        failed_turns: Turns kept as ``imported`` events because the source turn failed
            (``ERROR: ...`` transport strings and empty responses).
        foreign: Records of kinds without an engine event, kept as ``imported`` events.
        finished: Whether the source game has a ``game_over`` record.
        problems: Unreadable or unusable lines (``file:line: why``).
    """

    game_id: str
    source: Path
    out: Path | None = None
    rules_id: str = ""
    events: int = 0
    probes: int = 0
    snapshots: int = 0
    failed_turns: int = 0
    foreign: int = 0
    finished: bool = False
    problems: list[str] = field(default_factory=list)


@dataclass
class ImportReport:
    """Result of :func:`import_mafiascope`.

    Attributes:
        games: One entry per source game directory found, in sorted order.
        bifurcation: For a MafiaScope bifurcation directory, the written mafialab
            bifurcation directory (its fork games are under ``forks/``); else ``None``.
        points: Points written (bifurcation directories only).
        forks: Fork outcomes written (bifurcation directories only).
    """

    games: list[GameImport] = field(default_factory=list)
    bifurcation: Path | None = None
    points: int = 0
    forks: int = 0
    bifurcation_problems: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Every problem of every game, then of the bifurcation files (``file:line: why``)."""
        return [p for g in self.games for p in g.problems] + self.bifurcation_problems

    @property
    def imported(self) -> list[GameImport]:
        """Games that were written."""
        return [g for g in self.games if g.out is not None]


_LFS = b"version https://git-lfs.github.com/spec/"


def _lfs_pointer(path: Path, problems: list[str]) -> bool:
    """Whether ``path`` is a Git LFS pointer instead of its data (reported once to ``problems``)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(200)
    except OSError:
        return False
    if not head.startswith(_LFS):
        return False
    size = re.search(rb"\nsize (\d+)", head)
    what = f" of {int(size.group(1)):,} bytes" if size else ""
    problems.append(f"{path}: a Git LFS pointer{what}, not the data (fetch it with `git lfs pull`); file skipped")
    return True


def _is_failed(text: Any) -> str | None:
    if not isinstance(text, str) or text == "":
        return "empty_response"
    if text.startswith("ERROR"):
        return "transport_error"
    return None


def _team(role: str) -> str:
    return "mafia" if role in _MAFIA_ROLES else "town"


def skin_role(setup: dict[str, Any], role: str) -> str:
    """The role name a MafiaScope game's players saw: its Werewolf skin renames Mafia, Doctor and Sheriff.

    MafiaScope logs roles as ``Mafia``/``Doctor``/``Sheriff``/``Villager`` in every skin;
    under ``skin: werewolf`` its prompts say Werewolf, Guardian and Seer, which are the role
    names of the built-in ``mafiascope7-werewolf`` rule sets.
    """
    return _WEREWOLF_ROLES.get(role, role) if setup.get("skin") == "werewolf" else role


def _is_mission_roster(setup: dict[str, Any]) -> bool:
    """Whether a MafiaScope Resistance game has the roster of ``mafiascope-resistance`` (3 Resistance, 2 Spies)."""
    counts = Counter(str(p.get("role")) for p in setup.get("players") or [])
    return counts == Counter({"Resistance": 3, "Spy": 2})


def mafiascope_rules(setup: dict[str, Any]) -> RuleSet:
    """Describe a MafiaScope game's setup as a :class:`RuleSet`.

    Standard games (2 Mafia, 1 Doctor, 4 Villagers) get the built-in ``mafiascope7``; the
    Werewolf skin of it gets ``mafiascope7-werewolf``, and the skin with a Sheriff (the Seer)
    in place of a Villager gets ``mafiascope7-werewolf-seer`` (roles renamed by
    :func:`skin_role`). Other role mixes (the Sheriff variant, the Resistance variant) get a
    rule set with the observed role counts, named after the variant.

    Args:
        setup: The source ``setup`` record.

    Returns:
        The rule set; ``seat_names`` are the game's player names in seating order.
    """
    players = setup.get("players") or []
    names = tuple(str(p.get("name")) for p in players)
    counts = Counter(str(p.get("role")) for p in players)
    game_type = setup.get("game_type")
    skin = setup.get("skin")
    standard = counts == Counter({"Mafia": 2, "Doctor": 1, "Villager": 4})
    seer = counts == Counter({"Mafia": 2, "Doctor": 1, "Sheriff": 1, "Villager": 3})
    if game_type == "resistance" and _is_mission_roster(setup):
        return BUILTIN["mafiascope-resistance"].model_copy(update={"seat_names": names})
    if game_type != "resistance" and skin == "werewolf" and (standard or seer):
        builtin = BUILTIN["mafiascope7-werewolf-seer" if seer else "mafiascope7-werewolf"]
        return builtin.model_copy(update={"seat_names": names})
    lexicon = MAFIASCOPE7.lexicon
    if skin == "werewolf":
        lexicon = Lexicon(game="Werewolf", town_team="Villagers", mafia_team="Werewolves", kill="devour")
    roles: list[RoleSpec] = []
    abilities = {"Mafia": "kill", "Spy": "kill", "Doctor": "protect", "Sheriff": "investigate"}
    order = ["Mafia", "Spy", "Doctor", "Sheriff", "Villager", "Resistance"]
    for name in sorted(counts, key=lambda r: (order.index(r) if r in order else len(order), r)):
        roles.append(RoleSpec(name=name, count=counts[name], team=_team(name), ability=abilities.get(name)))  # type: ignore[arg-type]
    if standard and skin in (None, "mafia") and game_type in (None, "mafia"):
        return MAFIASCOPE7.model_copy(update={"seat_names": names})
    if game_type == "resistance":
        variant = "mafiascope_resistance"
        desc = "MafiaScope Resistance variant (imported; team votes kept as imported records)"
    elif "Sheriff" in counts:
        variant = "mafiascope_sheriff" if skin != "werewolf" else "mafiascope_werewolf_sheriff"
        desc = "MafiaScope variant with a Sheriff/Seer (imported)"
    elif skin == "werewolf":
        variant = "mafiascope_werewolf_custom"
        desc = "MafiaScope Werewolf skin with a non-standard role mix (imported)"
    else:
        variant = "mafiascope_custom"
        desc = "MafiaScope game with a non-standard role mix (imported)"
    data = MAFIASCOPE7.model_dump()
    data.update(name=variant, description=desc, roles=roles, seat_names=names, lexicon=lexicon.model_dump())
    return RuleSet.model_validate(data)


class _Builder:
    """Accumulates the events of one imported game."""

    def __init__(self, names: list[str], roles: list[str]):
        self.names = names
        self.seat: dict[Any, int] = {n: i for i, n in enumerate(names)}
        self.roles = roles
        self.events: list[Event] = []
        self.decision = 0
        self.alive = list(range(len(names)))
        self.phase: str | None = None
        self.failed = 0
        self.foreign = 0

    def add(self, cls: type, **kw: Any) -> None:
        self.events.append(cls(seq=len(self.events) + 1, **kw))

    def next_decision(self) -> int:
        self.decision += 1
        return self.decision

    def phase_start(self, phase: str, rnd: int, ts: float | None) -> None:
        if phase != self.phase:
            self.phase = phase
            self.add(PhaseStarted, round=rnd, phase=phase, visibility=PUBLIC, ts=ts, alive=list(self.alive))

    def imported(
        self, rec: dict[str, Any], rnd: int, phase: str, vis: Visibility, note: str, seat: int | None = None
    ) -> None:
        text = rec.get("response")
        rest = {k: v for k, v in rec.items() if k not in ("response", "ts", "round", "game_id")}
        self.add(
            Imported,
            round=rnd,
            phase=phase,
            visibility=vis,
            ts=rec.get("ts"),
            source_kind=str(rec.get("kind")),
            seat=seat,
            text=text if isinstance(text, str) else None,
            note=note,
            record=rest,
        )
        if note in ("transport_error", "empty_response"):
            self.failed += 1
        elif note == "foreign_kind":
            self.foreign += 1

    def die(self, seat: int) -> None:
        if seat in self.alive:
            self.alive.remove(seat)


_PHASE = {
    "intro": "intro",
    "day_discuss": "day",
    "day_vote": "day",
    "vote_tally": "day",
    "day_eliminate": "day",
    "night_mafia": "night",
    "night_doctor": "night",
    "night_sheriff": "night",
    "night_sheriff_result": "night",
    "night_kill": "night",
    "night_save": "night",
    "night_analysis": "night",
    "game_over": "end",
}


def _convert_events(
    records: list[tuple[int, dict[str, Any]]], setup: dict[str, Any], gi: GameImport, path: Path
) -> _Builder:
    """Convert the records of one MafiaScope game (after its ``setup``) into engine events."""
    conv = _Converter(setup, records, gi, path)
    conv.setup_events()
    for n, rec in records:
        conv.record(n, rec)
    conv.finish_pending_kills()
    return conv.b


class _Converter:
    """One game's conversion, one named step per MafiaScope record kind."""

    def __init__(
        self, setup: dict[str, Any], records: list[tuple[int, dict[str, Any]]], gi: GameImport, path: Path
    ) -> None:
        players = setup.get("players") or []
        self.setup = setup
        self.names = [str(p.get("name")) for p in players]
        self.roles = [skin_role(setup, str(p.get("role"))) for p in players]
        self.labels = [p.get("model") for p in players]
        self.b = _Builder(self.names, self.roles)
        self.gi = gi
        self.path = path
        self.resistance = setup.get("game_type") == "resistance"
        mission = BUILTIN["mafiascope-resistance"].mission
        self.mission = (
            MissionConverter(self.b, mission.rejections_to_lose, records)  # type: ignore[union-attr]
            if self.resistance and _is_mission_roster(setup)
            else None
        )
        self.setup_round = int(setup.get("round") or 0)
        self.tally_votes = self._tally_votes(records)
        self.pending_kill: dict[str, float | None] = {}
        self.mafia_vis = Visibility(teams=("mafia",))
        self._handlers: dict[str, Callable[[int, dict[str, Any], int, Any, str], None]] = {
            "vote_tally": self.vote_tally,
            "day_eliminate": self.day_eliminate,
            "night_kill": self.night_kill,
            "night_save": self.night_save,
            "night_sheriff_result": self.sheriff_result,
            "night_analysis": self.night_analysis,
            "game_over": self.game_over,
        }

    @staticmethod
    def _tally_votes(records: list[tuple[int, dict[str, Any]]]) -> dict[tuple[Any, Any], str]:
        """Vote targets by (round, voter) from the tallies (the authoritative counted votes)."""
        tally_votes: dict[tuple[Any, Any], str] = {}
        for _, rec in records:
            if rec.get("kind") == "vote_tally" and isinstance(rec.get("votes"), dict):
                for voter, target in rec["votes"].items():
                    tally_votes[(rec.get("round"), voter)] = target
        return tally_votes

    def setup_events(self) -> None:
        """Seating, every seat's role, and the hidden team's members."""
        b, ts0, rnd = self.b, self.setup.get("ts"), self.setup_round
        b.add(SeatingEvent, round=rnd, phase="setup", visibility=PUBLIC, ts=ts0, names=self.names, labels=self.labels)
        for i, r in enumerate(self.roles):
            b.add(
                RoleAssigned,
                round=rnd,
                phase="setup",
                visibility=Visibility(seats=(i,)),
                ts=ts0,
                seat=i,
                role=r,
                team=_team(r),
            )
        mafia_seats = [i for i, r in enumerate(self.roles) if _team(r) == "mafia"]
        if mafia_seats:
            b.add(
                TeamRevealed,
                round=rnd,
                phase="setup",
                visibility=Visibility(teams=("mafia",)),
                ts=ts0,
                team="mafia",
                members=mafia_seats,
            )

    def record(self, n: int, rec: dict[str, Any]) -> None:
        """Convert one record (line ``n``): a phase start if needed, then its kind's step."""
        b = self.b
        kind = rec.get("kind")
        if kind == "setup":
            return
        rnd = rec.get("round")
        if not isinstance(rnd, int) or rnd < 0:
            self.gi.problems.append(f"{self.path}:{n}: record without a valid round, kept as imported")
            rnd = max(self.setup_round, 0)
        ts = rec.get("ts")
        phase = _PHASE.get(str(kind), "day")
        if self.mission is not None and (self.mission.handles(kind) or kind == "intro"):
            self.mission_record(n, rec, rnd, ts)
            return
        if self.resistance or kind not in _PHASE:
            public = kind not in ("team_vote",)
            vis = PUBLIC if public else Visibility()
            seat = b.seat.get(rec.get("player") or rec.get("leader"))
            b.imported(rec, rnd, "intro" if kind == "intro" else phase, vis, "foreign_kind", seat)
            return
        if kind != "game_over":
            b.phase_start(phase, rnd, ts)
        if kind in _MESSAGE_KINDS:
            self.message(n, rec, rnd, ts, phase)
        else:
            self._handlers[str(kind)](n, rec, rnd, ts, phase)

    def mission_record(self, n: int, rec: dict[str, Any], rnd: int, ts: Any) -> None:
        """A record of a Resistance game of the built-in roster: the mission events (``_import_mafiascope_mission``)."""
        kind = rec.get("kind")
        if kind == "intro":
            self.b.phase_start("intro", rnd, ts)
            self.message(n, rec, rnd, ts, "intro")
            return
        if kind != "game_over":
            self.b.phase_start("day", rnd, ts)
        assert self.mission is not None
        why = self.mission.record(n, rec, rnd, ts)
        if why is not None:
            self.gi.problems.append(f"{self.path}:{n}: {why}, kept as imported")
            seat = self.b.seat.get(rec.get("player") or rec.get("leader"))
            self.b.imported(rec, rnd, "end" if kind == "game_over" else "day", PUBLIC, "unresolved", seat)

    def message(self, n: int, rec: dict[str, Any], rnd: int, ts: Any, phase: str) -> None:
        """A player's message: speech, public vote, mafia chat, or private night reasoning."""
        b, kind = self.b, rec.get("kind")
        player = rec.get("player")
        seat = b.seat.get(player) if isinstance(player, str) else None
        vis = {
            "night_mafia": self.mafia_vis,
            "night_doctor": Visibility(seats=(seat,) if seat is not None else ()),
            "night_sheriff": Visibility(seats=(seat,) if seat is not None else ()),
        }.get(str(kind), PUBLIC)
        failed = _is_failed(rec.get("response"))
        if seat is None:
            self.gi.problems.append(f"{self.path}:{n}: {kind} by unknown player {player!r}, kept as imported")
            b.imported(rec, rnd, phase, vis, "unresolved")
            return
        if failed:
            b.imported(rec, rnd, phase, vis, failed, seat)
            return
        text = rec["response"]
        idx = rec.get("msg_seq")
        if kind in ("intro", "day_discuss"):
            b.add(
                Speech,
                round=rnd,
                phase=phase,
                visibility=PUBLIC,
                ts=ts,
                seat=seat,
                text=text,
                index=int(idx) if isinstance(idx, int) else 0,
                decision=b.next_decision(),
            )
        elif kind == "day_vote":
            target_name = self.tally_votes.get((rnd, player))
            if target_name is None:
                found = [m for m in _VOTE.findall(text) if m in b.seat]
                target_name = found[-1] if found else None
            if target_name not in b.seat:
                b.imported(rec, rnd, phase, PUBLIC, "unresolved", seat)
                return
            b.add(
                Vote,
                round=rnd,
                phase=phase,
                visibility=PUBLIC,
                ts=ts,
                stage="vote",
                seat=seat,
                target=b.seat[target_name],
                statement=text,
                index=int(idx) if isinstance(idx, int) else None,
                decision=b.next_decision(),
            )
        elif kind == "night_mafia":
            b.add(
                MafiaChat,
                round=rnd,
                phase=phase,
                visibility=self.mafia_vis,
                ts=ts,
                seat=seat,
                text=text,
                decision=b.next_decision(),
                index=int(idx) if isinstance(idx, int) else None,
            )
        else:  # night_doctor / night_sheriff: reasoning + "ACTION: ..." in free text
            b.imported(rec, rnd, phase, vis, "private_text", seat)

    def vote_tally(self, n: int, rec: dict[str, Any], rnd: int, ts: Any, phase: str) -> None:
        """The counted votes of a day; names outside the roster keep the record as imported."""
        b = self.b
        votes_raw: dict[str, Any] = rec["votes"] if isinstance(rec.get("votes"), dict) else {}
        tally_raw: dict[str, Any] = rec["tally"] if isinstance(rec.get("tally"), dict) else {}
        unknown = [x for x in [*votes_raw, *votes_raw.values(), *tally_raw] if x not in b.seat]
        if unknown:
            self.gi.problems.append(f"{self.path}:{n}: vote_tally names unknown players {unknown}, kept as imported")
            b.imported(rec, rnd, phase, PUBLIC, "unresolved")
            return
        votes = {b.seat[v]: b.seat[t] for v, t in votes_raw.items()}
        tally = {b.seat[t]: int(c) for t, c in tally_raw.items()}
        top = max(tally.values(), default=0)
        cands = [s for s, c in tally.items() if c == top]
        b.add(
            VoteTally,
            round=rnd,
            phase=phase,
            visibility=PUBLIC,
            ts=ts,
            stage="vote",
            votes=votes,
            tally=tally,
            candidates=cands,
            tie=len(cands) > 1,
            outcome=cands[0] if len(cands) == 1 else None,
        )

    def day_eliminate(self, n: int, rec: dict[str, Any], rnd: int, ts: Any, phase: str) -> None:
        """A day elimination (role revealed when the record gives it)."""
        b = self.b
        s = b.seat.get(rec.get("eliminated"))
        if s is None:
            b.imported(rec, rnd, phase, PUBLIC, "unresolved")
            return
        b.die(s)
        role = rec.get("role")
        b.add(
            Elimination,
            round=rnd,
            phase=phase,
            visibility=PUBLIC,
            ts=ts,
            seat=s,
            cause="vote",
            role=skin_role(self.setup, role) if isinstance(role, str) else None,
        )

    def night_kill(self, n: int, rec: dict[str, Any], rnd: int, ts: Any, phase: str) -> None:
        """The hidden team's chosen victim; the death waits for the night's announcement."""
        b = self.b
        s = b.seat.get(rec.get("victim"))
        if s is None:
            b.imported(rec, rnd, phase, self.mafia_vis, "unresolved")
            return
        b.add(KillChosen, round=rnd, phase=phase, visibility=self.mafia_vis, ts=ts, target=s, votes={})
        self.pending_kill[self.names[s]] = ts

    def night_save(self, n: int, rec: dict[str, Any], rnd: int, ts: Any, phase: str) -> None:
        """The save itself is announced by night_analysis; keep the record for the moderator."""
        self.b.imported(rec, rnd, phase, Visibility(), "private_text", self.b.seat.get(rec.get("saved")))

    def sheriff_result(self, n: int, rec: dict[str, Any], rnd: int, ts: Any, phase: str) -> None:
        """What the sheriff learned (the team), shown to the sheriff only."""
        b = self.b
        sh, ck = b.seat.get(rec.get("sheriff")), b.seat.get(rec.get("checked"))
        if sh is None or ck is None:
            b.imported(rec, rnd, phase, Visibility(), "unresolved")
            return
        result = "mafia" if rec.get("result") == "Mafia" else "town"
        b.add(
            InvestigationResult,
            round=rnd,
            phase=phase,
            visibility=Visibility(seats=(sh,)),
            ts=ts,
            seat=sh,
            target=ck,
            result=result,
        )

    def night_analysis(self, n: int, rec: dict[str, Any], rnd: int, ts: Any, phase: str) -> None:
        """The public night result; a kill becomes the night's elimination."""
        b = self.b
        text = str(rec.get("night_result") or "").strip()
        killed = saved = None
        if m := _KILLED.match(text):
            killed = b.seat.get(m.group("name"))
        elif m := _SAVED.match(text):
            saved = b.seat.get(m.group("name"))
        b.add(NightResult, round=rnd, phase=phase, visibility=PUBLIC, ts=ts, killed=killed, saved=saved)
        if killed is not None:
            b.die(killed)
            death_ts = self.pending_kill.pop(self.names[killed], ts)
            b.add(Elimination, round=rnd, phase=phase, visibility=PUBLIC, ts=death_ts, seat=killed, cause="night")

    def game_over(self, n: int, rec: dict[str, Any], rnd: int, ts: Any, phase: str) -> None:
        """The end of the game, with the winning team and every role."""
        b = self.b
        winner = _WINNER_TEAM.get(str(rec.get("winner")))
        if winner is None:
            b.imported(rec, rnd, "end", PUBLIC, "foreign_kind")
            return
        reason = "mafia_eliminated" if winner == "town" else "parity"
        b.add(
            GameEnd,
            round=rnd,
            phase="end",
            visibility=PUBLIC,
            ts=ts,
            winner=winner,
            reason=reason,
            rounds=rnd,
            alive=list(b.alive),
            roles=self.roles,
        )

    def finish_pending_kills(self) -> None:
        """A night_kill never announced (a game cut off after the kill): the death still happened."""
        b = self.b
        for name, kts in self.pending_kill.items():
            s = b.seat[name]
            b.die(s)
            last = b.events[-1]
            b.add(Elimination, round=last.round, phase="night", visibility=PUBLIC, ts=kts, seat=s, cause="night")


def _probe_records(
    path: Path, game_id: str, names: list[str], roles: list[str], events: list[Event], gi: GameImport
) -> list[ProbeRecord]:
    seat_of = {n: i for i, n in enumerate(names)}
    stamped = sorted((e.ts, e.seq) for e in events if e.ts is not None)
    times = [t for t, _ in stamped]
    best: list[int] = []
    cur = 0
    for _, s in stamped:
        cur = max(cur, s)
        best.append(cur)
    out: list[ProbeRecord] = []
    for n, rec in iter_jsonl(path, gi.problems):
        try:
            name = str(rec["player_name"])
            seat = seat_of.get(name, rec.get("player_idx"))
            ts = rec.get("timestamp", rec.get("ts"))
            i = bisect_right(times, float(ts)) if isinstance(ts, (int, float)) else 0
            after = best[i - 1] if i > 0 else 0
            raw = rec.get("answer_raw")
            raw = raw if isinstance(raw, str) else ""
            msg = int(rec["public_msg_seq"])
            pid = str(rec["probe_id"])
            trigger = "round_end" if msg == -1 else ("own_turn" if pid == "planned_action" else "always")
            extra = {
                k: v
                for k, v in rec.items()
                if k
                not in {
                    "timestamp",
                    "ts",
                    "game_id",
                    "round",
                    "public_msg_seq",
                    "player_idx",
                    "player_name",
                    "probe_seq",
                    "probe_id",
                    "question",
                    "answer_raw",
                    "answer_parsed",
                    "answer_parse_ok",
                    "model",
                    "role",
                    "phase",
                    "latency_ms",
                }
            }
            repaired = False
            if rec.get("answer_parse_ok"):
                try:
                    json.loads(raw)
                except ValueError:
                    repaired = True
            out.append(
                ProbeRecord(
                    game_id=game_id,
                    round=int(rec["round"]),
                    msg_index=msg,
                    seat=int(seat),  # type: ignore[arg-type]
                    player=name,
                    role=str(rec.get("role") or roles[seat_of[name]] if name in seat_of else rec.get("role") or ""),
                    probe_id=pid,
                    position=int(rec.get("probe_seq", 0)),
                    trigger=trigger,  # type: ignore[arg-type]
                    phase=str(rec.get("phase") or ""),
                    after_seq=after,
                    question=str(rec.get("question") or ""),
                    answer_raw=raw,
                    answer_parsed=rec.get("answer_parsed"),
                    parse_ok=bool(rec.get("answer_parse_ok")),
                    repaired=repaired,
                    model=str(rec.get("model") or ""),
                    latency_ms=int(rec.get("latency_ms") or 0),
                    error=raw if raw.startswith("ERROR") else None,
                    ts=float(ts) if isinstance(ts, (int, float)) else None,
                    source_key=[
                        rec.get("round"),
                        rec.get("public_msg_seq"),
                        rec.get("player_idx"),
                        rec.get("probe_seq"),
                    ],
                    **extra,
                )
            )
        except (KeyError, TypeError, ValueError) as err:
            gi.problems.append(f"{path}:{n}: unusable probe record ({type(err).__name__}: {err}), skipped")
    return out


def fork_parent(setup: dict[str, Any]) -> ParentInfo | None:
    """The ``parent`` block of a MafiaScope fork log (a ``setup`` with ``forked_from``), else ``None``.

    MafiaScope's fork logs start at the fork (no prefix), so the branch is marked
    ``prefix="absent"``; ``step`` is unknown (their ``fork_point`` ``[round, msg_seq]`` is kept).
    Batch: their ``fork_batch_id`` when set (replay forks), else the first 8 hex digits of
    SHA-256 over (parent, fork point, injected player, experiment) for bifurcation forks, whose
    variants of one point form one batch; replica: ``replica_idx``, else the ``variant_idx``.
    """
    parent = setup.get("forked_from")
    if not isinstance(parent, str) or not parent:
        return None
    iv = setup.get("intervention") if isinstance(setup.get("intervention"), dict) else None
    point = setup.get("fork_point")
    fork_point = [int(x) for x in point] if isinstance(point, list) and all(isinstance(x, int) for x in point) else None
    batch = setup.get("fork_batch_id")
    if not isinstance(batch, str) or not batch:
        key = json.dumps([parent, fork_point, (iv or {}).get("player"), (iv or {}).get("experiment")])
        batch = hashlib.sha256(key.encode()).hexdigest()[:8]
    replica = setup.get("replica_idx")
    if not isinstance(replica, int):
        variant = (iv or {}).get("variant_idx")
        replica = variant if isinstance(variant, int) else 0
    return ParentInfo(
        game_id=parent,
        step=None,
        intervention=iv if iv is not None else {"type": "replay"},
        batch=batch,
        replica=max(0, int(replica)),
        continuation_seed=None,
        root=parent,
        prefix="absent",
        fork_point=fork_point,
    )


def _destination_problem(src: Path, dst: Path) -> str | None:
    """Why writing the import of ``src`` into ``dst`` would destroy recorded data, else ``None``.

    An import replaces the files of an earlier import of the same kind, but never the source
    itself (``--out`` equal to the source directory) nor a game log that is not a MafiaScope
    import (a native mafialab game, or raw MafiaScope files).
    """
    if dst.resolve() == src.resolve():
        return (
            f"{dst}: is the source game directory; importing in place would overwrite its "
            f"{GAME_FILE} (choose another --out)"
        )
    existing = dst / GAME_FILE
    if existing.exists():
        first = next(iter_jsonl(existing), None) if existing.is_file() else None
        if first is None or first[1].get("kind") != "game_start" or first[1].get("source") != SOURCE:
            return f"{existing}: exists and is not a MafiaScope import; not overwritten (choose another --out)"
    return None


def import_game(src: Path, dst: Path) -> GameImport:
    """Import one MafiaScope game directory into ``dst`` (created; an earlier import replaced).

    Args:
        src: Directory holding the source ``game.jsonl`` (and optionally
            ``introspection.jsonl``, ``state.jsonl``).
        dst: The mafialab game directory to write.

    Returns:
        What was written and any problems (``file:line: why``). A game whose ``game.jsonl``
        has no readable ``setup`` record is not written (``out`` is ``None``), nor is one
        whose ``dst`` is ``src`` itself or holds a game log that is not a MafiaScope import.
    """
    src, dst = Path(src), Path(dst)
    gi = GameImport(game_id=src.name, source=src)
    gpath = src / "game.jsonl"
    if _lfs_pointer(gpath, gi.problems):
        return gi
    records = list(iter_jsonl(gpath, gi.problems))
    setup = next((r for _, r in records if r.get("kind") == "setup"), None)
    if setup is None and records and records[0][1].get("kind") == "game_start":
        gi.problems.append(f"{gpath}: already a mafialab log (a game_start header), not a MafiaScope one; not imported")
        return gi
    if setup is None or not isinstance(setup.get("players"), list) or not setup["players"]:
        gi.problems.append(f"{gpath}: no readable setup record with players; game not imported")
        return gi
    game_id = str(setup.get("game_id") or records[0][1].get("game_id") or src.name)
    gi.game_id = game_id
    rules = mafiascope_rules(setup)
    gi.rules_id = rules.id
    b = _convert_events(records, setup, gi, gpath)
    gi.finished = any(r.get("kind") == "game_over" for _, r in records)
    names, roles = b.names, b.roles
    roster = [
        SeatInfo(
            seat=i,
            name=names[i],
            role=roles[i],
            team=_team(roles[i]),  # type: ignore[arg-type]
            agent=str(p.get("model") or p.get("backend") or "unknown"),
            persona=p.get("personality") if isinstance(p.get("personality"), dict) else None,
        )
        for i, p in enumerate(setup["players"])
    ]
    meta: dict[str, Any] = {k: v for k, v in setup.items() if k not in ("players", "kind", "game_id", "ts", "round")}
    # a MafiaScope fork log becomes a branch: its fork fields go to the header's parent block
    meta.update(
        source_dir=src.name,
        setup_round=setup.get("round", 0),
        finished=gi.finished,
        players=[{k: v for k, v in p.items() if k not in ("name", "role", "personality")} for p in setup["players"]],
    )
    over = next((r for _, r in records if r.get("kind") == "game_over"), None)
    if over is not None:
        meta["game_over"] = {k: v for k, v in over.items() if k not in ("kind", "game_id")}
    header = GameHeader(
        parent=fork_parent(setup),
        game_id=game_id,
        rules_id=rules.id,
        rules=rules,
        seed=0,
        roster=roster,
        software=f"mafialab {__version__} (import from mafiascope)",
        source=SOURCE,
        meta=meta,
        ts=setup.get("ts"),
    )
    refused = _destination_problem(src, dst)
    if refused is not None:
        gi.problems.append(refused)
        return gi
    dst.mkdir(parents=True, exist_ok=True)
    for name in (GAME_FILE, PROBES_FILE, SNAPSHOTS_FILE):
        (dst / name).unlink(missing_ok=True)
    with JsonlWriter(dst / GAME_FILE, clock=None) as w:
        w.write(header)
        for ev in b.events:
            w.write(ev)
    gi.events = len(b.events)
    gi.failed_turns, gi.foreign = b.failed, b.foreign
    ipath = src / "introspection.jsonl"
    if ipath.is_file() and not _lfs_pointer(ipath, gi.problems):
        probes = _probe_records(ipath, game_id, names, roles, b.events, gi)
        with JsonlWriter(dst / PROBES_FILE, clock=None) as w:
            for p in probes:
                w.write(p)
        gi.probes = len(probes)
    spath = src / "state.jsonl"
    if spath.is_file() and not _lfs_pointer(spath, gi.problems):
        good = list(iter_jsonl(spath, gi.problems))
        shutil.copyfile(spath, dst / SNAPSHOTS_FILE)
        gi.snapshots = len(good)
    gi.out = dst
    return gi


def import_mafiascope(
    src_dir: Path, out_dir: Path, *, on_game: Callable[[int, int], None] | None = None
) -> ImportReport:
    """Convert every MafiaScope game directory under ``src_dir`` into a mafialab log.

    Each directory holding a ``game.jsonl`` (``src_dir`` itself, or any directory below it)
    becomes ``out_dir/<relative path>`` with ``game.jsonl`` (a :class:`GameHeader` with
    ``source="mafiascope"`` and engine events), ``probes.jsonl`` (:class:`ProbeRecord` lines)
    and :data:`SNAPSHOTS_FILE` (``state.jsonl`` copied verbatim). See
    ``docs/import-mafiascope.md`` for the mapping of every record kind.

    Args:
        src_dir: A MafiaScope ``logs`` directory, a corpus directory, one game directory,
            or a bifurcation directory (handed to :func:`import_mafiascope_bifurcation`).
        out_dir: Where to write (created).
        on_game: Called after each game directory (imported or not) with (games done, games
            in all), for progress displays; not called for a bifurcation directory.

    Returns:
        An :class:`ImportReport`; its ``problems`` list every unreadable line as
        ``file:line: why`` (those lines are skipped, nothing else is dropped).

    Raises:
        FileNotFoundError: If ``src_dir`` does not exist or holds no ``game.jsonl``.
        NotADirectoryError: If ``src_dir`` is a file (the message says a folder is expected).
        ValueError: If every ``game.jsonl`` under ``src_dir`` is already a mafialab log (a
            ``game_start`` header): there is nothing to import.
    """
    src_dir, out_dir = Path(src_dir), Path(out_dir)
    if not src_dir.exists():
        raise FileNotFoundError(f"{src_dir} does not exist: expected {MAFIASCOPE_FOLDER}")
    if not src_dir.is_dir():
        raise NotADirectoryError(f"{src_dir} is a file, not a folder: expected {MAFIASCOPE_FOLDER}")
    if is_mafiascope_bifurcation(src_dir):
        return import_mafiascope_bifurcation(src_dir, out_dir)
    dirs = [src_dir] if (src_dir / "game.jsonl").is_file() else sorted(p.parent for p in src_dir.rglob("game.jsonl"))
    if not dirs:
        raise FileNotFoundError(f"{src_dir}: no game.jsonl found")
    if all(_first_kind(d / "game.jsonl") == "game_start" for d in dirs):
        raise ValueError(
            f"{src_dir} is already a mafialab log folder ({count(len(dirs), 'game')} with a game_start header), not "
            "MafiaScope logs: nothing to import; give it to mafialab view, report or fork as it is"
        )
    report = ImportReport()
    for d in dirs:
        rel = d.relative_to(src_dir) if d != src_dir else Path(d.resolve().name)
        try:
            report.games.append(import_game(d, out_dir / rel))
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            # a record the mapping cannot represent (e.g. a role mix no rule set allows):
            # report the game, keep importing the others
            first = str(err).splitlines()[0]
            gi = GameImport(game_id=d.name, source=d)
            gi.problems.append(f"{d / 'game.jsonl'}: game not imported ({type(err).__name__}: {first})")
            report.games.append(gi)
        if on_game is not None:
            on_game(len(report.games), len(dirs))
    return report


MAFIASCOPE_FOLDER = "a MafiaScope folder (its logs folder, a corpus, one game's folder, or a bifurcation folder)"
"""What :func:`import_mafiascope` reads, for its messages."""


def _first_kind(path: Path) -> object:
    """The ``kind`` of the first JSON object line of ``path`` (``None`` when there is none)."""
    first = next(iter_jsonl(path, []), None)
    return first[1].get("kind") if first is not None else None


def import_mafiascope_bifurcation(src_dir: Path, out_dir: Path) -> ImportReport:
    """Convert a MafiaScope bifurcation directory into a mafialab bifurcation directory.

    Reads ``points.json``, ``fork_results.jsonl``, the optional ``summary.json`` (resample
    target counts, selection stages, diversity) and ``forks/<id>/game.jsonl`` (each imported
    with :func:`import_game` into ``out_dir/forks/<id>``); parent games are optional and not
    needed. Writes ``bifurcation.json``, ``points.jsonl`` and ``forks.jsonl``
    (``docs/counterfactual.md``). An earlier import in ``out_dir`` is replaced.

    Args:
        src_dir: The MafiaScope bifurcation directory.
        out_dir: The mafialab bifurcation directory to write (created).

    Returns:
        An :class:`ImportReport` with one entry per fork game and ``bifurcation`` set.

    Raises:
        FileNotFoundError: If ``src_dir`` is not a bifurcation directory.
        ValueError: If ``points.json`` or ``summary.json`` is unreadable (file and field named).
    """
    src_dir, out_dir = Path(src_dir), Path(out_dir)
    if out_dir.resolve() == src_dir.resolve():
        raise ValueError(f"{out_dir}: is the source directory; choose another --out")
    exp = read_bifurcation(src_dir)
    report = ImportReport(bifurcation=out_dir, bifurcation_problems=list(exp.problems))
    forks_src = src_dir / FORK_GAMES_DIR
    if forks_src.is_dir():
        for d in sorted(p for p in forks_src.iterdir() if (p / GAME_FILE).is_file()):
            try:
                report.games.append(import_game(d, out_dir / FORK_GAMES_DIR / d.name))
            except (ValueError, TypeError, KeyError, AttributeError) as err:
                gi = GameImport(game_id=d.name, source=d)
                gi.problems.append(f"{d / GAME_FILE}: game not imported ({type(err).__name__}: {err})")
                report.games.append(gi)
    write_header(out_dir, exp.header)
    for name in (POINTS_FILE, FORKS_FILE):
        (out_dir / name).unlink(missing_ok=True)
    with JsonlWriter(out_dir / POINTS_FILE, clock=None) as w:
        for p in exp.points:
            w.write(p)
    with JsonlWriter(out_dir / FORKS_FILE, clock=None) as w:
        for f in exp.forks:
            w.write(f)
    report.points, report.forks = len(exp.points), len(exp.forks)
    return report
