"""The served site's fork API: jobs, validation, limits, tokens, and where jobs may write."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import HTTPException
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.counterfactual import fork_steps
from mafialab.record import read_game
from mafialab.viewer import MAX_BODY, ForkRequest, ForkService, SiteServer, build_site, check_allowed_agents, check_host
from mafialab.viewer._build import site_rows
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "data" / "viewer_branches"


def read_index(site: Path) -> dict[str, Any]:
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    return json.loads(text[len('MAFIALAB_DATA("index","index",') : -3])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SiteServer, Path, Path]]:
    root = tmp_path_factory.mktemp("served")
    logs = root / "logs"
    shutil.copytree(FIXTURE / "parent", logs / "parent")
    site = root / "site"
    build_site(logs, site, jobs=1)
    with SiteServer(site, 0, logs=logs) as srv:
        yield srv, logs, site


def wait_job(client: httpx.Client, jid: str, timeout_s: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        st = client.get(f"api/jobs/{jid}").json()
        if st["state"] in ("done", "failed"):
            return st
        time.sleep(0.1)
    raise AssertionError(f"job {jid} did not finish")


def test_fork_job_adds_branches_to_the_site(served: tuple[SiteServer, Path, Path]) -> None:
    srv, logs, site = served
    before = {p.resolve() for p in logs.rglob("*")}
    parent = read_game(logs / "parent")
    step = next(s for s in fork_steps(parent) if s.kind == "vote")
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        steps = c.get("api/games/parent/steps").json()["steps"]
        assert [s["id"] for s in steps] == [s.id for s in fork_steps(parent)]
        assert next(s for s in steps if s["id"] == step.id)["seq"] is not None
        est = c.get("api/games/parent/estimate", params={"step": step.id, "replicas": 2}).json()
        assert est["branches"] == 2 and est["calls"] == 0 and "no calls.jsonl" in est["basis"]
        body = {"game": "parent", "step": step.id, "replicas": 2, "agents": "scripted"}
        r = c.post("api/forks", json={**body, "intervention": {"type": "belief", "seat": 99, "text": "x"}})
        assert r.status_code == 422 and "seat 99 out of range" in r.json()["detail"]
        r = c.post("api/forks", json=body)
        assert r.status_code == 202, r.text
        job = r.json()
        assert job["total"] == 2 and job["state"] in ("queued", "running")
        st = wait_job(c, job["id"])
        assert st["state"] == "done" and st["done"] == 2 and st["failed"] == 0 and st["eta_s"] == 0
        assert st["branches"] == [f"parent~{job['batch']}-0", f"parent~{job['batch']}-1"]
        listed = c.get("api/games/parent/branches").json()["batches"]
        assert [b["batch"] for b in listed] == [job["batch"]] and listed[0]["replicas"] == 2
        # the same request again picks the next seed: a new batch, nothing overwritten
        again = wait_job(c, c.post("api/forks", json={**body, "replicas": 1}).json()["id"])
        assert again["state"] == "done" and again["batch"] != job["batch"]
        assert [j["id"] for j in c.get("api/jobs").json()] == [job["id"], again["id"]]
    # the branches were written under logs/forks only, and are in the site without a rebuild
    new = {p.resolve() for p in logs.rglob("*")} - before
    assert new and all((logs / "forks").resolve() in p.parents or p == (logs / "forks").resolve() for p in new)
    rows = site_rows(site)
    ids = {r["id"] for r in rows}
    assert set(st["branches"]) <= ids and set(again["branches"]) <= ids
    row = next(r for r in rows if r["id"] == st["branches"][0])
    assert (site / "data" / "g" / f"{row['file']}.js").is_file()
    assert row["parent"]["game_id"] == "parent" and row["parent"]["step"] == step.id
    parent_row = next(r for r in rows if r["id"] == "parent")
    assert parent_row["branches"]["batches"] == 2 and (site / "data" / "b" / f"{parent_row['file']}.js").is_file()


def test_requests_are_validated(served: tuple[SiteServer, Path, Path]) -> None:
    srv, _, _ = served
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        r = c.post("api/forks", json={"game": "nope", "step": 1})
        assert r.status_code == 404 and "no game 'nope'" in r.json()["detail"]
        r = c.post("api/forks", json={"game": "parent", "step": 99999})
        assert r.status_code == 422 and "no forkable step" in r.json()["detail"]
        r = c.post("api/forks", content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 400 and "not valid JSON" in r.json()["detail"]
        r = c.post("api/forks", json={"game": "parent", "step": 1, "replicas": 0})
        assert r.status_code == 422 and "replicas" in r.json()["detail"]
        r = c.post("api/forks", json={"game": "parent", "step": 1, "intervention": {"type": "magic"}})
        assert r.status_code == 422 and "intervention" in r.json()["detail"]
        r = c.post("api/forks", json={"game": "parent", "step": 1, "colour": "red"})
        assert r.status_code == 422 and "colour" in r.json()["detail"]
        r = c.post(
            "api/forks", content=b"{" + b" " * (MAX_BODY + 10) + b"}", headers={"content-type": "application/json"}
        )
        assert r.status_code == 413
        assert c.get("api/jobs/j999").status_code == 404
        assert c.get("api/games/parent/estimate", params={"step": 1, "replicas": 0}).status_code == 422
        schema = c.get("api/openapi.json").json()
        assert {"/api/forks", "/api/jobs/{jid}", "/api/games/{game}/branches"} <= set(schema["paths"])
        # the served page carries the API marker and may call its own origin; the static build does not
        page = c.get("index.html").text
        assert 'name="mafialab-api"' in page and "connect-src 'self'" in page


def test_no_path_leaves_the_served_directories(served: tuple[SiteServer, Path, Path]) -> None:
    srv, logs, site = served
    secret = site.parent / "secret.txt"
    secret.write_text("do not serve")
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        for path in ("../secret.txt", "%2e%2e/secret.txt", "data/%2e%2e/%2e%2e/secret.txt", "..%2fsecret.txt"):
            r = c.get(path)
            assert r.status_code == 404 and "do not serve" not in r.text, path
        for gid in ("..", "../parent", "..%2Fparent", "%2e%2e%2fsecret.txt", str(logs / "parent")):
            r = c.get(f"api/games/{gid}/steps")
            assert r.status_code == 404, gid
        r = c.post("api/forks", json={"game": "../parent", "step": 1})
        assert r.status_code == 404
        assert c.get("data/index.js").status_code == 200
    assert not (site.parent / "forks").exists() and not (logs.parent / "forks").exists()


def test_token_guards_the_api_and_other_hosts_need_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURE / "parent", logs / "parent")
    build_site(logs, tmp_path / "site", jobs=1)
    with SiteServer(tmp_path / "site", 0, logs=logs, token="s3cret") as srv, httpx.Client(base_url=srv.url) as c:
        assert c.get("api/info").json()["auth"] is True
        assert c.get("api/games/parent/steps").status_code == 401
        bad = c.get("api/games/parent/steps", headers={"Authorization": "Bearer wrong"})
        assert bad.status_code == 401 and "bearer token" in bad.json()["detail"]
        assert (
            c.post("api/forks", json={"game": "parent", "step": 1}, headers={"Authorization": "Bearer x"}).status_code
            == 401
        )
        assert c.get("api/games/parent/steps", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    with pytest.raises(ValueError, match="--token-env"):
        check_host("0.0.0.0", None)
    check_host("0.0.0.0", "t")
    res = CliRunner().invoke(
        app, ["view", str(logs), "--out", str(tmp_path / "s2"), "--serve", "--host", "0.0.0.0", "--port", "0"]
    )
    assert res.exit_code != 0 and "--token-env" in res.output
    monkeypatch.delenv("NO_SUCH_TOKEN_VAR", raising=False)
    res = CliRunner().invoke(
        app, ["view", str(logs), "--out", str(tmp_path / "s3"), "--token-env", "NO_SUCH_TOKEN_VAR"]
    )
    assert res.exit_code != 0 and "NO_SUCH_TOKEN_VAR" in res.output


FORK = {"game": "parent", "step": 1, "agents": "scripted"}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SiteServer, str]]:
    """A served site whose starter allowed ``random`` beside the roster; with its page token."""
    root = tmp_path_factory.mktemp("guarded")
    logs = root / "logs"
    shutil.copytree(FIXTURE / "parent", logs / "parent")
    build_site(logs, root / "site", jobs=1)
    with SiteServer(root / "site", 0, logs=logs, allow_agents=["random"]) as srv:
        page = httpx.get(srv.url + "index.html", timeout=10).text
        found = re.search(r'<meta name="mafialab-csrf" content="([^"]+)">', page)
        assert found is not None, "the served page carries its token"
        yield srv, found.group(1)


def test_a_fork_request_must_be_json(guarded: tuple[SiteServer, str]) -> None:
    srv, _ = guarded
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        jobs = len(c.get("api/jobs").json())
        # the text/plain POST a page of another origin may send without a preflight
        r = c.post("api/forks", content=json.dumps(FORK), headers={"content-type": "text/plain"})
        assert r.status_code == 415 and "expected application/json, got 'text/plain'" in r.json()["detail"]
        r = c.post("api/forks", content=json.dumps(FORK))
        assert r.status_code == 415 and "got 'none'" in r.json()["detail"]
        assert len(c.get("api/jobs").json()) == jobs


def test_pages_of_other_origins_and_rebound_hosts_are_refused(guarded: tuple[SiteServer, str]) -> None:
    srv, _ = guarded
    host = srv.url.split("//")[1].rstrip("/")
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        jobs = len(c.get("api/jobs").json())
        refused = [
            ({"Origin": "http://127.0.0.1:9999"}, "Origin: a page of 'http://127.0.0.1:9999' may not call"),
            ({"Origin": "null"}, "Origin: a page of 'null'"),
            ({"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, "Sec-Fetch-Site: cross-site"),
            ({"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"}, "Sec-Fetch-Site: same-site"),
            ({"Host": f"rebound.example:{srv.port}"}, "Host: 'rebound.example:"),
        ]
        for headers, why in refused:
            r = c.post("api/forks", json=FORK, headers=headers)
            assert r.status_code == 403 and why in r.json()["detail"], (headers, r.text)
        assert len(c.get("api/jobs").json()) == jobs
        # reads too: no page of another origin loads the site's data as a script or reads the API
        script = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"}
        assert c.get("data/index.js", headers=script).status_code == 403
        assert c.get("api/jobs", headers={"Origin": "http://evil.example"}).status_code == 403
        assert c.get("index.html", headers={"Host": "rebound.example"}).status_code == 403
        # a link from another site still opens the page (not in a frame); localhost is this server too
        nav = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
        assert c.get("index.html", headers=nav).status_code == 200
        assert c.get("index.html", headers={**nav, "Sec-Fetch-Dest": "iframe"}).status_code == 403
        assert c.get("api/info", headers={"Host": f"localhost:{srv.port}"}).status_code == 200
        assert (
            c.get("api/info", headers={"Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}).status_code == 200
        )


def test_a_browser_post_needs_the_page_token_and_curl_does_not(guarded: tuple[SiteServer, str]) -> None:
    srv, csrf = guarded
    same = {"Origin": srv.url.rstrip("/"), "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        for headers in (same, {**same, "X-Mafialab-CSRF": "guess"}, {"Sec-Fetch-Site": "same-origin"}):
            r = c.post("api/forks", json=FORK, headers=headers)
            assert r.status_code == 403 and "X-Mafialab-CSRF: missing or wrong page token" in r.json()["detail"]
        page = c.post("api/forks", json=FORK, headers={**same, "X-Mafialab-CSRF": csrf})
        assert page.status_code == 202, page.text
        assert wait_job(c, page.json()["id"])["state"] == "done"
        curl = c.post("api/forks", json=FORK)  # a script on this machine: no Origin, no Sec-Fetch-*
        assert curl.status_code == 202, curl.text
        assert wait_job(c, curl.json()["id"])["state"] == "done"


def test_fork_agents_come_from_the_roster_or_the_servers_allow_list(guarded: tuple[SiteServer, str]) -> None:
    srv, _ = guarded
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        jobs = len(c.get("api/jobs").json())
        refused = [
            ("openai/x?base_url=http://127.0.0.1:9/v1", "sets backend options (base_url)"),
            ("openai/gpt-4o-mini?api_key_env=HOME", "sets backend options (api_key_env)"),
            ("openai/gpt-4o-mini", "neither in the parent's roster nor allowed by the server (--allow-agents)"),
            ("human", "is a seat played from outside"),
            ("human-web?timeout=60", "is a seat played from outside"),
            ("remote:bot", "is a seat played from outside"),
        ]
        for agents, why in refused:
            r = c.post("api/forks", json={**FORK, "agents": agents})
            detail = r.json()["detail"]
            assert r.status_code == 422 and why in detail and "(allowed: scripted, random)" in detail, detail
        assert len(c.get("api/jobs").json()) == jobs
        for agents in ("scripted", "random", None):  # the roster's, the allowed one, the parent's roster
            r = c.post("api/forks", json={**FORK, "agents": agents})
            assert r.status_code == 202, r.text
            assert wait_job(c, r.json()["id"])["state"] == "done"


def test_a_parent_with_a_person_seat_needs_agents_and_allow_agents_takes_no_person(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURE / "parent", logs / "parent")
    game = logs / "parent" / "game.jsonl"
    first, rest = game.read_text(encoding="utf-8").split("\n", 1)
    header = json.loads(first)
    header["roster"][3]["agent"] = "human"
    game.write_text(json.dumps(header) + "\n" + rest, encoding="utf-8")
    build_site(logs, tmp_path / "site", jobs=1)
    svc = ForkService(logs, tmp_path / "site", allow_agents=["random", "random"])
    with pytest.raises(HTTPException) as err:
        svc.validate(ForkRequest(game="parent", step=1))
    assert err.value.status_code == 422
    assert "seat 3 of the parent was played from outside (human)" in err.value.detail
    assert "choose agents (scripted, random)" in err.value.detail
    ok = ForkRequest(game="parent", step=1, agents="scripted")
    _, iv, parent = svc.validate(ok)
    assert parent.header.game_id == "parent" and svc.reserve(ok, parent, iv)[0] == 0
    # the starter may allow model strings with options, never a seat played from outside
    assert check_allowed_agents(["scripted", " openai/m?base_url=http://127.0.0.1:9/v1", "scripted"]) == (
        "scripted",
        "openai/m?base_url=http://127.0.0.1:9/v1",
    )
    for bad, why in (("human", "seat played from outside"), ("nope/m", "unknown model provider"), (" ", "empty")):
        with pytest.raises(ValueError, match=why):
            check_allowed_agents([bad])
    res = CliRunner().invoke(
        app,
        ["view", str(logs), "--out", str(tmp_path / "s2"), "--serve", "--port", "0", "--allow-agents", "x,human-web"],
    )
    assert res.exit_code != 0 and "--allow-agents: 'human-web' is a seat played from outside" in res.output
    assert not (tmp_path / "s2").exists()


def test_deep_json_nan_and_a_boolean_seed_get_4xx_not_500(served: tuple[SiteServer, Path, Path]) -> None:
    srv, _, _ = served
    js = {"Content-Type": "application/json"}
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        r = c.post("api/forks", content=b'{"a":' * 5000 + b"1" + b"}" * 5000, headers=js)
        assert r.status_code == 400 and "nested too deeply" in r.json()["detail"]
        r = c.post("api/forks", content=b'{"game": "g", "step": 1, "seed": NaN}', headers=js)
        assert r.status_code == 422 and "body.seed: NaN is not a JSON number" in r.json()["detail"]
        r = c.post("api/forks", json={"game": "parent", "step": 1, "seed": True})
        assert r.status_code == 422 and "seed" in r.json()["detail"]
