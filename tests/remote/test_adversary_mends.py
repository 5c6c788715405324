"""Defects an adversary found after the hardening of issue 28; each test failed before its fix."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import httpx
import pytest

from mafialab._http import _host_name
from mafialab.config import ConfigError, read_config
from mafialab.remote import BackgroundServer, BusHub, create_bus_app


def _queued_call(url: str, hub: BusHub) -> tuple[threading.Thread, dict[str, httpx.Response]]:
    out: dict[str, httpx.Response] = {}
    call = {"model": "k", "messages": [{"role": "user", "content": "the seat's private prompt"}], "timeout": 10}
    t = threading.Thread(target=lambda: out.update(r=httpx.post(f"{url}/generate", json=call, timeout=20)))
    t.start()
    deadline = time.monotonic() + 5
    while not hub.queue:
        assert time.monotonic() < deadline, "the call was not queued"
        time.sleep(0.01)
    return t, out


def test_a_bound_worker_id_cannot_be_polled_or_answered_by_another_client():
    hub = BusHub()
    with BackgroundServer(create_bus_app(hub)) as srv, httpx.Client(base_url=srv.url, timeout=10) as c:
        reg = c.post("/register", json={"worker": "victim", "models": ["k"], "bind": True})
        secret = reg.json()["secret"]
        t, out = _queued_call(srv.url, hub)
        # another client polling under the listed id, without or with a wrong secret, gets nothing
        for headers in ({}, {"X-Bus-Secret": "guess"}):
            r = c.get("/work", params={"worker": "victim", "wait": 0}, headers=headers)
            assert r.status_code == 403 and "bound" in r.json()["detail"], r.text
            assert "private prompt" not in r.text
        job = c.get("/work", params={"worker": "victim", "wait": 5}, headers={"X-Bus-Secret": secret}).json()
        r = c.post("/result", json={"request_id": job["request_id"], "text": "FORGED"})  # no secret
        assert r.status_code == 403
        ok = c.post("/result", json={"request_id": job["request_id"], "text": "mine"}, headers={"X-Bus-Secret": secret})
        assert ok.status_code == 200
        t.join(10)
    assert out["r"].json() == {"text": "mine"}


def test_an_unbound_worker_polls_as_before_and_cannot_forge_its_replacement_count():
    hub = BusHub()
    with BackgroundServer(create_bus_app(hub)) as srv, httpx.Client(base_url=srv.url, timeout=10) as c:
        assert c.post("/register", json={"worker": "ms", "models": ["k"]}).status_code == 200  # MafiaScope style
        t, out = _queued_call(srv.url, hub)
        job = c.get("/work", params={"worker": "ms", "wait": 5}).json()
        body = {"request_id": job["request_id"], "text": "ok", "replaced_chars": 10**26}
        assert c.post("/result", json=body).status_code == 200
        t.join(10)
    assert out["r"].json() == {"text": "ok", "replaced_chars": 2}  # at most one per character of the text


@pytest.mark.parametrize(
    ("netloc", "name"),
    [
        ("127.0.0.1:8765", "127.0.0.1"),
        ("[::1]:8765", "::1"),
        ("[::1]", "::1"),
        ("LOCALHOST", "localhost"),
        ("[::1]evil.com", "[::1]evil.com"),
        ("[::1].evil.com:80", "[::1].evil.com:80"),
        ("127.0.0.1:80x", "127.0.0.1:80x"),
    ],
)
def test_a_host_header_names_a_served_host_only_in_its_plain_forms(netloc: str, name: str):
    assert _host_name(netloc) == name


def test_yaml_nested_too_deeply_is_one_error_not_a_traceback(tmp_path: Path):
    for text in ("[" * 20_000 + "]" * 20_000, "a: " + "{b: " * 20_000 + "1" + "}" * 20_000):
        path = tmp_path / "deep.yaml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=r"deep\.yaml: nested too deeply"):
            read_config(path)


def test_a_pipe_given_as_a_config_file_is_refused_without_blocking(tmp_path: Path):
    fifo = tmp_path / "rules.yaml"
    os.mkfifo(fifo)
    got: list[BaseException] = []

    def read() -> None:
        try:
            read_config(fifo)
        except BaseException as err:
            got.append(err)

    th = threading.Thread(target=read, daemon=True)
    th.start()
    th.join(10)
    if th.is_alive():  # unblock the reader before failing (it waits for a writer)
        with open(fifo, "w"):
            pass
        pytest.fail("reading a FIFO blocked")
    assert len(got) == 1 and "not a regular file" in str(got[0])
