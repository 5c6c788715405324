"""The served site's Arena panel API: what a launch may seat, its estimate, the cap, jobs that finish into the site."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from mafialab.agents import make_agent
from mafialab.arena import load_manifest
from mafialab.cli import app
from mafialab.harness import play_game
from mafialab.record import CALLS_FILE, GAME_FILE, Price, PriceTable, iter_call_records, read_game
from mafialab.rules import load_rules
from mafialab.viewer import ForkService, build_site, create_app
from mafialab.viewer._arena import ARENA_DIR
from mafialab.viewer._build import site_rows
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "data" / "viewer_branches"
LOCAL = "http://127.0.0.1"
SEATS7 = ["scripted", "random", "scripted", "random", "scripted", "random", "scripted"]


def make_client(
    root: Path, *, token: str | None = None, cap: int = 20, prices: PriceTable | None = None
) -> tuple[TestClient, ForkService, Path, Path]:
    logs, site = root / "logs", root / "site"
    if not logs.exists():
        shutil.copytree(FIXTURE / "parent", logs / "parent")
    build_site(logs, site, jobs=1)
    svc = ForkService(
        logs, site, token=token, allow_agents=["scripted", "random", "mock/x"], arena_games=cap, prices=prices
    )
    hosts = None if token is not None else frozenset({"127.0.0.1", "localhost", "::1"})
    return TestClient(create_app(site, svc, allowed_hosts=hosts), base_url=LOCAL), svc, logs, site


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, ForkService, Path, Path]]:
    c, svc, logs, site = make_client(tmp_path_factory.mktemp("arena"), cap=6)
    with c:
        yield c, svc, logs, site


def wait(c: TestClient, jid: str, timeout_s: float = 120, headers: dict[str, str] | None = None) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        st = c.get(f"/api/arena/jobs/{jid}", headers=headers).json()
        if st["state"] in ("done", "failed"):
            return st
        time.sleep(0.1)
    raise AssertionError(f"arena job {jid} did not finish")


def test_info_lists_builtin_rules_and_only_the_allowed_specs(
    served: tuple[TestClient, ForkService, Path, Path],
) -> None:
    c, *_ = served
    info = c.get("/api/arena").json()
    assert info["agents"] == ["scripted", "random", "mock/x"]
    assert {"name": "werewolf7", "id": "werewolf7-v1", "seats": 7} in info["rules"]
    assert {"name": "arena12", "id": "arena12-v1", "seats": 12} in info["rules"]
    assert info["cap"] == 6 and info["in_flight"] == 0 and info["auth"] is False


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ({"agents": [*SEATS7[:6], "human"]}, 422, ["agents[6]", "'human' is a seat played from outside"]),
        ({"agents": ["remote", *SEATS7[1:]]}, 422, ["agents[0]", "seat played from outside"]),
        (
            {"agents": [*SEATS7[:3], "mock/x?base_url=http://evil.example/v1", *SEATS7[4:]]},
            422,
            ["agents[3]", "sets backend options (base_url)"],
        ),
        ({"agents": [*SEATS7[:6], "openai/gpt-4o"]}, 422, ["agents[6]", "not allowed by the server (--allow-agents)"]),
        ({"agents": SEATS7, "base_url": "http://evil.example/v1"}, 422, ["base_url: unknown field"]),
        ({"agents": SEATS7, "api_key_env": "HOME"}, 422, ["api_key_env: unknown field"]),
        ({"agents": SEATS7[:5]}, 422, ["agents: 5 specs for the 7 seats of werewolf7"]),
        ({"agents": SEATS7, "rules": "../../etc/passwd"}, 422, ["rules:", "no built-in rule set"]),
        ({"agents": SEATS7, "games": 0}, 422, ["games"]),
        ({"agents": SEATS7, "kind": "tournament"}, 422, ["kind"]),
    ],
)
def test_a_launch_seats_only_allowed_specs(
    served: tuple[TestClient, ForkService, Path, Path], body: dict[str, Any], code: int, words: list[str]
) -> None:
    c, svc, logs, _ = served
    body = {"rules": "werewolf7", **body}
    for path in ("/api/arena/estimate", "/api/arena/jobs"):
        r = c.post(path, json=body)
        assert r.status_code == code, r.text
        assert all(w in r.json()["detail"] for w in words), r.json()["detail"]
    assert not svc.arena.jobs or all(j.status.agents != body["agents"] for j in svc.arena.jobs.values())
    assert not (logs / ARENA_DIR).exists() or all("evil" not in p.name for p in (logs / ARENA_DIR).iterdir())


def test_a_launch_must_be_json_and_small(served: tuple[TestClient, ForkService, Path, Path]) -> None:
    c, *_ = served
    r = c.post(
        "/api/arena/jobs", content=b"rules=werewolf7", headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert r.status_code == 415
    r = c.post("/api/arena/jobs", content=b"{no", headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert c.get("/api/arena/jobs/a999").status_code == 404


def test_scripted_batch_says_no_cost_runs_and_its_games_are_listed(
    served: tuple[TestClient, ForkService, Path, Path],
) -> None:
    c, _, logs, site = served
    body = {"kind": "batch", "rules": "werewolf7", "agents": SEATS7, "games": 3, "seed": 5}
    est = c.post("/api/arena/estimate", json=body).json()
    assert est["cost_usd"] == 0.0 and est["text"] == "no cost" and est["seat_games"] == {"scripted": 12, "random": 9}
    r = c.post("/api/arena/jobs", json=body)
    assert r.status_code == 202, r.text
    job = r.json()
    assert job["total"] == 3 and job["cost"] == {"cost_usd": 0.0, "text": "no cost"} and job["folder"] == ARENA_DIR
    st = wait(c, job["id"])
    assert st["state"] == "done" and st["done"] == 3 and st["failed"] == 0 and st["eta_s"] == 0, st
    # the games are written under DIR/arena only, played with the request's seeds and line-up
    dirs = sorted(p.parent for p in (logs / ARENA_DIR).glob(f"*/{GAME_FILE}"))
    assert sorted(d.name for d in dirs) == sorted(st["games"])
    seeds = sorted(read_game(d).header.seed for d in dirs)
    assert seeds == [5, 6, 7]
    assert all([s.agent for s in read_game(d).header.roster] == SEATS7 for d in dirs)
    # ... and are on the dashboard without a rebuild
    rows = {r["id"]: r for r in site_rows(site)}
    assert set(st["games"]) <= set(rows) and all(rows[g]["corpus"] == ARENA_DIR for g in st["games"])
    assert all((site / "data" / "g" / f"{rows[g]['file']}.js").is_file() for g in st["games"])
    assert [j["id"] for j in c.get("/api/arena/jobs").json()] == [job["id"]]
    # the same seed again names games already in the site: 409; without a seed the next free seeds are taken
    again = c.post("/api/arena/jobs", json=body)
    assert again.status_code == 409 and "seed" in again.json()["detail"]
    st2 = wait(c, c.post("/api/arena/jobs", json={**body, "seed": None, "games": 1}).json()["id"])
    assert st2["done"] == 1 and not set(st2["games"]) & set(st["games"])


def test_the_cap_on_games_in_flight_gives_429(tmp_path: Path) -> None:
    c, svc, _, _ = make_client(tmp_path, cap=2)
    with c:
        body = {"rules": "werewolf7", "agents": SEATS7, "games": 3}
        r = c.post("/api/arena/jobs", json=body)
        assert r.status_code == 429 and "over this server's cap of 2 (--max-arena-games)" in r.json()["detail"]
        first = c.post("/api/arena/jobs", json={**body, "games": 2}).json()
        # while those two are in flight nothing more fits (the job may also have finished already)
        r = c.post("/api/arena/jobs", json={**body, "games": 1})
        if svc.arena.in_flight():
            assert r.status_code == 429 and "2 games in flight" not in r.json()["detail"]
            assert "3 games in flight" in r.json()["detail"]
        wait(c, first["id"])
        assert svc.arena.in_flight() == 0
        assert c.post("/api/arena/jobs", json={**body, "games": 2}).status_code == 202


def test_season_is_built_by_the_arena_and_its_games_appear(served: tuple[TestClient, ForkService, Path, Path]) -> None:
    c, _, logs, site = served
    body = {"kind": "season", "rules": "werewolf7", "agents": ["scripted", "random", "scripted"], "games": 2, "seed": 3}
    est = c.post("/api/arena/estimate", json=body).json()
    seven = load_rules("werewolf7").n_seats
    assert est["text"] == "no cost" and est["seat_games"] == {"scripted": 2 * seven / 2, "random": 2 * seven / 2}
    job = c.post("/api/arena/jobs", json=body).json()
    st = wait(c, job["id"])
    assert st["state"] == "done" and st["done"] == 2, st
    season = logs / st["folder"]
    manifest = load_manifest(season)
    assert [e.agent for e in manifest.config.roster] == ["scripted", "random"]
    assert sorted(s.game_id for s in manifest.slots) == sorted(st["games"])
    assert (season / "index.json").is_file()
    ids = {r["id"] for r in site_rows(site)}
    assert set(st["games"]) <= ids
    # its leaderboard is on the site's season page without a rebuild
    text = (site / "data" / "index.js").read_text(encoding="utf-8")
    index = json.loads(text[len('MAFIALAB_DATA("index","index",') : text.rindex(")")])
    page = next(x for x in index["seasons"] if x["name"] == st["season"])
    assert page["counted"] == 2 and sorted(g["key"] for g in page["games"]) == sorted(st["games"])
    assert sorted(r[1] for r in page["leaderboard"]["rows"]) == ["random", "scripted"]


def test_priced_models_are_estimated_from_recorded_tokens(tmp_path: Path) -> None:
    # a recorded werewolf7 game with one model seat (the unscripted mock answers "{}" and counts no tokens:
    # its call records get token counts as a served model's would have)
    rules = load_rules("werewolf7")
    lineup = ["mock/x", *SEATS7[1:]]
    shutil.copytree(FIXTURE / "parent", tmp_path / "logs" / "parent")
    agents = [make_agent(spec, s, rules, 1) for s, spec in enumerate(lineup)]
    asyncio.run(play_game(rules, agents, 1, out=tmp_path / "logs" / "recorded", allow_degraded=True))
    calls_file = next((tmp_path / "logs" / "recorded").glob(f"*/{CALLS_FILE}"))
    lines = [json.loads(x) for x in calls_file.read_text(encoding="utf-8").splitlines()]
    for k, rec in enumerate(lines):
        if rec.get("kind") == "call":
            rec.update(prompt_tokens=1000 + 10 * k, completion_tokens=40 + k)
    calls_file.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    price = Price(input=3.0, output=15.0)
    c, svc, logs, _ = make_client(tmp_path, prices=PriceTable(prices={**PriceTable().prices, "mock/x": price}))
    mocks = {"rules": "werewolf7", "agents": lineup, "games": 10}
    with c:
        est = c.post("/api/arena/estimate", json=mocks).json()
        no_calls = c.post("/api/arena/estimate", json={**mocks, "rules": "mafiascope7"}).json()
        assert (
            no_calls["cost_usd"] is None
            and "no recorded model calls in the served mafiascope7 games" in no_calls["basis"]
        )
        # a model nobody priced: unknown, naming it and --prices
        svc.allow_agents = (*svc.allow_agents, "openai/gpt-x")
        unpriced = c.post("/api/arena/estimate", json={**mocks, "agents": ["openai/gpt-x", *SEATS7[1:]]}).json()
        assert (
            unpriced["cost_usd"] is None
            and "no price for openai/gpt-x" in unpriced["basis"]
            and "--prices" in unpriced["basis"]
        )
        # an allowed model this server cannot build (its key variable unset) is refused before anything starts
        r = c.post(
            "/api/arena/jobs",
            json={**mocks, "games": 1, "agents": ["openai/gpt-x?api_key_env=MAFIALAB_NO_SUCH_KEY", *SEATS7[1:]]},
        )
        assert (
            r.status_code == 422
            and "agents[0]" in r.json()["detail"]
            and "sets backend options (api_key_env)" in r.json()["detail"]
        )
        svc.allow_agents = (*svc.allow_agents, "openai/gpt-x?api_key_env=MAFIALAB_NO_SUCH_KEY")
        r = c.post(
            "/api/arena/jobs",
            json={**mocks, "games": 1, "agents": ["openai/gpt-x?api_key_env=MAFIALAB_NO_SUCH_KEY", *SEATS7[1:]]},
        )
        assert r.status_code == 422 and "MAFIALAB_NO_SUCH_KEY is not set" in r.json()["detail"]
        season = {**mocks, "kind": "season", "games": 1, "agents": ["openai/gpt-x?api_key_env=MAFIALAB_NO_SUCH_KEY"]}
        r = c.post("/api/arena/jobs", json=season)
        assert r.status_code == 422 and "MAFIALAB_NO_SUCH_KEY is not set" in r.json()["detail"]
        assert not svc.arena.jobs
    # by hand: the recorded game's decision calls of its one model seat, priced per million tokens
    gdir = next((logs / "recorded").glob(f"*/{GAME_FILE}")).parent
    calls = [r for _, r in iter_call_records(gdir) if r.get("kind", "call") == "call" and r.get("purpose") != "probe"]
    assert calls and (gdir / CALLS_FILE).is_file() and {r["seat"] for r in calls} == {0}
    p = sum(int(r["prompt_tokens"]) for r in calls)
    q = sum(int(r["completion_tokens"]) for r in calls)
    assert est["seat_games"] == {"mock/x": 10, "random": 30, "scripted": 30}
    assert est["cost_usd"] == pytest.approx(10 * (p * 3.0 + q * 15.0) / 1e6, rel=1e-3)
    assert est["text"] == f"${est['cost_usd']:.4f}" and "random, scripted: no paid model calls" in est["basis"]


def test_same_origin_and_token_rules_as_the_fork_api(tmp_path: Path) -> None:
    body = {"rules": "werewolf7", "agents": SEATS7, "games": 1}
    c, _, _, _ = make_client(tmp_path / "loop")
    with c:
        for headers in (
            {"Origin": "http://evil.example"},
            {"Sec-Fetch-Site": "cross-site"},
            {"Host": "rebound.example"},
        ):
            assert c.get("/api/arena", headers=headers).status_code == 403
            assert c.post("/api/arena/jobs", json=body, headers=headers).status_code == 403
        # a browser's POST (it sends Origin) needs the page token; a script needs none
        same = {"Origin": LOCAL, "Sec-Fetch-Site": "same-origin"}
        r = c.post("/api/arena/estimate", json=body, headers=same)
        assert r.status_code == 403 and "X-Mafialab-CSRF" in r.json()["detail"]
        csrf = c.app.state.csrf  # type: ignore[attr-defined]
        assert c.post("/api/arena/estimate", json=body, headers={**same, "X-Mafialab-CSRF": csrf}).status_code == 200
    # off loopback the token decides
    c, _, _, _ = make_client(tmp_path / "net", token="s3cret")
    with c:
        assert c.get("/api/arena").status_code == 401
        assert c.post("/api/arena/jobs", json=body).status_code == 401
        assert c.post("/api/arena/jobs", json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
        auth = {"Authorization": "Bearer s3cret"}
        r = c.post("/api/arena/jobs", json=body, headers=auth)
        assert r.status_code == 202
        assert wait(c, r.json()["id"], headers=auth)["done"] == 1


def test_view_serve_options(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURE / "parent", logs / "parent")
    res = CliRunner().invoke(app, ["view", str(logs), "-o", str(tmp_path / "s"), "--max-arena-games", "0"])
    assert res.exit_code == 2 and "--max-arena-games" in res.output
    bad = tmp_path / "p.yaml"
    bad.write_text(json.dumps({"openai/x": {"input": -1, "output": 1}}))
    res = CliRunner().invoke(app, ["view", str(logs), "-o", str(tmp_path / "s"), "--prices", str(bad)])
    assert res.exit_code == 2 and "--prices" in res.output


def test_the_cli_default_cap_is_the_servers() -> None:
    import inspect

    from mafialab.cli._view import view
    from mafialab.viewer import SiteServer
    from mafialab.viewer._arena import ARENA_GAMES

    cli_default = inspect.signature(view).parameters["max_arena_games"].default.default
    assert cli_default == ARENA_GAMES == inspect.signature(SiteServer).parameters["arena_games"].default == 20
