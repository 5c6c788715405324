"""Agreement of annotations: precision, recall, raw agreement, Cohen's kappa, messages fully right.

Two annotation files of the same messages, or an annotation file against a labels file.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mafialab._words import count, kind_of
from mafialab.beliefshift._io import AnnotationSet, BeliefShiftFormatError
from mafialab.beliefshift._schema import Category

NONE = "none"
"""Label of a (message, target) unit that an annotator did not mark."""


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two label sequences over the same units.

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of units with equal labels and
    ``p_e = sum_k p_a(k) * p_b(k)`` the agreement expected from each annotator's label
    frequencies (Cohen 1960, "A coefficient of agreement for nominal scales").

    Args:
        a: Labels of annotator A, one per unit.
        b: Labels of annotator B, same units, same order.

    Returns:
        Kappa in [-1, 1]; ``nan`` when it is undefined (no units, or both annotators used the
        same single label everywhere, so ``p_e = 1``).

    Raises:
        ValueError: If the sequences differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa: {len(a)} labels against {len(b)}")
    n = len(a)
    if n == 0:
        return math.nan
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if p_e >= 1.0:
        return math.nan
    return (p_o - p_e) / (1 - p_e)


@dataclass
class AgreementReport:
    """Agreement of annotations A and B.

    The units are (message, candidate target) pairs over the messages both annotators
    scanned (and neither failed on); a unit's label is ``suspect``, ``accuse`` or ``none``.

    Attributes:
        annotator_a: Name of annotator A.
        annotator_b: Name of annotator B.
        n_messages: Messages compared.
        n_units: Units compared.
        agreement: Share of units with equal labels (0-1).
        kappa: Cohen's kappa over the three labels.
        detect_agreement: Share of units on which both agree whether there is any label.
        detect_kappa: Cohen's kappa of "labelled" vs ``none``.
        message_agreement: Share of messages whose whole label sets are equal ("messages fully
            right" when A is the reference).
        confusion: ``(label_a, label_b) -> count``.
        notes: Caveats (a file without header, excluded messages).
        disagreements: Every unit on which A and B differ, for error review.

    Precision and recall take A as the reference (detection of a label, any category):
    ``precision = |labelled by both| / |labelled by B|``, ``recall = |labelled by both| /
    |labelled by A|`` (``nan`` when the denominator is 0); the ``exact_`` variants count a unit
    as found only when B gives A's category.
    """

    annotator_a: str
    annotator_b: str
    n_messages: int
    n_units: int
    agreement: float
    kappa: float
    detect_agreement: float
    detect_kappa: float
    message_agreement: float
    confusion: dict[tuple[str, str], int]
    notes: list[str] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)

    def _ratio(self, num: int, den: int) -> float:
        return num / den if den else math.nan

    @property
    def precision(self) -> float:
        """Share of B's labelled units that A labels too (any category); ``nan`` if B labels none."""
        both = sum(v for (x, y), v in self.confusion.items() if x != NONE and y != NONE)
        return self._ratio(both, sum(v for (_, y), v in self.confusion.items() if y != NONE))

    @property
    def recall(self) -> float:
        """Share of A's labelled units that B labels too (any category); ``nan`` if A labels none."""
        both = sum(v for (x, y), v in self.confusion.items() if x != NONE and y != NONE)
        return self._ratio(both, sum(v for (x, _), v in self.confusion.items() if x != NONE))

    @property
    def exact_precision(self) -> float:
        """Share of B's labelled units that carry A's category."""
        same = sum(v for (x, y), v in self.confusion.items() if x == y != NONE)
        return self._ratio(same, sum(v for (_, y), v in self.confusion.items() if y != NONE))

    @property
    def exact_recall(self) -> float:
        """Share of A's labelled units to which B gives the same category."""
        same = sum(v for (x, y), v in self.confusion.items() if x == y != NONE)
        return self._ratio(same, sum(v for (x, _), v in self.confusion.items() if x != NONE))


@dataclass(frozen=True)
class Disagreement:
    """One (message, target) unit on which two annotations differ.

    Attributes:
        message_id: The message (annotation id form).
        target: Target name (or seat number as text when no name is known).
        label_a: Label of A (``suspect``, ``accuse`` or :data:`NONE`).
        label_b: Label of B.
        note: The labels file's note on the message, if any.
    """

    message_id: str
    target: str
    label_a: str
    label_b: str
    note: str = ""

    @property
    def kind(self) -> str:
        """``missed`` (A labels, B not), ``extra`` (B labels, A not) or ``category`` (both, differently)."""
        if self.label_b == NONE:
            return "missed"
        return "extra" if self.label_a == NONE else "category"


def _report(
    name_a: str,
    name_b: str,
    units: list[tuple[str, str, str, str, str]],
    n_messages: int,
    notes: list[str],
) -> AgreementReport:
    """Build a report from ``(message_id, target, label_a, label_b, note)`` units."""
    ua = [u[2] for u in units]
    ub = [u[3] for u in units]
    by_msg: dict[str, bool] = {}
    for mid, _, x, y, _ in units:
        by_msg[mid] = by_msg.get(mid, True) and x == y
    same_msg = sum(by_msg.values()) + (n_messages - len(by_msg))  # a message without units agrees
    n = len(units)
    da = ["label" if x != NONE else NONE for x in ua]
    db = ["label" if x != NONE else NONE for x in ub]
    return AgreementReport(
        annotator_a=name_a,
        annotator_b=name_b,
        n_messages=n_messages,
        n_units=n,
        agreement=sum(x == y for x, y in zip(ua, ub, strict=True)) / n if n else math.nan,
        kappa=cohen_kappa(ua, ub),
        detect_agreement=sum(x == y for x, y in zip(da, db, strict=True)) / n if n else math.nan,
        detect_kappa=cohen_kappa(da, db),
        message_agreement=same_msg / n_messages if n_messages else math.nan,
        confusion=dict(Counter(zip(ua, ub, strict=True))),
        notes=notes,
        disagreements=[Disagreement(m, t, x, y, note) for m, t, x, y, note in units if x != y],
    )


def _scanned(s: AnnotationSet) -> tuple[dict[str, list[int] | None], set[str]]:
    if s.header is None:
        return {a.message_id: None for a in s.annotations}, set()
    return {m.message_id: list(m.candidates) for m in s.header.scanned}, {f.message_id for f in s.header.failed}


def agreement(a: AnnotationSet, b: AnnotationSet) -> AgreementReport:
    """Compare two annotation files.

    A file without header (a bare list of annotations, e.g. a hand-labelled subset) counts
    as having scanned exactly the messages it labels, so the comparison is restricted to
    those; when neither file lists a message's candidate targets, the units of that message
    are the targets either annotator labelled.

    Raises:
        ValueError: If the two files share no message.
    """
    scan_a, failed_a = _scanned(a)
    scan_b, failed_b = _scanned(b)
    notes = []
    for s, which in ((a, "A"), (b, "B")):
        if s.header is None:
            notes.append(f"{which} ({s.path.name}) has no header: only the messages it labels are compared")
    failed = failed_a | failed_b
    if failed:
        notes.append(f"{count(len(failed), 'message')} excluded because an annotator failed on them")
    common = sorted((set(scan_a) & set(scan_b)) - failed)
    if not common:
        raise ValueError("agreement: the two annotations share no scanned message (different games or slices?)")
    lab_a = {(x.message_id, x.target.seat): x.category for x in a.annotations}
    lab_b = {(x.message_id, x.target.seat): x.category for x in b.annotations}
    names = {**(a.header.rosters if a.header else {}), **(b.header.rosters if b.header else {})}
    for x in (*a.annotations, *b.annotations):
        names.setdefault(x.game_id, [])
    units: list[tuple[str, str, str, str, str]] = []
    for mid in common:
        cands = scan_a[mid] if scan_a[mid] is not None else scan_b[mid]
        if cands is None:
            cands = sorted({t for (m, t) in lab_a if m == mid} | {t for (m, t) in lab_b if m == mid})
        game = mid.rsplit(":", 2)[0]
        roster = names.get(game, [])
        for t in cands:
            nm = roster[t] if t < len(roster) else str(t)
            units.append((mid, nm, lab_a.get((mid, t), NONE), lab_b.get((mid, t), NONE), ""))
    return _report(
        a.header.annotator if a.header else a.path.name,
        b.header.annotator if b.header else b.path.name,
        units,
        len(common),
        notes,
    )


# --------------------------------------------------------------------------- labels files
class _LabelsRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TargetLabel(_LabelsRecord):
    """One label of a labels file: a target player (by name) and a category."""

    target: str = Field(min_length=1)
    category: Category


class LabelledMessage(_LabelsRecord):
    """One line of a labels file: the labels of one day-discussion message.

    The message is identified by ``(game_id, round, speaker)``, which is unique when every
    player speaks at most once per day (one discussion round); an empty ``labels`` list says
    the speaker suspects or accuses nobody.

    Attributes:
        game_id: Game id.
        round: Day number (>= 1).
        speaker: Speaker name.
        labels: At most one label per target; targets are living players other than the speaker.
        note: Optional free text (why a borderline call was made).
    """

    game_id: str = Field(min_length=1)
    round: int = Field(ge=0)
    speaker: str = Field(min_length=1)
    labels: list[TargetLabel]
    note: str | None = None


@dataclass
class LabelsFile:
    """A labels file read back (see :func:`read_labels`).

    Attributes:
        path: The file.
        messages: Its labelled messages, in file order.
        lines: The 1-based line number of each message (same order), for messages that name
            ``file:line``; empty for a set built by hand (messages are then named by position).
    """

    path: Path
    messages: list[LabelledMessage]
    lines: list[int] = field(default_factory=list)

    def where(self, i: int) -> str:
        """``file:line`` of message ``i`` (``file:#i+1`` when line numbers are unknown)."""
        return f"{self.path}:{self.lines[i]}" if i < len(self.lines) else f"{self.path}:#{i + 1}"


def file_kind(path: Path) -> Literal["labels", "annotations", "empty", "unknown"]:
    """What a file given to ``beliefshift agreement`` looks like, from its first non-blank line.

    Returns:
        ``"labels"``: a JSON object with no ``kind`` and any of the labels format's fields
        (``speaker``, ``labels``) and no ``message_id``: a labels file, even when that line is
        invalid (so its errors are reported in the labels format); ``"annotations"``: an
        object with a ``kind`` or a ``message_id`` (``ANN.jsonl``); ``"empty"``: no non-blank
        line; ``"unknown"``: anything else (not JSON, not an object, other fields, unreadable).
    """
    try:
        with Path(path).open(encoding="utf-8-sig") as fh:
            for line in fh:
                if line.strip():
                    obj = json.loads(line)
                    if not isinstance(obj, dict):
                        return "unknown"
                    if "kind" in obj or "message_id" in obj:
                        return "annotations"
                    if "speaker" in obj or "labels" in obj:
                        return "labels"
                    return "unknown"
    except (OSError, UnicodeDecodeError, ValueError):
        return "unknown"
    return "empty"


def is_labels_file(path: Path) -> bool:
    """Whether ``path`` is a labels file rather than an annotation file (:func:`file_kind`)."""
    return file_kind(path) == "labels"


def read_labels(path: Path) -> LabelsFile:
    """Read a labels file (the format of ``docs/beliefshift.md``, "Agreement").

    One JSON object per line: ``{"game_id", "round", "speaker", "labels": [{"target",
    "category"}], "note"?}``.

    Raises:
        BeliefShiftFormatError: Unreadable file, a line that is not a JSON object, an invalid
            field (message names line and field), a message listed twice, or a target labelled
            twice in one message.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as err:
        raise BeliefShiftFormatError(f"{path}: cannot read ({err.strerror})") from None
    except UnicodeDecodeError as err:
        raise BeliefShiftFormatError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    out: list[LabelledMessage] = []
    lines: list[int] = []
    seen: dict[tuple[str, int, str], int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:  # worded as for annotation files (record.iter_jsonl)
            col = min(err.pos, len(line.rstrip())) + 1
            raise BeliefShiftFormatError(
                f"{path}:{n}: not valid JSON ({err.msg.removesuffix(' at')} at column {col})"
            ) from None
        except RecursionError:
            raise BeliefShiftFormatError(f"{path}:{n}: JSON nested too deeply to read") from None
        if not isinstance(obj, dict):
            raise BeliefShiftFormatError(f"{path}:{n}: expected a JSON object, found {kind_of(obj)}")
        try:
            rec = LabelledMessage.model_validate(obj)
        except ValidationError as err:
            raise BeliefShiftFormatError(f"{path}:{n}: invalid labels line ({_labels_problems(err)})") from None
        key = (rec.game_id, rec.round, rec.speaker)
        if key in seen:
            raise BeliefShiftFormatError(f"{path}:{n}: message {key} already labelled on line {seen[key]}")
        seen[key] = n
        targets = [lab.target for lab in rec.labels]
        dup = [t for t, c in Counter(targets).items() if c > 1]
        if dup:
            raise BeliefShiftFormatError(f"{path}:{n}: labels: target {dup[0]!r} labelled twice")
        out.append(rec)
        lines.append(n)
    if not out:
        raise BeliefShiftFormatError(f"{path}: the labels file is empty (expected one JSON line per labelled message)")
    return LabelsFile(path, out, lines)


def _labels_problems(err: ValidationError) -> str:
    """Every bad field of a labels line, named in the labels format: ``round: expected ..., got 'one'``."""
    out = []
    for e in err.errors():
        loc = ".".join(str(x) for x in e["loc"])
        if e["type"] == "missing":
            out.append(f"{loc}: missing")
        elif e["type"] == "extra_forbidden":
            model, what = (TargetLabel, "a label") if len(e["loc"]) > 1 else (LabelledMessage, "a labels line")
            out.append(f"{loc}: unknown field ({what} has {', '.join(model.model_fields)})")
        else:
            out.append(f"{loc}: {e['msg']}, got {e.get('input')!r}")
    return "; ".join(out)


def _check_names(rec: LabelledMessage, roster: Sequence[str], where: str) -> None:
    """Refuse a speaker or target who is not a player of the game, or a target who is the speaker.

    Raises:
        ValueError: ``"<file>:<line>: speaker|labels.<i>.target: ..."`` naming the name, the
            game and its players.
    """
    players = f"(players: {', '.join(roster)})"
    if rec.speaker not in roster:
        raise ValueError(f"{where}: speaker: {rec.speaker!r} is not a player of game {rec.game_id} {players}")
    for j, lab in enumerate(rec.labels):
        if lab.target == rec.speaker:
            raise ValueError(f"{where}: labels.{j}.target: {lab.target!r} is the speaker (a message labels others)")
        if lab.target not in roster:
            raise ValueError(
                f"{where}: labels.{j}.target: {lab.target!r} is not a player of game {rec.game_id} {players}"
            )


def agreement_with_labels(labels: LabelsFile, ann: AnnotationSet) -> AgreementReport:
    """Score an annotation file (B) against a labels file (A, the reference).

    A labelled message is joined to the annotation file's scanned message with the same game,
    round and speaker name. Units are the message's candidate targets as the annotation file
    lists them (living players other than the speaker); a labelled target outside them is
    added as a unit (and noted), so it still counts as missed. A speaker or target who is not a
    player of the game (a typo), or a target who is the speaker, is refused, not scored.
    Messages the annotation file did not scan (a game or round it did not annotate), or failed
    on, are left out and counted in ``notes`` (the first three named ``file:line``).

    Returns:
        An :class:`AgreementReport` with A = the labels file; ``precision``/``recall`` are the
        annotator's, ``kappa`` is over suspect/accuse/none, ``message_agreement`` is the share
        of messages fully right.

    Raises:
        ValueError: The annotation file has no header or no rosters (written by an older
            mafialab: annotate again), a join key matches two scanned messages, a labels line
            names someone who is not a player of its game or labels its own speaker (message
            ``file:line: field: ...``), or no labelled message was scanned.
    """
    h = ann.header
    if h is None or not h.rosters:
        raise ValueError(
            f"{ann.path}: the annotation file lists no rosters, so players cannot be matched by name "
            "(written by an older mafialab: run `mafialab beliefshift annotate` again)"
        )
    index: dict[tuple[str, int, str], list[str | int]] = {}
    for m in h.scanned:
        roster = h.rosters.get(m.game_id)
        if roster is None or m.seat >= len(roster) or any(c >= len(roster) for c in m.candidates):
            raise ValueError(f"{ann.path}: rosters: no complete roster for game {m.game_id}")
        key = (m.game_id, m.round, roster[m.seat])
        if key in index:
            raise ValueError(
                f"{ann.path}: {key[2]} speaks twice in round {key[1]} of game {key[0]}; "
                "(game, round, speaker) does not identify a message there"
            )
        index[key] = [m.message_id, *(roster[c] for c in m.candidates)]
    failed = {f.message_id for f in h.failed}
    got = {(a.message_id, a.target.name): a.category for a in ann.annotations}
    units: list[tuple[str, str, str, str, str]] = []
    missing: list[str] = []
    failed_n = outside = 0
    n_messages = 0
    for i, rec in enumerate(labels.messages):
        roster = h.rosters.get(rec.game_id)
        if roster is not None:  # a game the annotation file knows: every name must be one of its players
            _check_names(rec, roster, labels.where(i))
        hit = index.get((rec.game_id, rec.round, rec.speaker))
        if hit is None:
            missing.append(labels.where(i))
            continue
        mid, cands = str(hit[0]), [str(c) for c in hit[1:]]
        if mid in failed:
            failed_n += 1
            continue
        n_messages += 1
        gold = {lab.target: lab.category for lab in rec.labels}
        extra = [t for t in gold if t not in cands]
        outside += len(extra)
        for t in [*cands, *extra]:
            units.append((mid, t, gold.get(t, NONE), got.get((mid, t), NONE), rec.note or ""))
    if not n_messages:
        raise ValueError(
            f"agreement: none of the {len(labels.messages)} labelled messages of {labels.path} is scanned in "
            f"{ann.path} (annotate the games the labels come from)"
        )
    notes = []
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        notes.append(
            f"{count(len(missing), 'labelled message')} not scanned in the annotation file "
            "(game or round not annotated), "
            f"left out: {', '.join(missing[:3])}{more}"
        )
    if failed_n:
        notes.append(f"{count(failed_n, 'labelled message')} excluded because the annotator failed on them")
    if outside:
        notes.append(
            f"{count(outside, 'labelled target')} {'is' if outside == 1 else 'are'} not living candidates "
            "in the annotation file (counted)"
        )
    return _report(labels.path.name, h.annotator, units, n_messages, notes)
