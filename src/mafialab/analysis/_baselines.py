"""Transcript-only vote predictors and the probe's increment over them (F4 against the transcript).

Is the probe more than the public record? For the F4 units (:func:`vote_units`), three
predictors read only the public transcript of the vote's round before the voter's own vote
(intros, discussion speeches, vote statements):

* ``most_mentioned``: the alive other player named most often (whole-word match, plus the
  transliterated forms of the language data's table with a case ending); ties go to the name
  mentioned last;
* ``most_accused``: the same count restricted to sentences (split after ``. ! ? …`` or at line
  breaks) containing an accusation cue of the language data;
* ``previous_target``: the previous round's plurality target, if still a candidate.

A predictor whose best count is 0 makes no prediction. The increment of the probe's top-1
over a predictor uses the votes where both predict: ``b`` = probe right and baseline wrong,
``c`` = the reverse, and the exact two-sided McNemar p-value (a binomial test of ``b`` out of
``b + c`` at 1/2; McNemar 1947, "Note on the sampling error of the difference between
correlated proportions", Psychometrika 12).

Definitions: MafiaScope's transcript-baseline analysis (``src/bifurcation/coupling_lib.py``
of karpovilia/mafiascope: ``name_mentions``, ``accusation_mentions``, ``argmax_recent``,
``extract_votes``). The ``mafiascope`` method reproduces its choices exactly; the ``default``
method corrects them where ``docs/metrics.md`` ("F4 against the transcript") says.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from mafialab._language import BUILTIN_LANGUAGES, LanguageData, load_language_data
from mafialab.analysis._data import GameData, Message
from mafialab.analysis._metrics import VOTER_SIDES, Method, VoteUnit, vote_units

PREDICTORS = ("most_mentioned", "most_accused", "previous_target")
"""Transcript-only predictors, in report order."""

REFERENCE_LANGUAGES = ("en", "ru")
"""Languages whose data the ``mafiascope`` method reads (its lexicon is English + Russian)."""

BASELINE_FIELDS = ("hits", "n")
INCREMENT_FIELDS = ("n", "probe_hits", "baseline_hits", "b", "c")

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?…])\s+|\n+")
# letters that may not touch a name: Latin and Cyrillic (the reference), any letter (default)
_REF_LETTER = "A-Za-zА-Яа-яЁё"


@dataclass(frozen=True)
class TranscriptPrediction:
    """What the transcript-only predictors say about one vote unit (``None``: no prediction)."""

    most_mentioned: str | None
    most_accused: str | None
    previous_target: str | None

    def get(self, predictor: str) -> str | None:
        """The prediction of ``predictor`` (one of :data:`PREDICTORS`)."""
        return getattr(self, predictor)  # type: ignore[no-any-return]


class TranscriptReader:
    """Counts name mentions and accusations in public messages, for one method.

    Args:
        names: Every seat name of the game (Latin seat names or any other).
        reference: ``True`` for the ``mafiascope`` reading (English + Russian language data,
            the reference's cue list only, Latin/Cyrillic letters as word boundaries);
            ``False`` for the default (every built-in language, with its ``extra_cues``, any
            Unicode letter as a word boundary).
        languages: Language data to use instead of the built-in set.
    """

    def __init__(
        self, names: Iterable[str], *, reference: bool, languages: Sequence[LanguageData] | None = None
    ) -> None:
        codes = REFERENCE_LANGUAGES if reference else BUILTIN_LANGUAGES
        langs = list(languages) if languages is not None else [load_language_data(c) for c in codes]
        cues: list[str] = []
        for lang in langs:
            cues.extend(lang.accusation_cues)
            if not reference:
                cues.extend(lang.extra_cues)
        self.reference = reference
        self.cue = re.compile("|".join(re.escape(c) for c in cues), re.IGNORECASE) if cues else None
        letter = _REF_LETTER if reference else r"^\W\d_"
        self.patterns: dict[str, re.Pattern[str]] = {}
        for name in names:
            alts = [re.escape(name)]
            for lang in langs:
                for stem in lang.name_forms.get(name, ()):
                    alts.append(re.escape(stem) + lang.name_suffix)
            self.patterns[name] = re.compile(rf"(?<![{letter}])(?:{'|'.join(alts)})(?![{letter}])")

    def mentions(self, text: str, names: Sequence[str]) -> list[tuple[int, str]]:
        """``(offset, name)`` of every mention of ``names`` in ``text``, in text order."""
        found = [(m.start(), n) for n in names for m in self.patterns[n].finditer(text)]
        return sorted(found)

    def accusations(self, text: str, names: Sequence[str]) -> list[tuple[int, str]]:
        """Mentions restricted to sentences that contain an accusation cue."""
        if self.cue is None:
            return []
        out: list[tuple[int, str]] = []
        pos = 0
        for sent in _SENTENCE_SPLIT.split(text):
            start = text.find(sent, pos) if sent else pos
            pos = start + len(sent)
            if sent and self.cue.search(sent):
                out.extend((start + off, n) for off, n in self.mentions(sent, names))
        return sorted(out)


@functools.lru_cache(maxsize=16)
def _reader(names: tuple[str, ...], reference: bool) -> TranscriptReader:
    """A reader per seat-name list (games of one rule set share it: patterns compile once)."""
    return TranscriptReader(names, reference=reference)


def _argmax_last(counts: Counter[str], order: list[str]) -> str | None:
    """The most counted name; ties go to the name latest in ``order`` (None if no count > 0)."""
    if not counts:
        return None
    best = max(counts.values())
    if best <= 0:
        return None
    cands = {n for n, v in counts.items() if v == best}
    for n in reversed(order):
        if n in cands:
            return n
    return sorted(cands)[0]


def _before_vote(msg: Message, unit: VoteUnit, by_index: bool) -> bool:
    if msg.round != unit.round:
        return False
    if by_index and msg.index is not None and unit.vote_index is not None:
        return msg.index < unit.vote_index
    return msg.seq < unit.vote_seq


def transcript_predictions(game: GameData, method: Method) -> list[tuple[VoteUnit, TranscriptPrediction]]:
    """Every F4 unit of ``game`` with the transcript-only predictions for it.

    ``method.f4_transcript == "reference"`` (the ``mafiascope`` method's exact choices): the round's public messages
    (failed source turns included, their error text read as text) whose per-round message
    index is smaller than the vote's, in (index, speaker, text) order; a tie goes to the name
    of the latest *message* mentioning a tied name, and within one message to the name later
    in alphabetical order; the previous target is the plurality target of the previous tally
    (alphabetically first on a tie), predicted when it is a key of the current tally.

    ``"corrected"`` (the ``default`` method): the round's public messages before the vote in event order (failed
    turns left out); a tie goes to the name whose last mention is latest in the text; the
    previous target is the plurality target of the latest tally of an earlier round, no
    prediction on a tie, predicted only when it is an alive other.

    Returns:
        ``[(unit, prediction)]`` in :func:`vote_units` order.
    """
    reference = method.f4_transcript == "reference"
    reader = _reader(tuple(game.names), reference)
    units = vote_units(game, method)
    tallies = sorted(game.tallies, key=lambda t: (t[1] is None, t[1] or 0, t[2]))
    prev_of: dict[int, str | None] = {}  # tally seq -> previous target
    prev_votes: dict[str, str] | None = None
    for rnd, _ts, seq, votes in tallies:
        if reference:
            target = None
            if prev_votes:
                cnt = Counter(prev_votes.values())
                top = max(cnt.values())
                target = sorted(t for t, v in cnt.items() if v == top)[0]
            prev_of[seq] = target if target in votes else None
            prev_votes = votes
        else:
            earlier = [t for t in tallies if t[0] < rnd]
            target = None
            if earlier:
                cnt = Counter(earlier[-1][3].values())
                top = max(cnt.values(), default=0)
                winners = [t for t, v in cnt.items() if v == top]
                target = winners[0] if len(winners) == 1 else None
            prev_of[seq] = target
    # each message is read once, for every seat name; a unit keeps its own candidates
    seen: dict[int, tuple[list[tuple[int, str]], list[tuple[int, str]]]] = {}
    names = list(game.names)

    def read(m: Message) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        if id(m) not in seen:
            seen[id(m)] = (reader.mentions(m.text, names), reader.accusations(m.text, names))
        return seen[id(m)]

    out: list[tuple[VoteUnit, TranscriptPrediction]] = []
    for u in units:
        cands = set(u.others)
        msgs = [m for m in game.messages if _before_vote(m, u, reference)]
        mention_counts: Counter[str] = Counter()
        accuse_counts: Counter[str] = Counter()
        order: list[str] = []
        if reference:
            msgs.sort(key=lambda m: (m.index if m.index is not None else -1, m.speaker, m.text))
            for m in msgs:
                found, accused = read(m)
                ment = Counter(n for _, n in found if n in cands)
                mention_counts.update(ment)
                accuse_counts.update(n for _, n in accused if n in cands)
                order.extend(n for n in u.others if ment.get(n))
        else:
            for m in msgs:
                if m.failed:
                    continue
                found, accused = read(m)
                mention_counts.update(n for _, n in found if n in cands)
                accuse_counts.update(n for _, n in accused if n in cands)
                order.extend(n for _, n in found if n in cands)
        prev = prev_of.get(u.tally_seq)
        if not reference and prev not in u.others:
            prev = None
        out.append(
            (
                u,
                TranscriptPrediction(
                    most_mentioned=_argmax_last(mention_counts, order),
                    most_accused=_argmax_last(accuse_counts, order),
                    previous_target=prev,
                ),
            )
        )
    return out


def transcript_baselines(
    game: GameData, method: Method
) -> tuple[dict[tuple[str, str], np.ndarray], dict[tuple[str, str], np.ndarray]]:
    """Per-game sufficient statistics of the transcript baselines and the probe's increment.

    Returns:
        ``(baselines, increment)``: ``baselines[(side, predictor)]`` is ``[hits, n]`` over the
        units where the predictor predicts; ``increment[(side, predictor)]`` is
        ``[n, probe_hits, baseline_hits, b, c]`` over the units where both the probe's top-1
        and the predictor predict (``b``: probe right, baseline wrong; ``c``: the reverse).
    """
    base = {(s, p): np.zeros(len(BASELINE_FIELDS)) for s in VOTER_SIDES for p in PREDICTORS}
    inc = {(s, p): np.zeros(len(INCREMENT_FIELDS)) for s in VOTER_SIDES for p in PREDICTORS}
    for u, pred in transcript_predictions(game, method):
        for p in PREDICTORS:
            guess = pred.get(p)
            if guess is None:
                continue
            hit = guess == u.target
            base[(u.side, p)] += (hit, 1)
            if u.top1 is not None:
                probe_hit = u.top1 == u.target
                inc[(u.side, p)] += (1, probe_hit, hit, probe_hit and not hit, hit and not probe_hit)
    return base, inc
