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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mafialab import __version__
from mafialab.beliefshift._answer import split_answer
from mafialab.beliefshift._io import write_jsonl
from mafialab.beliefshift._schema import (
    Annotation,
    AnnotationHeader,
    Category,
    FailedMessage,
    PlayerRef,
    ScannedMessage,
    message_id,
)
from mafialab.engine import Elimination, Speech
from mafialab.models import ChatMessage, ChatModel, ChatRequest
from mafialab.record import GameLog, read_game

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
    """

    target: int
    category: Category
    evidence: str


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
_WOLF_WORDS = (
    "mafia",
    "mafioso",
    "mafiosi",
    "werewolf",
    "werewolves",
    "wolf",
    "wolves",
    "scum",
    "evil",
    "killer",
    "killers",
    "traitor",
    "traitors",
)
_NEG_PREFIX = re.compile(
    r"\b(?:not|no|never|nor|n't|cannot|hardly|doubt|if|unless|whether|why|instead\s+of|rather\s+than)\b|n't\b",
    re.IGNORECASE,
)
_NEG_INSIDE = re.compile(r"\b(?:not|never|no|hardly|less|nothing)\b|n't\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(
    r"[,;:\u2014\u2013()]|\s-\s|\b(?:but|however|although|though|while|whereas)\b", re.IGNORECASE
)
_HEDGE = re.compile(
    r"\b(?:either|or|if|unless|maybe|perhaps|possibly|might|could|may|probably|likely|wonder|suspect|guess|mean|means)\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:says?|said|saying|claims?|claimed|claiming|theory|theories|hint(?:s|ed|ing)?|suggest(?:s|ed|ing)?|impl(?:y|ies|ied|ying)|"
    r"insist(?:s|ed|ing)?|argu(?:e|es|ed|ing)|call(?:s|ed|ing)|accus(?:e|es|ed|ing)|(?:he|she|they|who)\s+thinks?|"
    r"(?:he|she|they|who)\s+believes?|wants?\s+us\s+to\s+think)\b",
    re.IGNORECASE,
)
_OBJECT_OF = re.compile(
    r"\b(?:of|about|for|with|on|to|against|by|from|at|defend(?:s|ed|ing)?|accus(?:e|es|ed|ing)|than|like)\s*$",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\n+")


@dataclass(frozen=True)
class _Pattern:
    category: Category
    regex: str
    negation_inside_ok: bool = False
    sentence_subject: bool = False  # the names must open the sentence (after at most 3 words)


_PATTERNS: tuple[_Pattern, ...] = (
    # --- accuse: states directly that the target is on the wolf team
    _Pattern(
        "accuse",
        r"{NL}\s+(?:is|are|'s|’s|must\s+be|has\s+to\s+be|have\s+to\s+be|has\s+got\s+to\s+be)\s+"
        r"(?:(?:definitely|clearly|obviously|certainly|surely|absolutely|100%|confirmed|totally|for\s+sure|"
        r"almost\s+certainly|without\s+a\s+doubt)\s+)*"
        r"(?:(?:a|an|the|one\s+of\s+the|on\s+the|part\s+of\s+the|with\s+the|in\s+the)\s+)?{W}\b",
    ),
    _Pattern("accuse", r"\b(?:I\s+(?:checked|investigated)\s+){NL}\W+(?:and\s+)?(?:they|he|she)\s+(?:is|are)\s+{W}\b"),
    # --- suspect: raises the possibility / expresses suspicion
    _Pattern(
        "suspect",
        r"{NL}\s+(?:is|are|'s|’s)\s+(?:probably|likely|possibly|maybe|perhaps|potentially|most\s+likely|"
        r"quite\s+possibly|very\s+likely)\s+(?:(?:a|an|the|one\s+of\s+the|on\s+the|part\s+of\s+the)\s+)?{W}\b",
    ),
    _Pattern(
        "suspect",
        r"{NL}\s+(?:might|may|could|can)\s+(?:well\s+|very\s+well\s+|possibly\s+|also\s+|easily\s+|actually\s+)?"
        r"be\s+(?:(?:a|an|the|one\s+of\s+the|on\s+the|part\s+of\s+the)\s+)?{W}\b",
    ),
    _Pattern("suspect", r"\b(?:could|might|can)\s+{NL}\s+be\s+(?:(?:a|an|the|one\s+of\s+the|on\s+the)\s+)?{W}\b"),
    _Pattern(
        "suspect", r"\bI\s+have\s+(?:some\s+|serious\s+|real\s+|my\s+|a\s+few\s+|strong\s+)?doubts\s+about\s+{NL}"
    ),
    _Pattern(
        "suspect",
        r"\bI(?:'m|’m|\s+am|\s+feel|\s+remain|\s+grow|'m\s+getting|\s+am\s+getting|'m\s+growing|\s+am\s+growing)\s+"
        r"(?:(?:a\s+bit|a\s+little|a\s+little\s+bit|very|quite|really|pretty|more|most|increasingly|still|also|"
        r"somewhat|slightly|highly|deeply|now|getting|growing)\s+)*"
        r"(?:suspicious|wary|skeptical|sceptical|doubtful|leery)\s+(?:of|about|towards?|regarding)\s+{NL}",
    ),
    _Pattern(
        "suspect",
        r"\bI\s+(?:(?:also|still|now|really|kind\s+of|do|already|strongly|somewhat|slightly)\s+)*"
        r"(?:suspect|distrust|mistrust)\s+{NL}",
    ),
    _Pattern(
        "suspect",
        r"{NL}\s+(?:is|are|seems?|looks?|feels?|sounds?|appears?|has\s+been|have\s+been|was|were|'s|’s|"
        r"is\s+acting|are\s+acting|is\s+being|seems?\s+to\s+be|looks?\s+to\s+be)\s+"
        r"(?:\w+\s+){0,2}?(?:suspicious|suspect|sus|shady|sketchy|fishy|dodgy|evasive|deflecting|calculated|"
        r"too\s+convenient)\b(?!\s+(?:of|about|towards?|regarding)\b)",
    ),
    _Pattern(
        "suspect",
        r"{NL}(?:'s|’s)\s+(?:\w+\s+){0,4}?(?:is|was|seems?|looks?|feels?|are|were)\s+(?:\w+\s+){0,3}?"
        r"(?:suspicious|shady|sketchy|fishy|off|calculated|a\s+red\s+flag|(?:too\s+|very\s+|pretty\s+|really\s+)?convenient)\b",
    ),
    _Pattern(
        "suspect",
        r"\b(?:keep(?:ing)?|have|having|got|put(?:ting)?)\s+(?:a\s+|an\s+|my\s+|our\s+)?"
        r"(?:close\s+|careful\s+|sharp\s+|wary\s+|watchful\s+)?eyes?\s+on\s+{NL}",
    ),
    _Pattern("suspect", r"\bI\s+(?:don't|do\s+not|can't|cannot|can\s+not)\s+(?:fully\s+|really\s+)?trust\s+{NL}", True),
    _Pattern(
        "suspect",
        r"\bI(?:'m|’m|\s+am|'ll\s+be|\s+will\s+be)\s+(?:(?:also|still|especially|really|closely|now|going\s+to\s+keep)\s+)*"
        r"watching\s+{NL}",
    ),
    _Pattern(
        "suspect",
        r"\b(?:something|a\s+lot|much)\s+(?:is\s+|seems\s+|feels\s+)?(?:off|fishy|suspicious|weird|strange)\s+"
        r"(?:about|with)\s+{NL}",
    ),
    _Pattern(
        "suspect",
        r"\b(?:my|our|the)\s+(?:main\s+|biggest\s+|strongest\s+|top\s+|growing\s+)?"
        r"(?:suspicions?|doubts|concerns|suspect|suspicion)\s+(?:is\s+|are\s+|falls?\s+|lies\s+)?"
        r"(?:on|about|toward|towards|of|with|at|is)\s+{NL}",
    ),
    _Pattern(
        "suspect",
        r"{NL}\s+(?:is|are|remains?)\s+(?:still\s+)?(?:my|our|the)\s+(?:top|main|prime|biggest|primary|number\s+one|#1|"
        r"first|leading|strongest)\s+(?:suspect|suspicion|pick|read|concern)",
    ),
    # the sentence's subject, then (in the same clause) a hedged wolf possibility or a suspicion
    # word: "Kennedy held back, which could be a smart Mafia move", "Alex jumped on the vote
    # quickly, which feels a bit convenient"
    _Pattern(
        "suspect",
        r"{NL}(?:'s|’s)?\b(?:(?!\b(?:but|however|although|though|while|whereas|unlike)\b)[^.;:!?\u2014\u2013])*?"
        r"\b(?:could|might|may)\s+(?:also\s+|well\s+|easily\s+|just\s+)?be\s+(?:\w+\s+){0,4}?{W}\b",
        sentence_subject=True,
    ),
    _Pattern(
        "suspect",
        r"{NL}(?:'s|’s)?\b(?:(?!\b(?:but|however|although|though|while|whereas|unlike)\b)[^.;:!?\u2014\u2013])*?"
        r"\b(?:suspicious|calculated|too\s+convenient|a\s+bit\s+convenient|convenient\s+timing|red\s+flag|"
        r"like\s+a\s+(?:Mafia|wolf|werewolf)\s+(?:move|strategy|play|tactic))\b(?!\s+(?:of|about|towards?)\b)",
        sentence_subject=True,
    ),
)


def _subject_starts(sentence: str) -> list[int]:
    """Word starts within a sentence's first four words (where a sentence subject may begin)."""
    out = []
    for m in re.finditer(r"\b\w", sentence):
        if len(sentence[: m.start()].split()) > 3:
            break
        out.append(m.start())
    return out


def _next_match(rx: re.Pattern[str], sentence: str, pos: int, starts: list[int] | None) -> re.Match[str] | None:
    """The leftmost match starting at or after ``pos``; only at ``starts`` when given.

    A sentence-subject pattern scans to the end of its clause from every start, so searching a
    long sentence everywhere is quadratic; its match must begin in the first words anyway.
    """
    if starts is None:
        return rx.search(sentence, pos)
    for p in starts:
        if p >= pos and (m := rx.match(sentence, p)) is not None:
            return m
    return None


class RulesAnnotator:
    """Offline baseline annotator: regular patterns over English text, no model.

    Recognised (``{N}`` is a living player's name, or a list "A and B", "A, B or C";
    ``{W}`` a wolf-team word: mafia, werewolf, wolf, scum, evil, the rule set's team name):

    * accuse: ``{N} is/are/must be/has to be [definitely|clearly|...] [a|the|one of the] {W}``,
      ``I checked {N}: {N} is {W}``;
    * suspect: ``{N} is probably/likely/possibly {W}``, ``{N} might/could be {W}``,
      ``I have doubts about {N}``, ``I'm (a bit) suspicious of/wary of {N}``, ``I suspect {N}``,
      ``{N} seems/looks/is suspicious|shady|fishy|sketchy``, ``{N}'s ... is suspicious``,
      ``keeping an eye on {N}``, ``I'm watching {N}``, ``I don't trust {N}``, ``something is off
      about {N}``, ``my suspicion is on {N}``, ``{N} is my top suspect``; with ``{N}`` opening
      the sentence: ``{N} ..., which could be a ... {W} move``, ``{N}'s ... feels calculated /
      too convenient / like a {W} tactic / is a red flag``.

    A match is dropped when the clause before it, or the match itself, contains a negation
    or condition ("not suspicious", "I don't think {N} is mafia", "if {N} were mafia"), when
    the name is the speaker's, or when the name's capitalisation differs ("gray" is not Gray).
    English only.

    Args:
        extra_wolf_words: More words meaning "on the wolf team".
    """

    name = "rules"

    def __init__(self, extra_wolf_words: Sequence[str] = ()):
        self._extra = tuple(extra_wolf_words)
        self._cache: dict[tuple[tuple[str, ...], str], list[tuple[_Pattern, re.Pattern[str]]]] = {}

    def _compiled(self, names: tuple[str, ...], mafia_team: str) -> list[tuple[_Pattern, re.Pattern[str]]]:
        key = (names, mafia_team)
        if key not in self._cache:
            words = sorted({*_WOLF_WORDS, *self._extra, mafia_team.lower()}, key=len, reverse=True)
            w = r"(?:" + "|".join(re.escape(x) for x in words) + r")(?:\s+(?:team|member|side|player))?"
            name = r"(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")"
            # a list names each player at most once: bounding its length keeps a degenerate text
            # ("Bailey, Bailey, Bailey, ...") linear instead of cubic (8 kB took minutes)
            nl = (
                rf"\b(?P<names>{name}(?:\s*(?:,|&|\band\b|\bor\b|\bnor\b)\s*(?:and\s+|or\s+)?{name})"
                rf"{{0,{max(len(names) - 1, 0)}}})\b"
            )
            self._cache[key] = [
                (p, re.compile(p.regex.replace("{NL}", nl).replace("{W}", w), re.IGNORECASE)) for p in _PATTERNS
            ]
        return self._cache[key]

    def label_text(self, text: str, speaker: str, candidates: dict[str, int], ctx: GameContext) -> list[Label]:
        """Label one text.

        Args:
            text: The message.
            speaker: Speaker name (never a target).
            candidates: Target names mapped to seats.
            ctx: Game context (names, team words).

        Returns:
            At most one label per target, the strongest found.
        """
        names = tuple(n for n in ctx.names if n != speaker)
        compiled = self._compiled(names, ctx.mafia_team)
        found: list[Label] = []
        for sentence in _SENTENCE.split(text):
            sentence = sentence.strip()
            if not sentence:
                continue
            starts: list[int] | None = None
            for pat, rx in compiled:
                pos = 0
                if pat.sentence_subject and starts is None:
                    starts = _subject_starts(sentence)
                while (m := _next_match(rx, sentence, pos, starts if pat.sentence_subject else None)) is not None:
                    # a rejected match is retried one character later, so a shorter match inside it
                    # ("wary of Alex, and Finley is a wolf" -> "Finley is a wolf") is still found
                    pos = m.start() + 1
                    if not pat.negation_inside_ok and _NEG_INSIDE.search(m.group(0)):
                        continue
                    before = sentence[: m.start()]
                    if pat.regex.startswith("{NL}") and _OBJECT_OF.search(before):
                        continue  # the name is the object of something else ("X's defense of Y is ...")
                    if pat.sentence_subject and len(before.split()) > 3:
                        continue
                    clause = _CLAUSE_BREAK.split(before)[-1]
                    if _NEG_PREFIX.search(clause) or _REPORTED.search(clause):
                        continue  # negated, conditional, or someone else's words ("Bailey says X is mafia")
                    pos = m.end()
                    category = pat.category
                    if category == "accuse" and _HEDGE.search(before):
                        category = "suspect"  # "either A is mafia or ...", "that could mean A is mafia"
                    for nm in re.findall(r"[A-Za-z][\w'-]*", m.group("names")):
                        nm = re.sub(r"(?:'s|’s)$", "", nm)
                        if nm in candidates:
                            found.append(Label(candidates[nm], category, sentence[:300]))
        return _strongest(found)

    async def label(self, msg: DayMessage, ctx: GameContext) -> list[Label]:
        """Labels of a day message (see :meth:`label_text`)."""
        cands = {ctx.names[s]: s for s in msg.candidates}
        return self.label_text(msg.text, ctx.names[msg.seat], cands, ctx)


# --------------------------------------------------------------------------- model annotator
ANNOTATE_SYSTEM = (
    "You annotate messages from recorded games of {game}. The {mafia} are the hidden team; the "
    "{town} is everyone else.\n"
    "For the message you are given, list every player the speaker SUSPECTS or ACCUSES:\n"
    "- suspect: the speaker expresses uncertainty about whether the player may be on the {mafia} "
    "team, or raises that possibility;\n"
    "- accuse: the speaker states directly that the player is on the {mafia} team.\n"
    "Do not label players the speaker defends, clears, or only mentions. Copy the words that carry "
    'each label into "evidence". Answer only with JSON: {{"labels": [...]}} (an empty list if none).'
)


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

    Args:
        model: The chat model.
        retries: Extra attempts after a failure.
        max_tokens: Generation cap.
        temperature: Sampling temperature (``0`` by default for a stable annotation).
    """

    def __init__(self, model: ChatModel, retries: int = 2, max_tokens: int = 512, temperature: float | None = 0.0):
        self.model = model
        self.name = model.name
        self.retries = retries
        self.max_tokens = max_tokens
        self.temperature = temperature

    def request(self, msg: DayMessage, ctx: GameContext) -> ChatRequest:
        """The chat request for ``msg``."""
        targets = [ctx.names[s] for s in msg.candidates]
        user = (
            f"Players: {', '.join(ctx.names)}.\n"
            f"Speaker: {ctx.names[msg.seat]}. Players still in the game besides the speaker: {', '.join(targets)}.\n"
            f"Message (JSON-quoted): {json.dumps(msg.text, ensure_ascii=False)}"
        )
        system = ANNOTATE_SYSTEM.format(game=ctx.game, mafia=ctx.mafia_team, town=ctx.town_team)
        return ChatRequest(
            messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
            json_schema=annotation_schema(targets),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            purpose="annotate",
            meta={"message_id": msg.message_id},
        )

    def _parse(self, obj: dict[str, Any], msg: DayMessage, ctx: GameContext) -> list[Label]:
        labels = obj.get("labels")
        if not isinstance(labels, list):
            raise AnnotatorFailure("schema", "labels: missing or not a list")
        by_name = {ctx.names[s]: s for s in msg.candidates}
        out = []
        for i, lab in enumerate(labels):
            if not isinstance(lab, dict):
                raise AnnotatorFailure("schema", f"labels.{i}: not an object")
            tgt, cat = lab.get("target"), lab.get("category")
            if tgt not in by_name:
                raise AnnotatorFailure(
                    "schema", f"labels.{i}.target: {tgt!r} is not a living player other than the speaker"
                )
            if cat not in ("suspect", "accuse"):
                raise AnnotatorFailure("schema", f"labels.{i}.category: {cat!r} is not suspect|accuse")
            ev = lab.get("evidence")
            out.append(Label(by_name[tgt], cat, str(ev)[:300] if ev else ""))
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
                return self._parse(ans.obj, msg, ctx)
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
        mafialab.record.LogFormatError: A game without a valid header.
        FileNotFoundError: A path that does not exist or holds no game.
    """
    from mafialab.record import iter_game_dirs

    games: list[GameLog] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such file or directory")
        dirs = iter_game_dirs(p)
        if not dirs:
            raise FileNotFoundError(f"{p}: no game.jsonl found under it")
        games.extend(read_game(d) for d in dirs)
    if not include_branches:
        games = [g for g in games if g.header.parent is None]
    return games


def write_annotations(path: Path, result: AnnotationResult) -> None:
    """Write ``ANN.jsonl``: the header line, then one line per (message, target)."""
    write_jsonl(path, result.header, result.annotations)
