"""The served site's fork API: jobs, validation, limits, tokens, and where jobs may write."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.counterfactual import fork_steps
from mafialab.record import read_game
from mafialab.viewer import MAX_BODY, SiteServer, build_site, check_host
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
    index = read_index(site)
    ids = {r["id"] for r in index["games"]}
    assert set(st["branches"]) <= ids and set(again["branches"]) <= ids
    row = next(r for r in index["games"] if r["id"] == st["branches"][0])
    assert (site / "data" / "g" / f"{row['file']}.js").is_file()
    assert row["parent"]["game_id"] == "parent" and row["parent"]["step"] == step.id
    parent_row = next(r for r in index["games"] if r["id"] == "parent")
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
