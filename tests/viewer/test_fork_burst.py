"""Fork requests at the same time: each job takes its own seed and batch, in one server and across two."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import HTTPException

from mafialab.counterfactual import fork_steps
from mafialab.record import iter_game_dirs, read_game
from mafialab.viewer import ForkRequest, ForkService, SiteServer, build_site
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "data" / "viewer_branches"
BURST = 20


@pytest.fixture
def served(tmp_path: Path) -> tuple[Path, Path, int]:
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURE / "parent", logs / "parent")
    site = tmp_path / "site"
    build_site(logs, site, jobs=1)
    step = next(s.id for s in fork_steps(read_game(logs / "parent")) if s.kind == "vote")
    return logs, site, step


def _at_once(n: int, call: Any) -> list[Any]:
    """``call(i)`` for ``i < n`` in ``n`` threads released together; the results in order."""
    start = threading.Barrier(n)
    got: list[Any] = [None] * n

    def run(i: int) -> None:
        start.wait(timeout=30)
        got[i] = call(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return got


def test_a_burst_of_fork_requests_gets_a_batch_each(served: tuple[Path, Path, int]) -> None:
    logs, site, step = served
    body = {"game": "parent", "step": step, "replicas": 1}  # no seed: the server picks one per job
    with SiteServer(site, 0, logs=logs) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        answers = _at_once(BURST, lambda i: c.post("api/forks", json=body))
        assert [r.status_code for r in answers] == [202] * BURST, [r.text for r in answers]
        jobs = [r.json()["id"] for r in answers]
        for _ in range(1200):  # at most about 120 s
            states = [c.get(f"api/jobs/{j}").json() for j in jobs]
            if all(s["state"] in ("done", "failed") for s in states):
                break
            time.sleep(0.1)
    assert [(s["state"], s["done"], s["failed"], s["error"]) for s in states] == [("done", 1, 0, None)] * BURST
    batches = {s["batch"] for s in states}
    assert len(batches) == BURST
    branches = {b for s in states for b in s["branches"]}
    assert branches == {f"parent~{b}-0" for b in batches}
    assert {d.name for d in iter_game_dirs(logs / "forks")} == branches
    seeds = {read_game(logs / "forks" / b).header.parent.seed for b in branches}  # type: ignore[union-attr]
    assert seeds == set(range(BURST))


def test_two_servers_on_one_folder_never_take_the_same_batch(served: tuple[Path, Path, int]) -> None:
    logs, site, step = served
    services = [ForkService(logs, site), ForkService(logs, site)]  # as two processes would hold them
    req = ForkRequest(game="parent", step=step)

    def take(i: int) -> tuple[int, str]:
        svc = services[i % 2]
        _, iv, plog = svc.validate(req)
        return svc.reserve(req, plog, iv)

    got = _at_once(BURST, take)
    assert len({seed for seed, _ in got}) == BURST and len({batch for _, batch in got}) == BURST
    assert sorted(seed for seed, _ in got) == list(range(BURST))
    assert {p.name for p in (logs / "forks" / ".claims").iterdir()} == {batch for _, batch in got}
    # a seed asked for by name is refused once taken, by either server
    _, iv, plog = services[1].validate(req)
    with pytest.raises(HTTPException, match="already taken or on disk") as err:
        services[1].reserve(req.model_copy(update={"seed": 3}), plog, iv)
    assert err.value.status_code == 409
