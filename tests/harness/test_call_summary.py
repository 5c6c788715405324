"""The closing ``call_summary`` record of calls.jsonl: shared-prefix share and server-cached tokens."""

from __future__ import annotations

import json
from pathlib import Path

from mafialab.agents import make_agent
from mafialab.harness import CallRecorder, play_game
from mafialab.models import CallRecord, ChatMessage, ChatResponse, Usage, merge_summaries, prompt_text
from mafialab.probes import make_probe_observer
from mafialab.record import CALLS_FILE
from mafialab.rules import WEREWOLF7
from mafialab.testing import OpenAIStub


def _rec(prompt: str, cached: int | None = None, tokens: int = 10) -> CallRecord:
    resp = ChatResponse(usage=Usage(prompt_tokens=tokens, cached_tokens=cached))
    rec = CallRecord.of_response(resp, seat=0, purpose="speak", model="m", status="ok")
    return rec.with_prompt([ChatMessage(role="user", content=prompt)])


def _brute_share(prompts: list[str]) -> tuple[int, int]:
    shared = 0
    for i, p in enumerate(prompts):
        best = 0
        for q in prompts[:i]:
            n = 0
            while n < min(len(p), len(q)) and p[n] == q[n]:
                n += 1
            best = max(best, n)
        shared += best
    return shared, sum(len(p) for p in prompts)


def test_shared_prefix_is_the_longest_common_prefix_with_any_earlier_call() -> None:
    rec = CallRecorder("g")
    texts = ["abcdef", "abcxyz", "abq", "zzz", "abcdefgh"]
    for t in texts:
        rec(_rec(t))
    s = rec.summary()
    prompts = [prompt_text([ChatMessage(role="user", content=t)]) for t in texts]
    shared, total = _brute_share(prompts)
    # "user\n" is shared by every later prompt; then abc, ab, nothing, abcdef
    assert (s.shared_prefix_chars, s.prompt_chars) == (shared, total)
    assert shared == 4 * len("user\n") + 3 + 2 + 0 + 6
    assert s.shared_prefix_share == shared / total and s.calls == 5
    assert s.cached_tokens is None and s.cached_share is None and "no cached tokens" in s.line()


def test_cached_tokens_are_summed_over_the_calls_that_report_them() -> None:
    rec = CallRecorder("g")
    rec(_rec("a", cached=4, tokens=10))
    rec(_rec("b", cached=None, tokens=50))
    rec(_rec("c", cached=6, tokens=10))
    s = rec.summary()
    assert (s.cached_tokens, s.prompt_tokens, s.calls_with_cache) == (10, 20, 2)
    assert s.cached_share == 0.5
    both = merge_summaries([s, s])
    assert both.calls == 6 and both.cached_tokens == 20 and both.cached_share == 0.5


async def test_a_game_closes_calls_jsonl_with_its_summary(tmp_path: Path) -> None:
    async with OpenAIStub(usage_cached=7) as stub:
        spec = f"openai/stub?base_url={stub.base_url}"
        agents = [make_agent(spec if s % 2 else "scripted", s, WEREWOLF7, 2) for s in range(7)]
        runner = make_probe_observer("suspicion", agents, WEREWOLF7, 2, out=tmp_path)
        res = await play_game(WEREWOLF7, agents, 2, out=tmp_path, observers=[runner] if runner else [])
        bodies = [b for b in stub.requests if "response_format" in b or "messages" in b][1:]  # after the preflight
    assert res.path is not None and res.call_summary is not None
    lines = [json.loads(x) for x in (res.path / CALLS_FILE).read_text().splitlines()]
    assert [x["kind"] for x in lines[:-1]] == ["call"] * (len(lines) - 1)
    summary = lines[-1]
    assert summary["kind"] == "call_summary" and summary["calls"] == len(lines) - 1 == len(res.calls)
    assert summary["cached_tokens"] == 7 * summary["calls_with_cache"] and summary["calls_with_cache"] > 0
    # the prompt characters are those the server received
    prompts = [prompt_text([ChatMessage(**m) for m in b["messages"]]) for b in bodies]
    assert summary["prompt_chars"] == sum(len(p) for p in prompts)
    assert 0.5 < summary["shared_prefix_share"] < 1.0
