"""The agent API: remote seats played over HTTP, per-seat tokens, deadlines and bad input."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.remote import BackgroundServer, Client, SeatServer, SeatSpecError, first_legal, parse_seat_spec
from mafialab.rules import load_rules
from tests.remote.conftest import ReferenceWorker, reference_answer

ROOT = Path(__file__).resolve().parents[2]


def _kinds(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    return [(r["kind"], tuple(sorted(r))) for r in map(json.loads, path.read_text().splitlines())]


def test_seat_specs_name_their_bad_option() -> None:
    assert parse_seat_spec("remote").label == "remote"
    s = parse_seat_spec("remote:my-bot?timeout=5&probe=1")
    assert (s.kind, s.name, s.timeout_s, s.probe, s.label) == ("remote", "my-bot", 5.0, True, "remote:my-bot")
    with pytest.raises(SeatSpecError, match="timeout"):
        parse_seat_spec("remote?timeout=-1")
    with pytest.raises(SeatSpecError, match="colour"):
        parse_seat_spec("remote?colour=1")
    with pytest.raises(SeatSpecError, match="name"):
        parse_seat_spec("remote:bad name")


async def test_example_client_plays_two_seats_from_other_processes(tmp_path: Path) -> None:
    rules = load_rules("mafiascope7")
    seed = 5
    async with SeatServer(port=0) as seats:
        agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
        for s in (2, 5):
            agents[s] = make_agent("remote?timeout=30", s, rules, seed)
        gid = "remote-game"
        tickets = seats.open_game(gid, agents, tmp_path / gid)
        assert [t.seat for t in tickets] == [2, 5]
        for t in tickets:
            assert t.token_file is not None and t.token_file.read_text().strip() == t.token
            assert stat.S_IMODE(os.stat(t.token_file).st_mode) == 0o600
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        procs = [
            subprocess.Popen(
                [sys.executable, str(ROOT / "examples" / "remote_player.py"), seats.url, str(t.token_file)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for t in tickets
        ]
        try:
            res = await asyncio.wait_for(
                play_game(rules, agents, seed, out=tmp_path, game_id=gid, observers=[seats.observer(gid)]), 240
            )
            await seats.close_game(gid)
            outs = [await asyncio.to_thread(p.communicate, timeout=60) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all("game over: answered" in o for o, _ in outs)
    assert res.winner is not None and res.fallbacks == 0
    # the log has the form of a local game: the same record kinds with the same fields
    local = await play_game(
        rules,
        [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)],
        seed,
        out=tmp_path,
        game_id="local",
    )
    assert local.winner is not None
    remote_form = {k for k in _kinds(tmp_path / gid / "game.jsonl")}
    local_form = {k for k in _kinds(tmp_path / "local" / "game.jsonl")}
    assert remote_form - local_form <= {("game_status", f) for k, f in remote_form if k == "game_status"}
    header = json.loads((tmp_path / gid / "game.jsonl").read_text().splitlines()[0])
    assert header["meta"]["agents"]["2"]["external"] == "remote"
    assert header["roster"][2]["agent"] == "remote"
    # calls.jsonl records the remote seats' decisions with their latencies
    calls = [
        c for c in map(json.loads, (tmp_path / gid / "calls.jsonl").read_text().splitlines()) if c["kind"] == "call"
    ]
    mine = [c for c in calls if c["seat"] in (2, 5)]
    assert mine and all(c["model"] == "remote" and c["status"] == "ok" for c in mine)
    assert all(c["latency_ms"] >= 0 for c in mine)


async def _open_one(seats: SeatServer, tmp_path: Path, spec: str = "remote?timeout=5", seat: int = 3):
    rules = load_rules("werewolf7")
    agents = [make_agent("scripted", s, rules, 1) for s in range(rules.n_seats)]
    agents[seat] = make_agent(spec, seat, rules, 1)
    tickets = seats.open_game("g", agents, tmp_path / "g")
    task = asyncio.create_task(play_game(rules, agents, 1, out=tmp_path, game_id="g", observers=[seats.observer("g")]))
    return rules, agents, tickets[0], task


async def _game(
    seats: SeatServer, tmp_path: Path, remote: dict[int, str], rules_name: str = "werewolf7", seed: int = 1
):
    rules = load_rules(rules_name)
    agents = [make_agent("scripted", s, rules, seed) for s in range(rules.n_seats)]
    for s, spec in remote.items():
        agents[s] = make_agent(spec, s, rules, seed)
    tickets = seats.open_game("g", agents, tmp_path / "g")
    coro = play_game(rules, agents, seed, out=tmp_path, game_id="g", observers=[seats.observer("g")])
    return rules, agents, tickets, asyncio.create_task(coro)


async def _stop(task: asyncio.Task) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_tokens_open_exactly_one_seat(tmp_path: Path) -> None:
    async with SeatServer(port=0) as seats:
        _, _, (t1, t4), task = await _game(seats, tmp_path, {1: "remote?timeout=5", 4: "remote?timeout=5"})
        try:
            async with httpx.AsyncClient(base_url=seats.url, timeout=10) as c:
                assert (await c.get("/v1/seat")).status_code == 401
                assert (await c.get("/v1/seat", headers={"Authorization": "Bearer wrong"})).status_code == 401
                assert (await c.get("/v1/next", params={"wait": 0})).status_code == 401
                r = await c.post("/v1/answer", json={"request_id": "d0", "answer": {}})
                assert r.status_code == 401
                a = (await c.get("/v1/seat", headers={"Authorization": f"Bearer {t1.token}"})).json()
                b = (await c.get("/v1/seat", headers={"Authorization": f"Bearer {t4.token}"})).json()
                assert (a["seat"], b["seat"]) == (1, 4)
                assert a["name"] != b["name"] and a["players"] == b["players"]
        finally:
            await _stop(task)


async def test_no_answer_by_the_deadline_falls_back_and_the_game_goes_on(tmp_path: Path) -> None:
    async with SeatServer(port=0) as seats:
        _, _, _, task = await _game(seats, tmp_path, {3: "remote?timeout=0.2"}, "mafiascope7")
        res = await asyncio.wait_for(task, 120)
    assert res.winner is not None and res.fallbacks > 0
    calls = [
        c for c in map(json.loads, (tmp_path / "g" / "calls.jsonl").read_text().splitlines()) if c["kind"] == "call"
    ]
    mine = [c for c in calls if c["seat"] == 3]
    assert mine and all(c["status"] == "fallback" and "no answer within 0.2 s" in c["error"] for c in mine)
    assert res.fallbacks == len(mine)
    lines = [json.loads(x) for x in (tmp_path / "g" / "game.jsonl").read_text().splitlines()]
    acts = [e for e in lines if e.get("seat") == 3 and e.get("kind") in ("speech", "vote")]
    assert acts and all(e.get("fallback") for e in acts)


async def test_bad_answers_are_refused_and_the_decision_stays_open(tmp_path: Path) -> None:
    async with SeatServer(port=0, rate=(100, 10.0), max_body=2048) as seats:
        _, _, (t,), task = await _game(seats, tmp_path, {3: "remote?timeout=30"}, "mafiascope7")
        try:
            async with httpx.AsyncClient(
                base_url=seats.url, timeout=20, headers={"Authorization": f"Bearer {t.token}"}
            ) as c:
                body = (await c.get("/v1/next", params={"wait": 15})).json()
                req = body["request"]
                assert body["status"] == "decision" and req["deadline_in_s"] > 20
                rid = req["id"]
                r = await c.post("/v1/answer", content=b"{not json", headers={"content-type": "application/json"})
                assert r.status_code == 400 and "JSON" in r.json()["detail"]
                r = await c.post("/v1/answer", json={"answer": {}})
                assert r.status_code == 422 and "request_id" in r.json()["detail"]
                wrong = {"target": "Nobody"} if "target" in req["schema"]["properties"] else {"text": ""}
                r = await c.post("/v1/answer", json={"request_id": rid, "answer": wrong})
                assert r.status_code == 422, r.text
                r = await c.post("/v1/answer", json={"request_id": rid, "answer": {"extra": 1}})
                assert r.status_code == 422
                r = await c.post("/v1/answer", json={"request_id": "d9999", "answer": {}})
                assert r.status_code == 409
                r = await c.post("/v1/answer", json={"request_id": rid, "answer": {"text": "x" * 5000}})
                assert r.status_code == 413
                # still open: the same request comes back, and a legal answer is accepted
                again = (await c.get("/v1/next", params={"wait": 5, "since": body["next_since"]})).json()
                assert again["request"]["id"] == rid and again["events"] == []
                r = await c.post("/v1/answer", json={"request_id": rid, "answer": first_legal(req)})
                assert r.status_code == 200 and r.json()["accepted"]
                r = await c.post("/v1/answer", json={"request_id": rid, "answer": first_legal(req)})
                assert r.status_code == 409
        finally:
            await _stop(task)
    calls = [
        c for c in map(json.loads, (tmp_path / "g" / "calls.jsonl").read_text().splitlines()) if c["kind"] == "call"
    ]
    assert [c["status"] for c in calls if c["seat"] == 3][:1] == ["ok"]


async def test_repeated_requests_get_429_but_waiting_polls_do_not_count(tmp_path: Path) -> None:
    async with SeatServer(port=0, rate=(3, 60.0)) as seats:
        rules = load_rules("werewolf7")
        agents = [make_agent("scripted", s, rules, 1) for s in range(rules.n_seats)]
        agents[3] = make_agent("remote", 3, rules, 1)
        (t,) = seats.open_game("g", agents, None)  # no game running: polls wait
        async with httpx.AsyncClient(
            base_url=seats.url, timeout=20, headers={"Authorization": f"Bearer {t.token}"}
        ) as c:
            for _ in range(5):
                assert (await c.get("/v1/next", params={"wait": 0.1})).status_code == 204
            codes = [(await c.get("/v1/seat")).status_code for _ in range(4)]
            assert codes == [200, 200, 200, 429]
            assert (await c.get("/v1/next", params={"wait": 0})).status_code == 429


async def test_a_seat_that_reconnects_resumes_the_open_decision(tmp_path: Path) -> None:
    async with SeatServer(port=0) as seats:
        _, _, (t,), task = await _game(seats, tmp_path, {3: "remote?timeout=30"}, "mafiascope7")
        try:
            first = await asyncio.to_thread(lambda: Client(seats.url, t.token).next(wait=15))
            # the first client is gone; a new one (knowing nothing) gets the same request and every event
            c2 = Client(seats.url, t.token)
            again = await asyncio.to_thread(c2.next, 15)
            assert again["request"]["id"] == first["request"]["id"]
            assert again["events"] == first["events"] and again["next_since"] == first["next_since"]
            # one that knows where it was gets only what is new
            c3 = Client(seats.url, t.token, since=first["next_since"])
            assert (await asyncio.to_thread(c3.next, 15))["events"] == []
            await asyncio.to_thread(c2.answer, again["request"]["id"], first_legal(again["request"]))
            c2.close()
            c3.close()
        finally:
            await _stop(task)


async def test_pages_of_other_origins_get_nothing_and_the_seat_page_still_calls_its_own(tmp_path: Path) -> None:
    async with SeatServer(port=0) as seats:
        _, _, (t,), task = await _game(seats, tmp_path, {3: "remote?timeout=30"}, "mafiascope7")
        try:
            auth = {"Authorization": f"Bearer {t.token}"}
            async with httpx.AsyncClient(base_url=seats.url, timeout=10, headers=auth) as c:
                refused = [
                    ({"Origin": "http://127.0.0.1:9999"}, "Origin: a page of 'http://127.0.0.1:9999'"),
                    ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, "Sec-Fetch-Site: cross-site"),
                    ({"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"}, "Sec-Fetch-Site: same-site"),
                    ({"Host": f"rebound.example:{seats.port}"}, "Host: 'rebound.example:"),
                ]
                for headers, why in refused:
                    r = await c.get("/v1/seat", headers=headers)
                    assert r.status_code == 403 and why in r.json()["detail"], (headers, r.text)
                    assert "role" not in r.text
                r = await c.post(
                    "/v1/answer", json={"request_id": "d9999", "answer": {}}, headers={"Origin": "http://evil.example"}
                )
                assert r.status_code == 403
                script = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"}
                assert (await c.get("/play.js", headers=script)).status_code == 403
                # the seat page's own calls are same-origin; a link from elsewhere opens the page
                same = {"Origin": seats.url, "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}
                assert (await c.get("/v1/seat", headers={"Sec-Fetch-Site": "same-origin"})).status_code == 200
                r = await c.post("/v1/answer", json={"request_id": "d9999", "answer": {}}, headers=same)
                assert r.status_code == 409  # past the guard: no such open request
                nav = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
                assert (await c.get("/play", headers=nav)).status_code == 200
                assert (await c.get("/v1/seat", headers={"Host": f"localhost:{seats.port}"})).status_code == 200
        finally:
            await _stop(task)


async def test_openapi_schema_documents_the_endpoints(tmp_path: Path) -> None:
    async with SeatServer(port=0) as seats, httpx.AsyncClient(base_url=seats.url, timeout=10) as c:
        spec = (await c.get("/openapi.json")).json()
    assert {"/v1/seat", "/v1/next", "/v1/answer"} <= set(spec["paths"])
    answer = spec["paths"]["/v1/answer"]["post"]
    assert {"400", "401", "409", "413", "422", "429"} <= set(answer["responses"])
    assert "request_id" in json.dumps(answer["requestBody"])
    assert "204" in spec["paths"]["/v1/next"]["get"]["responses"]


# A lone surrogate ("\ud800", valid JSON) from a remote seat or a bus worker is logged as U+FFFD and counted.


LONE = "\ud800"


def _lines(path: Path) -> list[dict[str, Any]]:
    """Every record of a JSONL file, read as strict UTF-8 (none may hold a lone surrogate)."""
    out = [json.loads(line) for line in path.read_bytes().decode("utf-8").splitlines()]
    for r in out:
        json.dumps(r, ensure_ascii=False).encode("utf-8")  # raises on a "\ud800" escape read back
    return out


def _said(events: list[dict[str, Any]], seat: int) -> list[str]:
    """The speeches and vote statements of ``seat``."""
    return [
        e.get("text") or e.get("statement") or ""
        for e in events
        if e.get("seat") == seat and e["kind"] in ("speech", "vote")
    ]


class _EscapingClient(Client):
    """A client that sends a lone surrogate as its JSON escape ``"\\ud800"`` (httpx's ``json=`` cannot encode it)."""

    def answer(self, request_id: str, answer: Any) -> dict[str, Any]:
        body = json.dumps({"request_id": request_id, "answer": answer}).encode("ascii")
        return self._check(  # type: ignore[no-any-return]
            self._http.post("/v1/answer", content=body, headers={"content-type": "application/json"})
        )


class _EscapingWorker(ReferenceWorker):
    """A reference worker whose results travel as ASCII JSON (a lone surrogate as its escape)."""

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=10.0) as client:
            self._register(client)
            while not self._stop.is_set():
                r = client.get("/work", params={"worker": self.worker_id, "wait": 0.5})
                if r.status_code != 200:
                    continue
                job = r.json()
                self.jobs.append(job)
                body = json.dumps({"request_id": job["request_id"], "text": self.answer(job)}).encode("ascii")
                res = client.post("/result", content=body, headers={"content-type": "application/json"})
                self.result_codes.append(res.status_code)


def _with_lone_surrogate(request: dict[str, Any], client: Client) -> Any:
    out = first_legal(request, client)
    for key in ("text", "statement"):
        if isinstance(out, dict) and key in out:
            out[key] = f"{out[key]} {LONE}"
    return out


async def test_a_remote_seats_lone_surrogate_is_logged_as_fffd_and_counted(tmp_path: Path) -> None:
    rules = load_rules("mafiascope7")
    agents = [make_agent("scripted", s, rules, 1) for s in range(rules.n_seats)]
    agents[3] = make_agent("remote?timeout=30", 3, rules, 1)
    async with SeatServer(port=0) as seats:
        (ticket,) = seats.open_game("g", agents, tmp_path / "g")
        game = asyncio.create_task(
            play_game(rules, agents, 1, out=tmp_path, game_id="g", observers=[seats.observer("g")])
        )
        with _EscapingClient(seats.url, ticket.token) as client:
            answered = await asyncio.to_thread(client.play, _with_lone_surrogate, wait=5, max_s=120)
        res = await asyncio.wait_for(game, 120)
    assert res.winner is not None and answered > 0
    events = _lines(tmp_path / "g" / "game.jsonl")
    assert events[-1]["kind"] in ("game_end", "game_status")
    said = [t for t in _said(events, 3) if t]
    assert said and all(t.endswith(" \ufffd") for t in said)
    calls = [c for c in _lines(tmp_path / "g" / "calls.jsonl") if c["kind"] == "call" and c["seat"] == 3]
    texts = [c for c in calls if c["purpose"] in ("speak", "vote")]
    assert texts and all(c["status"] == "ok" and c["replaced_chars"] == 1 for c in texts)
    assert all(c["replaced_chars"] == 0 for c in calls if c["purpose"] not in ("speak", "vote"))


async def test_a_bus_workers_lone_surrogate_is_logged_as_fffd_and_counted(
    hub_server: BackgroundServer, tmp_path: Path
) -> None:
    def answer(job: dict[str, Any]) -> str:
        text = reference_answer(job)
        if text.startswith("{"):  # speech and vote statement
            value = json.loads(text)
            for key in ("text", "statement"):
                if key in value:
                    value[key] = f"{value[key]} {LONE}"
            return json.dumps(value, ensure_ascii=False)  # the result text holds the character itself
        return text

    rules = load_rules("mafiascope7")
    with _EscapingWorker(hub_server.url, ["seat3"], answer=answer) as worker:
        for _ in range(100):  # the worker registers within a few polls
            if httpx.get(f"{hub_server.url}/status").json()["workers"]:
                break
            await asyncio.sleep(0.05)
        agents = [make_agent("scripted", s, rules, 4) for s in range(rules.n_seats)]
        agents[3] = make_agent(f"bus/seat3?base_url={hub_server.url}&timeout=10", 3, rules, 4)
        res = await play_game(rules, agents, 4, out=tmp_path, game_id="g")
    assert res.winner is not None and worker.result_codes and set(worker.result_codes) == {200}
    events = _lines(tmp_path / "g" / "game.jsonl")
    said = [t for t in _said(events, 3) if t and not t.startswith("I choose")]
    assert said and all(t.endswith(" \ufffd") for t in said)
    calls = [c for c in _lines(tmp_path / "g" / "calls.jsonl") if c["kind"] == "call" and c["seat"] == 3]
    texts = [c for c in calls if c["purpose"] == "speak" or (c["purpose"] == "vote" and c["status"] == "ok")]
    assert texts and all(c["status"] == "ok" and c["replaced_chars"] == 1 for c in texts)
