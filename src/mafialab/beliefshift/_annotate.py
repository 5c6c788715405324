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
from importlib import resources
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
from mafialab.config import read_config, top_level_message
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


# --------------------------------------------------------------------------- language data
@dataclass(frozen=True)
class AnnotatorPack:
    """Language data of the annotators (``beliefshift/annotator_<lang>.yaml``).

    Attributes:
        id: Pack id (recorded in annotation headers).
        language: Language code.
        cues: Cue lexicon of the ``rules`` annotator: lists of regular-expression fragments
            under ``wolf_words``, ``clause_breaks``, ``object_markers``, ``directed``,
            ``suspicion``, ``clearing``, ``negation``, ``conditional``, ``reported``,
            ``hedges``, ``accuse``, ``lists``, ``alternatives`` and ``accuse_said_of``; optional
            (pack v3, empty when absent): ``motive_frames``, ``object_pronouns``,
            ``pronoun_subjects``, ``first_person``, ``self_subject``, ``possibility``,
            ``descriptions``, ``clause_openers``, ``elided_subject``, ``speaker_subjects``,
            ``subordinators``, ``even_handed_conditions``, ``argued_away``, ``cited_claims``,
            ``own_judgement`` and ``complement_verbs`` (v4), ``complement_openers``,
            ``claim_nouns``, ``self_reference``, ``relative_openers`` and
            ``sentence_continuations`` (v5), ``hedged_clearing`` and ``thing_of`` (v6),
            ``discourse_openers``, ``group_pronouns``, ``pronoun_possibility`` and
            ``group_examples`` (v7), ``consequent_markers`` (v8), ``with_speaker`` and
            ``speaker_in_group`` (v9), ``name_modifiers`` and ``others_view`` (v11),
            ``acted_on_groups``, ``modifier_adjectives`` and ``ally_reasons`` (v12),
            ``possessive_cues`` and ``claim_judgements`` (v13)
            (the English words of the clause
            rules live there too, not in code).
        system: Model annotator system prompt (placeholders ``{game} {town} {mafia}``).
        user: Model annotator user prompt (placeholders ``{players} {speaker} {targets} {message}``).
    """

    id: str
    language: str
    cues: dict[str, tuple[str, ...]]
    system: str
    user: str


# rules whose labels a player grouped with the speaker ("X and I") does not get (v9)
_SELF_GROUPED_RULES = frozenset({"suspect", "directed", "directed-pronoun"})

_CUE_KEYS = (
    "wolf_words",
    "clause_breaks",
    "object_markers",
    "directed",
    "suspicion",
    "clearing",
    "negation",
    "conditional",
    "reported",
    "hedges",
    "accuse",
    "lists",
    "alternatives",
    "accuse_said_of",
)
# added in annotator-en-v3; a pack without them reads them as empty
_OPTIONAL_CUE_KEYS = (
    "motive_frames",
    "object_pronouns",
    "pronoun_subjects",
    "first_person",
    "self_subject",
    "possibility",
    "descriptions",
    "clause_openers",
    "elided_subject",
    "speaker_subjects",
    "subordinators",
    "even_handed_conditions",
    # added in annotator-en-v4
    "argued_away",
    "cited_claims",
    "own_judgement",
    "complement_verbs",
    # added in annotator-en-v5
    "complement_openers",
    "claim_nouns",
    "self_reference",
    "relative_openers",
    "sentence_continuations",
    # added in annotator-en-v6
    "hedged_clearing",
    "thing_of",
    # added in annotator-en-v7
    "discourse_openers",
    "group_pronouns",
    "pronoun_possibility",
    "group_examples",
    # added in annotator-en-v8
    "consequent_markers",
    # added in annotator-en-v9
    "with_speaker",
    "speaker_in_group",
    # added in annotator-en-v11
    "name_modifiers",
    "others_view",
    # added in annotator-en-v12
    "acted_on_groups",
    "modifier_adjectives",
    "ally_reasons",
    # added in annotator-en-v13
    "possessive_cues",
    "claim_judgements",
)


def load_annotator_pack(name_or_path: str | Path = "en") -> AnnotatorPack:
    """Load annotator language data: a built-in pack (``"en"``) or a YAML file of the same shape.

    Raises:
        ValueError: Unknown pack, an unreadable file or malformed YAML (a
            :class:`~mafialab.config.ConfigError`, as every YAML file is read: at most 10 MB,
            100,000 nodes and 100 alias expansions), a missing/invalid field (named), or a cue
            fragment that is not a valid regular expression.
    """
    key = str(name_or_path)
    if Path(key).suffix in {".yaml", ".yml"}:
        data, src = read_config(Path(key)), key
    else:
        res = resources.files("mafialab.beliefshift").joinpath(f"annotator_{key}.yaml")
        if not res.is_file():
            raise ValueError(f"annotator pack: unknown pack {key!r} (built in: en; or a YAML path)")
        src = f"annotator_{key}.yaml"
        data = read_config(res, source=src)
    if not isinstance(data, dict):
        raise ValueError(f"{src}: {top_level_message('an annotator pack (a mapping with its cues)', data)}")
    cues_raw = data.get("cues")
    model = data.get("model")
    if not isinstance(cues_raw, dict):
        raise ValueError(f"{src}: cues: missing or not a mapping")
    if not isinstance(model, dict) or not all(isinstance(model.get(k), str) for k in ("system", "user")):
        raise ValueError(f"{src}: model: needs 'system' and 'user' strings")
    cues: dict[str, tuple[str, ...]] = {}
    for k in (*_CUE_KEYS, *_OPTIONAL_CUE_KEYS):
        v = cues_raw.get(k, [] if k in _OPTIONAL_CUE_KEYS else None)
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
            raise ValueError(f"{src}: cues.{k}: expected a list of non-empty strings")
        for x in v:
            try:
                re.compile(x.replace("{N}", "N").replace("{W}", "W"))
            except re.error as err:
                raise ValueError(f"{src}: cues.{k}: {x!r} is not a valid pattern ({err})") from None
        cues[k] = tuple(v)
    return AnnotatorPack(
        id=str(data.get("id", key)),
        language=str(data.get("language", "")),
        cues=cues,
        system=model["system"],
        user=model["user"],
    )


# --------------------------------------------------------------------------- rules annotator
_SENTENCE = re.compile(r"(?<=[.!?])(?<!\.\.\.)[\"')\]]*\s+|\n+|(?:^|\s)[-*•]\s+")
_QUOTED = re.compile(r'"[^"\n]{0,80}"')
_MARKUP = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "*": "", "_": " "})


def _alt(fragments: Iterable[str]) -> str:
    return "(?:" + "|".join(f"(?:{f})" for f in fragments) + ")"


@dataclass
class _Compiled:
    name: re.Pattern[str]
    names: re.Pattern[str]
    breaks: re.Pattern[str]
    obj_before: re.Pattern[str]
    directed: re.Pattern[str]
    suspicion: re.Pattern[str]
    clearing: re.Pattern[str]
    negation: re.Pattern[str]
    conditional: re.Pattern[str]
    reported: re.Pattern[str]
    hedges: re.Pattern[str]
    accuse: list[re.Pattern[str]]
    alternatives: re.Pattern[str]
    accuse_said_of: re.Pattern[str]
    lists: list[re.Pattern[str]]
    negation_any: re.Pattern[str]
    if_before: re.Pattern[str]
    generic: re.Pattern[str]
    list_gap: re.Pattern[str]
    pronoun: re.Pattern[str]
    motive: re.Pattern[str] | None
    directed_pronoun: re.Pattern[str] | None
    accuse_pronoun: list[re.Pattern[str]]
    and_on: re.Pattern[str]
    pronoun_subject: re.Pattern[str]
    possibility: list[re.Pattern[str]]
    lead: re.Pattern[str] | None
    elided: re.Pattern[str] | None
    no_subject: re.Pattern[str] | None
    subordinate: re.Pattern[str] | None
    whether: re.Pattern[str] | None
    described: list[re.Pattern[str]]
    first_person: re.Pattern[str] | None
    self_subject: re.Pattern[str] | None
    with_speaker: list[re.Pattern[str]]
    speaker_group: re.Pattern[str] | None
    argued_away: re.Pattern[str] | None
    cited: re.Pattern[str] | None
    judged: re.Pattern[str] | None
    complement: re.Pattern[str] | None
    complement_end: re.Pattern[str] | None
    complement_names: re.Pattern[str] | None
    claim_author: re.Pattern[str] | None
    self_ref: re.Pattern[str] | None
    relative: re.Pattern[str] | None
    sub_any: re.Pattern[str] | None
    continuation: re.Pattern[str] | None
    hedged_clear: re.Pattern[str] | None
    pronoun_possibility: list[re.Pattern[str]]
    plural: re.Pattern[str]
    group_lead: re.Pattern[str] | None
    speaker_led: re.Pattern[str] | None
    examples: re.Pattern[str] | None
    consequent: re.Pattern[str] | None = None
    modifier: re.Pattern[str] | None = None
    others_view: re.Pattern[str] | None = None
    possessive_cue: re.Pattern[str] | None = None
    claim_judged: re.Pattern[str] | None = None
    acted_on: re.Pattern[str] | None = None
    ally: re.Pattern[str] | None = None


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
        self._cache: dict[tuple[tuple[str, ...], str], _Compiled] = {}

    def _compiled(self, names: tuple[str, ...], mafia_team: str) -> _Compiled:
        key = (names, mafia_team)
        if key in self._cache:
            return self._cache[key]
        c = self.pack.cues
        team = [re.escape(w) for w in {mafia_team.lower(), mafia_team.lower().rstrip("s")} if w]
        w = _alt([*c["wolf_words"], *self._extra, *team]) + r"(?:[\s-]+(?:team|member|side|player|partner)s?)?"
        name = r"(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")"
        # a list names each player at most once: the bound keeps a degenerate text linear
        nl = (
            rf"\b(?P<names>{name}(?:'s)?(?:\s*(?:,|&|/|-|\band\b|\bor\b|\bnor\b)\s*(?:and\s+|or\s+)?{name}(?:'s)?)"
            rf"{{0,{max(len(names) - 1, 0)}}}(?:,?\s+and\s+(?:I|me|myself))?)\b"
        )
        i = re.IGNORECASE

        def sub(frag: str) -> str:
            return frag.replace("{N}", nl).replace("{W}", w)

        fillers = (
            r"(?:(?:how|the\s+way|both|what|why|whether|that|quickly|much|also|especially|closely|more|now|"
            r"on|at|at\s+both)\s+)*"
        )
        if c.get("thing_of"):
            fillers += rf"(?:{_alt(c['thing_of'])}\s+)?"
        pron = _alt(c["pronoun_subjects"]) if c.get("pronoun_subjects") else None
        # (v7) "Honestly, she ...": discourse words before a pronoun that opens a clause; "both",
        # "one of them": pronouns for the group of players named last
        opener = rf"(?:{_alt(c['discourse_openers'])},?\s+)?" if c.get("discourse_openers") else ""
        group = "|" + "|".join(f"(?:{x})" for x in c["group_pronouns"]) if c.get("group_pronouns") else ""
        objp = _alt(c["object_pronouns"]) if c.get("object_pronouns") else None

        def opt(key: str, template: str, *, subst: bool = False, flags: int = i) -> re.Pattern[str] | None:
            """An optional cue list's pattern: ``None`` when the pack has no list ``key``.

            ``{alt}`` in ``template`` becomes the list's alternation (with ``{N}``/``{W}``
            filled in when ``subst``).
            """
            if not c.get(key):
                return None
            alt = _alt(sub(x) for x in c[key]) if subst else _alt(c[key])
            return re.compile(template.replace("{alt}", alt), flags)

        # (v12) adjectives that may stand between the article and a name that modifies a noun
        modifier_adjs = _alt(c.get("modifier_adjectives", ()) or ["-"])
        comp = _Compiled(
            name=re.compile(rf"\b({name})(?:'s)?\b"),
            names=re.compile(nl),
            breaks=re.compile(_alt(sub(x) for x in c["clause_breaks"]), i),
            obj_before=re.compile(
                rf"\b{_alt(c['object_markers'])}\s+(?:(?:the|both|and|or|{name}(?:'s)?)\s*,?\s*)*$", i
            ),
            directed=re.compile(rf"\b{_alt(sub(x) for x in c['directed'])}\s+{fillers}{nl}", i),
            suspicion=re.compile(rf"\b{_alt(sub(x) for x in c['suspicion'])}\b", i),
            # (v7) a clearing word in excess ("too clean", "too innocent") is no clearing
            # and a clearing word as a yardstick ("too aggressive for an innocent") neither
            clearing=re.compile(rf"(?<!too )(?<!for an )(?<!for a )\b{_alt(sub(x) for x in c['clearing'])}\b", i),
            negation=re.compile(rf"\b{_alt(c['negation'])}(?:\W+\w+){{0,4}}?\W*$", i),
            conditional=re.compile(rf"^\W*(?:and\s+|so\s+|but\s+)?{_alt(c['conditional'])}\b", i),
            reported=re.compile(rf"\b{_alt(c['reported'])}\b", i),
            hedges=re.compile(rf"\b{_alt(c['hedges'])}\b", i),
            accuse=[re.compile(r"\b" + sub(x), i) for x in c["accuse"]],
            lists=[re.compile(r"\b" + sub(x), i) for x in c["lists"]],
            alternatives=re.compile(rf"\b{_alt(sub(x) for x in c['alternatives'])}", i),
            accuse_said_of=re.compile(rf"\b{_alt(sub(x) for x in c['accuse_said_of'])}", i),
            negation_any=re.compile(rf"\b{_alt(c['negation'])}\b", i),
            if_before=re.compile(
                r"\b(?:if(?! (?:I|we) (?:had|have|were|must) to\b)(?! anything\b)|unless|whether)\b", i
            ),
            generic=re.compile(rf"^\W*(?:\w+\s+){{0,2}}?{w}\b", i),
            list_gap=re.compile(r"\s*(?:,|&|/|-|\band\b|\bor\b|\bnor\b)?\s*(?:and\s+|or\s+)?", i),
            pronoun=re.compile(
                rf"^\W*(?:and\s+|so\s+)?{opener}(?:he|she|they|their|his|her|them|that|this|which|it{group})\b", i
            ),
            motive=opt("motive_frames", r"\b{alt}\s+(?:\w+\s+){0,2}$"),
            directed_pronoun=(
                re.compile(rf"\b{_alt(sub(x) for x in c['directed'])}\s+{fillers}(?P<pron>{objp})\b", i)
                if objp
                else None
            ),
            accuse_pronoun=(
                [
                    re.compile(r"\b" + x.replace("{N}", rf"(?P<pron>{pron})").replace("{W}", w), i)
                    for x in c["accuse"]
                    if x.startswith("{N}") or "{N}(?:" in x
                ]
                if pron
                else []
            ),
            first_person=opt("first_person", r"\b{alt}\s+(?:\w+\s+){0,3}$"),
            with_speaker=[re.compile(r"\b" + sub(x)) for x in c.get("with_speaker", ())],
            speaker_group=opt("speaker_in_group", r"\b{alt}\b"),
            self_subject=opt("self_subject", r"\b{alt}\b"),
            argued_away=opt("argued_away", r"\b{alt}", subst=True),
            complement=opt("complement_verbs", r"\b{alt}\s+(?:that\s+)?$"),
            judged=opt("own_judgement", r"\b{alt}\b"),
            complement_end=opt("complement_verbs", r"\b{alt}$"),
            complement_names=opt("complement_openers", rf"\s+(?:{{alt}}\s+)?{nl}"),
            claim_author=opt("claim_nouns", r"\s+(?:\w+\s+)?{alt}\b"),
            self_ref=opt("self_reference", r"\b{alt}", subst=True),
            relative=opt("relative_openers", r"^\W*{alt}\b"),
            sub_any=opt("subordinators", r"\b{alt}\b"),
            hedged_clear=opt("hedged_clearing", r"\b{alt}\s*$"),
            continuation=opt("sentence_continuations", r"\W*{alt}\b"),
            cited=opt("cited_claims", r"\b{alt}\b", subst=True),
            lead=opt("clause_openers", r"\W*(?:{alt}\W+)?"),
            elided=opt("elided_subject", r"\W*{alt}\b"),
            # case-sensitive: "I" is the speaker, "i" is not a word of its own here
            no_subject=opt("speaker_subjects", r"\W*(?:(?:and|but|so|yet)\s+)?{alt}\b", flags=0),
            subordinate=opt("subordinators", r"\W*(?:\w+\W+){0,4}?{alt}\b"),
            whether=opt("even_handed_conditions", r"\W*(?:(?:and|so|but|especially|also)\s+)*{alt}\b"),
            possibility=[re.compile(r"\b" + sub(x), i) for x in c.get("possibility", ())],
            described=[
                re.compile(
                    rf"\b{_alt(sub(x) for x in c['directed'])}\s+{fillers}(?:{_alt(c['descriptions'])})"
                    rf"\s+(?:who|that|whose|with)\b"
                    rf"[^.;!?]{{0,100}}?(?:[—–:]\s*(?:(?:like|such as|especially|namely|including)\s+)?"
                    rf"|,?\s+(?:like|such as|especially|namely|including))\s*{nl}",
                    i,
                ),
                # "keeping an eye on the quiet ones, like A and B": examples of the described group
                re.compile(
                    rf"\b{_alt(sub(x) for x in c['directed'])}\s+{fillers}(?:{_alt(c['descriptions'])})"
                    rf",?\s+(?:like|such as|especially|namely|including)\s+{nl}",
                    i,
                ),
            ]
            if c.get("descriptions")
            else [],
            pronoun_subject=re.compile(rf"^\W*(?:(?:now|and|so|then|also)\s+)?{opener}(?:he|she|they{group})\b", i),
            # "If she's Mafia, ...", "one of you is Mafia": a pronoun for players named before
            pronoun_possibility=[
                re.compile(r"\b" + x.replace("{W}", w).replace("{P}", rf"(?P<pron>{pron}{group})"), i)
                for x in c.get("pronoun_possibility", ())
            ]
            if pron
            else [],
            plural=re.compile(rf"\W*{opener}(?:their|they|them{group})\b", i),
            examples=opt(
                "group_examples", rf"\b{{alt}},?\s+(?:like|such as|including)\s+(?:{name}(?:'s)?\W+(?:and\W+|or\W+)?)*$"
            ),
            ally=opt("ally_reasons", r"\b{alt}"),
            # (v12) "to frame someone like A": a group that is the object of such a verb, and its examples
            acted_on=opt(
                "acted_on_groups",
                rf"\b{{alt}}\s+(?:{_alt(c.get('group_examples', ()) or ['-'])}),?\s+(?:like|such as|including)\s+"
                rf"(?:{name}(?:'s)?\W+(?:and\W+|or\W+)?)*$",
            ),
            group_lead=re.compile(rf"\W*(?:and\s+|so\s+)?{opener}(?:{group[1:]})\b", i) if group else None,
            # (v7) a clause whose subject is the speaker ("I want to hear from X and Y"): a pronoun
            # opening the next clause stands for the players it named ("they've said nothing")
            speaker_led=(
                re.compile(
                    rf"\W*(?i:(?:and|but|so|yet|now|also|{'|'.join(c.get('discourse_openers', ())) or 'then'})\W+)*"
                    + _alt(
                        y
                        for x in c["speaker_subjects"]
                        if not x.lower().startswith("who")
                        for y in dict.fromkeys((x, x[:1].upper() + x[1:]))
                    )
                    + r"\b"
                )
                if c.get("speaker_subjects") and c.get("discourse_openers")
                else None
            ),
            and_on=re.compile(rf"[^.;:!?]{{0,80}}?,?\s+and\s+(?:also\s+)?(?P<prep>(?:on|at)\s+(?:the\s+)?)?{nl}", i),
            # (v8) "if X is innocent, that means the Mafia is among A, B": the main clause after
            # a condition is the speaker's own possibility
            consequent=opt("consequent_markers", r",\s*(?:{alt})\b"),
            # (v11) "a Casey vote", "the Dana bandwagon": the name modifies the noun
            modifier=opt(
                "name_modifiers",
                rf"\b(?:an?|the|that|this)\s+(?:{modifier_adjs}\s+)?{name}[-\s]+(?:{{alt}})\b",
            ),
            # (v11) "he's wary of A": a third-person subject right before a directed cue
            # ({N} is one name here: only the name right before the verb can be its subject)
            others_view=(
                re.compile(rf"\b(?:{_alt(x.replace('{N}', name) for x in c['others_view'])})\s*$", i)
                if c.get("others_view")
                else None
            ),
            # (v13) "A's suspicion of B": a possessive before a noun cue, so no "A is" view
            possessive_cue=(re.compile(rf"{_alt(c['possessive_cues'])}\b", i) if c.get("possessive_cues") else None),
            # (v13) "A's theory ... feels too convenient": the speaker's judgement of A's claim
            claim_judged=re.compile(rf"\b{_alt(c['claim_judgements'])}\b", i) if c.get("claim_judgements") else None,
        )
        self._cache[key] = comp
        return comp

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
        if re.match(r"(?:he|she|they|who)\b", ov.group(0), re.I) or "'s" not in ov.group(0).lower():
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
    def _pronoun_refs(pron: str, antecedents: list[str], candidates: dict[str, int]) -> list[str]:
        """The players a pronoun stands for.

        "you" (two, both, one of you) is every candidate when only two are alive besides the
        speaker; a singular pronoun (he, she, him, her) needs exactly one antecedent; a plural
        one takes the antecedents as they are. Anything else resolves to no one (never a guess).
        """
        p = pron.lower()
        if "you" in p:
            return list(candidates) if len(candidates) == 2 else []
        if re.search(r"\b(?:he|she|him|her)\b", p):
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
        found: list[Label] = []
        # quoted words are someone else's ("the 'Mafia held back' theory"): blanked, same length
        clean = _QUOTED.sub(lambda q: " " * len(q.group(0)), text.translate(_MARKUP))
        prev_subjects: list[str] = []
        older_subjects: list[str] = []  # the subjects of the sentence before prev_subjects' (v8)
        cleared: set[str] = set()
        last_all: list[str] = []
        spoken_of: list[str] = []  # players named in the speaker's own last clause ("I want to hear from X")

        with_self: set[str] = set()  # players grouped with the speaker in this sentence (v9)

        def add(nms: Iterable[str], category: Category, evidence: str, rule: str) -> None:
            for nm in nms:
                if nm in with_self and rule.split(":", 1)[0] in _SELF_GROUPED_RULES:
                    continue  # "Harper and I are still alive, which could mean ...": the speaker's own group
                if nm in candidates:
                    found.append(Label(candidates[nm], category, evidence[:300], rule))

        for sentence in _SENTENCE.split(clean):
            sentence = sentence.strip()
            if not sentence:
                continue
            with_self = self._with_speaker(sentence, comp)
            # identity statements and candidate lists, on the whole sentence
            kinds: tuple[tuple[list[re.Pattern[str]], Category], ...] = (
                (comp.accuse, "accuse"),
                (comp.lists, "suspect"),
                (comp.possibility, "suspect"),
                (comp.described, "suspect"),
            )
            for rx_list, kind in kinds:
                for rx in rx_list:
                    pos = 0
                    while (m := rx.search(sentence, pos)) is not None:
                        pos = m.start() + 1  # a rejected match is retried one character later
                        before = sentence[: m.start()]
                        clause = comp.breaks.split(before)[-1]
                        main = self._consequent(clause, comp)
                        if main is not None:
                            clause = main  # the possibility is raised in the main clause (v8)
                        if comp.negation.search(clause) or comp.conditional.search(clause):
                            continue
                        if self._reported(clause, comp) is not None:
                            continue
                        if m.group(0)[:1].isupper() and comp.obj_before.search(before):
                            continue  # "wary of Alex, and Finley is ..." is about Finley only
                        cat: Category = kind
                        if cat == "accuse" and (main is not None or self._hedged(sentence, m, clause, comp)):
                            cat = "suspect"  # hedged, or the consequence of a condition
                        nms = (
                            self._names_in(m.group("names"), comp)
                            if "names" in m.groupdict() and m.group("names")
                            else prev_subjects
                        )
                        add(nms, cat, sentence, f"{'list' if rx_list is comp.lists else kind}:{m.group(0)}")
                        pos = m.end()
            # "I'm confident she's the last Mafia": a pronoun stands for the last subjects named
            for rx in comp.accuse_pronoun:
                for m in rx.finditer(sentence):
                    clause = comp.breaks.split(sentence[: m.start()])[-1]
                    if comp.negation.search(clause) or comp.conditional.search(clause) or self._reported(clause, comp):
                        continue
                    refs = self._pronoun_refs(m.group("pron"), prev_subjects, candidates)
                    cat = "suspect" if self._hedged(sentence, m, clause, comp) else "accuse"
                    add(refs, cat, sentence, f"accuse-pronoun:{m.group(0)}")
            # "If she's Mafia, ...", "She could be Mafia", "One of you is Mafia": a possibility
            # raised of a pronoun's players (the players named before it in the sentence, else
            # the subjects of the sentence before; "you" only when two others are alive)
            for rx in comp.pronoun_possibility:
                for m in rx.finditer(sentence):
                    # the negation must be in the same comma-clause ("I'm not Mafia, so it's one of you")
                    clause = re.split(r"[,:]", comp.breaks.split(sentence[: m.start()])[-1])[-1]
                    if comp.negation.search(clause) or self._reported(clause, comp):
                        continue
                    named = [x.group(1) for x in comp.name.finditer(sentence, 0, m.start())]
                    ante = list(dict.fromkeys(named)) or prev_subjects
                    refs = self._pronoun_refs(m.group("pron"), ante, candidates)
                    group_of = comp.group_lead is not None and comp.group_lead.match(m.group("pron"))
                    if group_of and "you" not in m.group("pron").lower() and len(refs) < 2 and not named:
                        # "A voted late. B stayed quiet. Both could be Mafia." (v8): the two players
                        # of the two sentences before, when they are exactly two
                        pair = [n for n in dict.fromkeys([*older_subjects, *prev_subjects]) if n in candidates]
                        refs = pair if len(pair) == 2 and len(prev_subjects) == 1 else []
                    if group_of and "you" not in m.group("pron").lower() and len(refs) < 2:
                        continue  # "one of them", "both": two or more players, never one
                    add(refs, "suspect", sentence, f"pronoun-possibility:{m.group(0)}")
            # clause by clause: directed cues and suspicion of the clause's subject
            subjects: list[str] = []
            directed_names: list[str] = []  # "I'm most suspicious of Alex, who ...": Alex is the topic
            last_all = []  # names of the clause before, within this sentence only
            last_group: list[str] = []
            first = True
            for clause in comp.breaks.split(sentence):
                if not clause or not clause.strip():
                    continue
                hypothetical = bool(comp.conditional.search(clause))
                main = self._consequent(clause, comp)
                if main is not None and main.strip():
                    clause, hypothetical = main, False  # "if X is innocent, then Y ..." (v8): Y's clause
                if not hypothetical:
                    for m in comp.directed.finditer(clause):
                        pre = clause[: m.start()]
                        if comp.negation.search(pre) and not re.search(r"trust|sure|convinced", m.group(0), re.I):
                            continue
                        if self._others_view(pre[-120:], m, comp):
                            continue  # "Ellis has long been suspicious of Dana": Ellis's view (v11)
                        if comp.ally is not None and comp.ally.match(clause, m.end()):
                            continue  # "watching how A reacts, since they voted with me": an ally (v12)
                        add(self._names_in(m.group("names"), comp), "suspect", sentence, f"directed:{m.group(0)}")
                        directed_names += self._names_in(m.group("names"), comp)
                        more = comp.and_on.match(clause, m.end())  # "an eye on X, and on Y"
                        # "suspicious of X for ..., and Y for ...": a parallel object needs its own "for"
                        # (and the first object has its own "for" too: "wary of how X jumped into
                        # accusing A and B for ..." names no parallel object)
                        parallel = (
                            more is not None
                            and re.match(r"\s+for\b", clause[more.end() :]) is not None
                            and re.match(r"\s+for\b", clause[m.end() :]) is not None
                        )
                        if more is not None and not more.group("prep") and not parallel:
                            more = None
                        if more is not None:
                            add(
                                self._names_in(more.group("names"), comp),
                                "suspect",
                                sentence,
                                f"directed:{more.group(0)}",
                            )
                    if comp.directed_pronoun is not None:
                        for m in comp.directed_pronoun.finditer(clause):
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
                            ante = subjects or list(dict.fromkeys(here)) or prev_subjects
                            refs = self._pronoun_refs(m.group("pron"), ante, candidates)
                            add(refs, "suspect", sentence, f"directed-pronoun:{m.group(0)}")
                said = self._reported(clause, comp)  # names after "says", "claims" are someone else's words
                modified = [x.span() for x in comp.modifier.finditer(clause)] if comp.modifier is not None else []
                mentions = [
                    m
                    for m in comp.name.finditer(clause)
                    if (
                        not comp.obj_before.search(clause[max(0, m.start() - 80) : m.start()])
                        # "others like A and B haven't spoken": the examples of a group are its subject
                        or (
                            comp.examples is not None
                            and comp.examples.search(clause, 0, m.start()) is not None
                            # "to frame someone like A": the group is acted on, so are its examples (v12)
                            and (comp.acted_on is None or comp.acted_on.search(clause, 0, m.start()) is None)
                        )
                    )
                    and (said is None or m.start() < said.start())
                    # "pushing for a Casey vote": the vote's target, not a subject (v11)
                    and not any(a <= m.start() < b for a, b in modified)
                    # "Casey's theory about loud players being a cover": Casey is the claim's author
                    and not (
                        m.group(0).endswith("'s")
                        and comp.claim_author is not None
                        and (claim := comp.claim_author.match(clause, m.end())) is not None
                        # (v13) unless the speaker then judges the claim ("A's theory ... feels
                        # too convenient"): a judgement of A's claim is about A
                        and not (comp.claim_judged is not None and comp.claim_judged.search(clause, claim.end()))
                    )
                ]
                own = [m.group(1) for m in mentions]
                lead_possessive = mentions and mentions[0].group(0).endswith("'s")
                if lead_possessive and comp.lead is not None and comp.lead.fullmatch(clause[: mentions[0].start()]):
                    own = [mentions[0].group(1)]  # "Casey's quickness to back Ellis": Casey
                # who a pronoun opening this clause may stand for: the subjects so far, else the one
                # player the clause before named ("suspicious of Dana—their fight ..."), else the
                # subjects of the sentence before
                plural = comp.plural.match(clause) is not None
                prior = subjects or (last_all if len(last_all) == 1 or (plural and last_all) else prev_subjects)
                inherited = False
                elided = not first and comp.elided is not None and bool(comp.elided.match(clause))
                if not comp.name.search(clause) and not comp.generic.search(clause):
                    if comp.no_subject is not None and comp.no_subject.match(clause):
                        subjects = []  # the speaker's clause ends the topic: "..., but I'm wary of people who ..."
                    elif not first:
                        relative = comp.relative is not None and comp.relative.match(clause)
                        own, inherited = (last_group if relative and last_group else subjects), True
                    elif comp.pronoun.search(clause) or (
                        comp.continuation is not None and comp.continuation.match(clause)
                    ):
                        own, inherited = prev_subjects, True  # "X pushed hard. Could be a Mafia play."
                elif elided or (not own and comp.pronoun_subject.search(clause)):
                    # "... but now they're pushing at Finley", "..., but also voted for Dana":
                    # the names are objects, the subject is the player of the clause before
                    own, inherited = (subjects if not first else prev_subjects), True
                if inherited and not own and (len(last_all) == 1 or plural) and comp.pronoun.search(clause):
                    own = last_all  # "My vote goes to Casey; she has been deflecting": the one player named
                if inherited and spoken_of and (plural or len(spoken_of) == 1) and comp.pronoun.search(clause):
                    own = spoken_of  # "I want to hear from Gray and Finley—they've said nothing": not the speaker
                if inherited and len(own) < 2 and comp.group_lead is not None and comp.group_lead.match(clause):
                    own = []  # "both", "one of them" stand for two or more players, never for one
                named_here = sorted({m.group(1) for m in comp.name.finditer(clause)})
                spoken_of = named_here if comp.speaker_led is not None and comp.speaker_led.match(clause) else []
                last_all = named_here or last_all
                if own:
                    subjects = own
                    # the last subject group of this clause, for a relative clause after it
                    last_group = (
                        self._subject_group(clause, mentions, len(clause), comp) if mentions and not inherited else own
                    )
                first = False
                if not own:
                    continue
                category: Category = "suspect"
                if hypothetical:
                    # "whether X is genuine or Mafia" raises the possibility; other conditions do not
                    if comp.whether is None or not comp.whether.match(clause):
                        continue
                    cue_m = self._clause_cue(clause, comp.alternatives, comp, allow_whether=True)
                    if cue_m is None:
                        continue
                else:
                    cue_m = self._clause_cue(clause, comp.accuse_said_of, comp)
                    if cue_m is not None:
                        category = "accuse"
                    else:
                        cue_m = self._clause_cue(clause, comp.alternatives, comp, allow_whether=True)
                if cue_m is None:
                    cue_m = self._clause_cue(clause, comp.suspicion, comp)
                    clear_m = self._clause_cue(clause, comp.clearing, comp, motive=True)
                    if (
                        clear_m is not None
                        and comp.hedged_clear is not None
                        and comp.hedged_clear.search(clause, 0, clear_m.start())
                    ):
                        clear_m = None  # "could be genuine, but it's also a cover": one side of an alternative
                    if clear_m is not None and comp.self_subject is not None and not inherited:
                        # "I know I'm innocent, so the Mafia is among A and B" (v8): the speaker's
                        # own clearing clears no one named after it
                        lead_names = [x for x in mentions if x.end() <= clear_m.start()]
                        seg = clause[lead_names[-1].end() if lead_names else 0 : clear_m.start()]
                        if comp.self_subject.search(seg):
                            continue  # no label from this clause either (as before v8)
                    if clear_m is not None and cue_m is None:
                        cleared.update(
                            own if inherited else self._subject_group(clause, mentions, clear_m.start(), comp)
                        )
                    if (
                        clear_m is not None
                        and cue_m is not None
                        and comp.claim_judged is not None
                        and comp.claim_judged.search(clause, clear_m.end(), cue_m.start())
                    ):
                        clear_m = None  # (v13) "A's read of B as innocent feels too neat": the read's words
                    if cue_m is None or clear_m is not None:
                        continue
                cited = comp.cited.search(clause, 0, cue_m.start()) if comp.cited is not None else None
                if cited is not None and not (comp.judged and comp.judged.search(clause, cited.end(), cue_m.start())):
                    # "X called out Y's coordination", "they paint me as shady": not the speaker's read;
                    # the speaker's own judgement may follow ("call me suspicious feels too eager")
                    judged = comp.judged.search(clause, cue_m.end()) if comp.judged is not None else None
                    later = next((x for x in comp.suspicion.finditer(clause, judged.end())), None) if judged else None
                    if later is None or comp.negation.search(clause[: later.start()][-80:]):
                        continue
                    cue_m = later
                if comp.argued_away is not None and comp.argued_away.search(
                    sentence, sentence.find(clause) + len(clause)
                ):
                    continue  # "X's shift is odd, but if X were Mafia, they'd have stayed quiet"
                selfref = comp.self_ref.search(clause) if comp.self_ref is not None else None
                if selfref is not None and selfref.start() <= cue_m.start() < selfref.end():
                    continue  # "that leaves me in a tough spot as the lone Mafia": about the speaker
                if inherited:
                    # a negation inside the cue itself ("haven't taken a stand", v8) is the cue
                    if any(not (cue_m.start() <= x.start() < cue_m.end()) for x in comp.negation_any.finditer(clause)):
                        continue
                    targets = own
                else:
                    near = [m for m in mentions if m.end() <= cue_m.start()]
                    between = clause[near[-1].end() : cue_m.start()] if near else ""
                    if comp.self_subject is not None and comp.self_subject.search(between):
                        continue  # "I hear what X says, and I see why I look suspicious"
                    after_cue = comp.subordinate is not None and comp.subordinate.match(clause, cue_m.end())
                    # "X's save makes me wonder if Y ...": the cue is about the complement's players
                    thought = (
                        comp.complement_names.match(clause, cue_m.end())
                        if comp.complement_names is not None
                        and comp.complement_end is not None
                        and comp.complement_end.search(clause, 0, cue_m.end())
                        # "X's shift to suspect Y" (v8): X's act, not a thought about Y
                        and not re.search(r"\bto\s+$", clause[: cue_m.start()], re.I)
                        else None
                    )
                    first_after = next((m for m in mentions if m.start() >= cue_m.end()), None)
                    apart = (
                        first_after is not None
                        and comp.sub_any is not None
                        and comp.sub_any.search(clause, cue_m.end(), first_after.start()) is not None
                    )
                    if thought is not None:
                        targets = self._names_in(thought.group("names"), comp)
                    elif (
                        not near
                        and prior
                        and comp.pronoun.search(clause)
                        and (after_cue or apart or comp.pronoun_subject.search(clause))
                    ):
                        # "..., but it could also be a Mafia coasting while X ...", "they deflected
                        # instead of answering X": the pronoun's player, not the names after the cue
                        targets = prior
                    else:
                        targets = self._subject_group(clause, mentions, cue_m.start(), comp)
                add(targets, category, sentence, f"{category}:{cue_m.group(0)}|{clause.strip()}")
            if subjects:
                older_subjects, prev_subjects = prev_subjects, subjects
            elif directed_names:
                # "... suspicious of Alex. That silence ..."
                older_subjects, prev_subjects = prev_subjects, sorted(set(directed_names))
            elif comp.generic.match(sentence):
                # "The Mafia killed A. That feels strategic.": the hidden team is the new topic (v11)
                older_subjects, prev_subjects = prev_subjects, []
        # a candidate list member the speaker then clears explicitly is not suspected
        # (definitions: "unless the speaker then clears that player")
        # (a label from the sentence of a list naming the player counts as the list's)
        listed = {(lab.target, lab.evidence) for lab in found if lab.rule.startswith("list:")}
        list_only = {
            lab.target
            for lab in found
            if all((x.target, x.evidence) in listed for x in found if x.target == lab.target)
        }
        drop = {t for t in list_only if any(candidates.get(n) == t for n in cleared)}
        return _strongest(lab for lab in found if lab.target not in drop)

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
