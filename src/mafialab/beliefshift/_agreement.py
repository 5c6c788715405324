"""Agreement between two annotations of the same messages: raw agreement and Cohen's kappa."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from mafialab.beliefshift._io import AnnotationSet

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
        message_agreement: Share of messages whose whole label sets are equal.
        confusion: ``(label_a, label_b) -> count``.
        notes: Caveats (a file without header, excluded messages).
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
        notes.append(f"{len(failed)} message(s) excluded because an annotator failed on them")
    common = sorted((set(scan_a) & set(scan_b)) - failed)
    if not common:
        raise ValueError("agreement: the two annotations share no scanned message (different games or slices?)")
    lab_a = {(x.message_id, x.target.seat): x.category for x in a.annotations}
    lab_b = {(x.message_id, x.target.seat): x.category for x in b.annotations}
    ua: list[str] = []
    ub: list[str] = []
    same_msg = 0
    for mid in common:
        cands = scan_a[mid] if scan_a[mid] is not None else scan_b[mid]
        if cands is None:
            cands = sorted({t for (m, t) in lab_a if m == mid} | {t for (m, t) in lab_b if m == mid})
        la = [lab_a.get((mid, t), NONE) for t in cands]
        lb = [lab_b.get((mid, t), NONE) for t in cands]
        same_msg += la == lb
        ua.extend(la)
        ub.extend(lb)
    n = len(ua)
    da = ["label" if x != NONE else NONE for x in ua]
    db = ["label" if x != NONE else NONE for x in ub]
    return AgreementReport(
        annotator_a=a.header.annotator if a.header else a.path.name,
        annotator_b=b.header.annotator if b.header else b.path.name,
        n_messages=len(common),
        n_units=n,
        agreement=sum(x == y for x, y in zip(ua, ub, strict=True)) / n if n else math.nan,
        kappa=cohen_kappa(ua, ub),
        detect_agreement=sum(x == y for x, y in zip(da, db, strict=True)) / n if n else math.nan,
        detect_kappa=cohen_kappa(da, db),
        message_agreement=same_msg / len(common),
        confusion=dict(Counter(zip(ua, ub, strict=True))),
        notes=notes,
    )
