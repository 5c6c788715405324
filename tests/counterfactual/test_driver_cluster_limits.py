"""``bifurcate run --ray``: the driver's own calls (preflight, embeddings) share the cluster's limits."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.counterfactual import plan_points
from mafialab.counterfactual._embed import make_embedder
from mafialab.models import ChatMessage, ChatRequest, cluster_limits, get_model
from mafialab.record import read_game
from mafialab.testing import OpenAIStub, stub_embedding
from tests.helpers import play_probed_parent, seeded_responder

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


async def test_the_embedder_keeps_its_limit_and_the_order_of_its_batches() -> None:
    async with OpenAIStub(latency_s=0.05) as stub:
        texts = [f"text {i}" for i in range(7)]
        emb = make_embedder(f"openai/emb?base_url={stub.base_url}&batch=2&max_concurrency=2")
        got = await emb.embed(texts)
        assert len(stub.requests) == 4 and stub.max_in_flight_by_model == {"emb": 2}
        want = np.array([stub_embedding(t) for t in texts])
        assert np.allclose(got, want / np.linalg.norm(want, axis=1, keepdims=True))
    with pytest.raises(ValueError, match="max_concurrency must be >= 1"):
        make_embedder("openai/emb?base_url=http://127.0.0.1:9/v1&max_concurrency=0")
    with pytest.raises(ValueError, match="max_concurrency must be an integer"):
        make_embedder("openai/emb?base_url=http://127.0.0.1:9/v1&max_concurrency=two")


def _busy_on_worker(chat_spec: str, embed_spec: str, stop: str) -> tuple[int, int]:
    """Keep two chat calls and two embedding requests in flight (cluster limits on) until ``stop`` exists."""
    req = ChatRequest(messages=[ChatMessage(role="user", content="Busy?")])

    async def go() -> tuple[int, int]:
        chat, emb = get_model(chat_spec), make_embedder(embed_spec)
        counts = [0, 0]
        deadline = time.monotonic() + 300

        async def loop(i: int) -> None:
            while not Path(stop).exists() and time.monotonic() < deadline:
                if i == 0:
                    assert (await chat.chat(req)).ok
                else:
                    await emb.embed(["busy"])
                counts[i] += 1

        await asyncio.gather(loop(0), loop(0), loop(1), loop(1))
        return counts[0], counts[1]

    with cluster_limits() as on:
        assert on
        return asyncio.run(go())


def test_the_driver_calls_of_a_ray_bifurcation_count_against_the_cluster_limit(
    tmp_path: Path, ray_by_value: Any
) -> None:
    ray = ray_by_value
    parent = play_probed_parent(tmp_path / "parents")
    point = plan_points(read_game(parent), "innocent-votes")[0]
    stop = tmp_path / "stop"
    with OpenAIStub(latency_s=0.1, responder=seeded_responder, max_n=5).in_thread() as stub:
        chat = f"openai/stub?base_url={stub.base_url}&max_n=5&max_concurrency=1"
        embed = f"openai/emb?base_url={stub.base_url}&max_concurrency=1"
        # another job's worker keeps both backends busy for the whole run, through the same keepers
        busy = ray.remote(max_retries=0)(_busy_on_worker).remote(chat, embed, str(stop))
        end = time.monotonic() + 120
        while {r.get("model") for r in stub.requests} != {"stub", "emb"} and time.monotonic() < end:
            time.sleep(0.05)
        n_busy = len(stub.requests)
        assert n_busy >= 2, "the busy worker did not start"
        res = runner.invoke(
            app,
            ["bifurcate", "run", str(parent), "--points", str(point.step.id), "--resamples", "6", "--keep", "2",
             "--sampler", chat, "--embed", embed, "-a", "scripted", "--out", str(tmp_path / "out"), "--ray", "local"],
        )  # fmt: skip
        stop.touch()
        n_chat, n_embed = ray.get(busy)
        assert res.exit_code == 0, res.output
        assert "1 point; 6 new samples, 2 new forks" in res.output
        # the driver's preflight and embedding requests reached the server while the busy worker ran ...
        driver_embeds = [r for r in stub.requests if r.get("model") == "emb" and r.get("input") != ["busy"]]
        assert driver_embeds and n_chat > 0 and n_embed > 0
        # ... and never beside another call to the same backend: one slot for driver and workers together
        assert stub.max_in_flight_by_model == {"stub": 1, "emb": 1}
