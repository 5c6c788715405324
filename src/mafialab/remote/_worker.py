"""A bus worker: serves any model mafialab can call to games run elsewhere, through a hub."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Sequence
from typing import Any

import httpx

from mafialab.models import ChatMessage, ChatModel, ChatRequest, get_model

log = logging.getLogger(__name__)


async def serve_jobs(
    hub: str,
    keys: Sequence[str],
    model: ChatModel | str,
    *,
    worker_id: str | None = None,
    token: str | None = None,
    wait_s: float = 25.0,
    concurrency: int = 1,
    max_jobs: int | None = None,
    stop: asyncio.Event | None = None,
) -> int:
    """Register with ``hub`` for ``keys`` and answer its jobs with ``model`` until stopped.

    Each job's messages go to ``model`` as one chat call (``purpose`` ``probe`` for probe
    jobs, else ``bus``; the worker keeps no state, so a probe cannot change later answers);
    the text goes back with ``POST /result``, naming the worker. A failed call is reported
    with an ``error`` field (the hub answers the engine 502, and the seat retries or falls
    back). A 410 (the engine gave up) is dropped; a 409 from ``/work`` (the hub restarted)
    makes the worker register again, with the secret of its last registration; a transport
    error, or a registration refused because the id is a live worker's, is retried after a
    second.

    Args:
        hub: The hub's URL (``http://HOST:8766``).
        keys: Routing keys served (``["*"]``: every key).
        model: The model serving the jobs, or a model string (:func:`~mafialab.models.get_model`).
        worker_id: The worker's id (default ``<host>-<pid>``).
        token: The hub's bearer token, if it has one.
        wait_s: Long-poll seconds per request (<= 55).
        concurrency: Poll loops (jobs answered at once, >= 1).
        max_jobs: Stop after this many jobs (``None``: run until ``stop`` is set).
        stop: Set it to stop after the polls in progress (at most ``wait_s`` later).

    Returns:
        Jobs answered.

    Raises:
        ModelSpecError: A bad model string.
        ValueError: ``concurrency`` < 1 or no keys; or, at the first registration, the hub
            refused the id (another live worker has it).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency: must be >= 1, got {concurrency}")
    if not keys:
        raise ValueError("keys: name at least one routing key (or *)")
    chat_model = get_model(model) if isinstance(model, str) else model
    wid = worker_id or f"{socket.gethostname()}-{os.getpid()}"
    stop = stop or asyncio.Event()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    done = 0
    base = hub.rstrip("/")
    secret: str | None = None  # the hub's secret for this id (the latest registration's)
    registering = asyncio.Lock()  # the poll loops of one worker register one at a time

    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=wait_s + 10.0) as client:

        async def register() -> None:
            nonlocal secret
            meta = {"model": chat_model.name, "software": "mafialab"}
            async with registering:
                body = {"worker": wid, "models": list(keys), "meta": meta, "secret": secret, "bind": True}
                r = await client.post("/register", json=body)
                if r.status_code == 409:
                    raise ValueError(f"bus hub refused worker id {wid!r}: {r.json().get('detail', r.text)}")
                r.raise_for_status()
                got = r.json().get("secret")
                secret = got if isinstance(got, str) else None

        async def answer(job: dict[str, Any]) -> None:
            try:
                msgs = [ChatMessage(role=m["role"], content=str(m["content"])) for m in job["messages"]]
                req = ChatRequest(
                    messages=msgs,
                    max_tokens=job.get("max_tokens") or None,
                    purpose="probe" if job.get("kind") == "probe" else "bus",
                )
                resp = await chat_model.chat(req)
                body: dict[str, Any] = {"request_id": job["request_id"], "text": resp.text, "worker": wid}
                if not resp.ok:
                    body["error"] = resp.error
            except Exception as err:  # a bad job or a model bug must not stop the worker
                body = {
                    "request_id": job.get("request_id", ""),
                    "text": "",
                    "error": f"{type(err).__name__}: {err}",
                    "worker": wid,
                }
            r = await client.post("/result", json=body, headers=_secret(secret))
            if r.status_code == 410:
                log.info("bus worker %s: request %s was given up by the engine; dropped", wid, body["request_id"])
            elif r.status_code != 200:
                log.warning(
                    "bus worker %s: result for %s refused: %s %s", wid, body["request_id"], r.status_code, r.text
                )

        async def loop() -> None:
            nonlocal done
            while not stop.is_set() and (max_jobs is None or done < max_jobs):
                try:
                    sent = secret
                    r = await client.get("/work", params={"worker": wid, "wait": wait_s}, headers=_secret(sent))
                    if r.status_code == 409:
                        await register()
                        continue
                    if r.status_code == 403 and sent != secret:  # another loop registered again meanwhile
                        continue
                    if r.status_code == 204:
                        continue
                    r.raise_for_status()
                    await answer(r.json())
                    done += 1
                except (httpx.HTTPError, ValueError) as err:  # ValueError: id refused, or a bad job body
                    log.warning("bus worker %s: %s; retrying in 1 s", wid, err)
                    await asyncio.sleep(1.0)

        await register()
        await asyncio.gather(*(loop() for _ in range(concurrency)))
    return done


def _secret(secret: str | None) -> dict[str, str]:
    """The header that proves a bound worker id is ours (none before the first registration)."""
    return {"X-Bus-Secret": secret} if secret else {}
