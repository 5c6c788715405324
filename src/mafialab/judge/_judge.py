"""Judging a game: prompt, call, validation, retry, and the ``verdicts.jsonl`` record."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import json_repair

from mafialab.judge._transcript import CHARS_PER_TOKEN, Transcript, build_transcript
from mafialab.judge._validate import UnusableVerdict, validate_verdict, verdict_schema
from mafialab.models import ChatMessage, ChatModel, ChatRequest, ChatResponse, ModelSpecError, get_model
from mafialab.record import VERDICTS_FILE, GameLog, JsonlWriter, Verdict, read_game

log = logging.getLogger(__name__)

DEFAULT_ATTEMPTS = 2
"""Judge calls per verdict: the first try and one retry."""

DEFAULT_MAX_TOKENS = 2048
"""Answer budget of a judge call (tokens); reserved when fitting the transcript."""

PROMPT_MARGIN_TOKENS = 64
"""Extra tokens kept free when fitting the transcript into a context window."""


def _prompt(name: str) -> str:
    return resources.files("mafialab.judge").joinpath("prompts", name).read_text(encoding="utf-8")


class JudgeError(ValueError):
    """A game cannot be judged (unfinished, unreadable); the message says why."""


def build_judge_messages(log_: GameLog, transcript: Transcript) -> list[ChatMessage]:
    """The judge's chat messages for ``log_`` with (possibly condensed) ``transcript``.

    The prompt pack is data (``mafialab/judge/prompts/*.txt``); placeholders are filled by
    plain replacement, so text in the transcript cannot change the prompt's structure.
    """
    rules = log_.header.rules
    names = [s.name for s in log_.header.roster]
    schema = json.dumps(verdict_schema(names), ensure_ascii=False)
    system = (
        _prompt("judge_system.txt")
        .replace("{game}", rules.lexicon.game)
        .replace("{mafia}", rules.lexicon.mafia_team)
        .replace("{schema}", schema)
    )
    players = ", ".join(f"{s.name} ({s.role}, team {rules.lexicon.team_name(s.team)})" for s in log_.header.roster)
    user = _prompt("judge_user.txt").replace("{players}", players).replace("{transcript}", transcript.render())
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def _count_fn(model: ChatModel) -> Any:
    fn = getattr(model, "count_tokens", None)
    return fn if callable(fn) else None


def fit_transcript(log_: GameLog, model: ChatModel, max_tokens: int = DEFAULT_MAX_TOKENS) -> Transcript:
    """The transcript of ``log_`` condensed (if needed) to fit ``model.context_window``.

    Budget = context window − answer budget (``max_tokens``) − the prompt without the
    transcript − :data:`PROMPT_MARGIN_TOKENS`. A model with no known window gets the full
    transcript. See :meth:`Transcript.condense` for the rule.
    """
    full = build_transcript(log_)
    window = model.context_window
    if not window:
        return full
    count = _count_fn(model)
    empty = build_judge_messages(log_, Transcript([]))
    overhead_chars = sum(len(m.content) for m in empty)
    overhead = (
        count("".join(m.content for m in empty)) if count is not None else math.ceil(overhead_chars / CHARS_PER_TOKEN)
    )
    budget = max(0, window - max_tokens - overhead - PROMPT_MARGIN_TOKENS)
    return full.condense(budget, count)


def _parse(resp: ChatResponse) -> Any:
    if isinstance(resp.parsed, dict):
        return resp.parsed
    text = (resp.text or "").strip()
    if not text:
        raise UnusableVerdict("empty answer")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: degenerate deeply nested output
        pass
    try:
        repaired = json_repair.loads(text)
    except Exception:  # json-repair raises assorted errors on garbage: an unusable answer, not a crash
        raise UnusableVerdict("answer is not JSON") from None
    if not isinstance(repaired, dict) or not repaired:
        raise UnusableVerdict("answer is not JSON")
    return repaired


async def judge_game(
    game: GameLog | Path,
    judge: ChatModel,
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    seed: int | None = 0,
    write: bool = True,
) -> Verdict:
    """Ask ``judge`` for a verdict on a finished game and (by default) append it to ``verdicts.jsonl``.

    An answer that fails (transport error, not JSON, no usable scores) is retried up to
    ``attempts`` calls in all; then the verdict is recorded as ``missing`` with the reason;
    no score is ever invented. Validation rules: :func:`validate_verdict`.

    Args:
        game: A game log or game directory.
        judge: The judge model.
        attempts: Calls at most (>= 1).
        max_tokens: Answer budget per call.
        seed: Sampling seed passed to the backend.
        write: Append the verdict to ``<game dir>/verdicts.jsonl``.

    Returns:
        The verdict (``status`` ``ok`` or ``missing``).

    Raises:
        JudgeError: The game has not finished.
        LogFormatError: The game log cannot be read.
    """
    log_ = game if isinstance(game, GameLog) else read_game(Path(game))
    if log_.winner is None:
        raise JudgeError(f"{log_.path}: game {log_.game_id} has no outcome yet; only finished games are judged")
    roster = log_.header.roster
    names = [s.name for s in roster]
    transcript = fit_transcript(log_, judge, max_tokens)
    cond = transcript.condensation
    base = {"game_id": log_.game_id, "judge": judge.name, "condensation": cond}
    problems: list[str] = []
    if cond is not None:
        problems.append(
            f"transcript condensed ({cond['shortened']} texts shortened, {cond['omitted']} omitted) "
            f"to fit a {judge.context_window}-token window"
        )
        if not cond["fits"]:
            why = "transcript does not fit the judge's context window even condensed"
            v = Verdict(status="missing", attempts=0, error=why, problems=problems, **base)
            return _write(log_, v, write)
    messages = build_judge_messages(log_, transcript)
    schema = verdict_schema(names)
    prompt_tokens = completion_tokens = 0
    raw = ""
    error = "no attempt made"
    for attempt in range(1, max(1, attempts) + 1):
        request = ChatRequest(
            messages=messages,
            json_schema=schema,
            max_tokens=max_tokens,
            temperature=0.0,
            seed=seed,
            purpose="judge",
            meta={"game_id": log_.game_id, "attempt": attempt},
        )
        try:
            resp = await judge.chat(request)
        except Exception as err:  # a backend that raises instead of returning an error
            resp = ChatResponse(error=f"{type(err).__name__}: {err}", error_kind="transport", model=judge.name)
        prompt_tokens += resp.usage.prompt_tokens
        completion_tokens += resp.usage.completion_tokens
        raw = resp.text or ""
        try:
            if not resp.ok:
                raise UnusableVerdict(f"call failed: {resp.error}")
            valid = validate_verdict(_parse(resp), roster)
        except UnusableVerdict as err:
            error = str(err)
            problems.append(f"attempt {attempt}: unusable ({error})")
            log.warning("judge %s on %s, attempt %d: %s", judge.name, log_.game_id, attempt, error)
            continue
        for p in valid.problems:
            log.info("judge %s on %s: %s", judge.name, log_.game_id, p)
        v = Verdict(
            status="ok",
            headline=valid.headline,
            recap=valid.recap,
            mvp=valid.mvp,
            mvp_seat=valid.mvp_seat,
            players=valid.players,
            attempts=attempt,
            problems=problems + valid.problems,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            raw=raw,
            **base,
        )
        return _write(log_, v, write)
    v = Verdict(
        status="missing",
        attempts=max(1, attempts),
        error=error,
        problems=problems,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        raw=raw,
        **base,
    )
    return _write(log_, v, write)


def _write(log_: GameLog, v: Verdict, write: bool) -> Verdict:
    if write:
        with JsonlWriter(log_.path / VERDICTS_FILE) as w:
            w.write(v)
        v = v.model_copy()
    return v


def parse_model_options(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``provider/model?key=value&…`` into the model string and backend options.

    Values are read as JSON where they parse (``n_ctx=8192``), else kept as strings (the
    same spec syntax as agent model strings).

    Raises:
        ModelSpecError: A malformed query string.
    """
    model, _, query = spec.partition("?")
    options: dict[str, Any] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as err:
        raise ModelSpecError(f"model: bad options in {spec!r}: {err}") from None
    for key, value in pairs:
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return model, options


def judge_model(spec: str, **options: Any) -> ChatModel:
    """The judge model for a spec ``provider/model[?options]`` (``options`` override the query).

    Raises:
        ModelSpecError: Malformed string or unknown provider.
        ImportError: The backend's optional dependency is missing.
    """
    model, opts = parse_model_options(spec)
    return get_model(model, **{**opts, **options})


def resolve_judges(judges: Sequence[ChatModel | str]) -> list[ChatModel]:
    """Model instances for judges given as models or specs (:func:`judge_model`).

    Raises:
        ModelSpecError: A malformed or unknown model string.
    """
    return [judge_model(j) if isinstance(j, str) else j for j in judges]
