"""Probe answers normalised for display, and the viewer's own per-step metrics.

The viewer draws three timeline series and a calibration chart straight from probe
records (``probes.jsonl``). The corpus-level F1-F4 numbers with bootstrap intervals come
from :mod:`mafialab.analysis` (see :mod:`mafialab.viewer._corpus`); the series here are
simple, documented point values for looking at one game:

* **first-order accuracy** of seat A at step *s*: A's latest usable ``role_assessment``
  with ``after_seq <= s``; among its committed guesses (not Unknown) about other seats,
  the share naming the target's true role (MafiaScope F1 "committed accuracy").
* **crowd recall** of the hidden team at step *s*: over the latest ``role_assessment`` of
  every town seat, among guesses about true hidden-team targets, the share that name a
  hidden-team role (Unknown counts as a miss; MafiaScope F1 "Mafia recall").
* **second-order agreement** at step *s*: every ``social_map`` item "B trusts/neutral/
  suspects me (A)" from A's latest ``social_map`` is compared with B's latest
  ``role_assessment`` item about A (both ``after_seq <= s``), mapped to an attitude as in
  MafiaScope F3 (hidden-team role with confidence >= 50: suspects; town role with
  confidence >= 50: trusts; otherwise neutral). Hidden-team pairs are excluded; the value
  is the share of pairs that agree.

Unlike the reference F3 (ordered by round, message and probe position) the viewer aligns
answers by ``after_seq``, the last game event the probed agent could have seen.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mafialab.analysis import ATTITUDES, UNKNOWN, RoleVocabulary
from mafialab.record import ProbeRecord, SeatInfo
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
    """

    seat: int
    probe_id: str
    after_seq: int
    order: tuple[int, int, int, int]
    ok: bool
    items: list[dict[str, Any]] = field(default_factory=list)
    raw: str | None = None
    free: bool = False
    by_target: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        """Compact JSON form shipped to the browser (no true roles, no question text)."""
        out: dict[str, Any] = {"s": self.after_seq, "p": self.probe_id, "ok": self.ok}
        if self.items:
            out["items"] = self.items
        if self.raw is not None:
            out["raw"] = self.raw
        if self.free:
            out["free"] = True
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
        b.by_target = {it["t"]: it for it in b.items if it["t"] is not None}
        return b
    b.raw = rec.answer_raw if rec.answer_raw or parsed is None else _text(parsed)
    if rec.probe_id not in STRUCTURED_PROBES:
        b.ok = reading[1] if reading is not None else rec.parse_ok or parsed is not None  # shown verbatim
        b.free = True
    return b


def attitude_from_assessment(item: dict[str, Any], vocab: RoleVocabulary) -> str:
    """B's attitude toward A from B's role-assessment item about A (MafiaScope F3 mapping)."""
    r, c = item.get("r"), item.get("c")
    if r is None or r == UNKNOWN or c is None or c < 50:
        return "neutral"
    return "suspects" if vocab.is_mafia(r) else "trusts"


class BeliefTimeline:
    """Every seat's normalised probe answers, with "latest at or before step" look-ups.

    Args:
        beliefs: Normalised answers of one game.
        roster: The game's roster (true roles, for scoring).
        vocab: The game's role vocabulary.
    """

    def __init__(self, beliefs: Iterable[Belief], roster: Sequence[SeatInfo], vocab: RoleVocabulary):
        self.roster = list(roster)
        self.vocab = vocab
        self._by: dict[tuple[int, str], list[Belief]] = {}
        for b in beliefs:
            if b.ok and not b.free:
                self._by.setdefault((b.seat, b.probe_id), []).append(b)
        self._keys: dict[tuple[int, str], list[int]] = {}
        for k, lst in self._by.items():
            lst.sort(key=lambda b: b.order)
            self._keys[k] = [b.after_seq for b in lst]
        # (observer, target) -> role-assessment items about target, in order (F3 reading 4)
        self._about: dict[tuple[int, int], list[tuple[int, dict[str, Any]]]] = {}
        for (obs, pid), lst in self._by.items():
            if pid != "role_assessment":
                continue
            for b in lst:
                for t, item in b.by_target.items():
                    self._about.setdefault((obs, t), []).append((b.after_seq, item))
        self._about_keys = {k: [q for q, _ in v] for k, v in self._about.items()}

    def latest(self, seat: int, probe_id: str, seq: int) -> Belief | None:
        """Seat's last usable answer to ``probe_id`` with ``after_seq <= seq``, or ``None``."""
        keys = self._keys.get((seat, probe_id))
        if not keys:
            return None
        i = bisect.bisect_right(keys, seq)
        return self._by[(seat, probe_id)][i - 1] if i else None

    def assessment_of(self, observer: int, target: int, seq: int) -> dict[str, Any] | None:
        """``observer``'s latest role-assessment item about ``target`` with ``after_seq <= seq``.

        The latest usable answer that names the target (MafiaScope F3 reading 4), or ``None``.
        """
        keys = self._about_keys.get((observer, target))
        if not keys:
            return None
        i = bisect.bisect_right(keys, seq)
        return self._about[(observer, target)][i - 1][1] if i else None

    def assessments_of(self, target: int) -> list[tuple[int, int, dict[str, Any]]]:
        """Every ``(after_seq, observer, item)`` role-assessment item about ``target``."""
        out = [(q, obs, item) for (obs, t), lst in self._about.items() if t == target for q, item in lst]
        out.sort(key=lambda x: (x[0], x[1]))
        return out

    def _mafia(self, seat: int) -> bool:
        return self.roster[seat].team == "mafia"

    def accuracy(self, seat: int, seq: int) -> float | None:
        """First-order committed accuracy of ``seat`` at ``seq`` (0-1), or ``None``."""
        b = self.latest(seat, "role_assessment", seq)
        if b is None:
            return None
        hits = n = 0
        for it in b.items:
            t, r = it["t"], it["r"]
            if t is None or t == seat or r is None or r == UNKNOWN or t >= len(self.roster):
                continue
            n += 1
            hits += r.lower() == self.roster[t].role.lower()
        return hits / n if n else None

    def recall(self, seq: int) -> float | None:
        """Town seats' recall of the hidden team at ``seq`` (0-1), or ``None``."""
        hits = n = 0
        for a in range(len(self.roster)):
            if self._mafia(a):
                continue
            b = self.latest(a, "role_assessment", seq)
            if b is None:
                continue
            for it in b.items:
                t, r = it["t"], it["r"]
                if t is None or t == a or r is None or t >= len(self.roster) or not self._mafia(t):
                    continue
                n += 1
                hits += self.vocab.is_mafia(r)
        return hits / n if n else None

    def ego_pairs(self, seat: int, seq: int) -> list[tuple[int, str | None, str]]:
        """``(other, believed, actual)`` for ``seat`` at ``seq`` (hidden-team pairs excluded).

        ``believed`` is the attitude ``seat`` predicted in its latest ``social_map`` (or
        ``None`` if it named none); ``actual`` comes from the other's latest assessment that
        names ``seat`` (:meth:`assessment_of`). Others with no such assessment are left out.
        """
        sm = self.latest(seat, "social_map", seq)
        believed: dict[int, str | None] = {}
        if sm is not None:
            for it in sm.items:
                if it["t"] is not None and it["t"] != seat:
                    believed[it["t"]] = it["a"]
        out = []
        for other in range(len(self.roster)):
            if other == seat or (self._mafia(other) and self._mafia(seat)):
                continue
            item = self.assessment_of(other, seat, seq)
            if item is None:
                continue
            out.append((other, believed.get(other), attitude_from_assessment(item, self.vocab)))
        return out

    def agreement_counts(self, seat: int, seq: int) -> tuple[int, int]:
        """``(agreeing pairs, compared pairs)`` of ``seat`` at ``seq`` (see :meth:`ego_pairs`)."""
        hit = n = 0
        for _, believed, actual in self.ego_pairs(seat, seq):
            if believed is not None:
                n += 1
                hit += believed == actual
        return hit, n

    def agreement(self, seat: int | None, seq: int) -> float | None:
        """Second-order agreement (0-1) at ``seq`` for one seat, or the whole table if ``None``."""
        seats = range(len(self.roster)) if seat is None else [seat]
        hit = n = 0
        for a in seats:
            h, k = self.agreement_counts(a, seq)
            hit += h
            n += k
        return hit / n if n else None
