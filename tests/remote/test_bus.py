"""The model bus: a worker written to the reference protocol plays a seat through ``bus/...``."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import pytest

from mafialab.agents import LLMAgent, make_agent
from mafialab.harness import play_game
from mafialab.models import ChatMessage, ChatRequest, MockModel, ModelSpecError, get_model, parse_model_spec
from mafialab.remote import BackgroundServer, BusHub, create_bus_app, serve_jobs
from mafialab.rules import load_rules
from tests.remote.conftest import ReferenceWorker


def _wait_for_worker(url: str, n: int = 1, timeout_s: float = 5.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        st = httpx.get(f"{url}/status", timeout=5).json()
        if len(st["workers"]) >= n:
            return st
        time.sleep(0.02)
    raise AssertionError("worker did not register")


def test_bus_model_string_goes_through_the_one_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    model, opts = parse_model_spec("bus/villager?base_url=http://127.0.0.1:9&token_env=HUB_TOKEN&timeout=5")
    assert model == "bus/villager"
    assert opts == {"base_url": "http://127.0.0.1:9", "token_env": "HUB_TOKEN", "timeout": 5}
    monkeypatch.setenv("HUB_TOKEN", "s3cret")
    m = get_model("bus/villager?base_url=http://127.0.0.1:9&token_env=HUB_TOKEN&timeout=5")
    assert m.name == "bus/villager" and m.calls_network
    assert "s3cret" not in repr(m)
    with pytest.raises(ModelSpecError, match="base_url"):
        get_model("bus/villager")
    monkeypatch.delenv("HUB_TOKEN")
    with pytest.raises(ModelSpecError, match="token_env"):
        get_model("bus/villager?base_url=http://x&token_env=HUB_TOKEN")
    with pytest.raises(ModelSpecError, match="unknown option"):
        get_model("bus/villager?base_url=http://x&colour=red")


def test_probe_calls_are_marked_and_schemas_travel_in_the_prompt() -> None:
    m = get_model("bus/k?base_url=http://127.0.0.1:9")
    schema = {"type": "object", "properties": {"target": {"enum": ["Ann", "Bo"]}}}
    msgs = [ChatMessage(role="system", content="rules"), ChatMessage(role="user", content="vote")]
    body = m.payload(ChatRequest(messages=msgs, json_schema=schema, purpose="vote"))  # type: ignore[attr-defined]
    assert body["kind"] == "generate" and body["model"] == "k"
    assert body["messages"][0] == {"role": "system", "content": "rules"}
    assert json.dumps(schema) in body["messages"][-1]["content"]
    probe = m.payload(ChatRequest(messages=msgs, purpose="probe"))  # type: ignore[attr-defined]
    assert probe["kind"] == "probe" and probe["messages"][-1]["content"] == "vote"


async def test_reference_worker_plays_a_seat_through_the_bus(hub_server: BackgroundServer, tmp_path) -> None:
    rules = load_rules("mafiascope7")
    seed = 4
    with ReferenceWorker(hub_server.url, ["seat3"]) as worker:
        await asyncio.to_thread(_wait_for_worker, hub_server.url)
        agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
        agents[3] = make_agent(f"bus/seat3?base_url={hub_server.url}&timeout=10", 3, rules, seed)
        assert isinstance(agents[3], LLMAgent)
        res = await play_game(rules, agents, seed, out=tmp_path, game_id="g")
    assert res.winner is not None
    calls = [
        c for c in map(json.loads, (tmp_path / "g" / "calls.jsonl").read_text().splitlines()) if c["kind"] == "call"
    ]
    seat3 = [c for c in calls if c["seat"] == 3]
    game_calls = [c for c in seat3 if c["purpose"] != "preflight"]
    assert game_calls, "seat 3 made no call"
    assert all(c["model"] == "bus/seat3" for c in seat3)
    assert all(c["status"] == "ok" for c in game_calls), [c for c in game_calls if c["status"] != "ok"]
    # the worker saw every game call, as generate jobs with the seat's private context
    gen = [j for j in worker.jobs if j["kind"] == "generate"]
    assert len(gen) >= len(game_calls)
    assert all(code == 200 for code in worker.result_codes)
    # free-text votes were read with the lenient name matching and played
    lines = [json.loads(line) for line in (tmp_path / "g" / "game.jsonl").read_text().splitlines()]
    votes3 = [e for e in lines if e.get("kind") == "vote" and e.get("seat") == 3]
    assert votes3 and all(not e.get("fallback") for e in votes3)


async def test_unreadable_answers_take_the_retry_then_fallback_path(hub_server: BackgroundServer) -> None:
    rules = load_rules("mafiascope7")
    with ReferenceWorker(hub_server.url, ["*"], answer=lambda job: "@@@ ???"):
        await asyncio.to_thread(_wait_for_worker, hub_server.url)
        agent = make_agent(f"bus/any?base_url={hub_server.url}&timeout=10", 3, rules, 1)
        records = []
        agent.set_call_sink(records.append)  # type: ignore[attr-defined]
        from mafialab.engine import GameState

        state = GameState(rules, 1)
        while not state.is_terminal:
            batch = [d for d in state.pending() if d.seat == 3 and d.kind == "vote"]
            if batch:
                break
            for d in state.pending():
                state.apply(state.random_action(d))
        d = batch[0]
        action = await agent.decide(d, state.view(3))
    assert action.fallback and action.target in d.options
    assert [r.status for r in records] == ["unusable", "fallback"]


def test_late_result_gets_410_and_the_engine_503(hub_server: BackgroundServer) -> None:
    url = hub_server.url
    with httpx.Client(base_url=url, timeout=10) as c:
        assert c.post("/register", json={"worker": "w1", "models": ["k"]}).status_code == 200
        out: dict = {}

        def engine() -> None:
            out["r"] = httpx.post(
                f"{url}/generate",
                json={
                    "model": "k",
                    "messages": [{"role": "user", "content": "hi"}],
                    "kind": "generate",
                    "timeout": 0.3,
                },
                timeout=10,
            )

        t = threading.Thread(target=engine)
        t.start()
        job = c.get("/work", params={"worker": "w1", "wait": 5}).json()
        assert job["model"] == "k" and job["kind"] == "generate" and job["messages"][0]["content"] == "hi"
        st = c.get("/status").json()
        assert st["in_flight"] == 1 and st["queue_depth"] == 0
        t.join(10)
        assert out["r"].status_code == 503 and "timed out" in out["r"].json()["detail"]
        late = c.post("/result", json={"request_id": job["request_id"], "text": "too late"})
        assert late.status_code == 410
        st = c.get("/status").json()
        assert st["in_flight"] == 0 and st["timed_out"] == 1


def test_no_live_worker_is_503_and_unknown_worker_is_409(hub_server: BackgroundServer) -> None:
    with httpx.Client(base_url=hub_server.url, timeout=10) as c:
        r = c.post("/generate", json={"model": "nobody", "messages": [], "timeout": 1})
        assert r.status_code == 503 and "no live worker" in r.json()["detail"]
        assert c.get("/work", params={"worker": "ghost", "wait": 0}).status_code == 409
        assert c.post("/register", json={"worker": "w", "models": ["other"]}).status_code == 200
        assert c.get("/work", params={"worker": "w", "wait": 0}).status_code == 204
        assert c.post("/generate", json={"model": "nobody", "messages": [], "timeout": 1}).status_code == 503
        st = c.get("/status").json()
        assert [w["worker"] for w in st["workers"]] == ["w"] and st["workers"][0]["models"] == ["other"]


def test_workers_expire_after_the_ttl() -> None:
    now = [100.0]
    hub = BusHub(clock=lambda: now[0])
    from mafialab.remote._hub import RegisterBody

    hub.register(RegisterBody(worker="w", models=["k"]))
    assert [w.worker for w in hub.live("k")] == ["w"]
    assert hub.live("other") == []
    now[0] += 61
    assert hub.live("k") == []


def test_shared_token_is_required_everywhere() -> None:
    with BackgroundServer(create_bus_app(BusHub(token="tok"))) as srv:
        assert httpx.get(f"{srv.url}/status", timeout=5).status_code == 401
        bad = {"Authorization": "Bearer nope"}
        assert httpx.post(f"{srv.url}/register", json={"worker": "w"}, headers=bad, timeout=5).status_code == 401
        good = {"Authorization": "Bearer tok"}
        assert httpx.get(f"{srv.url}/status", headers=good, timeout=5).status_code == 200


async def test_mafialab_worker_serves_any_model(hub_server: BackgroundServer, monkeypatch) -> None:
    mock = MockModel(lambda req: f"echo {req.purpose}: {req.messages[-1].content}", name="mock/echo")
    stop = asyncio.Event()
    task = asyncio.create_task(serve_jobs(hub_server.url, ["echo"], mock, worker_id="mw", wait_s=0.3, stop=stop))
    await asyncio.to_thread(_wait_for_worker, hub_server.url)
    bus = get_model(f"bus/echo?base_url={hub_server.url}&timeout=5")
    msgs = [ChatMessage(role="user", content="ping")]
    r1 = await bus.chat(ChatRequest(messages=msgs, purpose="vote"))
    r2 = await bus.chat(ChatRequest(messages=msgs, purpose="probe"))
    stop.set()
    served = await asyncio.wait_for(task, 5)
    assert (r1.text, r2.text) == ("echo bus: ping", "echo probe: ping")
    assert served == 2 and [r.purpose for r in mock.requests] == ["bus", "probe"]


def test_bus_serve_binds_another_interface_only_with_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from mafialab.cli import app

    res = CliRunner().invoke(app, ["bus", "serve", "--host", "0.0.0.0", "--port", "0"])
    assert res.exit_code == 2 and "--host" in res.output and "token" in res.output
    monkeypatch.delenv("NO_SUCH_TOKEN_VAR", raising=False)
    res = CliRunner().invoke(app, ["bus", "serve", "--token-env", "NO_SUCH_TOKEN_VAR"])
    assert res.exit_code == 2 and "NO_SUCH_TOKEN_VAR" in res.output


def test_bus_worker_command_serves_a_model_to_a_game_elsewhere(hub_server: BackgroundServer) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    args = ["-m", "mafialab", "bus", "worker", "--hub", hub_server.url, "--key", "gpu", "--model", "mock/echo"]
    proc = subprocess.Popen([sys.executable, *args, "--max-jobs", "1"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        _wait_for_worker(hub_server.url, timeout_s=60)
        st = httpx.get(f"{hub_server.url}/status", timeout=5).json()
        assert st["workers"][0]["models"] == ["gpu"] and st["workers"][0]["meta"]["model"] == "mock/echo"
        r = httpx.post(
            f"{hub_server.url}/generate",
            json={"model": "gpu", "messages": [{"role": "user", "content": "hi"}], "timeout": 20},
            timeout=30,
        )
        assert r.status_code == 200 and r.json() == {"text": "{}"}
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "1 job answered" in out


def test_bus_worker_command_says_when_the_hub_is_unreachable() -> None:
    from typer.testing import CliRunner

    from mafialab.cli import app

    res = CliRunner().invoke(app, ["bus", "worker", "--hub", "http://127.0.0.1:9", "--model", "mock/x"])
    assert res.exit_code == 2 and "could not register" in res.output


async def test_a_bus_seats_fallback_cause_is_shown_on_the_console(hub_server: BackgroundServer, tmp_path) -> None:
    from mafialab.cli._play import fallback_lines

    rules = load_rules("mafiascope7")
    specs = ["scripted"] * rules.n_seats
    specs[3] = f"bus/any?base_url={hub_server.url}&timeout=10"
    with ReferenceWorker(hub_server.url, ["*"], answer=lambda job: "@@@ ???"):
        await asyncio.to_thread(_wait_for_worker, hub_server.url)
        agents = [make_agent(sp, s, rules, 2) for s, sp in enumerate(specs)]
        res = await play_game(rules, agents, 2, out=tmp_path, game_id="g")
    causes = [c.error for c in res.calls if c.status == "fallback" and c.seat == 3]
    assert causes, "seat 3 never fell back"
    lines = fallback_lines([res], specs)
    assert lines and all(line.startswith(f"g seat 3 {res.state.names[3]} (bus/any): ") for line in lines)
    assert {line.split(": ", 1)[1].split(" (x")[0] for line in lines} == set(causes)
    assert "base_url" not in " ".join(lines)


def test_a_page_of_another_origin_takes_no_job_and_a_worker_still_does(hub_server: BackgroundServer) -> None:
    url = hub_server.url
    assert httpx.post(f"{url}/register", json={"worker": "w", "models": ["k"]}, timeout=5).status_code == 200
    got: dict[str, httpx.Response] = {}
    call = {"model": "k", "messages": [{"role": "user", "content": "the seat's private prompt"}], "timeout": 10}

    def engine() -> None:
        got["r"] = httpx.post(f"{url}/generate", json=call, timeout=15)

    thread = threading.Thread(target=engine, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while httpx.get(f"{url}/status", timeout=5).json()["queue_depth"] < 1:
        assert time.monotonic() < deadline, "the call was not queued"
        time.sleep(0.02)
    refused = [
        ({"Origin": "http://127.0.0.1:9999"}, "Origin: a page of 'http://127.0.0.1:9999'"),
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, "Sec-Fetch-Site: cross-site"),
        ({"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"}, "Sec-Fetch-Site: same-site"),
        # no page to open here: a link from elsewhere takes nothing either
        ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, "cross-site"),
        ({"Host": f"rebound.example:{hub_server.port}"}, "Host: 'rebound.example:"),
    ]
    for headers, why in refused:
        r = httpx.get(f"{url}/work", params={"worker": "w", "wait": 0}, headers=headers, timeout=5)
        assert r.status_code == 403 and why in r.json()["detail"], (headers, r.text)
        assert "private prompt" not in r.text
    r = httpx.post(f"{url}/generate", json=call, headers={"Origin": "http://evil.example"}, timeout=5)
    assert r.status_code == 403
    assert httpx.get(f"{url}/status", timeout=5).json()["queue_depth"] == 1
    # the worker, a program (no Origin, no Sec-Fetch-*), takes the job and answers it
    job = httpx.get(f"{url}/work", params={"worker": "w", "wait": 5}, timeout=10).json()
    assert job["messages"] == call["messages"]
    assert (
        httpx.post(f"{url}/result", json={"request_id": job["request_id"], "text": "ok"}, timeout=5).status_code == 200
    )
    thread.join(15)
    assert got["r"].status_code == 200 and got["r"].json() == {"text": "ok"}


def _wait_for_queue(hub: BusHub, n: int = 1, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while len(hub.queue) < n:
        assert time.monotonic() < deadline, "the call was not queued"
        time.sleep(0.01)


def test_a_result_is_taken_only_from_the_worker_that_took_the_job() -> None:
    hub = BusHub()
    with BackgroundServer(create_bus_app(hub)) as srv, httpx.Client(base_url=srv.url, timeout=10) as c:
        for w in ("w1", "w2"):
            assert c.post("/register", json={"worker": w, "models": ["k"]}).status_code == 200
        out: dict = {}
        msgs = [{"role": "user", "content": "hi"}]
        t = threading.Thread(
            target=lambda: out.update(
                r=httpx.post(f"{srv.url}/generate", json={"model": "k", "messages": msgs, "timeout": 10}, timeout=20)
            )
        )
        t.start()
        _wait_for_queue(hub)
        rid = hub.queue[0].request_id
        # nobody took it yet: refused, and it stays in the queue for a worker
        r = c.post("/result", json={"request_id": rid, "text": "forged"})
        assert r.status_code == 409 and "not been taken" in r.json()["detail"]
        assert len(hub.queue) == 1
        job = c.get("/work", params={"worker": "w1", "wait": 5}).json()
        assert job["request_id"] == rid and len(rid) > 32  # 128 random bits, given to w1 only
        # another worker naming itself is refused; the job stays with w1
        r = c.post("/result", json={"request_id": rid, "text": "forged", "worker": "w2"})
        assert r.status_code == 409 and "another worker" in r.json()["detail"]
        assert c.get("/status").json()["in_flight"] == 1
        r = c.post("/result", json={"request_id": rid, "text": "from w1", "worker": "w1"})
        assert r.status_code == 200
        t.join(10)
    assert out["r"].status_code == 200 and out["r"].json() == {"text": "from w1"}


def test_a_live_worker_id_is_not_taken_over_without_its_secret() -> None:
    now = [100.0]
    hub = BusHub(clock=lambda: now[0])
    with BackgroundServer(create_bus_app(hub)) as srv, httpx.Client(base_url=srv.url, timeout=10) as c:
        first = c.post("/register", json={"worker": "gpu1", "models": ["k"], "meta": {"who": "first"}})
        assert first.status_code == 200
        secret = first.json()["secret"]
        r = c.post("/register", json={"worker": "gpu1", "models": ["*"], "meta": {"who": "intruder"}})
        assert r.status_code == 409 and "gpu1" in r.json()["detail"] and "secret" in r.json()["detail"]
        r = c.post("/register", json={"worker": "gpu1", "models": ["*"], "secret": "guess"})
        assert r.status_code == 409
        (w,) = c.get("/status").json()["workers"]
        assert (w["models"], w["meta"]) == (["k"], {"who": "first"})
        # the worker itself refreshes its registration with the secret (and keeps it)
        r = c.post("/register", json={"worker": "gpu1", "models": ["k", "k2"], "secret": secret})
        assert r.status_code == 200 and r.json()["secret"] == secret
        assert c.get("/status").json()["workers"][0]["models"] == ["k", "k2"]
        # once it has gone quiet past the time to live, the id is free again, with a new secret
        now[0] += hub.ttl_s + 1
        r = c.post("/register", json={"worker": "gpu1", "models": ["*"]})
        assert r.status_code == 200 and r.json()["secret"] != secret


async def test_mafialab_worker_registers_again_after_a_hub_restart(hub_server: BackgroundServer, caplog) -> None:
    caplog.set_level("WARNING", logger="mafialab.remote._worker")
    hub = hub_server.server.config.app.state.hub
    mock = MockModel(lambda req: "pong", name="mock/echo")
    stop = asyncio.Event()
    task = asyncio.create_task(
        serve_jobs(hub_server.url, ["echo"], mock, worker_id="mw", wait_s=0.2, concurrency=3, stop=stop)
    )
    await asyncio.to_thread(_wait_for_worker, hub_server.url)
    secret = hub.workers["mw"].secret
    hub.workers.clear()  # as after a restart: the polls get 409 and the loops register again, one at a time
    await asyncio.to_thread(_wait_for_worker, hub_server.url)
    bus = get_model(f"bus/echo?base_url={hub_server.url}&timeout=5")
    r = await bus.chat(ChatRequest(messages=[ChatMessage(role="user", content="ping")], purpose="vote"))
    stop.set()
    assert await asyncio.wait_for(task, 5) == 1
    assert r.text == "pong" and hub.workers["mw"].secret != secret
    assert [rec.getMessage() for rec in caplog.records] == []  # no loop was refused the id
