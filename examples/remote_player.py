"""Play one seat of a mafialab game over HTTP with a trivial policy.

Start a game with a remote seat, e.g.

    mafialab play --rules mafiascope7 --agents scripted --seat 2=remote --out runs

which prints the seat's token once (and writes it to runs/<game>/.seats/2.token), then:

    python examples/remote_player.py http://127.0.0.1:8767 runs/<game>/.seats/2.token

The policy answers every decision with the first legal option and a short fixed text;
replace ``policy`` with your agent.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mafialab.remote import Client, first_legal


def policy(request: dict[str, Any], client: Client) -> Any:
    """Answer one request (a decision or a probe question)."""
    return first_legal(request, client)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: remote_player.py URL TOKEN_OR_TOKEN_FILE", file=sys.stderr)
        return 2
    url, token = argv[1], argv[2]
    if Path(token).is_file():
        token = Path(token).read_text(encoding="utf-8").strip()
    with Client(url, token) as client:
        me = client.seat()
        print(f"playing seat {me['seat']} ({me['name']}, {me['role']}) of game {me['game_id']}", flush=True)
        answered = client.play(policy, wait=10.0, max_s=600.0)
        print(f"game over: answered {answered} request(s), saw {len(client.events)} event(s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
