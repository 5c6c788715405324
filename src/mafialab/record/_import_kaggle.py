"""Importer for Kaggle Game Arena Werewolf replays (kaggle-environments 1.33.2, ``envs/werewolf``).

A replay is one JSON document per episode (``env.toJSON()``): ``configuration`` (the rules and
the roster), ``info.MODERATOR_OBSERVATION`` (every event of the game, step by step, each with its
visibility: ``public`` or ``visible_to``), ``info.GAME_END`` (winner, roles, survivors, optionally
``cost_summary``) and ``steps`` (each agent's action per step, with ``cost``/``prompt_tokens``/
``completion_tokens`` where the harness recorded them). ``docs/import-kaggle.md`` maps every
record kind. Events become engine events with the same visibility; a model's stated reasoning
becomes an ``imported`` event visible to its seat only (never speech); every other record is
kept verbatim as an ``imported`` event. Games are read one at a time (memory bounded by one
episode) and written through :class:`~mafialab.record.JsonlWriter`; a game already imported
completely is skipped, so an interrupted import resumes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mafialab import __version__
from mafialab.engine import (
    PUBLIC,
    Bid,
    BidResult,
    Elimination,
    GameEnd,
    Imported,
    InvestigationResult,
    KillChosen,
    NightAction,
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
from mafialab.models import CallRecord
from mafialab.record._import_mafiascope import GameImport, ImportReport
from mafialab.record._io import GAME_FILE, JsonlWriter
from mafialab.record._schema import CALLS_FILE, GameHeader, SeatInfo
from mafialab.rules import BUILTIN, RuleSet, rules_from_dict

SOURCE = "kaggle"
KAGGLE_FOLDER = "a Kaggle Werewolf replay (.json) or a folder of them"
_TEAM = {"Werewolves": "mafia", "Villagers": "town"}
_ACTION_KIND = {
    "WerewolfNightVoteDataEntry": "kill",
    "DoctorHealActionDataEntry": "protect",
    "SeerInspectActionDataEntry": "investigate",
}
_DISCUSSION = {"RoundRobinDiscussion": {"max_rounds": 2, "first_to_speak": "rotate"}}
"""Protocol defaults of kaggle-environments 1.33.2 (``@register_protocol(default_params=...)``)."""
_FIRST = {"fixed": "seat", "random": "seeded_first", "rotate": "rotate"}


def _protocol(cfg: dict[str, Any], key: str, default_name: str, defaults: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    spec = cfg.get(key) or {}
    name = str(spec.get("name") or default_name)
    return name, {**defaults.get(name, {}), **(spec.get("params") or {})}


def kaggle_rules(configuration: dict[str, Any]) -> RuleSet:
    """The rule set of a Kaggle Werewolf configuration (``replay["configuration"]``).

    Built from the configuration's protocols, reveal levels, role parameters and role counts as
    overrides of ``kaggle-werewolf7``; a configuration equal to ``kaggle-werewolf7`` or
    ``kaggle-werewolf8`` (seat names aside) is that built-in, any other is named
    ``kaggle-werewolf-<hash>`` (the first 8 hex digits of its rules). Seat names are the player ids.

    Raises:
        RuleSetError: A configuration no rule field expresses (a role the engine does not
            know, a Seer that learns nothing), naming the field.
        KeyError: A configuration without ``agents``.
    """
    agents = configuration["agents"]
    day, night = _day_rules(configuration), _night_rules(configuration, agents)
    counts: dict[str, int] = {}
    for a in agents:
        counts[str(a["role"])] = counts.get(str(a["role"]), 0) + 1
    ability = {"Werewolf": "kill", "Seer": "investigate", "Doctor": "protect"}
    roles = [
        {"name": r, "count": counts[r], "team": "mafia" if r == "Werewolf" else "town", "ability": ability.get(r)}
        for r in ("Werewolf", "Doctor", "Seer", "Villager")
        if r in counts
    ]
    reveal = str(configuration.get("day_exile_reveal_level") or "role")
    data: dict[str, Any] = {
        "extends": "kaggle-werewolf7",
        "name": "kaggle-werewolf",
        "roles": roles,
        "night": night,
        "day": day,
        "reveal_role_on_death": reveal == "role",
        "reveal_team_on_death": reveal == "team",
        "seat_names": [str(a["id"]) for a in agents],
    }
    rules = rules_from_dict(data, source="kaggle configuration")
    for name in ("kaggle-werewolf7", "kaggle-werewolf8"):
        b = BUILTIN[name]
        if _same_rules(rules, b):
            return b.model_copy(update={"seat_names": rules.seat_names})
    digest = hashlib.sha256(json.dumps(rules.model_dump(exclude={"name", "seat_names"}), sort_keys=True).encode())
    return rules.model_copy(update={"name": f"kaggle-werewolf-{digest.hexdigest()[:8]}"})


def _same_rules(a: RuleSet, b: RuleSet) -> bool:
    skip = {"name", "description", "seat_names"}
    da, db = a.model_dump(exclude=skip), b.model_dump(exclude=skip)
    da["roles"] = sorted(map(str, da["roles"]))
    db["roles"] = sorted(map(str, db["roles"]))
    return da == db


def _day_rules(cfg: dict[str, Any]) -> dict[str, Any]:
    disc, dp = _protocol(cfg, "discussion_protocol", "RoundRobinDiscussion", _DISCUSSION)
    vote, vp = _protocol(cfg, "day_voting_protocol", "SequentialVoting", {})
    day: dict[str, Any] = {}
    if disc == "RoundRobinDiscussion":
        day.update(discussion_rounds=int(dp.get("max_rounds", 1)), speaking_order=_FIRST[str(dp["first_to_speak"])])
    elif disc == "TurnByTurnBiddingDiscussion":
        day.update(speaking_order="bid", bid_turns=int(dp.get("max_turns", 8)))
    elif disc == "RoundByRoundBiddingDiscussion":  # closest: bid before every turn, as many turns as speeches
        day.update(speaking_order="bid", bid_turns=int(dp.get("max_rounds", 2)) * len(cfg["agents"]))
    else:
        day.update(speaking_order="seeded")  # ParallelDiscussion / RandomOrderDiscussion: no fixed order
    if vote == "SimultaneousMajority":
        day.update(vote="secret_simultaneous", vote_order="seat")
    else:
        day.update(vote="public_sequential", vote_order=_FIRST[str(vp.get("first_to_vote", "rotate"))])
    day["tie"] = "no_elimination" if vp.get("tie_break") == "no_elected" else "seeded"
    return day


def _night_rules(cfg: dict[str, Any], agents: list[dict[str, Any]]) -> dict[str, Any]:
    _, np_ = _protocol(cfg, "werewolf_night_vote_protocol", "SequentialVoting", {})
    doctor = next((a.get("role_params") or {} for a in agents if a["role"] == "Doctor"), {})
    seer = next((a.get("role_params") or {} for a in agents if a["role"] == "Seer"), {})
    consecutive = bool(doctor.get("allow_consecutive_saves", True))
    return {
        "kill_tie": "none" if np_.get("tie_break") == "no_elected" else "seeded",
        "protect_self": bool(doctor.get("allow_self_save", False)),
        "protect_self_consecutive": consecutive,
        "protect_repeat": consecutive,
        "investigate_result": "team" if seer.get("reveal_level") == "team" else "role",
    }


class _Builder:
    """Turns Kaggle's event stream into engine events, keeping the source's visibility."""

    def __init__(self, ids: list[str], roles: list[str], game_id: str) -> None:
        self.seat = {pid: i for i, pid in enumerate(ids)}
        self.roles, self.game_id = roles, game_id
        self.events: list[Any] = []
        self.calls: list[CallRecord] = []
        self.decision = 0
        self.round = 0
        self.phase = "setup"
        self.index = 0
        self.spoken: dict[int, int] = {}
        self.night_votes: dict[int, int] = {}
        self.day_votes: dict[int, int | None] = {}
        self.night_done = True
        self.foreign = 0
        self.bid_turn = 0
        self.bidding = False

    def add(self, cls: type, vis: Visibility, **kw: Any) -> Any:
        ev = cls(seq=len(self.events) + 1, round=self.round, phase=kw.pop("phase", self.phase), visibility=vis, **kw)
        self.events.append(ev)
        return ev

    def next_decision(self) -> int:
        self.decision += 1
        return self.decision - 1

    def vis(self, ev: dict[str, Any]) -> Visibility:
        if ev.get("public"):
            return PUBLIC
        return Visibility(seats=tuple(sorted(self.seat[p] for p in ev.get("visible_to") or [] if p in self.seat)))

    def keep(self, dtype: str, ev: dict[str, Any], note: str = "foreign_kind") -> None:
        raw = ev.get("data")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        actor = self.seat.get(str(data.get("actor_id"))) if data else None
        self.add(
            Imported,
            self.vis(ev),
            source_kind=str(ev.get("event_name") or dtype),
            seat=actor,
            note=note,
            record={"data_type": dtype, **ev},
        )
        self.foreign += 1

    def reasoning(self, seat: int, data: dict[str, Any], kind: str) -> None:
        text = data.get("reasoning")
        if isinstance(text, str) and text.strip():
            # the model's stated reasoning: its own seat's private note, never public speech
            self.add(
                Imported,
                Visibility(seats=(seat,)),
                source_kind=f"{kind}_reasoning",
                seat=seat,
                text=text,
                note="private_text",
                record={"perceived_threat_level": data.get("perceived_threat_level")},
            )

    def call(self, seat: int, data: dict[str, Any], purpose: str, decision: int, model: str) -> None:
        raw = data.get("action")
        act: dict[str, Any] = raw if isinstance(raw, dict) else {}
        src = {**act, **data}
        if all(src.get(k) is None for k in ("cost", "prompt_tokens", "completion_tokens")):
            return
        self.calls.append(
            CallRecord(
                game_id=self.game_id,
                seat=seat,
                purpose=purpose,
                model=model,
                decision=decision,
                status="ok" if not src.get("error") else "error",
                error=src.get("error"),
                prompt_tokens=int(src.get("prompt_tokens") or 0),
                completion_tokens=int(src.get("completion_tokens") or 0),
                cost_usd=float(src["cost"]) if src.get("cost") is not None else None,
            )
        )

    def close_night(self) -> None:
        if not self.night_done:
            self.add(NightResult, PUBLIC, killed=None, saved=None, phase="night")
            self.night_done = True


def _events(replay: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for step in (replay.get("info") or {}).get("MODERATOR_OBSERVATION") or []:
        for entry in step or []:
            try:
                yield str(entry.get("data_type")), json.loads(entry["json_str"])
            except (TypeError, KeyError, ValueError):
                yield "unreadable", {"entry": entry}


def _step_usage(replay: dict[str, Any], ids: list[str]) -> dict[tuple[str, int, str], dict[str, Any]]:
    """Cost and tokens the harness put on each step's actions: (actor, day, phase) -> kwargs (last wins)."""
    out: dict[tuple[str, int, str], dict[str, Any]] = {}
    for step in replay.get("steps") or []:
        for i, st in enumerate(step or []):
            act = (st or {}).get("action") or {}
            kw = act.get("kwargs") if isinstance(act, dict) else None
            if isinstance(kw, dict) and i < len(ids) and any(kw.get(k) is not None for k in ("cost", "prompt_tokens")):
                out[(ids[i], int(kw.get("day") or 0), str(kw.get("phase")))] = kw
    return out


def _convert(replay: dict[str, Any], b: _Builder, rules: RuleSet, models: list[str]) -> None:
    ids = list(b.seat)
    usage = _step_usage(replay, ids)
    b.add(SeatingEvent, PUBLIC, names=ids, labels=[])
    for s, role in enumerate(b.roles):
        b.add(RoleAssigned, Visibility(seats=(s,)), seat=s, role=role, team=rules.role(role).team)
    b.add(
        TeamRevealed,
        Visibility(teams=("mafia",)),
        team="mafia",
        members=[s for s, r in enumerate(b.roles) if rules.role(r).team == "mafia"],
    )
    for dtype, ev in _events(replay):
        _one(b, dtype, ev, rules, models, usage)
    b.close_night()


def _acted(
    b: _Builder,
    ev: dict[str, Any],
    data: dict[str, Any],
    purpose: str,
    models: list[str],
    usage: dict[tuple[str, int, str], dict[str, Any]],
) -> tuple[int, int]:
    seat = b.seat[str(data["actor_id"])]
    d = b.next_decision()
    kw = usage.get((str(data["actor_id"]), int(ev.get("day") or 0), str(ev.get("phase"))), {})
    b.call(seat, {**kw, **{k: v for k, v in data.items() if v is not None}}, purpose, d, models[seat])
    b.reasoning(seat, data, purpose)
    return seat, d


def _one(
    b: _Builder,
    dtype: str,
    ev: dict[str, Any],
    rules: RuleSet,
    models: list[str],
    usage: dict[tuple[str, int, str], dict[str, Any]],
) -> None:
    name = ev.get("event_name")
    raw = ev.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    day = int(ev.get("day") or 0)
    tgt = b.seat.get(str(data.get("target_id"))) if data else None
    if name == "night_start":
        b.round, b.phase, b.index, b.night_done = day + 1, "night", 0, False
        b.night_votes = {}
        b.add(PhaseStarted, PUBLIC, alive=_alive(b))
    elif name == "day_start":
        b.close_night()
        b.round, b.phase, b.index, b.spoken, b.day_votes, b.bid_turn = day, "day", 0, {}, {}, 0
        b.add(PhaseStarted, PUBLIC, alive=_alive(b))
    elif dtype in _ACTION_KIND and tgt is not None:
        kind = _ACTION_KIND[dtype]
        seat, d = _acted(b, ev, data, kind, models, usage)
        vis = Visibility(teams=("mafia",)) if kind == "kill" else Visibility(seats=(seat,))
        b.add(NightAction, vis, seat=seat, ability=kind, target=tgt, decision=d)
        if kind == "kill":
            b.night_votes[seat] = tgt
    elif dtype == "WerewolfNightEliminationElectedDataEntry":
        b.add(
            KillChosen,
            Visibility(teams=("mafia",)),
            target=b.seat.get(str(data.get("elected_target_player_id"))),
            votes=dict(b.night_votes),
        )
    elif dtype == "SeerInspectResultDataEntry" and tgt is not None:
        result = str(data.get("role")) if data.get("role") else _TEAM.get(str(data.get("team")), str(data.get("team")))
        b.add(InvestigationResult, b.vis(ev), seat=b.seat[str(data["actor_id"])], target=tgt, result=result)
    elif dtype == "WerewolfNightEliminationDataEntry":
        s = b.seat[str(data["eliminated_player_id"])]
        b.add(NightResult, PUBLIC, killed=s, saved=None)
        b.night_done = True
        _die(b, s, "night", data)
    elif not _day_record(b, dtype, ev, data, tgt, rules, models, usage):
        b.keep(dtype, ev)


def _day_record(
    b: _Builder,
    dtype: str,
    ev: dict[str, Any],
    data: dict[str, Any],
    tgt: int | None,
    rules: RuleSet,
    models: list[str],
    usage: dict[tuple[str, int, str], dict[str, Any]],
) -> bool:
    """The day's records (speech, bids, votes, the end); whether ``dtype`` was one."""
    name = ev.get("event_name")
    if dtype == "ChatDataEntry":
        seat, d = _acted(b, ev, data, "speak", models, usage)
        b.spoken[seat] = b.spoken.get(seat, 0) + 1
        b.index += 1
        disc = b.bid_turn if rules.day.speaking_order == "bid" else b.spoken[seat]
        b.add(
            Speech, PUBLIC, seat=seat, text=str(data.get("message") or ""), index=b.index, discussion=disc, decision=d
        )
    elif dtype == "BidDataEntry":
        if not b.bidding:  # the first bid of a round of bids
            b.bid_turn += 1
            b.bidding = True
        seat, d = _acted(b, ev, data, "bid", models, usage)
        b.add(
            Bid,
            Visibility(seats=(seat,)),
            seat=seat,
            amount=int(data.get("bid_amount") or 0),
            turn=b.bid_turn,
            decision=d,
        )
    elif dtype == "BidResultDataEntry":
        b.bidding = False
        bids = {b.seat[k]: int(v) for k, v in (data.get("bid_overview") or {}).items() if k in b.seat}
        win = [b.seat[w] for w in data.get("winner_player_ids") or [] if w in b.seat]
        b.add(BidResult, b.vis(ev), bids=bids, speaker=win[0] if win else None, turn=b.bid_turn)
    elif dtype == "DayExileVoteDataEntry":
        seat, d = _acted(b, ev, data, "vote", models, usage)
        b.day_votes[seat] = tgt
        b.index += 1
        public = rules.day.vote == "public_sequential"
        b.add(
            Vote,
            PUBLIC if public else Visibility(seats=(seat,)),
            stage="vote",
            seat=seat,
            target=tgt,
            index=b.index if public else None,
            decision=d,
        )
    elif dtype == "DayExileElectedDataEntry":
        s = b.seat[str(data["elected_player_id"])]
        _tally(b, s)
        _die(b, s, "vote", data, role_key="elected_player_role_name", team_key="elected_player_team_name")
    elif name == "vote_result" and isinstance(data, dict) and data.get("vote_type") == "day_exile":
        _tally(b, None)
    elif dtype == "GameEndResultsDataEntry":
        b.close_night()
        winner = _TEAM.get(str(data.get("winner_team")), "town")
        alive = sorted(b.seat[p] for p in data.get("survivors_until_last_round_and_role") or {} if p in b.seat)
        b.add(
            GameEnd,
            PUBLIC,
            phase="end",
            winner=winner,
            rounds=b.round,
            alive=alive,
            roles=list(b.roles),
            reason="mafia_eliminated" if winner == "town" else "parity",
        )
    else:
        return False
    return True


def _alive(b: _Builder) -> list[int]:
    dead = {e.seat for e in b.events if e.kind == "elimination"}
    return [s for s in range(len(b.roles)) if s not in dead]


def _tally(b: _Builder, outcome: int | None) -> None:
    votes = {s: t for s, t in b.day_votes.items() if t is not None}
    tally: dict[int, int] = {}
    for t in votes.values():
        tally[t] = tally.get(t, 0) + 1
    top = max(tally.values(), default=0)
    tie = sum(1 for c in tally.values() if c == top) > 1
    b.add(VoteTally, PUBLIC, stage="vote", votes=votes, tally=dict(sorted(tally.items())), tie=tie, outcome=outcome)


def _die(
    b: _Builder,
    seat: int,
    cause: str,
    data: dict[str, Any],
    role_key: str = "eliminated_player_role_name",
    team_key: str = "eliminated_player_team_name",
) -> None:
    role = data.get(role_key)
    team = _TEAM.get(str(data.get(team_key))) if data.get(team_key) and not role else None
    b.add(Elimination, PUBLIC, seat=seat, cause=cause, role=str(role) if role else None, team=team)


def episode_id(replay: dict[str, Any], path: Path) -> str:
    """The game id of a replay: its ``id`` when set, else the file name without ``.json``."""
    rid = replay.get("id")
    return str(rid) if isinstance(rid, str) and rid.strip() and "/" not in rid else path.stem


def _dealt_params(
    agents: list[dict[str, Any]], slot: dict[str, Any], player: dict[str, Any], role: str
) -> dict[str, Any]:
    """The role parameters of the role a seat was dealt.

    With ``randomize_roles`` Kaggle permutes each configuration entry's ``role`` and
    ``role_params`` together (kaggle-environments 1.33.2, ``game/roles.py`` ``shuffle_roles``), so
    a seat's slot in ``configuration.agents`` may hold another role's parameters: the dealt ones
    are ``GAME_END.all_players[].agent.role_params`` where recorded, else those of the
    configuration entry that listed the role.
    """
    if player.get("role") == role and isinstance(player.get("role_params"), dict):
        return dict(player["role_params"])
    if slot.get("role") == role:
        return dict(slot.get("role_params") or {})
    return next((dict(a.get("role_params") or {}) for a in agents if a.get("role") == role), {})


def import_replay(replay: dict[str, Any], path: Path, dst: Path, order: int = 0) -> GameImport:
    """Import one Kaggle replay (already parsed) into the game folder ``dst``.

    ``order`` is the replay's place in Kaggle's evaluator's game order (:func:`evaluator_order`),
    kept as ``meta.kaggle_order``: Elo and OpenSkill are rated in it. Written to ``dst`` beside
    a ``.partial`` folder renamed into place when complete, so a game folder that exists is a
    complete import.

    Raises:
        KeyError, ValueError, TypeError: A replay without the records a game needs (roster,
            ``GAME_END``), or a configuration no rule set expresses.
    """
    gi = GameImport(game_id=episode_id(replay, path), source=path)
    cfg = replay["configuration"]
    end = replay["info"]["GAME_END"]
    agents = cfg["agents"]
    ids = [str(a["id"]) for a in agents]
    roles_by_id = end.get("all_players_and_role") or {}
    roles = [str(roles_by_id.get(pid, a["role"])) for pid, a in zip(ids, agents, strict=True)]
    players = {str(p.get("id")): p.get("agent") or {} for p in end.get("all_players") or []}
    models = [
        str(players.get(pid, a).get("display_name") or a.get("display_name") or a.get("agent_id") or "unknown")
        for pid, a in zip(ids, agents, strict=True)
    ]
    dealt = [
        {**a, "role": r, "role_params": _dealt_params(agents, a, players.get(pid) or {}, r)}
        for pid, a, r in zip(ids, agents, roles, strict=True)
    ]
    rules = kaggle_rules({**cfg, "agents": dealt})
    gi.rules_id = rules.id
    b = _Builder(ids, roles, gi.game_id)
    _convert(replay, b, rules, models)
    roster = [
        SeatInfo(seat=i, name=ids[i], role=roles[i], team=rules.role(roles[i]).team, agent=models[i])
        for i in range(len(ids))
    ]
    meta = {
        "source_file": path.name,
        "kaggle_order": order,
        "kaggle": {k: replay.get(k) for k in ("name", "version", "schema_version", "rewards", "statuses")},
        "agents": {str(i): {k: v for k, v in a.items() if k not in ("id", "role")} for i, a in enumerate(agents)},
        "game_end": {k: v for k, v in end.items() if k not in ("all_players",)},
        "finished": True,
    }
    header = GameHeader(
        game_id=gi.game_id,
        rules_id=rules.id,
        rules=rules,
        seed=int(cfg.get("seed") or 0),
        roster=roster,
        software=f"mafialab {__version__} (import from kaggle)",
        source=SOURCE,
        meta=meta,
    )
    tmp = dst.with_name(f".{dst.name}.partial")  # a dot folder: no reader takes it for a game
    shutil.rmtree(tmp, ignore_errors=True)
    with JsonlWriter(tmp / GAME_FILE, clock=None) as w:
        w.write(header)
        for ev in b.events:
            w.write(ev)
    if b.calls:
        with JsonlWriter(tmp / CALLS_FILE, clock=None) as w:
            for c in b.calls:
                w.write(c)
    tmp.rename(dst)
    gi.out, gi.events, gi.foreign, gi.finished = dst, len(b.events), b.foreign, True
    return gi


def evaluator_order(src: Path) -> list[Path]:
    """The replay files of ``src`` in the order Kaggle's evaluator reads and rates them.

    Source: kaggle-environments 1.33.2, ``envs/werewolf/eval/metrics.py``,
    ``GameSetEvaluator.__init__``: ``os.walk`` of the folder (directory listing order, not
    sorted: it depends on the file system), every file ending ``.json``, kept in that order for
    Elo and OpenSkill. A file is a folder of one.
    """
    if src.is_file():
        return [src]
    return [Path(root) / f for root, _, files in os.walk(src) for f in files if f.endswith(".json")]


def import_kaggle(src: Path, out_dir: Path, *, on_game: Callable[[int, int], None] | None = None) -> ImportReport:
    """Convert Kaggle Werewolf replays (one ``.json`` or a folder of them) into mafialab logs.

    Each replay becomes ``out_dir/<episode id>/game.jsonl`` (a :class:`GameHeader` with
    ``source="kaggle"`` and engine events) and, where the harness recorded token usage or cost,
    ``calls.jsonl``. Replays are read one at a time, in Kaggle's evaluator's order
    (:func:`evaluator_order`; each game's place is its header's ``meta.kaggle_order``, the order
    its Elo and OpenSkill are rated in); a game folder that already exists is a
    complete earlier import and is skipped (its entry says so), so an interrupted import resumes.

    Args:
        src: A replay file or a folder searched recursively for ``*.json``.
        out_dir: Where to write (created).
        on_game: Called after each replay with (replays done, replays in all), for progress displays.

    Returns:
        An :class:`ImportReport`; a replay that cannot be read or converted is reported in its
        entry's ``problems`` (the others are imported).

    Raises:
        FileNotFoundError: ``src`` does not exist or holds no ``.json`` file.
    """
    src, out_dir = Path(src), Path(out_dir)
    if not src.exists():
        raise FileNotFoundError(f"{src} does not exist: expected {KAGGLE_FOLDER}")
    files = evaluator_order(src)
    if not files:
        raise FileNotFoundError(f"{src}: no .json replay found (expected {KAGGLE_FOLDER})")
    report = ImportReport()
    for n, path in enumerate(files, 1):
        report.games.append(_import_file(path, out_dir, n - 1))
        if on_game is not None:
            on_game(n, len(files))
    return report


def _import_file(path: Path, out_dir: Path, order: int) -> GameImport:
    gi = GameImport(game_id=path.stem, source=path)
    try:
        with path.open(encoding="utf-8") as fh:
            replay = json.load(fh)
    except (OSError, ValueError) as err:
        gi.problems.append(f"{path}: not a readable JSON replay ({type(err).__name__}: {str(err).splitlines()[0]})")
        return gi
    if not isinstance(replay, dict) or replay.get("name") not in (None, "werewolf"):
        gi.problems.append(
            f"{path}: not a Kaggle Werewolf replay (name {replay.get('name')!r})"
            if isinstance(replay, dict)
            else f"{path}: not a Kaggle replay (not a JSON object)"
        )
        return gi
    dst = out_dir / episode_id(replay, path)
    if (dst / GAME_FILE).is_file():
        gi.game_id, gi.out, gi.finished = dst.name, dst, True
        gi.problems.append(f"{path}: already imported into {dst}; skipped")
        return gi
    try:
        return import_replay(replay, path, dst, order)
    except (KeyError, ValueError, TypeError) as err:
        gi.problems.append(f"{path}: game not imported ({type(err).__name__}: {str(err).splitlines()[0]})")
        return gi
