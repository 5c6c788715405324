"""Servers for the remote-seat tests: free ports, shut down after each test."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from mafialab.remote import BackgroundServer, BusHub, create_bus_app

SCHEMA_MARK = "follows this JSON schema:\n"


@pytest.fixture
def hub_server() -> Iterator[BackgroundServer]:
    srv = BackgroundServer(create_bus_app(BusHub(), default_timeout=10.0)).start()
    try:
        yield srv
    finally:
        srv.stop()


def schema_of(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The JSON schema the engine wrote into the last user message, if any."""
    content = str(messages[-1]["content"])
    if SCHEMA_MARK not in content:
        return None
    return json.loads(content.rsplit(SCHEMA_MARK, 1)[1])


def reference_answer(job: dict[str, Any]) -> str:
    """A trivial policy that reads the job as a reference-protocol worker would."""
    schema = schema_of(job["messages"])
    if job["kind"] == "probe" or schema is None:
        return "I am not sure yet."
    props = schema.get("properties", {})
    if "target" in props:
        names = [n for n in props["target"].get("enum", []) if n]
        if "statement" in props:
            return json.dumps({"target": names[-1], "statement": "my reasons"})
        return f"I choose **{names[-1]}**."  # free text: read with the lenient name matching
    return json.dumps({"text": "Hello table, let us find them."})


class ReferenceWorker:
    """A worker written to the published bus protocol with plain httpx (no mafialab code)."""

    def __init__(
        self,
        url: str,
        keys: list[str],
        answer: Callable[[dict[str, Any]], str] = reference_answer,
        worker_id: str = "ref-worker",
        token: str | None = None,
        delay_s: float = 0.0,
    ):
        self.url = url
        self.keys = keys
        self.answer = answer
        self.worker_id = worker_id
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.delay_s = delay_s
        self.jobs: list[dict[str, Any]] = []
        self.result_codes: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _register(self, client: httpx.Client) -> None:
        r = client.post("/register", json={"worker": self.worker_id, "models": self.keys, "meta": {"lang": "py"}})
        assert r.status_code == 200, r.text
        assert r.json()["worker"] == self.worker_id

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, headers=self.headers, timeout=10.0) as client:
            self._register(client)
            while not self._stop.is_set():
                r = client.get("/work", params={"worker": self.worker_id, "wait": 0.5})
                if r.status_code == 409:
                    self._register(client)
                    continue
                if r.status_code == 204:
                    continue
                job = r.json()
                self.jobs.append(job)
                if self.delay_s:
                    self._stop.wait(self.delay_s)
                res = client.post("/result", json={"request_id": job["request_id"], "text": self.answer(job)})
                self.result_codes.append(res.status_code)

    def __enter__(self) -> ReferenceWorker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10.0)
