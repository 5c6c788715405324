"""Annotation of suspect/accuse messages: the offline ``rules`` annotator and a model annotator.

Definitions (paper, "Annotation"): a day-discussion message **suspects** a target when the
speaker expresses uncertainty about whether the target may be wolf-aligned or raises that
possibility; it **accuses** a target when it states directly that the target is on the wolf
team. One record per (message, target); a message that both suspects and accuses the same
target is labelled ``accuse``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from mafialab import __version__
from mafialab.beliefshift._answer import split_answer
from mafialab.beliefshift._io import write_jsonl
from mafialab.beliefshift._pack import (
    AnnotatorPack,
    StepSpec,
    TextSpec,
    builtin_engine,
    compile_patterns,
    load_annotator_pack,
)
from mafialab.beliefshift._schema import (
    Annotation,
    AnnotationHeader,
    Category,
    FailedMessage,
    PlayerRef,
    ScannedMessage,
    message_id,
)
from mafialab.engine import Elimination, Speech, resolve_name
from mafialab.models import ChatMessage, ChatModel, ChatRequest
from mafialab.record import GameLog, LogFormatError, read_game

log = logging.getLogger(__name__)

_RANK = {"suspect": 1, "accuse": 2}


@dataclass(frozen=True)
class DayMessage:
    """A day-discussion message of a recorded game.

    Attributes:
        game_id: Game id.
        round: Round (= day number).
        index: Public message index within the round (1-based).
        seq: ``seq`` of the speech event.
        seat: Speaker seat.
        text: Message text.
        candidates: Seats alive at the time of the message, other than the speaker.
    """

    game_id: str
    round: int
    index: int
    seq: int
    seat: int
    text: str
    candidates: tuple[int, ...]

    @property
    def message_id(self) -> str:
        """See :func:`mafialab.beliefshift.message_id`."""
        return message_id(self.game_id, self.round, self.index)


def day_messages(game: GameLog) -> list[DayMessage]:
    """The day-discussion messages of a game, in order.

    Included: ``speech`` events of the ``day`` phase that an agent wrote. Excluded: intro
    speeches (phase ``intro``), vote statements (``vote`` events) and fallback speeches
    (``fallback: true``, not the agent's words). Candidates are the seats alive when the
    message was sent (public deaths before it), other than the speaker.
    """
    n = len(game.header.roster)
    dead: set[int] = set()
    out: list[DayMessage] = []
    for ev in game.events:
        if isinstance(ev, Elimination):
            dead.add(ev.seat)
        elif isinstance(ev, Speech) and ev.phase == "day" and not ev.fallback:
            cands = tuple(s for s in range(n) if s != ev.seat and s not in dead)
            out.append(DayMessage(game.game_id, ev.round, ev.index, ev.seq, ev.seat, ev.text, cands))
    return out


@dataclass(frozen=True)
class Label:
    """One label proposed by an annotator for a message.

    Attributes:
        target: Target seat.
        category: ``suspect`` or ``accuse``.
        evidence: Span of the message that carries it.
        rule: Which rule or cue produced it (``rules`` annotator; for error review), else ``""``.
    """

    target: int
    category: Category
    evidence: str
    rule: str = ""


@dataclass(frozen=True)
class GameContext:
    """What an annotator may know about the game of a message.

    Attributes:
        names: Seat names, by seat.
        game: Game name (``Werewolf``).
        town_team: Display name of the village side.
        mafia_team: Display name of the wolf side.
    """

    names: tuple[str, ...]
    game: str = "Werewolf"
    town_team: str = "Village"
    mafia_team: str = "Werewolves"


class AnnotatorFailure(Exception):
    """An annotator could not label a message (``cause`` as in :data:`FailureCause`)."""

    def __init__(self, cause: str, detail: str):
        super().__init__(f"{cause}: {detail}")
        self.cause = cause
        self.detail = detail


class Annotator(Protocol):
    """Labels one message: ``await annotator.label(msg, ctx) -> list[Label]``.

    Raises :class:`AnnotatorFailure` when it cannot label the message.
    """

    name: str

    async def label(self, msg: DayMessage, ctx: GameContext) -> list[Label]:
        """Labels of ``msg`` (at most one per target)."""
        ...


def _strongest(labels: Iterable[Label]) -> list[Label]:
    best: dict[int, Label] = {}
    for lab in labels:
        cur = best.get(lab.target)
        if cur is None or _RANK[lab.category] > _RANK[cur.category]:
            best[lab.target] = lab
    return [best[t] for t in sorted(best)]


# --------------------------------------------------------------------------- rules annotator
class _Compiled:
    """The compiled patterns of one pack for one game's names, by pattern name (``comp.directed``)."""

    def __init__(self, patterns: dict[str, Any], text: TextSpec):
        self.__dict__.update(patterns)
        self.markup = str.maketrans(text.markup)
        self.quoted = re.compile(text.quoted)
        self.sentences = re.compile(text.sentences)

    def __getattr__(self, key: str) -> Any:  # typed access to the patterns set above
        raise AttributeError(key)

    @staticmethod
    def each(rx: Any) -> list[re.Pattern[str]]:
        """A pattern entry as a list (``None``: no pattern)."""
        return [] if rx is None else rx if isinstance(rx, list) else [rx]

    def all_of(self, keys: Iterable[str]) -> list[re.Pattern[str]]:
        """The patterns named ``keys``, in order, as one list."""
        return [rx for k in keys for rx in self.each(getattr(self, k))]


@dataclass
class _Run:
    """What labelling one text keeps as it goes, sentence by sentence and clause by clause."""

    comp: _Compiled
    candidates: dict[str, int]
    pair_rules: frozenset[str]
    found: list[Label] = field(default_factory=list)
    sentence: str = ""
    prev_subjects: list[str] = field(default_factory=list)
    older_subjects: list[str] = field(default_factory=list)  # the subjects of the sentence before prev's (v8)
    cleared: set[str] = field(default_factory=set)
    spoken_of: list[str] = field(default_factory=list)  # named in the speaker's own last clause
    with_self: set[str] = field(default_factory=set)  # players grouped with the speaker in this sentence (v9)
    # per sentence, clause by clause
    subjects: list[str] = field(default_factory=list)
    directed_names: list[str] = field(default_factory=list)  # "I'm most suspicious of Alex, who ...": the topic
    last_all: list[str] = field(default_factory=list)  # names of the clause before, within this sentence only
    last_group: list[str] = field(default_factory=list)
    first: bool = True

    def add(self, nms: Iterable[str], category: Category, rule: str) -> None:
        for nm in nms:
            if nm in self.with_self and rule.split(":", 1)[0] in self.pair_rules:
                continue  # "Harper and I are still alive, which could mean ...": the speaker's own group
            if nm in self.candidates:
                self.found.append(Label(self.candidates[nm], category, self.sentence[:300], rule))


@dataclass
class _Subjects:
    """Whom a clause is about.

    ``own``: its subjects; ``inherited``: taken from before; ``prior``: the players a pronoun
    opening it may stand for; ``mentions``: the names that may be its subject.
    """

    own: list[str]
    inherited: bool
    prior: list[str]
    mentions: list[re.Match[str]]


class RulesAnnotator:
    """Offline annotator: cue lexicons (language data) applied clause by clause, no model.

    For each sentence of the message, split into clauses (``cues.clause_breaks``):

    * **accuse** where an identity statement names the player (``cues.accuse``: "X is
      Mafia", "I'm convinced X is", "the Mafia pair is X and Y", "I checked X: Mafia"),
      unless a hedge (``cues.hedges``: could, probably, leaning ...) precedes it in the clause
      (then suspect);
    * **suspect** every player of a candidate list (``cues.lists``: "the Mafia is among A, B,
      C", "either A or B"), every player a directed cue points at (``cues.directed``:
      "suspicious of X", "keeping an eye on X", "leaning toward X"), and every player who is
      the subject of a clause holding a suspicion cue (``cues.suspicion``: calculated,
      deflecting, too convenient, a Mafia tactic ...) and no clearing cue (``cues.clearing``:
      innocent, trust, genuine ...). A clause without a name takes the subjects of the clause
      before it in the sentence ("X voted late — feels calculated"), or of the sentence before
      when it opens with a pronoun. A name right after an object marker ("voted against X",
      "pointing at X") is not a subject.

    A cue preceded in its clause by a negation ("not suspicious"), inside a clause that opens
    with a condition ("if X were Mafia"), or after reported speech ("Bailey says X is Mafia")
    does not count. Names are matched case-sensitively as whole words (``gray`` is not Gray);
    the speaker is never labelled. Results per message keep the strongest label per target.

    The grey zone (pronouns, motives, indicative possibilities, quoted words, whose view a cue
    is, lists then clearing) follows the decision rules listed in ``docs/beliefshift.md``
    ("Annotators"), each driven by the pack's optional v3 cue keys.

    The annotator's ``name`` (recorded as ``annotator`` in the annotation header and in every
    record) is ``rules:<pack id>``, e.g. ``rules:annotator-en-v14``, so a file says which cue
    pack labelled it; files written before pack v7 say only ``rules``.

    Args:
        extra_wolf_words: More words meaning "on the hidden team".
        pack: Language data (default: the built-in English pack).
    """

    name: str = "rules"

    def __init__(self, extra_wolf_words: Sequence[str] = (), pack: AnnotatorPack | None = None):
        self.pack = pack or load_annotator_pack("en")
        # recorded in annotation headers and records: which cue pack labelled the file
        self.name = f"rules:{self.pack.id}"
        self._extra = tuple(re.escape(w) for w in extra_wolf_words)
        self._engine = self.pack.engine or builtin_engine()
        self._cache: dict[tuple[tuple[str, ...], str], _Compiled] = {}

    def _compiled(self, names: tuple[str, ...], mafia_team: str) -> _Compiled:
        key = (names, mafia_team)
        if key not in self._cache:
            patterns = compile_patterns(self._engine, self.pack.cues, names, mafia_team, self._extra)
            self._cache[key] = _Compiled(patterns, self._engine.text)
        return self._cache[key]

    @staticmethod
    def _names_in(group: str, comp: _Compiled) -> list[str]:
        return [m.group(1) for m in comp.name.finditer(group)]

    def _clause_cue(
        self, clause: str, rx: re.Pattern[str], comp: _Compiled, motive: bool = False, allow_whether: bool = False
    ) -> re.Match[str] | None:
        """The first match of ``rx`` in ``clause`` not negated or made conditional before it.

        With ``motive``, a match right after a motive frame ("trying to look innocent", "to
        earn trust") does not count either: it names an aim, not the speaker's read.
        """
        for m in rx.finditer(clause):
            before = clause[: m.start()]
            if comp.negation.search(before[-80:]):
                continue
            cond = comp.if_before.search(before)
            if cond is not None and not (allow_whether and cond.group(0).lower() == "whether"):
                continue
            if motive and comp.motive is not None and comp.motive.search(before[-60:]):
                continue
            return m
        return None

    @staticmethod
    def _others_view(pre: str, cue: re.Match[str], comp: _Compiled) -> bool:
        """Whether the directed ``cue`` after the text ``pre`` is another player's view (v11).

        A third-person subject and its verb right before the cue ("he's wary of A") make the cue
        that player's view. A name's "'s" counts as "is" only before an adjective cue (v13):
        "A's suspicious of B" is A's view, "A's suspicion of B" may be the speaker's.
        """
        if comp.others_view is None:
            return False
        ov = comp.others_view.search(pre)
        if ov is None:
            return False
        if comp.third_person.match(ov.group(0)) or "'s" not in ov.group(0).lower():
            return True
        # a name's "'s" (or a pronoun's, handled above): possessive before a noun cue
        return comp.possessive_cue is None or comp.possessive_cue.match(cue.group(0)) is None

    @staticmethod
    def _consequent(clause: str, comp: _Compiled) -> str | None:
        """The main clause after a condition that opens ``clause``, else ``None``.

        "If X is innocent, that means the Mafia is among A and B": the part after the
        consequent marker (``cues.consequent_markers``, pack v8) raises the speaker's own
        possibility; the condition itself stays hypothetical.
        """
        if comp.consequent is None or not comp.conditional.search(clause):
            return None
        ends = [m.end() for m in comp.consequent.finditer(clause)]
        return clause[ends[-1] :] if ends else None

    @staticmethod
    def _hedged(sentence: str, m: re.Match[str], clause: str, comp: _Compiled) -> bool:
        """Whether a hedge qualifies the identity statement ``m``.

        A hedge counts before it in its clause, inside it, or right after it in the same clause
        ("X is Mafia, probably").
        """
        after = comp.breaks.split(sentence[m.end() :])[0][:30]
        return bool(comp.hedges.search(clause) or comp.hedges.search(m.group(0)) or comp.hedges.search(after))

    @staticmethod
    def _reported(clause: str, comp: _Compiled) -> re.Match[str] | None:
        """The first reported-speech cue of ``clause`` that is someone else's ("Bailey says").

        A cue right after a first-person subject ("I say", "I think") is the speaker's own view.
        """
        for m in comp.reported.finditer(clause):
            if comp.first_person is None or not comp.first_person.search(clause[: m.start()]):
                return m
        return None

    @staticmethod
    def _with_speaker(sentence: str, comp: _Compiled) -> set[str]:
        """Players coordinated with the speaker in a sentence ("Jordan and me", "me and Casey"; v9).

        The speaker does not suspect their own group: a suspicion cue or a directed cue whose
        subject or object is "X and I" is about someone's view of that pair, not the speaker's
        suspicion of X. Candidate lists ("it's between me and X") keep their labels.
        """
        if not comp.with_speaker:
            return set()
        if comp.speaker_group is not None and comp.speaker_group.search(sentence):
            return set()  # "Logan and I pushed Casey; one of us could be Mafia": a candidate group
        out: set[str] = set()
        for rx in comp.with_speaker:
            for m in rx.finditer(sentence):
                pair = [x.group(1) for x in comp.name.finditer(m.group(0))]
                # a pair only ("Ellis, Alex and me need scrutiny" is a candidate list), and a player
                # the sentence names nowhere else ("Gray and I voted; Gray calls it ...": Gray acts)
                if len(pair) == 1 and sum(x.group(1) == pair[0] for x in comp.name.finditer(sentence)) == 1:
                    out.update(pair)
        return out

    @staticmethod
    def _pronoun_refs(pron: str, antecedents: list[str], candidates: dict[str, int], comp: _Compiled) -> list[str]:
        """The players a pronoun stands for.

        "you" (two, both, one of you) is every candidate when only two are alive besides the
        speaker; a singular pronoun (he, she, him, her) needs exactly one antecedent; a plural
        one takes the antecedents as they are. Anything else resolves to no one (never a guess).
        """
        if comp.you.search(pron):
            return list(candidates) if len(candidates) == 2 else []
        if comp.singular.search(pron):
            return antecedents if len(antecedents) == 1 else []
        return antecedents

    @staticmethod
    def _subject_group(clause: str, mentions: list[re.Match[str]], cue: int, comp: _Compiled) -> list[str]:
        """The names the cue at ``cue`` is said of.

        The last group of subject names before it ("A, B and C" joined by list words), else the
        first group after it that no subordinator separates from it ("..., especially since you
        brought up X" is not about X).
        """
        before = [m for m in mentions if m.start() < cue]
        after = [m for m in mentions if not (comp.sub_any is not None and comp.sub_any.search(clause, cue, m.start()))]
        pick = before[-1:] if before else after[:1]
        # "Harper's news makes me think Casey is suspicious": a name opening a reported thought
        # is the subject of the cue, not the possessive that opens the clause
        embedded = (
            len(before) > 1
            and comp.complement is not None
            and comp.complement.search(clause[: before[-1].start()]) is not None
        )
        # "Casey's quickness to back Ellis ... stands out": the possessive that opens the
        # clause is its subject; names after it belong to its noun phrase or predicate
        if (
            before
            and not embedded
            and before[0].group(0).endswith("'s")
            and comp.lead is not None
            and comp.lead.fullmatch(clause[: before[0].start()])
        ):
            return [before[0].group(1)]
        if not pick:
            return []
        group = [pick[0]]
        pool = [m for m in mentions if m is not pick[0]]
        for direction in (-1, 1):
            cur = pick[0]
            while True:
                nxt = None
                for m in pool:
                    gap = clause[m.end() : cur.start()] if direction < 0 else clause[cur.end() : m.start()]
                    if (
                        m.end() <= cur.start() if direction < 0 else m.start() >= cur.end()
                    ) and comp.list_gap.fullmatch(gap):
                        nxt = m
                        break
                if nxt is None or nxt in group:
                    break
                group.append(nxt)
                cur = nxt
        return [m.group(1) for m in group]

    def label_text(self, text: str, speaker: str, candidates: dict[str, int], ctx: GameContext) -> list[Label]:
        """Label one text.

        The pack's ``steps`` run in their order on each sentence (``steps.sentence``; the step
        ``clauses`` runs ``steps.clause`` on each clause); see ``docs/annotator-development.md``.

        Args:
            text: The message.
            speaker: Speaker name (never a target).
            candidates: Target names mapped to seats.
            ctx: Game context (names, team words).

        Returns:
            At most one label per target, the strongest found.
        """
        names = tuple(n for n in ctx.names if n != speaker)
        comp = self._compiled(names, ctx.mafia_team)
        steps = self._engine.steps
        run = _Run(comp, candidates, steps.not_for_speaker_pair)
        # quoted words are someone else's ("the 'Mafia held back' theory"): blanked, same length
        clean = comp.quoted.sub(lambda q: " " * len(q.group(0)), text.translate(comp.markup))
        for sentence in comp.sentences.split(clean):
            sentence = sentence.strip()
            if not sentence:
                continue
            run.sentence = sentence
            run.with_self = self._with_speaker(sentence, comp)
            for step in steps.sentence:
                self._SENTENCE_STEPS[step.kind](self, run, step)
        # a candidate list member the speaker then clears explicitly is not suspected
        # (definitions: "unless the speaker then clears that player")
        # (a label from the sentence of a list naming the player counts as the list's)
        found = run.found
        listed = {(lab.target, lab.evidence) for lab in found if lab.rule.startswith(f"{steps.candidate_list_rule}:")}
        list_only = {
            lab.target
            for lab in found
            if all((x.target, x.evidence) in listed for x in found if x.target == lab.target)
        }
        drop = {t for t in list_only if any(candidates.get(n) == t for n in run.cleared)}
        return _strongest(lab for lab in found if lab.target not in drop)

    # ------------------------------------------------------------------ sentence steps
    def _statements(self, run: _Run, step: StepSpec) -> None:
        """Step ``statement``: identity statements and candidate lists, on the whole sentence."""
        for key in step.patterns:
            for rx in run.comp.each(getattr(run.comp, key)):
                pos = 0
                while (m := rx.search(run.sentence, pos)) is not None:
                    # a rejected match is retried one character later
                    pos = m.end() if self._statement(run, step, m) else m.start() + 1

    def _statement(self, run: _Run, step: StepSpec, m: re.Match[str]) -> bool:
        """Label one statement match ``m``; whether it counted."""
        comp, sentence = run.comp, run.sentence
        before = sentence[: m.start()]
        clause = comp.breaks.split(before)[-1]
        main = self._consequent(clause, comp)
        if main is not None:
            clause = main  # the possibility is raised in the main clause (v8)
        if comp.negation.search(clause) or comp.conditional.search(clause):
            return False
        if self._reported(clause, comp) is not None:
            return False
        if m.group(0)[:1].isupper() and comp.obj_before.search(before):
            return False  # "wary of Alex, and Finley is ..." is about Finley only
        cat: Category = step.category
        if cat == "accuse" and (main is not None or self._hedged(sentence, m, clause, comp)):
            cat = "suspect"  # hedged, or the consequence of a condition
        nms = (
            self._names_in(m.group("names"), comp)
            if "names" in m.groupdict() and m.group("names")
            else run.prev_subjects
        )
        run.add(nms, cat, f"{step.rule}:{m.group(0)}")
        return True

    def _pronoun_statements(self, run: _Run, step: StepSpec) -> None:
        """Step ``pronoun_statement``: a pronoun stands for the last subjects named.

        "I'm confident she's the last Mafia".
        """
        comp, sentence = run.comp, run.sentence
        for key in step.patterns:
            for rx in comp.each(getattr(comp, key)):
                for m in rx.finditer(sentence):
                    clause = comp.breaks.split(sentence[: m.start()])[-1]
                    if comp.negation.search(clause) or comp.conditional.search(clause) or self._reported(clause, comp):
                        continue
                    refs = self._pronoun_refs(m.group("pron"), run.prev_subjects, run.candidates, comp)
                    cat: Category = "suspect" if self._hedged(sentence, m, clause, comp) else step.category
                    run.add(refs, cat, f"{step.rule}:{m.group(0)}")

    def _pronoun_possibilities(self, run: _Run, step: StepSpec) -> None:
        """Step ``pronoun_possibility``: a possibility raised of a pronoun's players.

        "If she's Mafia, ...", "She could be Mafia", "One of you is Mafia". The players are those
        named before it in the sentence, else the subjects of the sentence before; "you" only
        when two others are alive.
        """
        comp, sentence = run.comp, run.sentence
        for key in step.patterns:
            for rx in comp.each(getattr(comp, key)):
                for m in rx.finditer(sentence):
                    # the negation must be in the same comma-clause ("I'm not Mafia, so it's one of you")
                    clause = comp.comma_clause.split(comp.breaks.split(sentence[: m.start()])[-1])[-1]
                    if comp.negation.search(clause) or self._reported(clause, comp):
                        continue
                    refs = self._possibility_refs(run, m)
                    if refs is not None:
                        run.add(refs, step.category, f"{step.rule}:{m.group(0)}")

    def _possibility_refs(self, run: _Run, m: re.Match[str]) -> list[str] | None:
        """The players of a pronoun possibility ``m`` (``None``: no label)."""
        comp = run.comp
        named = [x.group(1) for x in comp.name.finditer(run.sentence, 0, m.start())]
        ante = list(dict.fromkeys(named)) or run.prev_subjects
        pron = m.group("pron")
        refs = self._pronoun_refs(pron, ante, run.candidates, comp)
        group_of = comp.group_lead is not None and comp.group_lead.match(pron)
        if group_of and not comp.you.search(pron) and len(refs) < 2 and not named:
            # "A voted late. B stayed quiet. Both could be Mafia." (v8): the two players
            # of the two sentences before, when they are exactly two
            pair = [n for n in dict.fromkeys([*run.older_subjects, *run.prev_subjects]) if n in run.candidates]
            refs = pair if len(pair) == 2 and len(run.prev_subjects) == 1 else []
        if group_of and not comp.you.search(pron) and len(refs) < 2:
            return None  # "one of them", "both": two or more players, never one
        return refs

    def _clauses(self, run: _Run, step: StepSpec) -> None:
        """Step ``clauses``: the clause steps on each clause of the sentence.

        Then the sentence's subjects become the topic of the next sentence.
        """
        comp = run.comp
        run.subjects, run.directed_names, run.last_all, run.last_group, run.first = [], [], [], [], True
        for clause in comp.breaks.split(run.sentence):
            if not clause or not clause.strip():
                continue
            hypothetical = bool(comp.conditional.search(clause))
            main = self._consequent(clause, comp)
            if main is not None and main.strip():
                clause, hypothetical = main, False  # "if X is innocent, then Y ..." (v8): Y's clause
            for cstep in self._engine.steps.clause:
                self._CLAUSE_STEPS[cstep.kind](self, run, cstep, clause, hypothetical)
        if run.subjects:
            run.older_subjects, run.prev_subjects = run.prev_subjects, run.subjects
        elif run.directed_names:
            # "... suspicious of Alex. That silence ..."
            run.older_subjects, run.prev_subjects = run.prev_subjects, sorted(set(run.directed_names))
        elif comp.generic.match(run.sentence):
            # "The Mafia killed A. That feels strategic.": the hidden team is the new topic (v11)
            run.older_subjects, run.prev_subjects = run.prev_subjects, []

    # ------------------------------------------------------------------ clause steps
    def _directed(self, run: _Run, step: StepSpec, clause: str, hypothetical: bool) -> None:
        """Step ``directed``: every player a directed cue points at ("suspicious of X")."""
        if hypothetical:
            return
        comp = run.comp
        for rx in comp.all_of(step.patterns):
            for m in rx.finditer(clause):
                pre = clause[: m.start()]
                if comp.negation.search(pre) and not comp.kept_after_negation.search(m.group(0)):
                    continue
                if self._others_view(pre[-120:], m, comp):
                    continue  # "Ellis has long been suspicious of Dana": Ellis's view (v11)
                if comp.ally is not None and comp.ally.match(clause, m.end()):
                    continue  # "watching how A reacts, since they voted with me": an ally (v12)
                run.add(self._names_in(m.group("names"), comp), step.category, f"{step.rule}:{m.group(0)}")
                run.directed_names += self._names_in(m.group("names"), comp)
                more = self._and_on(clause, m, comp)
                if more is not None:
                    run.add(self._names_in(more.group("names"), comp), step.category, f"{step.rule}:{more.group(0)}")

    @staticmethod
    def _and_on(clause: str, m: re.Match[str], comp: _Compiled) -> re.Match[str] | None:
        """A second object of the directed cue ``m`` ("an eye on X, and on Y"), else ``None``."""
        more = comp.and_on.match(clause, m.end())
        # "suspicious of X for ..., and Y for ...": a parallel object needs its own "for"
        # (and the first object has its own "for" too: "wary of how X jumped into
        # accusing A and B for ..." names no parallel object)
        parallel = (
            more is not None
            and comp.parallel_for.match(clause[more.end() :]) is not None
            and comp.parallel_for.match(clause[m.end() :]) is not None
        )
        if more is not None and not more.group("prep") and not parallel:
            return None
        return more

    def _directed_pronoun(self, run: _Run, step: StepSpec, clause: str, hypothetical: bool) -> None:
        """Step ``directed_pronoun``: a directed cue at a pronoun ("keep an eye on both of them")."""
        if hypothetical:
            return
        comp = run.comp
        for rx in comp.all_of(step.patterns):
            for m in rx.finditer(clause):
                if comp.negation.search(clause[: m.start()]):
                    continue
                pre = clause[max(0, m.start() - 120) : m.start()]
                if self._others_view(pre, m, comp):
                    continue  # "A voted B and seems wary of them": A's view (v12)
                # (v11) the subjects named earlier in this clause ("A and B voted late,
                # so I'm watching their reactions"), when no clause before named any
                here = [
                    x.group(1)
                    for x in comp.name.finditer(clause, 0, m.start())
                    if not comp.obj_before.search(clause[max(0, x.start() - 80) : x.start()])
                ]
                ante = run.subjects or list(dict.fromkeys(here)) or run.prev_subjects
                refs = self._pronoun_refs(m.group("pron"), ante, run.candidates, comp)
                run.add(refs, step.category, f"{step.rule}:{m.group(0)}")

    def _subject(self, run: _Run, step: StepSpec, clause: str, hypothetical: bool) -> None:
        """Step ``subject``: a cue said of the clause's subject (``steps.subject_cues``)."""
        subj = self._clause_subjects(run, clause)
        if not subj.own:
            return
        picked = self._subject_cue(run, clause, subj, hypothetical)
        if picked is None:
            return
        read = self._own_read(run, clause, picked[0])
        if read is None:
            return
        cue_m, category = read, picked[1]
        targets = self._cue_targets(run, clause, subj, cue_m)
        if targets is not None:
            run.add(targets, category, f"{category}:{cue_m.group(0)}|{clause.strip()}")

    _SENTENCE_STEPS: ClassVar[dict[str, Callable[..., None]]] = {
        "statement": _statements,
        "pronoun_statement": _pronoun_statements,
        "pronoun_possibility": _pronoun_possibilities,
        "clauses": _clauses,
    }
    _CLAUSE_STEPS: ClassVar[dict[str, Callable[..., None]]] = {
        "directed": _directed,
        "directed_pronoun": _directed_pronoun,
        "subject": _subject,
    }

    @staticmethod
    def _mentions(clause: str, comp: _Compiled) -> list[re.Match[str]]:
        """The names in ``clause`` that may be its subject (not objects, claims' authors, quoted)."""
        said = RulesAnnotator._reported(clause, comp)  # names after "says", "claims" are someone else's words
        modified = [x.span() for x in comp.modifier.finditer(clause)] if comp.modifier is not None else []
        out = []
        for m in comp.name.finditer(clause):
            object_ = comp.obj_before.search(clause[max(0, m.start() - 80) : m.start()])
            # "others like A and B haven't spoken": the examples of a group are its subject
            example = (
                comp.examples is not None
                and comp.examples.search(clause, 0, m.start()) is not None
                # "to frame someone like A": the group is acted on, so are its examples (v12)
                and (comp.acted_on is None or comp.acted_on.search(clause, 0, m.start()) is None)
            )
            if object_ and not example:
                continue
            if said is not None and m.start() >= said.start():
                continue
            if any(a <= m.start() < b for a, b in modified):
                continue  # "pushing for a Casey vote": the vote's target, not a subject (v11)
            if m.group(0).endswith("'s") and RulesAnnotator._claim_author(clause, m, comp):
                continue  # "Casey's theory about loud players being a cover": the claim's author
            out.append(m)
        return out

    @staticmethod
    def _claim_author(clause: str, m: re.Match[str], comp: _Compiled) -> bool:
        """Whether the possessive name ``m`` is the author of a claim that follows it."""
        if comp.claim_author is None:
            return False
        claim = comp.claim_author.match(clause, m.end())
        if claim is None:
            return False
        # (v13) unless the speaker then judges the claim ("A's theory ... feels too convenient")
        return not (comp.claim_judged is not None and comp.claim_judged.search(clause, claim.end()))

    def _clause_subjects(self, run: _Run, clause: str) -> _Subjects:
        """The clause's subjects; updates the run's topic (subjects, last names, spoken-of)."""
        comp = run.comp
        mentions = self._mentions(clause, comp)
        own = [m.group(1) for m in mentions]
        lead_possessive = mentions and mentions[0].group(0).endswith("'s")
        if lead_possessive and comp.lead is not None and comp.lead.fullmatch(clause[: mentions[0].start()]):
            own = [mentions[0].group(1)]  # "Casey's quickness to back Ellis": Casey
        # who a pronoun opening this clause may stand for: the subjects so far, else the one
        # player the clause before named ("suspicious of Dana—their fight ..."), else the
        # subjects of the sentence before
        plural = comp.plural.match(clause) is not None
        last_all = run.last_all
        prior = run.subjects or (last_all if len(last_all) == 1 or (plural and last_all) else run.prev_subjects)
        own, inherited = self._inherited(run, clause, own)
        own = self._pronoun_subjects(run, clause, own, inherited, plural)
        named_here = sorted({m.group(1) for m in comp.name.finditer(clause)})
        run.spoken_of = named_here if comp.speaker_led is not None and comp.speaker_led.match(clause) else []
        run.last_all = named_here or run.last_all
        if own:
            run.subjects = own
            # the last subject group of this clause, for a relative clause after it
            run.last_group = (
                self._subject_group(clause, mentions, len(clause), comp) if mentions and not inherited else own
            )
        run.first = False
        return _Subjects(own, inherited, prior, mentions)

    @staticmethod
    def _inherited(run: _Run, clause: str, own: list[str]) -> tuple[list[str], bool]:
        """(subjects, inherited): a clause without a subject of its own takes one from before."""
        comp = run.comp
        elided = not run.first and comp.elided is not None and bool(comp.elided.match(clause))
        if not comp.name.search(clause) and not comp.generic.search(clause):
            if comp.no_subject is not None and comp.no_subject.match(clause):
                run.subjects = []  # the speaker's clause ends the topic: "..., but I'm wary of people who ..."
            elif not run.first:
                relative = comp.relative is not None and comp.relative.match(clause)
                return (run.last_group if relative and run.last_group else run.subjects), True
            elif comp.pronoun.search(clause) or (comp.continuation is not None and comp.continuation.match(clause)):
                return run.prev_subjects, True  # "X pushed hard. Could be a Mafia play."
        elif elided or (not own and comp.pronoun_subject.search(clause)):
            # "... but now they're pushing at Finley", "..., but also voted for Dana":
            # the names are objects, the subject is the player of the clause before
            return (run.subjects if not run.first else run.prev_subjects), True
        return own, False

    @staticmethod
    def _pronoun_subjects(run: _Run, clause: str, own: list[str], inherited: bool, plural: bool) -> list[str]:
        """An inherited subject, refined by the pronoun that opens the clause."""
        if not inherited:
            return own
        comp = run.comp
        if not own and (len(run.last_all) == 1 or plural) and comp.pronoun.search(clause):
            own = run.last_all  # "My vote goes to Casey; she has been deflecting": the one player named
        if run.spoken_of and (plural or len(run.spoken_of) == 1) and comp.pronoun.search(clause):
            own = run.spoken_of  # "I want to hear from Gray and Finley—they've said nothing": not the speaker
        if len(own) < 2 and comp.group_lead is not None and comp.group_lead.match(clause):
            own = []  # "both", "one of them" stand for two or more players, never for one
        return own

    def _subject_cue(
        self, run: _Run, clause: str, subj: _Subjects, hypothetical: bool
    ) -> tuple[re.Match[str], Category] | None:
        """The first of ``steps.subject_cues`` that matches the clause, with its category."""
        comp = run.comp
        # "whether X is genuine or Mafia" raises the possibility; other conditions do not
        if hypothetical and (comp.whether is None or not comp.whether.match(clause)):
            return None
        for cue in self._engine.steps.subject_cues:
            if hypothetical and not cue.in_condition:
                continue
            rx = getattr(comp, cue.pattern)
            if cue.cleared_by is None:
                m = self._clause_cue(clause, rx, comp, allow_whether=cue.in_condition)
                if m is not None:
                    return m, cue.category
                continue
            found = self._uncleared_cue(run, clause, subj, rx, getattr(comp, cue.cleared_by))
            return (found, cue.category) if found is not None else None
        return None

    def _uncleared_cue(
        self, run: _Run, clause: str, subj: _Subjects, rx: re.Pattern[str], clearing: re.Pattern[str]
    ) -> re.Match[str] | None:
        """A cue of ``rx`` in a clause that no ``clearing`` cue clears (a clearing alone clears)."""
        comp = run.comp
        cue_m = self._clause_cue(clause, rx, comp)
        clear_m = self._clause_cue(clause, clearing, comp, motive=True)
        if (
            clear_m is not None
            and comp.hedged_clear is not None
            and comp.hedged_clear.search(clause, 0, clear_m.start())
        ):
            clear_m = None  # "could be genuine, but it's also a cover": one side of an alternative
        if clear_m is not None and comp.self_subject is not None and not subj.inherited:
            # "I know I'm innocent, so the Mafia is among A and B" (v8): the speaker's
            # own clearing clears no one named after it
            lead_names = [x for x in subj.mentions if x.end() <= clear_m.start()]
            seg = clause[lead_names[-1].end() if lead_names else 0 : clear_m.start()]
            if comp.self_subject.search(seg):
                return None  # no label from this clause either (as before v8)
        if clear_m is not None and cue_m is None:
            run.cleared.update(
                subj.own if subj.inherited else self._subject_group(clause, subj.mentions, clear_m.start(), comp)
            )
        if (
            clear_m is not None
            and cue_m is not None
            and comp.claim_judged is not None
            and comp.claim_judged.search(clause, clear_m.end(), cue_m.start())
        ):
            clear_m = None  # (v13) "A's read of B as innocent feels too neat": the read's words
        if cue_m is None or clear_m is not None:
            return None
        return cue_m

    @staticmethod
    def _own_read(run: _Run, clause: str, cue_m: re.Match[str]) -> re.Match[str] | None:
        """The cue as the speaker's own read.

        ``None``: someone else's claim, argued away, or about the speaker.
        """
        comp, sentence = run.comp, run.sentence
        cited = comp.cited.search(clause, 0, cue_m.start()) if comp.cited is not None else None
        if cited is not None and not (comp.judged and comp.judged.search(clause, cited.end(), cue_m.start())):
            # "X called out Y's coordination", "they paint me as shady": not the speaker's read;
            # the speaker's own judgement may follow ("call me suspicious feels too eager")
            judged = comp.judged.search(clause, cue_m.end()) if comp.judged is not None else None
            later = next((x for x in comp.suspicion.finditer(clause, judged.end())), None) if judged else None
            if later is None or comp.negation.search(clause[: later.start()][-80:]):
                return None
            cue_m = later
        if comp.argued_away is not None and comp.argued_away.search(sentence, sentence.find(clause) + len(clause)):
            return None  # "X's shift is odd, but if X were Mafia, they'd have stayed quiet"
        selfref = comp.self_ref.search(clause) if comp.self_ref is not None else None
        if selfref is not None and selfref.start() <= cue_m.start() < selfref.end():
            return None  # "that leaves me in a tough spot as the lone Mafia": about the speaker
        return cue_m

    def _cue_targets(self, run: _Run, clause: str, subj: _Subjects, cue_m: re.Match[str]) -> list[str] | None:
        """The players a subject cue is said of (``None``: no label)."""
        comp, mentions = run.comp, subj.mentions
        if subj.inherited:
            # a negation inside the cue itself ("haven't taken a stand", v8) is the cue
            if any(not (cue_m.start() <= x.start() < cue_m.end()) for x in comp.negation_any.finditer(clause)):
                return None
            return subj.own
        near = [m for m in mentions if m.end() <= cue_m.start()]
        between = clause[near[-1].end() : cue_m.start()] if near else ""
        if comp.self_subject is not None and comp.self_subject.search(between):
            return None  # "I hear what X says, and I see why I look suspicious"
        thought = self._thought(clause, cue_m, comp)
        if thought is not None:
            return self._names_in(thought.group("names"), comp)
        after_cue = comp.subordinate is not None and comp.subordinate.match(clause, cue_m.end())
        first_after = next((m for m in mentions if m.start() >= cue_m.end()), None)
        apart = (
            first_after is not None
            and comp.sub_any is not None
            and comp.sub_any.search(clause, cue_m.end(), first_after.start()) is not None
        )
        if (
            not near
            and subj.prior
            and comp.pronoun.search(clause)
            and (after_cue or apart or comp.pronoun_subject.search(clause))
        ):
            # "..., but it could also be a Mafia coasting while X ...", "they deflected
            # instead of answering X": the pronoun's player, not the names after the cue
            return subj.prior
        return self._subject_group(clause, mentions, cue_m.start(), comp)

    @staticmethod
    def _thought(clause: str, cue_m: re.Match[str], comp: _Compiled) -> re.Match[str] | None:
        """The complement whose players the cue is about ("X's save makes me wonder if Y ...")."""
        if comp.complement_names is None or comp.complement_end is None:
            return None
        if not comp.complement_end.search(clause, 0, cue_m.end()):
            return None
        if comp.to_before.search(clause[: cue_m.start()]):
            return None  # "X's shift to suspect Y" (v8): X's act, not a thought about Y
        return comp.complement_names.match(clause, cue_m.end())

    async def label(self, msg: DayMessage, ctx: GameContext) -> list[Label]:
        """Labels of a day message (see :meth:`label_text`)."""
        cands = {ctx.names[s]: s for s in msg.candidates}
        return self.label_text(msg.text, ctx.names[msg.seat], cands, ctx)


# --------------------------------------------------------------------------- model annotator
def annotation_schema(targets: Sequence[str]) -> dict[str, Any]:
    """JSON schema of a model annotator's answer for a message with the given target names."""
    return {
        "type": "object",
        "properties": {
            "labels": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "target": {"type": "string", "enum": list(targets)},
                        "category": {"type": "string", "enum": ["suspect", "accuse"]},
                        "evidence": {"type": "string"},
                    },
                    "required": ["target", "category", "evidence"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["labels"],
        "additionalProperties": False,
    }


class ModelAnnotator:
    """Annotator backed by a chat model, answering under a JSON schema.

    The message is shown JSON-quoted, so its text cannot change the prompt's structure.
    A failed call is retried ``retries`` times, then reported as :class:`AnnotatorFailure`
    (the message is recorded as failed in the annotation header, never as "no label").

    The prompt comes from the annotator pack (``model.system``/``model.user``): the
    definitions with examples, the players that may be labelled, and the JSON answer form,
    short enough for a 7-8B instruction model. The answer is read leniently, since a server may
    ignore the schema: ``{"labels": [...]}`` or a bare list, category in any case, a target
    written with emphasis, quotes or other case (resolved through
    :func:`mafialab.engine.resolve_name`); a label for the speaker, a dead player, or an
    ambiguous or unknown name makes the answer unusable (retried, then a failure), never a guess.

    Args:
        model: The chat model.
        retries: Extra attempts after a failure.
        max_tokens: Generation cap.
        temperature: Sampling temperature (``0`` by default for a stable annotation).
        pack: Annotator language data (default: the built-in English pack).
    """

    def __init__(
        self,
        model: ChatModel,
        retries: int = 2,
        max_tokens: int = 512,
        temperature: float | None = 0.0,
        pack: AnnotatorPack | None = None,
    ):
        self.pack = pack or load_annotator_pack("en")
        self.model = model
        self.name = model.name
        self.retries = retries
        self.max_tokens = max_tokens
        self.temperature = temperature

    def request(self, msg: DayMessage, ctx: GameContext) -> ChatRequest:
        """The chat request for ``msg``."""
        targets = [ctx.names[s] for s in msg.candidates]
        user = self.pack.user.format(
            players=", ".join(ctx.names),
            speaker=ctx.names[msg.seat],
            targets=", ".join(targets) or "(none)",
            message=json.dumps(msg.text, ensure_ascii=False),
        )
        system = self.pack.system.format(game=ctx.game, mafia=ctx.mafia_team, town=ctx.town_team)
        return ChatRequest(
            messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
            json_schema=annotation_schema(targets),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            purpose="annotate",
            meta={"message_id": msg.message_id},
        )

    def parse(self, obj: Any, msg: DayMessage, ctx: GameContext) -> list[Label]:
        """The labels in a parsed answer.

        Raises:
            AnnotatorFailure: ``schema`` cause, naming the field, for an unusable answer.
        """
        labels = obj.get("labels") if isinstance(obj, dict) else obj
        if not isinstance(labels, list):
            raise AnnotatorFailure("schema", "labels: missing or not a list")
        by_name = {ctx.names[s]: s for s in msg.candidates}
        out = []
        for i, lab in enumerate(labels):
            if not isinstance(lab, dict):
                raise AnnotatorFailure("schema", f"labels.{i}: not an object")
            tgt, cat = lab.get("target"), lab.get("category")
            res = resolve_name(tgt, list(by_name)) if isinstance(tgt, str) else None
            if res is None or res.name is None:
                why = res.cause if res is not None else "not a string"
                raise AnnotatorFailure(
                    "schema", f"labels.{i}.target: {tgt!r} is not a living player other than the speaker ({why})"
                )
            cat = cat.strip().lower() if isinstance(cat, str) else cat
            if cat not in ("suspect", "accuse"):
                raise AnnotatorFailure("schema", f"labels.{i}.category: {cat!r} is not suspect|accuse")
            ev = lab.get("evidence")
            out.append(
                Label(by_name[res.name], "accuse" if cat == "accuse" else "suspect", str(ev)[:300] if ev else "")
            )
        return _strongest(out)

    async def label(self, msg: DayMessage, ctx: GameContext) -> list[Label]:
        """Labels of ``msg``.

        Raises:
            AnnotatorFailure: After the last failed attempt (cause of the last attempt).
        """
        req = self.request(msg, ctx)
        fail = AnnotatorFailure("empty", "no attempt")
        for _ in range(self.retries + 1):
            try:
                resp = await self.model.chat(req)
            except Exception as err:  # a backend that raises is a transport failure
                fail = AnnotatorFailure("transport", f"{type(err).__name__}: {err}")
                continue
            ans = split_answer(resp)
            if ans.obj is None:
                fail = AnnotatorFailure(ans.cause or "schema", ans.detail)
                continue
            try:
                return self.parse(ans.obj, msg, ctx)
            except AnnotatorFailure as err:
                fail = err
        raise fail


# --------------------------------------------------------------------------- driver
def game_context(game: GameLog) -> GameContext:
    """The annotator's context of a recorded game (names and team words from its header)."""
    lex = game.header.rules.lexicon
    names = tuple(s.name for s in sorted(game.header.roster, key=lambda s: s.seat))
    return GameContext(names=names, game=lex.game, town_team=lex.town_team, mafia_team=lex.mafia_team)


def player_ref(game: GameLog, seat: int) -> PlayerRef:
    """The roster entry of ``seat`` as a :class:`PlayerRef` (true role and team)."""
    s = next(x for x in game.header.roster if x.seat == seat)
    return PlayerRef(seat=s.seat, name=s.name, role=s.role, team=s.team)


@dataclass
class AnnotationResult:
    """Output of :func:`annotate_games`: the header (scanned and failed messages) and records."""

    header: AnnotationHeader
    annotations: list[Annotation]


async def annotate_games(
    games: Sequence[GameLog],
    annotator: Annotator,
    *,
    concurrency: int = 8,
    on_message: Callable[[], None] | None = None,
) -> AnnotationResult:
    """Annotate every day-discussion message of ``games``.

    Args:
        games: Game logs.
        annotator: The annotator.
        concurrency: Messages labelled at once.
        on_message: Called after each message (progress).

    Returns:
        The header (with every scanned message and every failed one) and the annotations,
        ordered by game, round, message index and target seat.
    """
    sem = asyncio.Semaphore(max(1, concurrency))
    header = AnnotationHeader(annotator=annotator.name, software=f"mafialab {__version__}")
    jobs: list[tuple[GameLog, GameContext, DayMessage]] = []
    for g in games:
        header.games.append(g.game_id)
        ctx = game_context(g)
        header.rosters[g.game_id] = list(ctx.names)
        for m in day_messages(g):
            header.scanned.append(
                ScannedMessage(
                    message_id=m.message_id,
                    game_id=m.game_id,
                    round=m.round,
                    index=m.index,
                    seat=m.seat,
                    candidates=list(m.candidates),
                )
            )
            jobs.append((g, ctx, m))

    async def one(g: GameLog, ctx: GameContext, m: DayMessage) -> list[Annotation]:
        async with sem:
            try:
                labels = await annotator.label(m, ctx)
            except AnnotatorFailure as err:
                header.failed.append(FailedMessage(message_id=m.message_id, cause=err.cause, detail=err.detail))
                log.warning("annotate %s: %s", m.message_id, err)
                labels = []
        if on_message is not None:
            on_message()
        return [
            Annotation(
                message_id=m.message_id,
                game_id=m.game_id,
                round=m.round,
                index=m.index,
                day=m.round,
                seq=m.seq,
                accuser=player_ref(g, m.seat),
                target=player_ref(g, lab.target),
                category=lab.category,
                evidence=lab.evidence,
                annotator=annotator.name,
            )
            for lab in labels
        ]

    batches = await asyncio.gather(*(one(*j) for j in jobs))
    header.failed.sort(key=lambda f: f.message_id)
    return AnnotationResult(header, [a for b in batches for a in b])


def load_logs(paths: Sequence[Path], include_branches: bool = True) -> list[GameLog]:
    """Read every game directory under ``paths`` (see :func:`mafialab.record.iter_game_dirs`).

    With ``include_branches=False`` branches (forks, whose header has a ``parent`` block) are
    left out: they are not independent games (``beliefshift freeze`` leaves them out).

    Raises:
        mafialab.record.LogFormatError: A game without a valid header, or two directories
            holding one game id (the message names both paths; nothing is dropped silently).
        FileNotFoundError: A path that does not exist or holds no game.
    """
    from mafialab.record import iter_game_dirs, no_games_message

    games: list[GameLog] = []
    for p in paths:
        p = Path(p)
        dirs = iter_game_dirs(p)
        if not dirs:
            raise FileNotFoundError(no_games_message(p))
        games.extend(read_game(d) for d in dirs)
    if not include_branches:
        games = [g for g in games if g.header.parent is None]
    first: dict[str, GameLog] = {}
    for g in games:
        seen = first.setdefault(g.game_id, g)
        if seen is not g:  # message ids and frozen items are keyed by game id: refuse, never drop one
            raise LogFormatError(
                f"game id {g.game_id!r} is in both {seen.path} and {g.path}; the benchmark keys messages by game "
                "id, so give it one of them (or move the copy out of the way)"
            )
    return games


def write_annotations(path: Path, result: AnnotationResult) -> None:
    """Write ``ANN.jsonl``: the header line, then one line per (message, target)."""
    write_jsonl(path, result.header, result.annotations)
