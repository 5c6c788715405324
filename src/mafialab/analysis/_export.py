"""Exports of game logs as tables: Parquet (events, probes, calls) and temporal belief edges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mafialab.analysis._data import load_games, read_each
from mafialab.analysis._metrics import DEFAULT, Method, answer, vocabulary
from mafialab.analysis._parse import to_float
from mafialab.models import CallRecord
from mafialab.record import (
    CALLS_FILE,
    PROBES_FILE,
    ProbeRecord,
    iter_call_records,
    iter_game_dirs,
    iter_probe_records,
    no_games_message,
    read_game,
)
from mafialab.rules import winner_name

if TYPE_CHECKING:
    import pandas as pd

EVENT_COLUMNS = ("game_id", "seq", "round", "phase", "kind", "ts", "public", "teams", "seats", "seat", "target",
                 "text", "data")  # fmt: skip
"""Columns of the events table; ``data`` holds the event's other fields as JSON."""

GAME_COLUMNS = ("game_id", "path", "rules_id", "seed", "winner", "winner_name", "rounds", "reason", "source", "parent",
                "degraded", "probes", "n_seats")  # fmt: skip
"""Columns of the games table: one row per game (``winner``: the team id, ``winner_name``: as the rule set
names it; ``reason``: how it ended; ``probes``: the battery)."""

SEAT_COLUMNS = ("game_id", "seat", "name", "role", "team", "agent", "model", "survived")
"""Columns of the seats table: one row per seat of each game (``survived``: alive at the end)."""

TABLES = ("games", "seats", "events", "probes", "calls")
"""The tables of :func:`log_tables`, in order."""

TGN_COLUMNS = ("source", "target", "time", "weight", "label", "game_id", "round", "msg_index", "probe_id", "after_seq")
"""Columns of the belief-edge list (the first five are the temporal-graph edge list)."""


def _json(x: Any) -> str | None:
    return None if x is None else json.dumps(x, ensure_ascii=False, sort_keys=True)


def _flat(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: (_json(v) if isinstance(v, (dict, list)) else v) for k, v in rec.items()}


def log_tables(root: Path, skipped: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Every game under ``root`` as five tables: ``games``, ``seats``, ``events``, ``probes``, ``calls``.

    ``games`` has the columns :data:`GAME_COLUMNS` (one row per game: rules, seed, winner,
    rounds, how it ended, source, parent of a branch, degraded flag, probe battery);
    ``seats`` has :data:`SEAT_COLUMNS` (seat, name, role, team, agent, model, survived).

    ``events`` has the columns :data:`EVENT_COLUMNS` (one row per engine event, the game
    header excluded; ``text`` is a speech/chat text or a vote statement); ``probes`` has one
    row per ``probes.jsonl`` line with the record's fields (nested values such as
    ``answer_parsed`` as JSON strings); ``calls`` has one row per ``calls.jsonl`` line, flattened
    the same way (no row when no game has model calls, e.g. imported games; the columns are
    the record's fields either way, so code reading them never breaks on an empty table).

    Args:
        root: Directory searched recursively for ``game.jsonl``.
        skipped: When given, a game that cannot be read (no valid header, a newer log
            schema) is left out and its reason (naming the file) appended, as ``report`` and
            ``view`` skip it; without it the first such game raises.

    Raises:
        FileNotFoundError: If ``root`` holds no game.
        mafialab.record.LogFormatError: A game cannot be read (without ``skipped``), or none
            can (with it).
    """
    import pandas as pd

    dirs = iter_game_dirs(Path(root))
    if not dirs:
        raise FileNotFoundError(no_games_message(Path(root)))
    events: list[dict[str, Any]] = []
    probes: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    games: list[dict[str, Any]] = []
    seats: list[dict[str, Any]] = []
    for log in read_each(Path(root), dirs, read_game, skipped):
        d = log.path
        gid = log.game_id
        h = log.header
        end = next((e for e in reversed(log.events) if e.kind == "game_end"), None)
        dead = {e.seat for e in log.events if e.kind == "elimination"}
        try:
            where = d.relative_to(Path(root)).as_posix()
        except ValueError:
            where = d.as_posix()
        won = end.winner if end is not None else None
        games.append(
            {"game_id": gid, "path": where, "rules_id": h.rules_id, "seed": h.seed, "winner": won,
             "winner_name": winner_name(won, h.rules) if won is not None else None,
             "rounds": end.rounds if end is not None else None,
             "reason": end.reason if end is not None else None, "source": h.source,
             "parent": h.parent.game_id if h.parent is not None else None,
             "degraded": bool(log.status is not None and log.status.degraded),
             "probes": h.meta.get("probes") if isinstance(h.meta.get("probes"), str) else None,
             "n_seats": len(h.roster)}
        )  # fmt: skip
        described = h.meta.get("agents") if isinstance(h.meta.get("agents"), dict) else {}
        for st in sorted(h.roster, key=lambda x: x.seat):
            desc = described.get(str(st.seat)) if isinstance(described, dict) else None
            model = desc.get("model") if isinstance(desc, dict) else None
            seats.append(
                {"game_id": gid, "seat": st.seat, "name": st.name, "role": st.role, "team": st.team,
                 "agent": st.agent, "model": model if isinstance(model, str) else st.agent,
                 "survived": st.seat not in dead if end is not None else None}
            )  # fmt: skip
        for ev in log.events:
            data = ev.model_dump(mode="json")
            vis = data.pop("visibility")
            row = {k: data.pop(k, None) for k in ("seq", "round", "phase", "kind", "ts", "seat", "target")}
            text = data.pop("text", None)
            if text is None:
                text = data.pop("statement", None)
            events.append(
                {
                    "game_id": gid,
                    **row,
                    "public": vis["public"],
                    "teams": ",".join(vis["teams"]),
                    "seats": ",".join(str(s) for s in vis["seats"]),
                    "text": text,
                    "data": _json(data),
                }
            )
        for name, bucket in ((PROBES_FILE, probes), (CALLS_FILE, calls)):
            # the one reader per file kind: another game's records are skipped and named
            reader = iter_probe_records if name == PROBES_FILE else iter_call_records
            for _, rec in reader(d, game_id=gid):
                if name == CALLS_FILE and rec.get("kind", "call") != "call":
                    continue  # the closing call_summary record (prefix reuse) is not a call
                bucket.append({"game_id": gid, **_flat(rec)})
    return {
        "games": pd.DataFrame(games, columns=list(GAME_COLUMNS)),
        "seats": pd.DataFrame(seats, columns=list(SEAT_COLUMNS)),
        "events": pd.DataFrame(events, columns=list(EVENT_COLUMNS)),
        "probes": _frame(probes, ["game_id", *ProbeRecord.model_fields]),
        "calls": _frame(calls, ["game_id", *CallRecord.model_fields]),
    }


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    """Rows as a DataFrame whose columns are the record's fields (kept when there is no row)."""
    import pandas as pd

    extra = [k for r in rows for k in r if k not in columns]
    return pd.DataFrame(rows, columns=list(dict.fromkeys([*columns, *extra])))


class OutputExistsError(FileExistsError):
    """A file :func:`export_parquet` would write exists and ``overwrite`` is false.

    Attributes:
        path: The first such file.
    """

    def __init__(self, path: Path):
        super().__init__(f"{path} exists (overwrite=True replaces it)")
        self.path = path


def export_parquet(root: Path, out: Path, *, overwrite: bool = False, skipped: list[str] | None = None) -> list[Path]:
    """Write :func:`log_tables` as Parquet.

    Args:
        root: Directory of game logs.
        out: A directory (created; gets ``games.parquet``, ``seats.parquet``,
            ``events.parquet``, ``probes.parquet``, ``calls.parquet``) or a file ending in
            ``.parquet`` (one table, the five stacked with a ``table`` column naming the
            source table).
        overwrite: Replace files that already exist (otherwise nothing is written).
        skipped: Receives the reason for each game that cannot be read, which is left out
            (:func:`log_tables`); without it such a game raises.

    Returns:
        The files written.

    Raises:
        OutputExistsError: A file to be written exists and ``overwrite`` is false (checked
            before anything is written).
        FileExistsError: ``out`` without the ``.parquet`` suffix is a file.
        FileNotFoundError, LogFormatError: From :func:`log_tables`.
    """
    import pandas as pd

    out = Path(out)
    stacked_file = out.suffix == ".parquet"
    if not stacked_file and out.is_file():
        raise FileExistsError(f"{out} is a file; give a directory or a FILE.parquet")
    targets = [out] if stacked_file else [out / f"{name}.parquet" for name in TABLES]
    taken = [t for t in targets if t.exists()]
    if taken and not overwrite:
        raise OutputExistsError(taken[0])
    tables = log_tables(root, skipped)
    if stacked_file:
        out.parent.mkdir(parents=True, exist_ok=True)
        frames = [df.assign(table=name) for name, df in tables.items() if len(df)]
        stacked = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"table": []})
        stacked = stacked.astype({c: "string" for c in stacked.columns if stacked[c].dtype == object})
        stacked.to_parquet(out, index=False)
        return [out]
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in tables.items():
        p = out / f"{name}.parquet"
        df = df.astype({c: "string" for c in df.columns if df[c].dtype == object})
        df.to_parquet(p, index=False)
        written.append(p)
    return written


def belief_edges(root: Path, method: Method = DEFAULT) -> pd.DataFrame:
    """Timestamped, confidence-weighted belief edges of every probed game under ``root``.

    One edge per item of a usable probe answer (answers re-parsed as the metrics do):

    * ``role_assessment``: source = probed player, target = the player assessed, label =
      ``role:<normalised role>`` (``role:Unknown``), weight = confidence / 100;
    * ``suspicion_ranking``: label ``suspicion:<rank>`` (1 = most suspected, in stored order),
      weight = the stated score (``NaN`` if none);
    * ``social_map``: source = probed player, target = the player whose attitude it predicts,
      label ``attitude:<trusts|neutral|suspects>``, weight = confidence / 100.

    ``time`` is the probe's Unix timestamp (``after_seq``, the event order, when missing).

    Returns:
        A DataFrame with columns :data:`TGN_COLUMNS`, sorted by game and time.
    """
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for g in load_games(root):
        vocab = vocabulary(g, method)
        for p in g.probes:
            ans = answer(p, method, g.names)
            base = {
                "source": p.player,
                "time": p.ts if p.ts is not None else float(p.after_seq),
                "game_id": g.game_id,
                "round": p.round,
                "msg_index": p.msg,
                "probe_id": p.probe_id,
                "after_seq": p.after_seq,
            }
            items: list[Any] = []
            if p.probe_id in ("role_assessment", "suspicion_ranking") and isinstance(ans, list):
                items = ans
            elif p.probe_id == "social_map" and isinstance(ans, dict) and isinstance(ans.get("toward_me"), list):
                items = ans["toward_me"]
            rank = 0
            for item in items:
                if not isinstance(item, dict) or not isinstance(item.get("player"), str):
                    continue
                tgt = item["player"]
                if tgt == p.player or tgt not in g.role:
                    continue
                if p.probe_id == "role_assessment":
                    role = vocab.normalise(item.get("guessed_role"))
                    if role is None:
                        continue
                    c = to_float(item.get("confidence"))
                    rows.append({**base, "target": tgt, "label": f"role:{role}",
                                 "weight": c / 100 if c is not None else float("nan")})  # fmt: skip
                elif p.probe_id == "suspicion_ranking":
                    rank += 1
                    s = to_float(item.get("score"))
                    rows.append({**base, "target": tgt, "label": f"suspicion:{rank}",
                                 "weight": s if s is not None else float("nan")})  # fmt: skip
                else:
                    att = item.get("attitude")
                    if att not in ("trusts", "neutral", "suspects"):
                        continue
                    c = to_float(item.get("confidence"))
                    rows.append({**base, "target": tgt, "label": f"attitude:{att}",
                                 "weight": c / 100 if c is not None else float("nan")})  # fmt: skip
    df = pd.DataFrame(rows, columns=list(TGN_COLUMNS))
    return df.sort_values(["game_id", "time"], kind="stable").reset_index(drop=True)
