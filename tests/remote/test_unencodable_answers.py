"""A lone surrogate ("\\ud800", valid JSON) from a remote seat or a bus worker is logged as U+FFFD and counted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx

from mafialab.agents import make_agent
from mafialab.harness import play_game
from mafialab.remote import BackgroundServer, Client, SeatServer, first_legal
from mafialab.rules import load_rules
from tests.remote.conftest import ReferenceWorker, reference_answer

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
