"""Build the static viewer site from game logs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import re
import shutil
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mafialab import __version__
from mafialab._words import count, noun_for
from mafialab.analysis import (
    DEFAULT,
    METRIC_VERSION,
    NOT_APPLICABLE_MISSION,
    GameData,
    GameSummary,
    StepMetrics,
    SummaryCache,
    coverage,
    game_data,
    game_quality,
    logs_digest,
    quality_lines,
    step_metrics,
    transcript_predictions,
)
from mafialab.analysis import answer as analysis_answer
from mafialab.analysis import usable as usable_answer
from mafialab.config import validation_message
from mafialab.engine import Event, visible_events
from mafialab.models import EMBEDDED_NOTE, is_embedded_model
from mafialab.record import (
    BIFURCATION_FILE,
    GAME_FILE,
    PROBES_FILE,
    RETEST_FILE,
    GameLog,
    LogFormatError,
    ProbeRecord,
    RetestRecord,
    find_files,
    iter_game_dirs,
    iter_probe_records,
    no_games_message,
    none_readable_message,
    probe_sort_key,
    read_game,
    read_header,
    read_retests,
    write_atomic,
)
from mafialab.render import field_rules, lexicon_words, load_event_templates
from mafialab.rules import RuleSet
from mafialab.viewer._beliefs import (
    Belief,
    SeatNames,
    normalise_probe,
    role_vocabulary,
)
from mafialab.viewer._branches import batches as batches_of
from mafialab.viewer._branches import (
    bifurcation_payloads,
    branch_row_info,
    decision_seqs,
    dynamics_payload,
    parent_files,
)
from mafialab.viewer._corpus import CorpusFigures, corpus_metrics, game_summary
from mafialab.viewer._season import season_payloads

log = logging.getLogger(__name__)

STEP_KINDS = frozenset(
    {
        "phase_started",
        "speech",
        "mafia_chat",
        "night_action",
        "investigation_result",
        "kill_chosen",
        "night_result",
        "vote",
        "vote_tally",
        "elimination",
        "game_end",
        "imported",
        # mission games: the proposals, the team votes, the cards and the mission track
        "team_pick",
        "team_proposal",
        "team_vote",
        "team_vote_tally",
        "mission_card",
        "mission_result",
        "assassination",
    }
)
"""Event kinds that are timeline steps (every public message, every night step, every mission step)."""

STATIC_FILES = ("index.html", "app.js", "branches.js", "arena.js", "app.css")
MAX_JOBS = 4
"""Default cap on build worker processes."""

SITE_VERSION = 2
"""Version of the per-game data files' shape; raise it whenever what :func:`build_game` writes
changes, so an incremental build rewrites every game (mafialab's version counts too)."""

MANIFEST = "manifest.json"
"""``SITE/data/manifest.json``: what each game's data files were built from (:func:`build_site`)."""

PAGE_SIZE = 200
"""Dashboard rows per precomputed page (``SITE/data/pages/<n>.js``)."""

PAGES_DIR = "pages"


class ViewerError(ValueError):
    """The site cannot be built (no readable game under the directory, bad output path)."""


@dataclass
class SiteSummary:
    """What :func:`build_site` wrote.

    Attributes:
        out: Site directory (open ``out/index.html``).
        games: Game ids built, in dashboard order.
        skipped: ``(game directory, reason)`` for directories that could not be read.
        bytes_written: Total size of the site's data files (those of reused games too).
        warnings: Things the reader should know, e.g. one game id found in two
            directories (both are built, each under ``<id>@<directory>``).
        built: Game ids whose data files this build wrote (new or changed logs, or every game
            when nothing could be reused).
        reused: Games whose data files an earlier build wrote from the same logs (kept as they were).
        removed: Games of the earlier build no longer under the source (their files removed).
        pages: Precomputed dashboard pages (``page_size`` rows each, :data:`PAGE_SIZE` by default).
        pages_written: Page files this build wrote; the others already held the same rows
            (:func:`write_pages`).
    """

    out: Path
    games: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    bytes_written: int = 0
    built: list[str] = field(default_factory=list)
    reused: int = 0
    removed: int = 0
    pages: int = 0
    pages_written: int = 0


def file_id(game_id: str, where: str = "") -> str:
    """A file-name-safe id for a game: sanitised id plus 8 hex of sha1(where, game_id).

    ``where`` (the corpus) keeps two games with the same id in different corpora apart.
    """
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", game_id)[:48]
    return f"{safe}-{hashlib.sha1(f'{where}/{game_id}'.encode()).hexdigest()[:8]}"


def read_probes(
    game_dir: Path, problems: list[str], n_seats: int | None = None, *, game_id: str | None = None
) -> list[ProbeRecord]:
    """Probe records of a game (``probes.jsonl``; empty list if missing), in key order.

    Read with :func:`mafialab.record.iter_probe_records` (the one reader ``report`` uses too)
    and sorted by :func:`~mafialab.record.probe_sort_key` (the file is in the order answers
    arrived).

    Invalid lines are reported to ``problems`` as ``file:line: why`` and skipped, and so is a
    record for a seat outside ``0..n_seats-1`` when ``n_seats`` (the roster's size) is given,
    a repeated line, and a record of another game than ``game_id`` (``None``: the header's);
    records of an older log schema are migrated.

    Raises:
        mafialab.record.LogVersionError: The game was written at a newer schema version.
    """
    path = Path(game_dir) / PROBES_FILE
    out: list[ProbeRecord] = []
    for n, rec in iter_probe_records(Path(game_dir), game_id=game_id, problems=problems):
        try:
            probe = ProbeRecord.model_validate(rec)
        except ValidationError as err:
            msg = f"{path}:{n}: invalid probe record ({validation_message(err, limit=1)})"
            log.warning(msg)
            problems.append(msg)
            continue
        if n_seats is None or 0 <= probe.seat < n_seats:
            out.append(probe)
            continue
        why = f"seat {probe.seat} is out of range: the roster has seats 0-{n_seats - 1}"
        msg = f"{path}:{n}: invalid probe record ({why})"
        log.warning(msg)
        problems.append(msg)
    return sorted(out, key=probe_sort_key)


def _event_json(ev: Event) -> dict[str, Any]:
    return ev.model_dump(mode="json", exclude={"ts"})


def _roles_json(rules: RuleSet) -> list[dict[str, Any]]:
    return [{"name": r.name, "team": r.team, "count": r.count, "ability": r.ability} for r in rules.roles]


def _seating(events: Sequence[Event]) -> tuple[list[str], list[str | None]]:
    for ev in events:
        if ev.kind == "seating":
            return list(ev.names), list(ev.labels)
    return [], []


NOTE_WORDS = {
    "empty": "no steps",
    "unfinished": "unfinished",
    "no_probes": "no probes",
    "degraded": "degraded",
    "problems": "log problems",
}
"""A game note's code in the dashboard's notes column, in short words (the page shows the full text)."""


def note_words(code: str) -> str:
    """The dashboard's words for a note code (:data:`NOTE_WORDS`; another code with spaces for ``_``)."""
    return NOTE_WORDS.get(code, code.replace("_", " "))


def _notes(glog: GameLog, steps: int, n_probes: int) -> list[dict[str, str]]:
    notes = []
    if steps == 0:
        notes.append(
            {
                "level": "warn",
                "code": "empty",
                "text": "This game has no recorded steps: the log holds only its header and setup "
                "(it was stopped before anyone spoke). There is nothing to replay.",
            }
        )
    if glog.winner is None:
        last = glog.events[-1].round if glog.events else 0
        notes.append(
            {
                "level": "warn",
                "code": "unfinished",
                "text": f"Unfinished game: the log stops in round {last} without a game_end event "
                "(the run was interrupted or is still being written). Roles stay hidden from players.",
            }
        )
    if n_probes == 0:
        notes.append(
            {
                "level": "info",
                "code": "no_probes",
                "text": "No probe records (probes.jsonl is missing or empty): belief panels, "
                "ego panels and the metrics strip have nothing to show.",
            }
        )
    st = glog.status
    if st is not None and st.degraded:
        notes.append(
            {
                "level": "warn",
                "code": "degraded",
                "text": f"Degraded game: fallbacks settled {st.fallbacks} of {st.decisions} player decisions "
                f"(agents answered {st.answered_share:.0%}). It failed the integrity gate and is "
                "left out of corpus metrics and calibration.",
            }
        )
    if glog.problems:
        notes.append(
            {
                "level": "warn",
                "code": "problems",
                "text": f"{count(len(glog.problems), 'problem')} in the logs (lines skipped, missing or out of "
                "order): " + "; ".join(glog.problems[:5]),
            }
        )
    return notes


def vote_predictions(glog: GameLog, probes: Sequence[ProbeRecord]) -> list[dict[str, Any]]:
    """At each counted day vote: the vote, the probe's prediction and the transcript predictors'.

    Computed by :func:`mafialab.analysis.transcript_predictions` with the ``default`` method
    (``docs/metrics.md``, "F4 against the transcript"). Players are seat numbers; a
    predictor that makes no prediction is ``None``.

    Returns:
        One dict per F4 unit, in tally then voter order: ``round``, ``tally`` (tally ``seq``),
        ``vote`` (the vote event's ``seq``), ``voter``, ``target``, ``side``, ``probe`` (top-1
        of the voter's last usable suspicion ranking), ``committed`` (seats its last role
        assessment labels hidden team), ``mentioned``, ``accused``, ``previous``.
    """
    return _vote_predictions(glog, game_data(glog, [p.__dict__ for p in probes]))  # the records' fields, no copy


def _vote_predictions(glog: GameLog, gd: GameData) -> list[dict[str, Any]]:
    seat = {s.name: s.seat for s in glog.header.roster}
    if gd.skipped:
        return []

    def at(name: str | None) -> int | None:
        return None if name is None else seat.get(name)

    return [
        {
            "round": u.round,
            "tally": u.tally_seq,
            "vote": u.vote_seq,
            "voter": at(u.voter),
            "target": at(u.target),
            "side": u.side,
            "probe": at(u.top1),
            "committed": sorted(seat[n] for n in u.committed if n in seat) if u.committed else None,
            "mentioned": at(pred.most_mentioned),
            "accused": at(pred.most_accused),
            "previous": at(pred.previous_target),
        }
        for u, pred in transcript_predictions(gd, DEFAULT)
    ]


@dataclass
class _GameBuild:
    row: dict[str, Any]
    game: dict[str, Any]
    seats: list[dict[str, Any]]


def build_game(
    glog: GameLog,
    probes: Sequence[ProbeRecord],
    corpus: str,
    probe_problems: Sequence[str] = (),
    retests: Sequence[RetestRecord] = (),
) -> _GameBuild:
    """Everything the site needs for one game: dashboard row, god view, one file per seat.

    A branch's row carries a ``parent`` block (:func:`mafialab.viewer._branches.branch_row_info`);
    the god view carries ``decision_seq`` (decision id -> first event seq) and ``dynamics``
    (belief volatility and top-suspect flip rate per round, with the retest floor of
    ``retests`` when given).

    Per-seat payloads hold only what :func:`mafialab.engine.visible_events` lets that seat
    see, its own probe answers, and others' assessments of it reduced to an attitude
    (``trusts``/``neutral``/``suspects``) with confidence: no true roles, no reasons of others.
    """
    h = glog.header
    rules = h.rules
    vocab = role_vocabulary(rules)
    events = glog.events
    names, labels = _seating(events)
    if not names:
        names = [s.name for s in h.roster]
    seat_names = SeatNames(names)
    gd = game_data(glog, [p.__dict__ for p in probes])  # the records' fields, without a copy
    # the analysis layer's reading of each answer: its value and whether it is usable (one definition)
    readings: dict[int, tuple[Any, bool]] = {
        a.line - 1: (analysis_answer(a, DEFAULT), usable_answer(a, DEFAULT)) for a in gd.probes
    }
    beliefs: list[Belief] = [
        normalise_probe(p, seat_names, vocab, readings.get(i, (None, False))) for i, p in enumerate(probes)
    ]
    n_usable = sum(ok for _, ok in readings.values())
    n_seats = len(h.roster)
    steps = [ev.seq for ev in events if ev.kind in STEP_KINDS]
    if probe_problems:
        glog.problems.extend(probe_problems)
    notes = _notes(glog, len(steps), len(probes))
    quality = quality_lines(game_quality(gd, DEFAULT))  # the report's and play's signals (one definition)
    if quality:
        notes.append({"level": "warn", "code": "quality", "text": "Quality signals: " + "; ".join(quality) + "."})

    sm = step_metrics(gd, steps, DEFAULT)  # the analysis layer's F1/F3 at every step (one definition)
    metrics = _strip(sm, n_seats)
    step_index = {q: i for i, q in enumerate(steps)}
    ev_json = {ev.seq: _event_json(ev) for ev in events}
    by_seat: dict[int, list[dict[str, Any]]] = {s: [] for s in range(n_seats)}
    for b in sorted(beliefs, key=lambda b: (b.seat, b.order)):
        if b.seat in by_seat:
            by_seat[b.seat].append(b.to_json())
    degraded = bool(glog.status and glog.status.degraded)
    lex = rules.lexicon
    game = {
        "id": h.game_id,
        "corpus": corpus,
        "rules_id": h.rules_id,
        "game_name": lex.game,
        "teams": {"town": lex.town_team, "mafia": lex.mafia_team},
        "words": lexicon_words(lex),
        "roles": _roles_json(rules),
        "seed": h.seed,
        "source": h.source,
        "roster": [
            {"seat": s.seat, "name": s.name, "role": s.role, "team": s.team, "agent": s.agent} for s in h.roster
        ],
        "labels": labels,
        "events": list(ev_json.values()),
        "steps": steps,
        "probe_counts": {s: len(v) for s, v in by_seat.items()},
        "metrics": metrics,
        "vote_predictions": _vote_predictions(glog, gd),
        # why the vote panel is empty in a mission game (the report's wording, one definition)
        "vote_note": NOT_APPLICABLE_MISSION if gd.family == "mission" else None,
        "coverage": _coverage(gd),
        "decision_seq": decision_seqs(events),
        "dynamics": dynamics_payload(gd, [r for r in retests if r.game_id == h.game_id]),
        "parent": branch_row_info(glog),
        "winner": glog.winner,
        "status": glog.status.model_dump(mode="json", exclude={"ts"}) if glog.status else None,
        "notes": notes,
    }
    seats = []
    for s in range(n_seats):
        seats.append(_seat_payload(glog, s, names, labels, ev_json, step_index, sm, by_seat[s], notes))
    ends = [e for e in events if e.kind == "game_end"]
    row = {
        "id": h.game_id,
        "corpus": corpus,
        "rules": h.rules_id,
        "models": sorted({s.agent for s in h.roster}),
        "winner": glog.winner,
        "winner_name": lex.team_name(ends[-1].winner) if ends else None,
        "teams": {"town": lex.town_team, "mafia": lex.mafia_team},  # so a branch's winner is named as its rules do
        "rounds": ends[-1].rounds if ends else (events[-1].round if events else 0),
        "probes": len(probes),
        "probe_ids": dict(Counter(p.probe_id for p in probes)),
        # usable answers (mafialab.analysis usable: parsed and not empty), as the report counts them
        "usable": n_usable,
        "usable_rate": n_usable / len(probes) if probes else None,
        "degraded": degraded,
        "finished": glog.winner is not None,
        "steps": len(steps),
        "seats": n_seats,
        "source": h.source,
        "notes": [n["code"] for n in notes],
        "note_words": [note_words(n["code"]) for n in notes],  # the dashboard's notes column
        "parent": game["parent"],
    }
    return _GameBuild(row=row, game=game, seats=seats)


def dashboard_notes(rows: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Notes the dashboard shows once, above its table, about the games as a whole.

    ``embedded_model``: games with a seat played by an embedded model (the default of
    ``mafialab play``), with what that model is for (:data:`mafialab.models.EMBEDDED_NOTE`).
    ``no_probes``: games without probe records, once for all of them, with how to record
    beliefs (instead of only empty metric rows and a "Not computed" line per metric).

    Args:
        rows: The dashboard's rows (``models``: the seats' agents, ``probes``: probe records).

    Returns:
        ``[{"level": "info", "code": ..., "text": ...}]``, empty when neither applies.
    """
    notes: list[dict[str, str]] = []
    n = len(rows)
    embedded = sorted({m for r in rows for m in r.get("models", ()) if is_embedded_model(m)})
    if embedded:
        k = sum(1 for r in rows if any(is_embedded_model(m) for m in r.get("models", ())))
        who = ", ".join(embedded)
        which = (
            f"Every game here was played by {who}"
            if k == n and all(is_embedded_model(m) for r in rows for m in r.get("models", ()))
            else f"{count(k, 'game')} of {n} here {noun_for(k, 'has', 'have')} seats played by {who}"
        )
        notes.append({"level": "info", "code": "embedded_model", "text": f"{which}: {EMBEDDED_NOTE}."})
    bare = sum(1 for r in rows if not r.get("probes"))
    if bare:
        if bare < n:
            lead = f"{bare} of {n} games here {noun_for(bare, 'has', 'have')} no probe answers"  # 1 of 2 … has
        else:
            lead = "This game has no probe answers" if n == 1 else f"None of the {n} games here has probe answers"
        notes.append(
            {
                "level": "info",
                "code": "no_probes",
                "text": f"{lead}: belief panels stay empty and the belief metrics (F1–F4, calibration, "
                "dynamics) have nothing to read. Record beliefs with mafialab play --probes suspicion "
                "(or default, light, or a battery YAML; see docs/probes.md).",
            }
        )
    return notes


def _coverage(gd: GameData) -> dict[str, Any]:
    """What this game's probe answers support (:func:`mafialab.analysis.coverage`), for the page's notes."""
    cov = coverage([dataclasses.replace(gd, degraded=False)], DEFAULT)  # a degraded game's own answers count here
    return {
        "answers": cov["answers"],
        "battery": gd.battery,
        "missing": {k: v["why"] for k, v in cov["metrics"].items() if not v["computed"]},
    }


def _strip(sm: StepMetrics, n_seats: int) -> dict[str, Any]:
    """The metrics strip's series (``acc`` per seat, ``recall``, ``agree``) from :func:`mafialab.analysis.step_metrics`.

    ``acc[seat]``: F1 committed accuracy of the seat's latest usable assessment; ``recall``:
    F1 recall of the hidden team pooled over observers outside it; ``agree``: F3
    second-order agreement pooled over every seat; one value (0-1 or ``None``) per step.
    """
    return {
        "acc": {s: sm.accuracy(s) for s in range(n_seats)},
        "recall": sm.recall(),
        "agree": sm.agreement(),
    }


def _seat_payload(
    glog: GameLog,
    seat: int,
    names: list[str],
    labels: list[str | None],
    ev_json: dict[int, dict[str, Any]],
    step_index: dict[int, int],
    sm: StepMetrics,
    own: list[dict[str, Any]],
    notes: list[dict[str, str]],
) -> dict[str, Any]:
    vis = visible_events(glog.events, seat)
    role = team = None
    mates: list[int] = []
    for ev in vis:
        if ev.kind == "role_assigned" and ev.seat == seat:
            role, team = ev.role, ev.team
        elif ev.kind == "team_revealed":
            mates = [m for m in ev.members if m != seat]
    vis_steps = [ev.seq for ev in vis if ev.kind in STEP_KINDS]
    roster = glog.header.roster
    both_mafia = {o for o in range(len(roster)) if roster[o].team == "mafia" and roster[seat].team == "mafia"}
    # F3's actual side (mafialab.analysis.step_metrics): others' attitudes toward this seat
    actual = [{"s": x.after_seq, "b": x.observer, "a": x.attitude, "c": x.confidence} for x in sm.actual[seat]]
    agree = sm.agreement(seat)
    lex = glog.header.rules.lexicon
    seat_notes = list(notes)
    if not any(n["code"] == "no_probes" for n in notes) and not own:
        seat_notes.append({"level": "info", "code": "no_probes", "text": "This seat has no probe records."})
    return {
        "id": glog.header.game_id,
        "seat": seat,
        "name": names[seat] if seat < len(names) else f"seat {seat}",
        "role": role,
        "team": team,
        "teammates": mates,
        "names": names,
        "labels": labels,
        "game_name": lex.game,
        "teams": {"town": lex.town_team, "mafia": lex.mafia_team},
        "words": lexicon_words(lex),
        "roles": _roles_json(glog.header.rules),
        "events": [ev_json[ev.seq] for ev in vis],
        "steps": vis_steps,
        "probes": own,
        "actual": actual,
        "excluded": sorted(both_mafia - {seat}),
        "agree": [agree[step_index[q]] for q in vis_steps],
        "notes": seat_notes,
    }


def viewer_templates() -> dict[str, Any]:
    """What ``app.js`` renders events with (written to ``data/templates.js``).

    The ``viewer`` style of the built-in event templates and the renderer's field rules
    (:func:`mafialab.render.field_rules`), so the page renders as
    :class:`mafialab.render.EventRenderer` does.
    """
    return {
        "style": load_event_templates().viewer.model_dump(mode="json"),
        "fields": field_rules(),
    }


def _js_bytes(kind: str, key: str, payload: Any) -> bytes:
    text = (
        "MAFIALAB_DATA("
        + json.dumps(kind)
        + ","
        + json.dumps(key)
        + ","
        + json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        + ");\n"
    )
    return text.encode("utf-8")


def _write_js(path: Path, kind: str, key: str, payload: Any) -> int:
    data = _js_bytes(kind, key, payload)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data)


def _write_changed(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` unless the file already holds exactly these bytes; ``True``: written."""
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.write_bytes(data)
    return True


def _copy_static(out: Path) -> None:
    pkg = resources.files("mafialab.viewer") / "static"
    for name in STATIC_FILES:
        _write_changed(out / name, (pkg / name).read_bytes())


def _corpus_of(root: Path, game_dir: Path) -> str:
    try:
        rel = game_dir.parent.relative_to(root)
    except ValueError:
        rel = Path()
    return rel.as_posix() if rel.parts else root.resolve().name


@dataclass
class _DirResult:
    row: dict[str, Any]
    bytes_written: int


_Task = tuple[Path, str, Path, tuple[Path, ...], str | None]
"""A build task: game directory, corpus, site data directory, retest files, site key
(``None``: the game id)."""


def _header_id(game_dir: Path) -> str | None:
    """The ``game_id`` of a game's header (:func:`mafialab.record.read_header`), or ``None`` when unreadable.

    A game whose header cannot be read (none, an invalid one, a log schema this mafialab
    does not read) is skipped by the build, so it shares no id with another: the header is
    read by the same rules as :func:`mafialab.record.read_game` reads it.
    """
    try:
        return read_header(game_dir).game_id
    except LogFormatError:
        return None


def _site_keys(root: Path, dirs: Sequence[Path], warnings: list[str]) -> dict[Path, str]:
    """Site keys for game directories sharing a game id: ``<id>@<directory under root>``.

    A game id names one recorded game, but copies or older logs can share one; both are
    built (never one dropped), each under its own key, with a warning naming both paths
    appended to ``warnings`` (not logged).
    """
    by_id: dict[str, list[Path]] = {}
    for d in dirs:
        gid = _header_id(d)
        if gid is not None:
            by_id.setdefault(gid, []).append(d)
    keys: dict[Path, str] = {}
    for gid, same in by_id.items():
        if len(same) < 2:
            continue
        rels = []
        for d in same:
            try:
                rel = d.relative_to(root).as_posix()
            except ValueError:
                rel = d.as_posix()
            keys[d] = f"{gid}@{rel or d.name}"
            rels.append(str(d))
        msg = (
            f"game id {gid!r} is in {len(same)} directories ({', '.join(rels)}); "
            "all are shown, each as <id>@<directory>"
        )
        warnings.append(msg)  # shown by the caller (SiteSummary.warnings); logging it too printed it twice
    return keys


def _build_dir(task: _Task, glog: GameLog | None = None) -> _DirResult | str:
    """Read one game directory and write its data files; a string is the reason it was skipped.

    The task's last item is the site key when the game id is shared with another directory.
    ``glog``: the game's log, already read (:func:`mafialab.record.read_game`); it is changed
    (the probe problems are added to it).
    """
    d, corpus, data, retest_files, key = task
    if glog is None:
        try:
            glog = read_game(d)
        except LogFormatError as err:
            return str(err)
    problems: list[str] = []
    probes = read_probes(d, problems, len(glog.header.roster), game_id=glog.header.game_id)
    retests = read_retests(retest_files, problems) if retest_files else []
    gb = build_game(glog, probes, corpus, problems, retests)
    gid = glog.header.game_id
    if key is not None:  # shown under its own key beside the other copies of this id
        gid = key
        gb.row["id"] = gb.game["id"] = key
        gb.row["game_id"] = glog.header.game_id
        for sp in gb.seats:
            sp["id"] = key
    fid = file_id(gid, corpus)
    gb.row["file"] = fid
    n = _write_js(data / "g" / f"{fid}.js", "game", gid, gb.game)
    for sp in gb.seats:
        n += _write_js(data / "s" / fid / f"{sp['seat']}.js", "seat", f"{gid}/{sp['seat']}", sp)
    return _DirResult(row=gb.row, bytes_written=n)


def _workers(jobs: int | None, n_tasks: int) -> int:
    n = min(os.cpu_count() or 1, MAX_JOBS) if jobs is None else max(1, jobs)
    return min(n, n_tasks) if n_tasks >= 4 else 1


@dataclass
class _Job:
    """One game of a build: its task, the manifest entry of the earlier build, the summary cache."""

    task: _Task
    salt: str
    earlier: dict[str, Any] | None
    cache: SummaryCache | None
    summarise: bool = True
    """Summarise the game here (``False`` with ``--ray``: the cluster summarises it)."""


@dataclass
class _Done:
    """What a :class:`_Job` gave.

    The build's key, the result (a row when built, ``None`` when reused, a string: why it was
    skipped) and the game's summary (``None``: unreadable).
    """

    key: str
    result: _DirResult | str | None
    summary: GameSummary | None


def game_key(game_dir: Path, salt: str) -> str:
    """What a game's data files are built from: its logs' bytes, the site's and mafialab's versions, ``salt``.

    ``salt`` holds what else the files depend on (the corpus, the site key, the retest files).

    Returns:
        A SHA-256 hex digest (64 characters); equal keys mean the game's data files of an
        earlier build can be kept (the manifest's ``key``).

    Raises:
        OSError: A log file cannot be read.
    """
    h = hashlib.sha256(f"site v{SITE_VERSION}\0{__version__}\0metric v{METRIC_VERSION}\0{salt}\0".encode())
    h.update(logs_digest(Path(game_dir)).encode())
    return h.hexdigest()


def _reusable(entry: dict[str, Any] | None, key: str, data: Path) -> bool:
    if entry is None or entry.get("key") != key:
        return False
    fid = entry["row"]["file"]
    return (data / "g" / f"{fid}.js").is_file() and (data / "s" / fid).is_dir()


def _game_job(job: _Job) -> _Done:
    """Build one game's data files unless the earlier build's are from the same logs; summarise it."""
    d, _, data, *_ = job.task
    try:
        key = game_key(d, job.salt)
    except OSError as err:
        return _Done("", f"cannot read the logs: {err}", None)
    if _reusable(job.earlier, key, data):
        if not job.summarise:
            return _Done(key, None, None)
        try:
            return _Done(key, None, game_summary(d, job.cache))
        except LogFormatError as err:  # its logs changed since (a key of the same bytes says otherwise)
            return _Done(key, str(err), None)
    try:
        glog = read_game(d)
    except LogFormatError as err:
        return _Done(key, str(err), None)
    # the summary first (read once, for both): the build adds its probe problems to the log
    summary = game_summary(d, job.cache, game_log=glog) if job.summarise else None
    return _Done(key, _build_dir(job.task, glog), summary)


def _run(
    jobs: list[_Job],
    pool: ProcessPoolExecutor | None,
    on_game: Callable[[str], None] | None,
    ahead: int = 1,
) -> Iterator[tuple[_Job, _Done]]:
    """Results of :func:`_game_job` in job order, computed in ``pool`` (or here if ``None``).

    At most ``ahead`` jobs are in flight, so finished results do not pile up in memory.
    """
    pending: deque[tuple[_Job, Future[_Done]]] = deque()

    def first() -> tuple[_Job, _Done]:
        j, f = pending.popleft()
        res = f.result()
        if on_game:
            on_game(j.task[0].name)
        return j, res

    for j in jobs:
        if pool is None:
            res = _game_job(j)
            if on_game:
                on_game(j.task[0].name)
            yield j, res
            continue
        pending.append((j, pool.submit(_game_job, j)))
        if len(pending) > ahead:
            yield first()
    while pending:
        yield first()


_SITE_DATA_ENTRIES = frozenset({"index.js", "templates.js", "g", "s", "b", PAGES_DIR, MANIFEST})
"""What a viewer build writes under ``SITE/data`` (anything else there is not ours)."""


def _check_replaceable(data: Path, dirs: Sequence[Path]) -> None:
    """Refuse to replace ``data`` (and the page files beside it) unless they are an earlier viewer build.

    Raises:
        ViewerError: If a game directory lies under ``data``, ``data`` holds anything a
            build does not write, or a page file of the site (``index.html`` ...) exists
            beside it without an earlier build (so ``--out`` pointing at a log directory, ``/``
            or a home directory never deletes recorded data or a user's own page).
    """
    pages = [data.parent / f for f in STATIC_FILES if (data.parent / f).exists()]
    if pages and not (data / "index.js").is_file():
        raise ViewerError(
            f"--out: {pages[0]} exists and is not from an earlier viewer build; a build replaces it, "
            "so choose another output directory"
        )
    if not data.exists():
        return
    where = data.resolve()
    if any(where == d.resolve() or where in d.resolve().parents for d in dirs):
        raise ViewerError(
            f"--out: {data.parent} holds the game logs in {data}; a build replaces {data}, "
            "so choose another output directory"
        )
    foreign = (
        sorted(p.name for p in data.iterdir() if p.name not in _SITE_DATA_ENTRIES) if data.is_dir() else [data.name]
    )
    if foreign:
        raise ViewerError(
            f"--out: {data} exists and is not an earlier viewer build (it holds {', '.join(foreign[:3])}); "
            "a build replaces it, so choose another output directory"
        )


def write_branch_files(data: Path, rows: list[dict[str, Any]], bifs: Sequence[dict[str, Any]]) -> int:
    """Write ``data/b/<file>.js`` for every game with branches or bifurcation points; sets ``row["branches"]``.

    The file's payload is :func:`mafialab.viewer._branches.parent_files`'s entry of that
    game. Returns the bytes written.
    """
    files = parent_files(rows, bifs)
    n = 0
    for row in rows:
        entry = files.get(row["id"])
        row["branches"] = None
        if entry is None:
            continue
        row["branches"] = {
            "batches": len(entry["batches"]),
            "bifurcation_points": sum(len(b["points"]) for b in entry["bifurcations"]),
        }
        n += _write_js(data / "b" / f"{row['file']}.js", "branches", row["id"], entry)
    return n


def replace_notes(src: Path, out: Path) -> list[str]:
    """What a build of ``src`` into ``out`` will replace or write beside, said before it happens.

    An earlier build in ``out`` is updated (:func:`build_site` reuses the data files of games
    whose logs are unchanged and rewrites the rest); a folder that
    holds game logs gets the site's files beside the logs, which are never touched (a
    ``data/`` holding logs is refused by :func:`build_site`).

    Returns:
        One sentence per thing the user should know (empty when ``out`` is new or empty).
    """
    out = Path(out)
    notes = []
    if (out / "data" / "index.js").is_file():
        mtime = (out / "data" / "index.js").stat().st_mtime
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))
        notes.append(
            f"{out}/ holds an earlier viewer build ({when}); it is updated: games whose logs are unchanged "
            "keep their data files, the rest of data/ and the page files are rewritten"
        )
    logs = iter_game_dirs(out) if out.is_dir() else []
    if logs and (out / GAME_FILE).is_file() is False:
        inside = [d for d in logs if "data" not in d.relative_to(out).parts[:1]]
        if inside:
            notes.append(
                f"{out}/ holds {count(len(inside), 'game log')}; the site's index.html, app.js, app.css, "
                "branches.js, arena.js and "
                "data/ are written beside them and the logs are not touched"
            )
    return notes


def _id_order(row: dict[str, Any]) -> bytes:
    """A row's place in the dashboard's default order: its id in UTF-16 code units.

    That is how the page's script compares strings (``a < b``), so it finds a game's page
    by its id (:attr:`Pages.first`) in the order the pages were written.
    """
    return str(row["id"]).encode("utf-16-be", "surrogatepass")


@dataclass
class Pages:
    """The dashboard's precomputed pages as :func:`write_pages` left them.

    Attributes:
        count: Page files ``data/pages/1.js`` .. ``<count>.js`` (at least one).
        size: Rows per page (the last page may hold fewer).
        total: Rows on all pages together (every game of the site, branches too).
        first: The id of each page's first row, in page order (empty for the one empty page):
            the page's script finds a game's page by searching this list, without every row.
        nested: Branch rows drawn under their parent (the parent is in the site too).
        written: Page files this call wrote; a page whose bytes were already on disk is left
            as it was (an incremental build rewrites only the pages that changed).
        bytes: Total size of the page files (written or not).
    """

    count: int
    size: int
    total: int
    first: list[str]
    nested: int = 0
    written: int = 0
    bytes: int = 0

    def index_block(self) -> dict[str, Any]:
        """The ``pages`` block of ``data/index.js``: everything but the rows."""
        return {
            "count": self.count,
            "size": self.size,
            "order": "id",
            "total": self.total,
            "first": self.first,
            "nested": self.nested,
        }


def write_pages(data: Path, rows: Sequence[dict[str, Any]], size: int = PAGE_SIZE) -> Pages:
    """Write the dashboard's precomputed pages ``data/pages/<n>.js`` (``n`` from 1); remove older extra pages.

    Each page holds ``size`` rows in the dashboard's default order (by game id, compared as
    the page's script compares strings: :func:`_id_order`), so the page renders one page of
    rows, never the whole corpus, and ``data/index.js`` holds no rows at all (only
    :meth:`Pages.index_block`). A page file is a script calling
    ``MAFIALAB_DATA("page", "<n>", {"page", "size", "rows"})``. Each row is the game's
    dashboard row with ``under_parent`` added: ``True`` for a branch whose parent is in
    ``rows`` too (the dashboard draws it in its parent's branch tree).

    A page whose file already holds the same bytes is not written again, so adding games
    rewrites the pages from the first new game's place on and leaves those before it.

    Args:
        data: The site's ``data`` folder.
        rows: Every dashboard row of the site (any order; not changed).
        size: Rows per page (at least 1).

    Returns:
        The pages (at least one: an empty one without rows).

    Raises:
        ValueError: ``size`` below 1.
    """
    if size < 1:
        raise ValueError(f"page size must be at least 1, got {size}")
    ordered = sorted(rows, key=_id_order)
    present = {r["id"] for r in ordered}
    n_pages = max(1, -(-len(ordered) // size))
    folder = data / PAGES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    pages = Pages(count=n_pages, size=size, total=len(ordered), first=[])
    for n in range(1, n_pages + 1):
        part = []
        for r in ordered[(n - 1) * size : n * size]:
            parent = r.get("parent")
            nested = isinstance(parent, dict) and parent.get("game_id") in present
            pages.nested += nested
            part.append({**r, "under_parent": nested})
        if part:
            pages.first.append(part[0]["id"])
        text = _js_bytes("page", str(n), {"page": n, "size": size, "rows": part})
        pages.bytes += len(text)
        pages.written += _write_changed(folder / f"{n}.js", text)
    keep = {f"{n}.js" for n in range(1, n_pages + 1)}
    for old in folder.iterdir():
        if old.name not in keep:
            old.unlink()
    return pages


def site_rows(site: Path) -> list[dict[str, Any]]:
    """Every dashboard row of a built site, read from its pages (``SITE/data/pages``), in page order.

    Args:
        site: The site folder (holding ``data/``) or its ``data`` folder.

    Returns:
        The rows as :func:`write_pages` wrote them (``under_parent`` included).

    Raises:
        ValueError: The site has no page index or a page file is not one the build writes.
        OSError: A page file cannot be read.
    """
    data = Path(site) if (Path(site) / "index.js").is_file() else Path(site) / "data"
    index = read_data_file(data / "index.js")
    info = index.get("pages") if isinstance(index, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("count"), int):
        raise ValueError(f"{data / 'index.js'}: no page index (build the site again with this mafialab)")
    rows: list[dict[str, Any]] = []
    for n in range(1, info["count"] + 1):
        page = read_data_file(data / PAGES_DIR / f"{n}.js")
        rows.extend(page["rows"])
    return rows


def read_data_file(path: Path) -> Any:
    """The payload of one of the site's data files (``MAFIALAB_DATA(kind, key, payload);``).

    Raises:
        ValueError: The file is not a data file the build writes.
        OSError: It cannot be read.
    """
    text = Path(path).read_text(encoding="utf-8")
    prefix = "MAFIALAB_DATA("
    if not text.startswith(prefix) or not text.endswith(");\n"):
        raise ValueError(f"{path}: not a viewer data file")
    dec = json.JSONDecoder()
    i = len(prefix)
    for _ in range(2):  # kind, key
        _, i = dec.raw_decode(text, i)
        if text[i] != ",":
            raise ValueError(f"{path}: not a viewer data file")
        i += 1
    payload, _ = dec.raw_decode(text, i)
    return payload


def _read_manifest(data: Path) -> dict[str, dict[str, Any]]:
    """The earlier build's games (game folder -> ``{"key", "row", "bytes"}``), or ``{}`` when none can be used.

    A manifest that is missing, unreadable or of another :data:`SITE_VERSION` or mafialab
    version gives ``{}`` (every game is built again; a broken one is logged).
    """
    path = data / MANIFEST
    if not path.is_file():
        return {}
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        log.warning("%s: unreadable (%s); building every game again", path, err)
        return {}
    if not isinstance(m, dict) or m.get("site_version") != SITE_VERSION or m.get("software") != __version__:
        return {}
    games = m.get("games")
    return games if isinstance(games, dict) else {}


def _remove_game_files(data: Path, fid: str) -> None:
    (data / "g" / f"{fid}.js").unlink(missing_ok=True)
    shutil.rmtree(data / "s" / fid, ignore_errors=True)


def _retest_salt(files: Sequence[Path]) -> str:
    """What the retest files under the source add to every game's build key: their records.

    Read with :func:`mafialab.record.read_retests` (what the build reads of them); damaged
    lines are left out here as there, and reported by the build.
    """
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f}\0".encode())
    for r in read_retests(files, []):
        h.update(r.model_dump_json().encode())
    return h.hexdigest()


def _site_sources(src: Path | Iterable[Path]) -> tuple[Path, list[Path]]:
    """The root folder and the game directories of :func:`build_site`'s ``src``.

    Raises:
        ViewerError: ``src`` is a folder that does not exist.
    """
    if isinstance(src, Path | str):
        root = Path(src)
        if not root.exists():
            raise ViewerError(f"DIR: {root} does not exist")
        return root, iter_game_dirs(root)
    dirs = [Path(d) for d in src]
    return (Path(dirs[0]).parent if dirs else Path()), dirs


def _check_out(out: Path, dirs: list[Path], page_size: int) -> None:
    """Refuse a ``page_size`` below 1, and an ``out`` that is a file or one of the game directories."""
    if page_size < 1:
        raise ValueError(f"page_size must be at least 1, got {page_size}")
    if out.exists() and not out.is_dir():
        raise ViewerError(f"--out: {out} is a file, not a directory")
    if dirs and any(out.resolve() == d.resolve() for d in dirs):
        raise ViewerError(f"--out: {out} is a game directory; choose another output directory")


def _build_games(
    jobs: list[_Job], figures: CorpusFigures, summary: SiteSummary, *, on_game: Callable[[str], None] | None,
    workers: int,
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """Build (or reuse) every game's files with ``workers`` processes, adding each summary to ``figures``.

    Returns:
        The new manifest's games (by resolved directory) and the dashboard rows, in job order;
        ``summary`` gets the games built, reused and skipped, and the bytes written.
    """
    manifest: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    with ExitStack() as stack:
        pool = stack.enter_context(ProcessPoolExecutor(max_workers=workers)) if workers > 1 else None
        for job, done in _run(jobs, pool, on_game, ahead=4 * workers):
            d, corpus = job.task[0], job.task[1]
            if done.summary is not None:
                figures.add(corpus, done.summary)
            res = done.result
            if isinstance(res, str):
                summary.skipped.append((str(d), res))
                continue
            if res is None:  # reused: the earlier build's files, from the same logs
                assert job.earlier is not None
                row, size = job.earlier["row"], int(job.earlier.get("bytes", 0))
                summary.reused += 1
            else:
                row, size = res.row, res.bytes_written
                summary.built.append(row["id"])
            manifest[str(d.resolve())] = {"key": done.key, "row": row, "bytes": size}
            summary.bytes_written += size
            rows.append(row)
            summary.games.append(row["id"])
    return manifest, rows


def _drop_old_games(data: Path, earlier: dict[str, dict[str, Any]], manifest: dict[str, dict[str, Any]],
                    rows: list[dict[str, Any]], summary: SiteSummary) -> None:  # fmt: skip
    """Remove the data files of the earlier build's games that no row uses now; count the games gone."""
    in_use = {r["file"] for r in rows}
    for path, entry in earlier.items():
        fid = entry.get("row", {}).get("file")
        if path not in manifest and isinstance(fid, str):
            summary.removed += 1
        if isinstance(fid, str) and fid not in in_use:
            _remove_game_files(data, fid)


def build_site(
    src: Path | Iterable[Path],
    out: Path,
    *,
    on_game: Callable[[str], None] | None = None,
    jobs: int | None = None,
    include_branches: bool = False,
    cache: Path | SummaryCache | None = None,
    ray: str | None = None,
    page_size: int = PAGE_SIZE,
) -> SiteSummary:
    """Build the static viewer site for every game under ``src`` into ``out``, incrementally.

    Reads each game directory with :func:`mafialab.record.read_game` and its
    ``probes.jsonl`` (optional). Writes ``out/index.html`` (+ ``app.js``, ``app.css``),
    ``out/data/index.js`` (the page index, corpus metrics, calibration bins; no game rows),
    ``out/data/pages/<n>.js`` (the dashboard's precomputed pages of ``page_size`` rows:
    :func:`write_pages`; the only files that hold the dashboard rows), ``out/data/templates.js``
    (the event templates the page renders events with, :func:`viewer_templates`),
    ``out/data/g/<file_id>.js`` (the full game without probe answers, for the moderator's
    view) and ``out/data/s/<file_id>/<seat>.js`` (what one seat saw and its own probe
    answers; impersonation loads only this file, the moderator's view loads all). Each data
    file is a script calling ``MAFIALAB_DATA(kind, key, payload)`` so the site works from
    ``file://``.

    Incremental: ``out/data/manifest.json`` (written atomically, last) records, per game
    folder, a key of its logs' bytes, the site's and mafialab's versions (:func:`game_key`)
    and its dashboard row. A game whose key is unchanged keeps its data files; a new or
    changed game's files are written; a game no longer under ``src`` loses its files; the
    index and the branch files are always rewritten, a page only when its rows changed. The result is the same as a
    build into an empty ``out``. Without a usable manifest the earlier ``out/data`` is replaced.

    Memory: games are built one at a time (a few in flight per worker); what is kept per game
    is its dashboard row and its summary's few hundred numbers for the corpus figures, which
    come from per-game summaries (:func:`mafialab.viewer._corpus.game_summary`) as ``mafialab
    report``'s do.

    Args:
        src: A log directory (searched recursively for ``game.jsonl``) or a list of game
            directories.
        out: Site directory (created).
        on_game: Called with each game directory's name after it is processed (progress).
        jobs: Worker processes building games in parallel; ``None`` uses one per CPU (at
            most :data:`MAX_JOBS`), ``1`` builds in this process. The output does not depend on it.
        include_branches: Count fork branches in the corpus figures and calibration
            (``mafialab view --include-branches``); by default they are left out, as
            ``mafialab report`` leaves them out (:class:`mafialab.viewer._corpus.CorpusFigures`).
            Every game, branches too, still gets its own page with its own figures.
        cache: Folder of cached game summaries (``mafialab report``'s ``--cache``), or a
            :class:`mafialab.analysis.SummaryCache`; ``None``: every summary is computed and
            nothing is stored.
        ray: A Ray cluster's address (``mafialab view --ray``): the per-game summaries behind
            the corpus figures are Ray tasks (:func:`mafialab.viewer._corpus.corpus_metrics`);
            the games' pages are still built here.
        page_size: Dashboard rows per precomputed page (at least 1).

    Returns:
        What was written.

    Raises:
        ViewerError: If no game could be read, or ``out`` is a file or the source itself.
        ValueError: ``page_size`` below 1.
        ImportError, mafialab.harness.RayConnectError: ``ray`` given and Ray is missing or
            unreachable.
    """
    root, dirs = _site_sources(src)
    out = Path(out)
    _check_out(out, dirs, page_size)
    summary = SiteSummary(out=out)
    if not dirs:
        raise ViewerError(f"DIR: {no_games_message(root)}")
    if ray is not None:
        from mafialab.harness import connect_ray

        connect_ray(ray)  # before anything is written
    data = out / "data"
    _check_replaceable(data, dirs)
    earlier = _read_manifest(data)
    if not earlier and data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True, exist_ok=True)
    store = SummaryCache(Path(cache)) if isinstance(cache, Path | str) else cache
    keys = _site_keys(root, dirs, summary.warnings)
    searched = root.is_dir() and isinstance(src, Path | str)
    retest_files = tuple(find_files(root, RETEST_FILE)) if searched else ()
    retest_salt = _retest_salt(retest_files)
    tasks: list[_Task] = [(d, _corpus_of(root, d), data, retest_files, keys.get(d)) for d in dirs]
    jobs_: list[_Job] = [
        _Job(t, f"{t[1]}\0{t[4] or ''}\0{retest_salt}", earlier.get(str(t[0].resolve())), store, ray is None)
        for t in tasks
    ]
    figures = CorpusFigures(list(dict.fromkeys(t[1] for t in tasks)), include_branches)
    manifest, rows = _build_games(jobs_, figures, summary, on_game=on_game, workers=_workers(jobs, len(tasks)))
    if not rows:
        raise ViewerError(f"DIR: {none_readable_message(root, dirs, [r for _, r in summary.skipped])}")
    _drop_old_games(data, earlier, manifest, rows, summary)
    if ray is None:
        metrics = figures.result()
    else:  # the summaries on the cluster, pooled here the same way
        corpora: dict[str, list[Path]] = {}
        for d, corpus, *_ in tasks:
            corpora.setdefault(corpus, []).append(d)
        metrics = corpus_metrics(corpora, include_branches, store, ray=ray)
    bif_dirs = [p.parent for p in find_files(root, BIFURCATION_FILE)] if searched else []
    rows = [dict(r) for r in rows]  # write_branch_files sets "branches": the manifest keeps the rows without it
    if (data / "b").is_dir():
        shutil.rmtree(data / "b")  # rewritten from every game's branches below
    summary.bytes_written += write_branch_files(data, rows, bifurcation_payloads(bif_dirs, root))
    pages = write_pages(data, rows, page_size)
    summary.pages, summary.pages_written = pages.count, pages.written
    summary.bytes_written += pages.bytes
    index = {
        "software": f"mafialab {__version__}",
        "source": root.resolve().name,
        "pages": pages.index_block(),  # the rows are in the pages only
        "skipped": [{"path": p, "reason": r} for p, r in summary.skipped],
        "warnings": summary.warnings,
        "notices": dashboard_notes(rows),
        "seasons": season_payloads(root, rows, summary.warnings) if searched else [],
        "corpus_metrics": metrics,
        # one definition (mafialab.analysis.calibration): the same numbers as `mafialab report`
        "calibration": metrics.get("calibration_groups", []),
        "batches": batches_of(rows),
    }
    summary.bytes_written += _write_js(data / "index.js", "index", "index", index)
    templates = _js_bytes("templates", "events", viewer_templates())
    _write_changed(data / "templates.js", templates)
    summary.bytes_written += len(templates)
    _copy_static(out)
    write_atomic(
        data / MANIFEST,
        json.dumps({"site_version": SITE_VERSION, "software": __version__, "games": manifest}, ensure_ascii=False),
    )
    return summary
