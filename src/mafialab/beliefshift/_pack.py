"""The annotator pack (``annotator_<lang>.yaml``): its format, its checks, and the patterns it compiles to.

The pack holds the language data of both annotators: the cue lists, and for the ``rules``
annotator the engine that turns them into patterns (``text``, ``pieces``, ``patterns``) and
the order its rules run in (``steps``). The format is documented in
``docs/annotator-development.md`` ("The pack's format").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mafialab.config import read_config, top_level_message

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
# added in annotator-en-v3 and later; a pack without them reads them as empty
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
    # added with the pack format 2 (the engine in the pack)
    "speaker_led_subjects",
)
_ALL_CUE_KEYS = frozenset((*_CUE_KEYS, *_OPTIONAL_CUE_KEYS))

# the patterns the rules annotator's code reads by name (each must be in `patterns`)
REQUIRED_PATTERNS = (
    "name", "names", "breaks", "obj_before", "directed", "suspicion", "clearing", "negation",
    "conditional", "reported", "hedges", "accuse", "lists", "alternatives", "accuse_said_of",
    "negation_any", "if_before", "generic", "list_gap", "pronoun", "motive", "directed_pronoun",
    "accuse_pronoun", "first_person", "with_speaker", "speaker_group", "self_subject",
    "argued_away", "complement", "judged", "complement_end", "complement_names", "claim_author",
    "self_ref", "relative", "sub_any", "hedged_clear", "continuation", "cited", "lead", "elided",
    "no_subject", "subordinate", "whether", "possibility", "described", "pronoun_subject",
    "pronoun_possibility", "plural", "examples", "ally", "acted_on", "group_lead", "speaker_led",
    "and_on", "consequent", "modifier", "others_view", "possessive_cue", "claim_judged",
    "kept_after_negation", "parallel_for", "comma_clause", "to_before", "third_person", "you",
    "singular",
)  # fmt: skip
# built-in placeholders: filled in code from the game (names, team) and the cue lists
_BUILT_IN = frozenset({"N", "W", "name", "frag"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z]\w*)(?::(\w+))?\}")
_SLOT = re.compile(r"\{([NWP])\}")

SentenceKind = Literal["statement", "pronoun_statement", "pronoun_possibility", "clauses"]
ClauseKind = Literal["directed", "directed_pronoun", "subject"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextSpec(_Strict):
    """``text``: the clean-up before matching.

    ``markup``: characters replaced; ``quoted``: words blanked as someone else's; ``sentences``:
    the split into sentences.
    """

    markup: dict[str, str]
    quoted: str
    sentences: str


class PieceSpec(_Strict):
    """One building block: ``template``, used when every cue list in ``when`` is non-empty, else ``else``."""

    template: str
    when: tuple[str, ...] = ()
    otherwise: str = Field("", alias="else")


class PatternSpec(_Strict):
    """One pattern, or a list of them.

    One pattern (``template``), one per fragment of a cue list (``each``, filtered by ``only``)
    or a list (``templates``); ``when``, ``case`` and ``bind`` as in the docs.
    """

    template: str | None = None
    templates: tuple[str, ...] | None = None
    each: str | None = None
    only: str | None = None
    bind: dict[Literal["N"], str] = {}
    when: tuple[str, ...] = ()
    case: Literal["insensitive", "sensitive"] = "insensitive"

    @model_validator(mode="after")
    def _one_form(self) -> PatternSpec:
        if (self.template is None) == (self.templates is None):
            raise ValueError("give either 'template' or 'templates'")
        if self.each is not None and self.template is None:
            raise ValueError("'each' needs 'template' (with {frag})")
        if self.only is not None and self.each is None:
            raise ValueError("'only' filters the fragments of 'each'")
        return self


class StepSpec(_Strict):
    """A rule run on each sentence or clause.

    Its ``kind``, the ``patterns`` it matches, the ``category`` it gives and the ``rule`` name
    recorded with its labels.
    """

    kind: str
    patterns: tuple[str, ...] = ()
    category: Literal["suspect", "accuse"] = "suspect"
    rule: str = ""


class SubjectCueSpec(_Strict):
    """A cue said of a clause's subject (tried in order, the first that matches counts)."""

    pattern: str
    category: Literal["suspect", "accuse"]
    in_condition: bool = False
    cleared_by: str | None = None


class StepsSpec(_Strict):
    """``steps``: the precedence of the rules (see the docs)."""

    sentence: tuple[StepSpec, ...]
    clause: tuple[StepSpec, ...]
    subject_cues: tuple[SubjectCueSpec, ...]
    not_for_speaker_pair: frozenset[str] = frozenset()
    candidate_list_rule: str = "list"

    @model_validator(mode="after")
    def _kinds(self) -> StepsSpec:
        for where, steps, kinds in (
            ("sentence", self.sentence, SentenceKind.__args__),  # type: ignore[attr-defined]
            ("clause", self.clause, ClauseKind.__args__),  # type: ignore[attr-defined]
        ):
            for i, s in enumerate(steps):
                if s.kind not in kinds:
                    raise ValueError(f"{where}.{i}.kind: {s.kind!r} is not one of {', '.join(kinds)}")
        return self


class EngineSpec(_Strict):
    """The rules annotator's engine: how the cues become patterns, and the order of the rules."""

    text: TextSpec
    pieces: dict[str, PieceSpec]
    patterns: dict[str, PatternSpec]
    steps: StepsSpec


class _Prompts(BaseModel):
    system: str
    user: str


class _PackFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    language: str = ""
    format: Literal[1, 2] = 1
    cues: dict[str, Any]
    model: _Prompts
    text: TextSpec | None = None
    pieces: dict[str, PieceSpec] | None = None
    patterns: dict[str, PatternSpec] | None = None
    steps: StepsSpec | None = None


@dataclass(frozen=True)
class AnnotatorPack:
    """Language data of the annotators (``beliefshift/annotator_<lang>.yaml``).

    Attributes:
        id: Pack id (recorded in annotation headers).
        language: Language code.
        cues: Cue lexicon of the ``rules`` annotator: lists of regular-expression fragments
            under ``wolf_words``, ``clause_breaks``, ``object_markers``, ``directed``,
            ``suspicion``, ``clearing``, ``negation``, ``conditional``, ``reported``,
            ``hedges``, ``accuse``, ``lists``, ``alternatives`` and ``accuse_said_of``; the
            optional keys of later packs (v3 to v14, listed in ``docs/annotator-development.md``)
            are empty when absent.
        system: Model annotator system prompt (placeholders ``{game} {town} {mafia}``).
        user: Model annotator user prompt (placeholders ``{players} {speaker} {targets} {message}``).
        engine: The ``rules`` annotator's patterns and the precedence of its rules (pack format 2;
            a pack without it takes the built-in English pack's).
    """

    id: str
    language: str
    cues: dict[str, tuple[str, ...]]
    system: str
    user: str
    engine: EngineSpec | None = field(default=None, compare=False, repr=False)


def _where(err: ValidationError) -> str:
    """'field.path: message' for each error of ``err``."""
    return "; ".join(f"{'.'.join(str(x) for x in e['loc']) or '(top)'}: {e['msg']}" for e in err.errors())


def _check_cues(src: str, cues_raw: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    cues: dict[str, tuple[str, ...]] = {}
    for k in (*_CUE_KEYS, *_OPTIONAL_CUE_KEYS):
        v = cues_raw.get(k, [] if k in _OPTIONAL_CUE_KEYS else None)
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
            raise ValueError(f"{src}: cues.{k}: expected a list of non-empty strings")
        for x in v:
            try:
                re.compile(x.replace("{N}", "N").replace("{W}", "W").replace("{P}", "P"))
            except re.error as err:
                raise ValueError(f"{src}: cues.{k}: {x!r} is not a valid pattern ({err})") from None
        cues[k] = tuple(v)
    return cues


def _read(name_or_path: str | Path) -> tuple[Any, str]:
    key = str(name_or_path)
    if Path(key).suffix in {".yaml", ".yml"}:
        return read_config(Path(key)), key
    res = resources.files("mafialab.beliefshift").joinpath(f"annotator_{key}.yaml")
    if not res.is_file():
        raise ValueError(f"annotator pack: unknown pack {key!r} (built in: en; or a YAML path)")
    src = f"annotator_{key}.yaml"
    return read_config(res, source=src), src


def load_annotator_pack(name_or_path: str | Path = "en") -> AnnotatorPack:
    """Load annotator language data: a built-in pack (``"en"``) or a YAML file of the same shape.

    The format (every field, the precedence of the rules) is in ``docs/annotator-development.md``.
    A pack without the engine sections (``text``, ``pieces``, ``patterns``, ``steps``: pack
    format 1) takes them from the built-in English pack.

    Raises:
        ValueError: Unknown pack, an unreadable file or malformed YAML (a
            :class:`~mafialab.config.ConfigError`, as every YAML file is read: at most 10 MB,
            100,000 nodes and 100 alias expansions), a missing/invalid field (named, with the
            file), a cue fragment or template that is not a valid regular expression, or an
            engine that names an unknown cue list, piece or pattern.
    """
    data, src = _read(name_or_path)
    if not isinstance(data, dict):
        raise ValueError(f"{src}: {top_level_message('an annotator pack (a mapping with its cues)', data)}")
    if not isinstance(data.get("cues"), dict):
        raise ValueError(f"{src}: cues: missing or not a mapping")
    model = data.get("model")
    if not isinstance(model, dict) or not all(isinstance(model.get(k), str) for k in ("system", "user")):
        raise ValueError(f"{src}: model: needs 'system' and 'user' strings")
    cues = _check_cues(src, data["cues"])
    try:
        spec = _PackFile.model_validate(data)
    except ValidationError as err:
        raise ValueError(f"{src}: {_where(err)}") from None
    engine = _engine_of(spec, src)
    return AnnotatorPack(
        id=spec.id or str(name_or_path),
        language=spec.language,
        cues=cues,
        system=spec.model.system,
        user=spec.model.user,
        engine=engine,
    )


def _engine_of(spec: _PackFile, src: str) -> EngineSpec:
    """The pack's engine (its own sections, the built-in pack's for those it lacks), checked."""
    parts = {k: getattr(spec, k) for k in ("text", "pieces", "patterns", "steps")}
    if any(v is None for v in parts.values()):
        base = builtin_engine()
        parts = {k: v if v is not None else getattr(base, k) for k, v in parts.items()}
    engine = EngineSpec(**parts)
    check_engine(engine, src)
    return engine


_BUILTIN: list[EngineSpec] = []


def builtin_engine() -> EngineSpec:
    """The engine of the built-in English pack (read once)."""
    if not _BUILTIN:
        pack = load_annotator_pack("en")
        assert pack.engine is not None
        _BUILTIN.append(pack.engine)
    return _BUILTIN[0]


def check_engine(engine: EngineSpec, src: str) -> None:
    """Raise ``ValueError`` naming ``src`` and the field for an engine that cannot work.

    Checked: every pattern the code reads is there, every name a template or step uses is a
    cue list, piece or pattern, and every pattern compiles (with sample names and team word).
    """
    missing = [p for p in REQUIRED_PATTERNS if p not in engine.patterns]
    if missing:
        raise ValueError(f"{src}: patterns: missing {', '.join(missing)}")
    pieces = set(engine.pieces)
    for name, piece in engine.pieces.items():
        _check_names(f"{src}: pieces.{name}", (piece.template,), piece.when, pieces)
    try:
        _piece_order(engine.pieces)
    except ValueError as err:
        raise ValueError(f"{src}: {err}") from None
    for name, pat in engine.patterns.items():
        templates = (pat.template,) if pat.template is not None else pat.templates or ()
        keys = (*pat.when, *([pat.each] if pat.each else []))
        _check_names(f"{src}: patterns.{name}", (*templates, *pat.bind.values()), keys, pieces)
    for where, steps in (("sentence", engine.steps.sentence), ("clause", engine.steps.clause)):
        for i, step in enumerate(steps):
            for p in step.patterns:
                if p not in engine.patterns:
                    raise ValueError(f"{src}: steps.{where}.{i}.patterns: unknown pattern {p!r}")
    for i, cue in enumerate(engine.steps.subject_cues):
        for q in (cue.pattern, cue.cleared_by):
            if q is not None and q not in engine.patterns:
                raise ValueError(f"{src}: steps.subject_cues.{i}: unknown pattern {q!r}")
    cues = {k: ("x",) for k in _ALL_CUE_KEYS}
    for name in engine.patterns:
        try:
            compile_patterns(engine, cues, ("Alex", "Bailey"), "Mafia", (), only=name)
        except re.error as err:
            raise ValueError(f"{src}: patterns.{name}: not a valid pattern ({err})") from None


def _piece_order(pieces: Mapping[str, PieceSpec]) -> list[str]:
    """The pieces' names, each after the pieces it uses (``ValueError`` for a cycle)."""
    uses = {
        k: {m.group(1) for m in _PLACEHOLDER.finditer(p.template) if m.group(2) is None and m.group(1) in pieces}
        for k, p in pieces.items()
    }
    done: list[str] = []
    while len(done) < len(pieces):
        ready = [k for k in pieces if k not in done and uses[k] <= set(done)]
        if not ready:
            left = sorted(k for k in pieces if k not in done)
            raise ValueError(f"pieces: {', '.join(left)} use each other (a cycle)")
        done += ready
    return done


def _check_names(where: str, templates: Iterable[str], keys: Iterable[str], pieces: set[str]) -> None:
    for k in keys:
        if k not in _ALL_CUE_KEYS:
            raise ValueError(f"{where}: unknown cue list {k!r}")
    for t in templates:
        for m in _PLACEHOLDER.finditer(t):
            name, key = m.group(1), m.group(2)
            if key is not None:
                if name not in ("alt", "alts", "bare", "sub") or key not in _ALL_CUE_KEYS:
                    raise ValueError(f"{where}: {m.group(0)}: expected {{alt|alts|bare|sub:KEY}} with a cue list")
            elif name not in _BUILT_IN and name not in pieces:
                raise ValueError(f"{where}: {m.group(0)}: not a piece nor a built-in")


def _alt(fragments: Iterable[str]) -> str:
    return "(?:" + "|".join(f"(?:{f})" for f in fragments) + ")"


def _expand(
    template: str, cues: Mapping[str, tuple[str, ...]], values: Mapping[str, str], fill: Callable[[str], str]
) -> str:
    """``template`` with its placeholders filled in, in one pass (filled text is not read again)."""

    def one(m: re.Match[str]) -> str:
        name, key = m.group(1), m.group(2)
        if key is None:
            return values[name]
        if name == "alt":
            return _alt(cues.get(key, ()))
        if name == "alts":  # the alternatives without the group around them
            return _alt(cues.get(key, ()))[3:-1]
        if name == "bare":  # the fragments joined as they are
            return "|".join(cues.get(key, ()))
        return _alt(fill(x) for x in cues.get(key, ()))

    return _PLACEHOLDER.sub(one, template)


def _present(cues: Mapping[str, tuple[str, ...]], keys: Iterable[str]) -> bool:
    return all(cues.get(k) for k in keys)


def compile_patterns(
    engine: EngineSpec,
    cues: Mapping[str, tuple[str, ...]],
    names: tuple[str, ...],
    mafia_team: str,
    extra_wolf_words: tuple[str, ...],
    only: str | None = None,
) -> dict[str, Any]:
    """Pattern name -> compiled pattern (``None`` when its cue lists are absent) or list of them.

    ``names`` are the players that may be named (escaped here), ``mafia_team`` the rule set's name
    of the hidden team (a hidden-team word too, with and without a final "s").
    """
    team = [re.escape(w) for w in {mafia_team.lower(), mafia_team.lower().rstrip("s")} if w]
    w = _alt([*cues["wolf_words"], *extra_wolf_words, *team]) + r"(?:[\s-]+(?:team|member|side|player|partner)s?)?"
    name = r"(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")"
    # a list names each player at most once: the bound keeps a degenerate text linear
    nl = (
        rf"\b(?P<names>{name}(?:'s)?(?:\s*(?:,|&|/|-|\band\b|\bor\b|\bnor\b)\s*(?:and\s+|or\s+)?{name}(?:'s)?)"
        rf"{{0,{max(len(names) - 1, 0)}}}(?:,?\s+and\s+(?:I|me|myself))?)\b"
    )
    values: dict[str, str] = {"N": nl, "W": w, "name": name}

    def filler(n: str) -> Callable[[str], str]:
        slots = {"N": n, "W": w, "P": values.get("P", "")}
        return lambda frag: _SLOT.sub(lambda m: slots[m.group(1)], frag)

    for key in _piece_order(engine.pieces):
        piece = engine.pieces[key]
        values[key] = (
            _expand(piece.template, cues, values, filler(nl)) if _present(cues, piece.when) else piece.otherwise
        )
    out: dict[str, Any] = {}
    for key, pat in engine.patterns.items():
        if only is None or key == only:
            out[key] = _compile_one(pat, cues, values, filler)
    return out


def _compile_one(
    pat: PatternSpec,
    cues: Mapping[str, tuple[str, ...]],
    values: dict[str, str],
    filler: Callable[[str], Callable[[str], str]],
) -> Any:
    listed = pat.each is not None or pat.templates is not None
    if not _present(cues, pat.when):
        return [] if listed else None
    flags = 0 if pat.case == "sensitive" else re.IGNORECASE
    fill = filler(_expand(pat.bind["N"], cues, values, filler(values["N"])) if "N" in pat.bind else values["N"])
    if pat.each is not None:
        frags = [x for x in cues.get(pat.each, ()) if pat.only is None or re.search(pat.only, x)]
        assert pat.template is not None
        return [re.compile(_expand(pat.template, cues, {**values, "frag": fill(x)}, fill), flags) for x in frags]
    if pat.templates is not None:
        return [re.compile(_expand(t, cues, values, fill), flags) for t in pat.templates]
    assert pat.template is not None
    return re.compile(_expand(pat.template, cues, values, fill), flags)
