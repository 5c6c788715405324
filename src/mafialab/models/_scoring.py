"""Scoring given answers by the model's log-probabilities (the readout of ``logprob`` probes).

A backend that can score has ``async score_choices(request, candidates, first_token=False) ->
ChoiceScores``: the log-probability of each candidate's token sequence as the assistant's
answer after ``request.messages`` (summed over the candidate's tokens; only the first token's
with ``first_token``). A backend that cannot (or is configured not to) either lacks the
method or gives the reason in ``scoring_refusal`` (:func:`scoring_refusal`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from mafialab.models._protocol import ChatMessage, Usage

TOP_LOGPROBS_MAX = 20
"""Most alternatives OpenAI's chat API returns per generated token (``top_logprobs``)."""


class ChoiceScores(BaseModel):
    """The model's log-probabilities of given answers (one call of a ``logprob`` probe).

    Attributes:
        candidates: The answers scored, in the order asked.
        logprobs: Natural-log probability of each candidate's token sequence after the
            prompt (sum over its tokens, or its first token's alone when ``scoring`` is
            ``first_token``); ``None`` when the call failed.
        scoring: ``sequence`` (every token of the candidate) or ``first_token``.
        method: How the numbers were read: ``llama.cpp`` (embedded logits),
            ``completions`` (``/v1/completions`` with ``echo`` and ``logprobs``) or
            ``top_logprobs`` (a chat answer's first-token alternatives).
        usage: Token usage (prompt tokens: the shared prefix once, plus each candidate's).
        latency_s: Wall-clock seconds.
        error: Why there are no numbers, or ``None``.
        model: Model that answered.
    """

    candidates: list[str]
    logprobs: list[float] | None = None
    scoring: str = "sequence"
    method: str = ""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    error: str | None = None
    model: str = ""

    def distribution(self) -> list[float] | None:
        """:func:`softmax` of :attr:`logprobs` (``None`` when the call failed)."""
        return None if self.logprobs is None else softmax(self.logprobs)


def softmax(logprobs: Sequence[float]) -> list[float]:
    """Normalise log-scores into a distribution by log-sum-exp: ``exp(x_i - logsumexp(x))``.

    Args:
        logprobs: Finite natural-log scores (at least one), or ``-inf`` for a candidate the
            model cannot produce (given probability 0).

    Returns:
        Probabilities in [0, 1] summing to 1 (within float rounding), in the same order.

    Raises:
        ValueError: No scores, a NaN or ``+inf``, or every score ``-inf``.
    """
    xs = [float(x) for x in logprobs]
    if not xs or any(math.isnan(x) or x == math.inf for x in xs):
        raise ValueError(f"logprobs: expected finite log-probabilities, got {xs!r}")
    top = max(xs)
    if top == -math.inf:
        raise ValueError("logprobs: every candidate has probability 0")
    weights = [math.exp(x - top) for x in xs]
    total = math.fsum(weights)
    return [w / total for w in weights]


def scoring_refusal(model: Any) -> str | None:
    """Why ``model`` cannot score given answers, or ``None`` when it can.

    A backend scores when it has a ``score_choices`` method and its ``scoring_refusal``
    attribute (optional) is ``None``.
    """
    if not callable(getattr(model, "score_choices", None)):
        return f"{getattr(model, 'name', type(model).__name__)} cannot score given answers (no log-probabilities)"
    why = getattr(model, "scoring_refusal", None)
    return why if isinstance(why, str) else None


def plain_transcript(messages: Sequence[ChatMessage]) -> str:
    """The chat ``messages`` as one completion prompt, for servers that score raw text.

    ``/v1/completions`` applies no chat template, so the messages are laid out as
    ``System: …``, ``User: …``, ``Assistant: …`` paragraphs ending with ``Assistant:``; a
    candidate is scored as the text that follows, after one space. This is not the prompt
    the model sees in chat (docs/probes.md says so).
    """
    parts = [f"{m.role.capitalize()}: {m.content}" for m in messages]
    return "\n\n".join([*parts, "Assistant:"])


def echo_logprob(logprobs: Mapping[str, Any], boundary: int, end: int, first_token: bool) -> float:
    """Log-probability of the prompt text between characters ``boundary`` and ``end`` in an echoed completion.

    Reads the legacy completions ``logprobs`` object (``tokens``, ``token_logprobs``,
    ``text_offset``; vLLM, SGLang, llama-cpp-python): sums ``token_logprobs`` of the tokens
    that end after ``boundary`` and start before ``end`` (the prompt's length: generated
    tokens after it are not counted; a token straddling ``boundary`` counts, as the
    candidate's first), only the first of them with ``first_token``.

    Raises:
        ValueError: The object lacks those lists, they differ in length, no token lies
            after ``boundary``, or a counted token has no log-probability.
    """
    tokens = logprobs.get("tokens")
    values = logprobs.get("token_logprobs")
    offsets = logprobs.get("text_offset")
    if not isinstance(tokens, list) or not isinstance(values, list) or not isinstance(offsets, list):
        raise ValueError("logprobs: the answer has no tokens/token_logprobs/text_offset lists (is echo supported?)")
    if not len(tokens) == len(values) == len(offsets):
        raise ValueError("logprobs: tokens, token_logprobs and text_offset differ in length")
    total = 0.0
    counted = 0
    for tok, lp, off in zip(tokens, values, offsets, strict=True):
        if int(off) + len(str(tok)) <= boundary:
            continue
        if int(off) >= end:
            break
        if lp is None:
            raise ValueError(f"logprobs: token {tok!r} of the candidate has no log-probability")
        total += float(lp)
        counted += 1
        if first_token:
            break
    if counted == 0:
        raise ValueError("logprobs: no token of the candidate in the echoed prompt")
    return total


def top_logprob_scores(top: Sequence[Mapping[str, Any]], candidates: Sequence[str]) -> list[float]:
    """Candidates' log-probabilities from a chat answer's first-token ``top_logprobs``.

    A candidate is found when an alternative's ``token``, stripped of surrounding
    whitespace, equals it exactly (it is then a single token of the model; the
    best-scored such alternative counts).

    Raises:
        ValueError: A candidate is not among the alternatives (it is several tokens, or
            scored below the server's top ``TOP_LOGPROBS_MAX``); the message names it.
    """
    best: dict[str, float] = {}
    for alt in top:
        tok = str(alt.get("token", "")).strip()
        lp = alt.get("logprob")
        if tok and isinstance(lp, int | float) and (tok not in best or lp > best[tok]):
            best[tok] = float(lp)
    missing = [c for c in candidates if c not in best]
    if missing:
        raise ValueError(
            f"top_logprobs: {missing[0]!r} is not one of the {len(top)} first-token alternatives the server "
            f"returned (a candidate must be a single token within the top {TOP_LOGPROBS_MAX}); use a server "
            "with /v1/completions echo scoring"
        )
    return [best[c] for c in candidates]
