"""Game logs read into the flat form the metrics need."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mafialab.engine import Event
from mafialab.record import (
    CALLS_FILE,
    GAME_FILE,
    PROBES_FILE,
    GameLog,
    LogFormatError,
    iter_call_records,
    iter_game_dirs,
    iter_probe_records,
    no_games_message,
    none_readable_message,
    person_seats,
    probe_sort_key,
    read_game,
)
from mafialab.rules import RuleSet

log = logging.getLogger(__name__)
T = TypeVar("T")

SKIPPED_FAMILIES = frozenset({"resistance"})
"""Game families the metrics skip (no roles to guess, no day votes)."""

NOT_APPLICABLE_MISSION = "not applicable to this rule set (a mission game has no elimination vote)"
"""Why a figure that needs an elimination vote is absent for mission games (the report's ``not_applicable``)."""


@dataclass
class Probe:
    """One probe answer as the metrics see it.

    Attributes:
        line: Line number in ``probes.jsonl`` (the file is in the order answers arrived;
            :attr:`GameData.probes` is sorted by :func:`~mafialab.record.probe_sort_key`).
        round: Round of the trigger.
        msg: Public message index of the trigger (-1 for round-end probes).
        position: Position of the probe within its trigger.
        player: Probed player's name.
        probe_id: Probe id.
        parsed: The stored parsed answer (``None`` if none).
        parse_ok: The stored parse flag.
        raw: The raw answer text.
        ts: Timestamp (Unix seconds), if recorded.
        after_seq: ``seq`` of the last game event that existed when probing.
        repaired: Whether the stored parse needed repair (fences, trailing text, truncation).
        error: The recorded transport or model error (native probes), else ``None``.
        schema_ok: Whether the stored parse validated against the probe's schema (native
            probes; ``None``: not checked).
        prompt_tokens: Recorded prompt tokens (0: not recorded).
        completion_tokens: Recorded completion tokens (0: not recorded).
        question_chars: Length of the question text (characters).
        distribution: A ``logprob`` probe's distribution over its candidates (log schema
            v4's ``distribution``), else ``None``.
    """

    line: int
    round: int
    msg: int
    position: int
    player: str
    probe_id: str
    parsed: Any
    parse_ok: bool
    raw: str
    ts: float | None
    after_seq: int
    repaired: bool = False
    error: str | None = None
    schema_ok: bool | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    question_chars: int = 0
    distribution: dict[str, float] | None = None


@dataclass
class TeamVoteRecord:
    """One counted team vote of a mission game (approve or reject; a blank vote is not counted).

    Attributes:
        round: Mission (round) of the vote.
        voter: Voter's name.
        members: Names on the proposed team.
        choice: ``"approve"`` or ``"reject"``.
        ts: Clock time of the vote event (``None`` when the log has none).
        seq: ``seq`` of the vote event.
        tally_ts: Clock time of the tally that counted it (set when the tally is read).
        tally_seq: ``seq`` of that tally (0 until then).
    """

    round: int
    voter: str
    members: frozenset[str]
    choice: str
    ts: float | None
    seq: int
    tally_ts: float | None = None
    tally_seq: int = 0


@dataclass(frozen=True)
class Message:
    """One public message of the transcript (an intro, a discussion speech, a vote statement).

    Attributes:
        round: Round of the message.
        index: Public message index within the round (the source's per-round ``msg_seq`` for
            imported games; ``None`` for a vote that is not a public message).
        seq: ``seq`` of the event in ``game.jsonl``.
        speaker: Speaker's name.
        text: Verbatim text (a failed turn keeps its error text, "" when empty).
        failed: Whether the turn failed in the source game (transport error, empty response,
            unresolved speaker or vote); such turns are not the agent's words.
    """

    round: int
    index: int | None
    seq: int
    speaker: str
    text: str
    failed: bool = False


_SOURCE_MESSAGE_KINDS = ("intro", "day_discuss", "day_vote")
_SOURCE_TURN_KINDS = frozenset({*_SOURCE_MESSAGE_KINDS, "night_mafia", "night_doctor", "night_sheriff"})
"""Kinds of imported records that were one model call of the source game (an agent's turn)."""


@dataclass(frozen=True)
class Call:
    """One line of ``calls.jsonl`` as the instrument section sees it.

    Attributes:
        purpose: ``speak``, ``vote``, … (game decisions), ``probe``, ``judge``, ``preflight``.
        prompt_tokens: Prompt tokens (>= 0).
        completion_tokens: Completion tokens (>= 0).
        status: The call's status (``ok``, ``retried``, ``unusable``, ``fallback``, ``error``).
        seat: Seat of the calling agent (-1 when none).
        copied_words: Longest run of words the answer's text took from the seat's prompt
            (``None``: no text, or not recorded; see :func:`mafialab._quality.copied_words`).
        off_roster: Names in the answer that are no seat of the game.
    """

    purpose: str
    prompt_tokens: int
    completion_tokens: int
    status: str
    seat: int = -1
    copied_words: int | None = None
    off_roster: int = 0


@dataclass
class GameData:
    """A game flattened for the metrics.

    Attributes:
        game_id: Game id.
        path: Game directory.
        rules: The game's rule set.
        source: ``"mafialab"`` or the importer's name.
        names: Seat names in seat order.
        role: True role per name.
        mafia: Names on the hidden team.
        deaths: ``(ts, seq, name)`` per elimination (night or vote), in event order.
        votes: ``(round, voter) -> (ts, seq)`` of the voter's own day vote event.
        failed_votes: The same for imported day-vote turns that failed in the source
            (transport error, empty response): the reference counts them as vote events.
        tallies: ``(round, ts, seq, {voter: target})`` per day-vote tally, in event order.
        vote_index: ``(round, voter) -> public message index`` of the voter's own day vote
            (``None`` when the vote was not a public message).
        failed_vote_index: The same for the failed imported day-vote turns of
            :attr:`failed_votes` (from the source's ``msg_seq``).
        messages: Public messages (intros, speeches, vote statements, and failed imported
            turns of those kinds), in event order.
        probes: Probe answers in key order (:func:`~mafialab.record.probe_sort_key`).
        winner: Winning team id, or ``None`` if unfinished.
        family: Game family (``"mafia"``; ``"mission"`` for a rule set with mission rules, else
            the source's ``game_type``).
        team_votes: A mission game's counted team votes, in event order.
        problems: Unreadable lines met while loading.
        agents: Agent spec or model label per name (the roster's ``agent``).
        calls: ``calls.jsonl`` lines that are model calls (a person's decisions at a human
            seat, :func:`~mafialab.record.person_seats`, left out), or ``None`` when the game
            has no such file (imported games, games of scripted agents only).
        agent_turns: Agents' turns in ``game.jsonl``: events answering a decision (speech,
            vote, night action, hidden-team chat) and imported turns of the source game that
            were model calls (failed turns and private texts included).
        root: Id of the root game: the game itself, or for a branch (a fork) its first
            ancestor that is not a branch; the bootstrap clusters on it.
        branch: Whether the game is a branch (its header has a ``parent`` block).
        degraded: Whether the integrity gate marked the game degraded (its ``game_status``);
            the metrics leave such games out (listed under the report's ``degraded``).
        models: Model per name: the seat's recorded model (header ``meta.agents``), else its
            agent label (imported games record the model as the agent).
        battery: The probe battery's fingerprint from the header (``meta.probes``,
            ``<name>:<8 hex>``), ``None`` for games recorded without one (or imported).
    """

    game_id: str
    path: Path
    rules: RuleSet
    source: str
    names: list[str]
    role: dict[str, str]
    mafia: set[str]
    deaths: list[tuple[float | None, int, str]] = field(default_factory=list)
    votes: dict[tuple[int, str], tuple[float | None, int]] = field(default_factory=dict)
    failed_votes: dict[tuple[int, str], tuple[float | None, int]] = field(default_factory=dict)
    tallies: list[tuple[int, float | None, int, dict[str, str]]] = field(default_factory=list)
    vote_index: dict[tuple[int, str], int | None] = field(default_factory=dict)
    failed_vote_index: dict[tuple[int, str], int | None] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    winner: str | None = None
    family: str = "mafia"
    team_votes: list[TeamVoteRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    agents: dict[str, str] = field(default_factory=dict)
    calls: list[Call] | None = None
    agent_turns: int = 0
    root: str = ""
    branch: bool = False
    degraded: bool = False
    battery: str | None = None
    models: dict[str, str] = field(default_factory=dict)

    @property
    def skipped(self) -> bool:
        """Whether the metrics skip this game (see :data:`SKIPPED_FAMILIES`)."""
        return self.family in SKIPPED_FAMILIES


def _probe(line: int, rec: Mapping[str, Any]) -> Probe:
    ts = rec.get("ts", rec.get("timestamp"))
    raw = rec.get("answer_raw")
    return Probe(
        line=line,
        round=int(rec["round"]),
        msg=int(rec.get("msg_index", rec.get("public_msg_seq", 0))),
        position=int(rec.get("position", rec.get("probe_seq", 0))),
        player=str(rec.get("player", rec.get("player_name"))),
        probe_id=str(rec["probe_id"]),
        parsed=rec.get("answer_parsed"),
        parse_ok=bool(rec.get("parse_ok", rec.get("answer_parse_ok", False))),
        raw=raw if isinstance(raw, str) else "",
        ts=float(ts) if isinstance(ts, (int, float)) else None,
        after_seq=int(rec.get("after_seq") or 0),
        repaired=bool(rec.get("repaired", False)),
        error=str(rec["error"]) if rec.get("error") else None,
        schema_ok=rec["schema_ok"] if isinstance(rec.get("schema_ok"), bool) else None,
        prompt_tokens=_count(rec.get("prompt_tokens")),
        completion_tokens=_count(rec.get("completion_tokens")),
        question_chars=len(rec["question"]) if isinstance(rec.get("question"), str) else 0,
        distribution=_distribution(rec.get("distribution")),
    )


def _distribution(x: Any) -> dict[str, float] | None:
    """A recorded ``distribution`` as ``{candidate: p}``; ``None`` when absent or not a mapping of numbers."""
    if not isinstance(x, dict) or not x:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in x.values()):
        return None
    return {str(k): float(v) for k, v in x.items()}


def _count(x: Any) -> int:
    return int(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 else 0


def _model_of(meta: Mapping[str, Any], seat: int, agent: str) -> str:
    desc = meta.get("agents", {}).get(str(seat)) if isinstance(meta.get("agents"), dict) else None
    model = desc.get("model") if isinstance(desc, dict) else None
    return model if isinstance(model, str) and model else agent


def game_data(log_: GameLog, probes: Iterable[Mapping[str, Any]] | None = None) -> GameData:
    """Flatten a read game log (and the ``probes.jsonl`` beside it) for the metrics.

    Args:
        log_: A game log from :func:`mafialab.record.read_game`.
        probes: Probe records already read (``probes.jsonl`` lines as mappings, in file
            order); when given, ``probes.jsonl`` is not read again (the viewer's build).

    Returns:
        The flattened game; unreadable probe lines, and events naming a seat that is not in
        the roster (skipped), are listed in ``problems``.
    """
    h = log_.header
    names = [s.name for s in sorted(h.roster, key=lambda s: s.seat)]
    by_seat = {s.seat: s.name for s in h.roster}
    g = GameData(
        game_id=h.game_id,
        path=log_.path,
        rules=h.rules,
        source=h.source,
        names=names,
        role={s.name: s.role for s in h.roster},
        mafia={s.name for s in h.roster if s.team == "mafia"},
        winner=log_.winner,
        family="mission" if h.rules.mission is not None else str(h.meta.get("game_type") or "mafia"),
        problems=list(log_.problems),
        agents={s.name: s.agent for s in h.roster},
        root=h.parent.root if h.parent is not None else h.game_id,
        branch=h.parent is not None,
        degraded=bool(log_.status is not None and log_.status.degraded),
        battery=str(h.meta["probes"]) if isinstance(h.meta.get("probes"), str) else None,
        models={s.name: _model_of(h.meta, s.seat, s.agent) for s in h.roster},
    )
    _read_events(g, log_, by_seat)
    _read_probes(g, log_, probes)
    _read_calls(g, log_)
    return g


def _read_events(g: GameData, log_: GameLog, by_seat: dict[int, str]) -> None:
    """Fill ``g``'s agent turns, deaths, messages, votes and tallies from the game's events.

    An event naming a seat that is not in the roster is skipped and listed in ``g.problems``.
    """
    cast: dict[tuple[int, str], dict[str, str]] = {}  # (round, stage) -> voter -> target, as the log keeps them
    for ev in log_.events:
        if getattr(ev, "decision", None) is not None or (
            ev.kind == "imported" and ev.source_kind in _SOURCE_TURN_KINDS
        ):
            g.agent_turns += 1
        try:
            _take_event(g, ev, by_seat, cast)
        except KeyError as err:  # a seat the roster does not have: a damaged log
            msg = (
                f"{log_.path / GAME_FILE}: {ev.kind} event seq {ev.seq} names seat {err.args[0]}, "
                f"not in the roster (seats {sorted(by_seat)}); event skipped"
            )
            log.warning(msg)
            g.problems.append(msg)


def _take_event(g: GameData, ev: Event, by_seat: dict[int, str], cast: dict[tuple[int, str], dict[str, str]]) -> None:
    """Add one event to ``g`` (raises ``KeyError`` for a seat not in ``by_seat``)."""
    if ev.kind == "elimination":
        g.deaths.append((ev.ts, ev.seq, by_seat[ev.seat]))
    elif ev.kind == "speech" and ev.visibility.public:
        g.messages.append(Message(ev.round, ev.index, ev.seq, by_seat[ev.seat], ev.text))
    elif ev.kind == "vote" and ev.stage in ("vote", "runoff"):
        g.votes[(ev.round, by_seat[ev.seat])] = (ev.ts, ev.seq)
        if ev.target is not None:  # the log keeps every vote, also when the tally hides voters
            cast.setdefault((ev.round, ev.stage), {})[by_seat[ev.seat]] = by_seat[ev.target]
        g.vote_index[(ev.round, by_seat[ev.seat])] = ev.index
        if ev.statement is not None and ev.visibility.public:
            g.messages.append(Message(ev.round, ev.index, ev.seq, by_seat[ev.seat], ev.statement))
    elif ev.kind == "imported" and ev.source_kind in _SOURCE_MESSAGE_KINDS and ev.visibility.public:
        idx = ev.record.get("msg_seq")
        idx = idx if isinstance(idx, int) and not isinstance(idx, bool) else None
        speaker = by_seat[ev.seat] if ev.seat is not None else ev.record.get("player")
        if isinstance(speaker, str):
            g.messages.append(Message(ev.round, idx, ev.seq, speaker, ev.text or "", failed=True))
        if ev.source_kind == "day_vote" and ev.seat is not None:
            key = (ev.round, by_seat[ev.seat])
            g.failed_votes[key] = (ev.ts, ev.seq)
            g.failed_vote_index[key] = idx
    elif ev.kind == "vote_tally" and ev.stage in ("vote", "runoff"):
        votes = {by_seat[v]: by_seat[t] for v, t in ev.votes.items()}
        if not votes and ev.tally:  # secret votes kept secret (day.tally_names_voters false)
            votes = dict(cast.get((ev.round, ev.stage), {}))
        g.tallies.append((ev.round, ev.ts, ev.seq, votes))
    elif ev.kind in ("team_proposal", "team_vote", "team_vote_tally"):
        _take_team_event(g, ev, by_seat, cast)


def _take_team_event(
    g: GameData, ev: Any, by_seat: dict[int, str], cast: dict[tuple[int, str], dict[str, str]]
) -> None:
    """A mission game's proposal, team vote (a public one is also a message) or tally."""
    if ev.kind == "team_proposal":
        cast[(-1, "team")] = {by_seat[s]: "member" for s in ev.members}
    elif ev.kind == "team_vote":
        if ev.statement is not None and ev.visibility.public:
            g.messages.append(Message(ev.round, ev.index, ev.seq, by_seat[ev.seat], ev.statement))
        if ev.choice is not None:
            members = frozenset(cast.get((-1, "team"), {}))
            g.team_votes.append(TeamVoteRecord(ev.round, by_seat[ev.seat], members, ev.choice, ev.ts, ev.seq))
    else:
        for tv in g.team_votes:
            if tv.tally_seq == 0:
                tv.tally_ts, tv.tally_seq = ev.ts, ev.seq


def _read_probes(g: GameData, log_: GameLog, probes: Iterable[Mapping[str, Any]] | None) -> None:
    """Fill ``g.probes`` (in key order) from ``probes`` or the game's ``probes.jsonl`` (unusable records: problems)."""
    ppath = log_.path / PROBES_FILE
    if probes is None and not ppath.is_file():
        return
    records = (
        enumerate(probes, start=1)
        if probes is not None
        else iter_probe_records(log_.path, game_id=g.game_id, problems=g.problems)
    )
    # the file is in arrival order (probes run beside the game): key order here
    for n, rec in sorted(records, key=lambda nr: probe_sort_key(nr[1])):
        try:
            g.probes.append(_probe(n, rec))
        except (KeyError, TypeError, ValueError) as err:
            msg = f"{ppath}:{n}: unusable probe record ({type(err).__name__}: {err})"
            log.warning(msg)
            g.problems.append(msg)


def _read_calls(g: GameData, log_: GameLog) -> None:
    """Set ``g.calls`` from the game's ``calls.jsonl``, when it has one (a person's decisions left out)."""
    cpath = log_.path / CALLS_FILE
    if not cpath.is_file():
        return
    g.calls = []
    persons = person_seats(log_.header.meta.get("agents"))
    for n, rec in iter_call_records(log_.path, game_id=g.game_id, problems=g.problems):
        if rec.get("kind", "call") != "call":
            continue  # the closing call_summary record
        if rec.get("seat") in persons:
            continue  # a person's decision at a human seat: no model call
        try:
            g.calls.append(
                Call(
                    purpose=str(rec["purpose"]),
                    prompt_tokens=int(rec.get("prompt_tokens") or 0),
                    completion_tokens=int(rec.get("completion_tokens") or 0),
                    status=str(rec.get("status", "")),
                    seat=int(rec.get("seat", -1)),
                    copied_words=None if rec.get("copied_words") is None else int(rec["copied_words"]),
                    off_roster=int(rec.get("off_roster") or 0),
                )
            )
        except (KeyError, TypeError, ValueError) as err:
            msg = f"{cpath}:{n}: unusable call record ({type(err).__name__}: {err})"
            log.warning(msg)
            g.problems.append(msg)


class RepeatedIds:
    """The one rule for a game id found in more than one game folder: every copy is kept, as a game of its own.

    A game id names one recorded game (the harness hashes the run configuration into it),
    but copies, older logs or hand-made folders can still share one. Nothing is dropped: the
    first folder seen with an id keeps its bootstrap cluster (its root); each later folder
    with that id is clustered as ``<id>@<path>``, so the bootstrap resamples the copies as
    separate games, unless it is a fork branch (it stays with its root game). :func:`same_id`,
    :func:`iter_summaries` and the viewer's corpus figures all apply it through this class.
    """

    def __init__(self) -> None:
        self._first: dict[str, str] = {}

    def see(self, game_id: str, path: str | Path, root: str, branch: bool) -> tuple[str, str | None]:
        """Note that the folder ``path`` holds ``game_id`` (a game with bootstrap root ``root``).

        Returns:
            The game's bootstrap root under the rule, and ``None`` or, when another folder was
            seen first with the id, the warning ``game id X is in both A and B; both kept as
            separate games``.
        """
        seen = self._first.setdefault(game_id, str(path))
        if seen == str(path):
            return root, None
        msg = f"game id {game_id!r} is in both {seen} and {path}; both kept as separate games"
        return (root if branch else f"{game_id}@{path}"), msg


def same_id(games: Iterable[GameData]) -> list[str]:
    """Warn about game directories that share a game id; keep them all, as separate games.

    Each later copy gets its directory appended to :attr:`GameData.root` (``<id>@<path>``;
    the rule: :class:`RepeatedIds`).

    Args:
        games: Games read from disk (changed in place).

    Returns:
        One warning per repeated id: ``game id X is in both A and B; both kept as separate
        games`` (not logged: the caller shows them, once).
    """
    ids = RepeatedIds()
    warnings = []
    for g in games:
        g.root, msg = ids.see(g.game_id, g.path, g.root, g.branch)
        if msg is not None:
            warnings.append(msg)
            g.problems.append(msg)
    return warnings


def read_each(root: Path, dirs: list[Path], read: Callable[[Path], T], skipped: list[str] | None) -> list[T]:
    """``read(d)`` for each game directory of ``dirs``, a game that cannot be read skipped when asked.

    The one rule of ``report``, ``view`` and ``export parquet`` for a folder of games.

    Args:
        root: The folder given (for the message when no game can be read).
        dirs: Its game directories (:func:`mafialab.record.iter_game_dirs`).
        read: Reads one directory; may raise :class:`mafialab.record.LogFormatError`.
        skipped: When given, receives the reason of each game ``read`` refused (naming the
            file), and that game is left out; without it the first such game raises.

    Returns:
        What ``read`` returned, in the order of ``dirs``.

    Raises:
        mafialab.record.LogFormatError: A game cannot be read (without ``skipped``), or none
            of ``dirs`` can (with it).
    """
    return list(iter_each(root, dirs, read, skipped))


def iter_each(root: Path, dirs: list[Path], read: Callable[[Path], T], skipped: list[str] | None) -> Iterator[T]:
    """:func:`read_each` one game at a time: only the game being read is held.

    ``skipped`` receives the reasons once every directory has been tried (the generator
    exhausted), and the error for "none can be read" is raised then.
    """
    reasons: list[str] = []
    n = 0
    for d in dirs:
        try:
            got = read(d)
        except LogFormatError as err:
            if skipped is None:
                raise
            reasons.append(str(err))
            continue
        n += 1
        yield got
    if skipped is not None:
        skipped.extend(reasons)
        if not n:
            raise LogFormatError(none_readable_message(root, dirs, reasons))


def split_branches(games: Sequence[GameData], include_branches: bool = False) -> tuple[list[GameData], list[str]]:
    """Apply the branch part of the inclusion rule (``mafialab.analysis._inclusion``).

    Fork branches are left out of corpus figures unless ``include_branches``; ``report``,
    ``view`` and :func:`load_games` all leave them out with this function.

    Args:
        games: Games as read, branches among them.
        include_branches: Keep branches (``--include-branches``).

    Returns:
        ``(kept games in their order, ids of the branches left out)``; nothing is left out
        with ``include_branches``.
    """
    if include_branches:
        return list(games), []
    return [g for g in games if not g.branch], [g.game_id for g in games if g.branch]


def load_games(
    root: Path,
    include_branches: bool = False,
    left_out: list[str] | None = None,
    warnings: list[str] | None = None,
    skipped: list[str] | None = None,
) -> list[GameData]:
    """Read every game directory under ``root`` (see :func:`mafialab.record.iter_game_dirs`).

    Branches (forks of a recorded game, see ``docs/counterfactual.md``) are not independent
    games: they are left out unless ``include_branches`` (then the report's bootstrap
    clusters on their root game).

    Args:
        root: Directory searched recursively for ``game.jsonl``.
        include_branches: Keep branches.
        left_out: Receives the ids of the branches left out.
        warnings: Receives one line per game id found in more than one directory (then they
            are not logged; without it they are).
        skipped: When given, a game that cannot be read (no valid header, a log schema newer
            than this mafialab reads) is skipped and its reason (naming the file) appended,
            as ``mafialab view`` skips it; without it the first such game raises.

    Two directories holding the same game id are both kept, with a warning naming both
    paths (:func:`same_id`); the bootstrap treats them as two games.

    Raises:
        mafialab.record.LogFormatError: If a ``game.jsonl`` has no valid header (without
            ``skipped``), or none of the games under ``root`` can be read (with it).
        FileNotFoundError: If ``root`` holds no game.
    """
    dirs = iter_game_dirs(Path(root))
    if not dirs:
        raise FileNotFoundError(no_games_message(Path(root)))
    games = read_each(Path(root), dirs, lambda d: game_data(read_game(d)), skipped)
    dups = same_id(games)  # only games actually read: a skipped copy shares no id
    if warnings is not None:
        warnings.extend(dups)  # the caller shows them: logging them too printed each twice
    else:
        for msg in dups:
            log.warning(msg)
    games, branches = split_branches(games, include_branches)
    if left_out is not None:
        left_out.extend(branches)
    return games


def restrict(game: GameData, names: Iterable[str]) -> GameData:
    """A copy of ``game`` whose observers and voters are only ``names``.

    Probe answers of other players and their day votes are dropped, so every metric counts
    only these seats as observers (F1, F2), predictors (F3; a pair also needs the other
    player's assessment, so it counts only when both are in the group) and voters (F4).
    """
    keep = set(names)
    return dataclasses.replace(
        game,
        probes=[p for p in game.probes if p.player in keep],
        votes={k: v for k, v in game.votes.items() if k[1] in keep},
        failed_votes={k: v for k, v in game.failed_votes.items() if k[1] in keep},
    )
