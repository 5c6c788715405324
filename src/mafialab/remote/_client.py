"""A Python client of the agent API: play one seat of a mafialab game over HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx


class RemoteError(RuntimeError):
    """The agent API refused a request.

    Attributes:
        status: The HTTP status (401 wrong token, 409 no such open request, 422 illegal answer ...).
        detail: The server's reason.
    """

    def __init__(self, status: int, detail: str):
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail


Policy = Callable[[dict[str, Any], "Client"], Any]
"""``policy(request, client) -> answer``: the answer object for a request of ``/v1/next``."""


class Client:
    """Plays one seat through the agent API (``mafialab play --seat N=remote``).

    Keeps the index of the events already received, so a client that reconnects (or a new
    one given ``since``) resumes where it was; the open request stays open on the server
    until its deadline.

    Args:
        url: The API's base URL (``http://127.0.0.1:8767``).
        token: The seat's token (printed once by the game; ``<game dir>/.seats/<seat>.token``).
        since: Events already received (0: all).
        timeout: Seconds of HTTP timeout beyond a long-poll's wait.

    Attributes:
        events: Every event received so far (JSON objects, in order).
        lines: Their rendered lines (``None`` where the style shows nothing).
    """

    def __init__(self, url: str, token: str, *, since: int = 0, timeout: float = 10.0):
        self.url = url.rstrip("/")
        self.since = since
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self.lines: list[str | None] = []
        self._http = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token.strip()}"}, timeout=timeout
        )

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check(self, r: httpx.Response) -> Any:
        if r.status_code >= 400:
            try:
                detail = str(r.json().get("detail", r.text))
            except ValueError:
                detail = r.text
            raise RemoteError(r.status_code, detail)
        return r.json() if r.status_code != 204 else None

    def seat(self) -> dict[str, Any]:
        """The seat's identity, players and the game's status (``GET /v1/seat``).

        Raises:
            RemoteError: Refused (e.g. 401 for a wrong token).
        """
        return self._check(self._http.get("/v1/seat"))  # type: ignore[no-any-return]

    def next(self, wait: float = 25.0) -> dict[str, Any] | None:
        """Long-poll for the next request (``GET /v1/next``); ``None`` when none came within ``wait``.

        The answer's new events are appended to :attr:`events` and ``since`` moves on.

        Raises:
            RemoteError: Refused.
            httpx.TransportError: The server is unreachable.
        """
        r = self._http.get("/v1/next", params={"since": self.since, "wait": wait}, timeout=wait + self.timeout)
        body = self._check(r)
        if body is None:
            return None
        self.events.extend(body["events"])
        self.lines.extend(body["lines"])
        self.since = body["next_since"]
        return body  # type: ignore[no-any-return]

    def answer(self, request_id: str, answer: Any) -> dict[str, Any]:
        """Answer the open request (``POST /v1/answer``).

        Raises:
            RemoteError: 422 when the answer is illegal (the request stays open), 409 when
                the request is no longer open.
        """
        return self._check(self._http.post("/v1/answer", json={"request_id": request_id, "answer": answer}))  # type: ignore[no-any-return]

    def play(self, policy: Policy, *, wait: float = 25.0, max_s: float | None = None) -> int:
        """Answer every request with ``policy`` until the game is over.

        Transport errors and 429s are retried after a pause (the server keeps the request
        open); a 422 is raised (the policy gave an illegal answer).

        Args:
            policy: ``policy(request, client) -> answer`` (see :meth:`answer`).
            wait: Long-poll seconds.
            max_s: Give up after this many seconds (``None``: play to the end).

        Returns:
            Requests answered.

        Raises:
            RemoteError: Refused for another reason than a rate limit.
            TimeoutError: ``max_s`` passed before the game ended.
        """
        answered = 0
        t_end = None if max_s is None else time.monotonic() + max_s
        while True:
            if t_end is not None and time.monotonic() > t_end:
                raise TimeoutError(f"game not over after {max_s} s")
            try:
                body = self.next(wait=wait)
                if body is None:
                    continue
                if body["status"] == "over":
                    return answered
                req = body["request"]
                self.answer(req["id"], policy(req, self))
                answered += 1
            except httpx.TransportError:
                time.sleep(0.5)
            except RemoteError as err:
                if err.status == 429:
                    time.sleep(1.0)
                elif err.status == 409:
                    continue  # the request closed meanwhile (deadline): take the next
                else:
                    raise


def first_legal(request: dict[str, Any], client: Client | None = None) -> Any:
    """A trivial policy: the first legal option, a fixed short text, a neutral probe answer."""
    if request["kind"] == "probe":
        schema = request.get("schema")
        return "I am not sure yet." if schema is None else _filler(schema)
    d = request["decision"]
    props = request["schema"]["properties"]
    out: dict[str, Any] = {}
    if "target" in props:
        out["target"] = request["options"][0]["name"]
        if "statement" in props:
            out["statement"] = "I follow my best guess."
    else:
        out["text"] = f"Round {d['round']}: I am listening before I accuse anyone."
    return out


def _filler(schema: dict[str, Any]) -> Any:
    """The plainest value that follows a simple JSON schema (first enum value, minimum, empty)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _filler(props.get(k, {})) for k in schema.get("required", [])}
    if kind == "array":
        return [_filler(schema.get("items", {})) for _ in range(int(schema.get("minItems", 0)))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "unsure"
