"""Probe answers normalised for display.

The viewer shows each probe answer item by item (:func:`normalise_probe`). It computes no
metric: the per-step series of its metrics strip and ego panels (F1 committed accuracy,
recall of the hidden team, F3 second-order agreement and the attitudes behind it) come from
:func:`mafialab.analysis.step_metrics`, and the corpus figures from
:mod:`mafialab.analysis` (see :mod:`mafialab.viewer._corpus`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mafialab.analysis import ATTITUDES, RoleVocabulary
from mafialab.record import ProbeRecord
from mafialab.rules import RuleSet

STRUCTURED_PROBES = ("role_assessment", "suspicion_ranking", "social_map")
"""Probe ids whose answers the viewer reads item by item (MafiaScope shapes); others are shown verbatim."""
SMALL_BIN = 20
"""Bins with fewer observations than this are drawn dimmed."""
_GENERIC_TOWN = ("villager", "doctor", "sheriff", "seer", "detective", "angel")


def role_vocabulary(rules: RuleSet) -> RoleVocabulary:
    """The viewer's role vocabulary: the rule set's roles, then MafiaScope's generic town words.

    :meth:`mafialab.analysis.RoleVocabulary.from_rules` with the generic words (villager,
    doctor, sheriff, seer, detective, angel) kept as themselves after the game's own roles,
    so an imported MafiaScope guess such as "Sheriff" is read even in a Werewolf game.
    """
    return RoleVocabulary.from_rules(rules, extra=[w.capitalize() for w in _GENERIC_TOWN])


def _num(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int | float) and math.isfinite(x):
        return float(x)
    if isinstance(x, str):
        try:
            v = float(x.strip().rstrip("%"))
        except ValueError:
            return None
        return v if math.isfinite(v) else None
    return None


def _text(x: Any) -> str:
    if x is None:
        return ""
    return x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)


def _items(parsed: Any, key: str | None = None) -> list[dict[str, Any]] | None:
    if key is not None:
        parsed = parsed.get(key) if isinstance(parsed, dict) else None
    if not isinstance(parsed, list):
        return None
    return [x for x in parsed if isinstance(x, dict)]


@dataclass
class Belief:
    """One probe answer, normalised for the viewer.

    Attributes:
        seat: Probed seat.
        probe_id: Probe id.
        after_seq: Last game event the agent could have seen.
        order: ``(after_seq, round, msg_index, position)``: sort key within the seat.
        ok: Whether the answer had the expected shape (free-form probes: whether it parsed).
        items: For ``role_assessment``: ``{t, name, g, r, c, why}`` (target seat or None, name
            as written, guess as written, normalised role, confidence 0-100 or None, reason);
            for ``suspicion_ranking``: ``{t, name, score, why}``; for ``social_map``:
            ``{t, name, a, c, why}`` (attitude trusts/neutral/suspects).
        raw: The verbatim answer when it is not one of the shapes above.
        free: Whether the probe is not one of :data:`STRUCTURED_PROBES` (shown verbatim).
        logprob: Whether the answer is a ``logprob`` probe's distribution; ``items`` are then
            ``{t, name, p}`` (candidate's seat or None, candidate, probability), most probable first.
    """

    seat: int
    probe_id: str
    after_seq: int
    order: tuple[int, int, int, int]
    ok: bool
    items: list[dict[str, Any]] = field(default_factory=list)
    raw: str | None = None
    free: bool = False
    logprob: bool = False

    def to_json(self) -> dict[str, Any]:
        """Compact JSON form shipped to the browser (no true roles, no question text)."""
        out: dict[str, Any] = {"s": self.after_seq, "p": self.probe_id, "ok": self.ok}
        if self.items:
            out["items"] = self.items
        if self.raw is not None:
            out["raw"] = self.raw
        if self.free:
            out["free"] = True
        if self.logprob:
            out["lp"] = True
        return out


class SeatNames:
    """Matches player names written by a model to seats: exactly, then case-insensitively.

    Args:
        names: Seat names in seat order.
    """

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self._exact = {n: i for i, n in enumerate(self.names)}
        self._low = {n.lower(): i for i, n in enumerate(self.names)}

    def seat_of(self, x: Any) -> int | None:
        """The seat named by ``x``, or ``None`` (not a string, or no such player)."""
        if not isinstance(x, str):
            return None
        s = x.strip()
        found = self._exact.get(s)
        return found if found is not None else self._low.get(s.lower())


def normalise_probe(
    rec: ProbeRecord,
    names: Sequence[str] | SeatNames,
    vocab: RoleVocabulary,
    reading: tuple[Any, bool] | None = None,
) -> Belief:
    """Turn one probe record into a :class:`Belief`.

    Player names are matched to seats by :class:`SeatNames`; a name that matches no seat
    keeps ``t = None``. An answer that is not usable keeps its raw text.

    Args:
        rec: The probe record.
        names: Seat names in seat order (or a :class:`SeatNames`).
        vocab: The game's role vocabulary.
        reading: The analysis layer's reading of the answer, ``(value, usable)``
            (:func:`mafialab.analysis._metrics.answer` and
            :func:`mafialab.analysis._instrument.usable`); the site build gives it, so the
            viewer's ``ok`` is the report's "usable" (an empty ranking is not). Without it
            the stored ``answer_parsed`` is read and any list counts.
    """
    seat_of = (names if isinstance(names, SeatNames) else SeatNames(names)).seat_of
    order = (rec.after_seq, rec.round, rec.msg_index, rec.position)
    parsed = rec.answer_parsed if reading is None or not reading[1] else reading[0]
    b = Belief(seat=rec.seat, probe_id=rec.probe_id, after_seq=rec.after_seq, order=order, ok=False)
    if rec.distribution:  # a logprob probe: the distribution is the answer (no text was generated)
        ranked = sorted(rec.distribution.items(), key=lambda kv: -kv[1])
        b.items = [{"t": seat_of(k), "name": k, "p": v} for k, v in ranked]
        b.ok = b.logprob = True
        return b
    if reading is not None and not reading[1]:
        b.raw = rec.answer_raw if rec.answer_raw or parsed is None else _text(parsed)
        b.free = rec.probe_id not in STRUCTURED_PROBES
        return b
    if rec.probe_id == "role_assessment" and (rows := _items(parsed)) is not None:
        b.items = [
            {
                "t": seat_of(x.get("player")),
                "name": _text(x.get("player")),
                "g": _text(x.get("guessed_role")),
                "r": vocab.normalise(x.get("guessed_role")),
                "c": _num(x.get("confidence")),
                "why": _text(x.get("reason")),
            }
            for x in rows
        ]
        b.ok = True
    elif rec.probe_id == "suspicion_ranking" and (rows := _items(parsed)) is not None:
        b.items = [
            {
                "t": seat_of(x.get("player")),
                "name": _text(x.get("player")),
                "score": _num(x.get("score")),
                "why": _text(x.get("reason")),
            }
            for x in rows
        ]
        b.ok = True
    elif rec.probe_id == "social_map" and (rows := _items(parsed, "toward_me")) is not None:
        items = []
        for x in rows:
            att = _text(x.get("attitude")).strip().lower()
            items.append(
                {
                    "t": seat_of(x.get("player")),
                    "name": _text(x.get("player")),
                    "a": att if att in ATTITUDES else None,
                    "c": _num(x.get("confidence")),
                    "why": _text(x.get("reason")),
                }
            )
        b.items = items
        b.ok = True
    if b.ok:
        return b
    b.raw = rec.answer_raw if rec.answer_raw or parsed is None else _text(parsed)
    if rec.probe_id not in STRUCTURED_PROBES:
        b.ok = reading[1] if reading is not None else rec.parse_ok or parsed is not None  # shown verbatim
        b.free = True
    return b
