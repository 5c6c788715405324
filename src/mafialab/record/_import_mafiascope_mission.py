"""MafiaScope's Resistance module onto the built-in ``mafiascope-resistance`` rule set.

MafiaScope logs a Resistance game as ``intro`` messages (round 0), then per mission round
``team_proposal`` (the leader's message), ``team_final`` (the team it settled on),
``team_vote`` (one public message per player, in seat order) and ``team_vote_tally`` (every
counted vote), and ``game_over`` (karpovilia/mafiascope@2177db7, the showcase game of
``game_family_showcase``). They become the engine's mission events: each member of
``team_final`` a ``team_pick`` of the leader (a fallback pick when the leader's message
failed: MafiaScope then sent a team of its own), a ``team_proposal``, a ``team_vote`` per
vote (a failed turn is a blank vote, which MafiaScope counted as a reject) and a
``team_vote_tally``. A record of any other kind stays an ``imported`` event.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from mafialab.engine import PUBLIC, Event

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)
_WINNER = {"Spy": "mafia", "Spies": "mafia", "Resistance": "town"}


def _failed(text: Any) -> bool:
    return not isinstance(text, str) or text == "" or text.startswith("ERROR")


class MissionConverter:
    """Converts the mission-round records of one MafiaScope Resistance game (see the module docstring).

    Args:
        b: The importer's event builder (``add_event``, ``imported``, ``seat``, ``next_decision``).
        n_to_lose: Rejections in a row that end the game (the rule set's ``mission.rejections_to_lose``).
    """

    def __init__(self, b: Any, n_to_lose: int, records: list[tuple[int, dict[str, Any]]]) -> None:
        self.b = b
        self.n_to_lose = n_to_lose
        self.attempt: dict[int, int] = {}
        self.failed_proposal = False
        self.rejected = 0
        self.last: dict[str, Any] = {}
        # the counted votes of each proposal, in order (a tally is the authoritative record of its votes)
        self.tallies = [
            {k: str(v).casefold() for k, v in rec["votes"].items()}
            for _, rec in records
            if rec.get("kind") == "team_vote_tally" and isinstance(rec.get("votes"), dict)
        ]
        self.proposals = 0

    def handles(self, kind: Any) -> bool:
        """Whether this converter takes records of ``kind``."""
        return kind in ("team_proposal", "team_final", "team_vote", "team_vote_tally", "game_over")

    def add(self, kind: str, rnd: int, ts: Any, **fields: Any) -> None:
        b = self.b
        data = {"kind": kind, "seq": len(b.events) + 1, "round": rnd, "phase": "day", "ts": ts, **fields}
        data.setdefault("visibility", PUBLIC)
        b.events.append(_EVENT.validate_python(data))

    def record(self, n: int, rec: dict[str, Any], rnd: int, ts: Any) -> str | None:
        """Convert one record; returns a problem (``why``) when it is kept as ``imported`` instead."""
        kind = rec.get("kind")
        b = self.b
        if kind == "game_over":
            return self.game_over(rec, rnd, ts)
        leader = b.seat.get(rec.get("leader"))
        player = b.seat.get(rec.get("player"))
        if kind == "team_proposal":
            self.attempt[rnd] = self.attempt.get(rnd, 0) + 1
            self.last = self.tallies[self.proposals] if self.proposals < len(self.tallies) else {}
            self.proposals += 1
            self.failed_proposal = _failed(rec.get("response"))
            note = "empty_response" if rec.get("response") in ("", None) else "transport_error"
            b.imported(rec, rnd, "day", PUBLIC, note if self.failed_proposal else "foreign_kind", leader)
            return None
        if kind == "team_final":
            team = [b.seat.get(x) for x in rec.get("team") or []]
            if leader is None or not team or None in team:
                return "team_final naming a player outside the roster"
            for t in team:
                self.add("team_pick", rnd, ts, seat=leader, target=t, attempt=self.attempt.get(rnd, 1),
                         decision=b.next_decision(), fallback=self.failed_proposal)  # fmt: skip
            self.add("team_proposal", rnd, ts, leader=leader, members=sorted(team), attempt=self.attempt.get(rnd, 1))
            return None
        if kind == "team_vote":
            return self.team_vote(rec, rnd, ts, player)
        return self.tally(rec, rnd, ts)

    def team_vote(self, rec: dict[str, Any], rnd: int, ts: Any, seat: int | None) -> str | None:
        if seat is None:
            return "team_vote by a player outside the roster"
        text = rec.get("response")
        counted = self.last.get(str(rec.get("player")))
        failed = _failed(text)
        self.b.failed += failed
        choice = None if failed or counted not in ("approve", "reject") else counted
        idx = rec.get("msg_seq")
        self.add(
            "team_vote", rnd, ts, seat=seat, choice=choice, attempt=self.attempt.get(rnd, 1),
            statement=None if failed else text, index=idx if isinstance(idx, int) else None,
            decision=self.b.next_decision(), fallback=failed,
        )  # fmt: skip
        return None

    def tally(self, rec: dict[str, Any], rnd: int, ts: Any) -> str | None:
        votes = rec.get("votes") if isinstance(rec.get("votes"), dict) else {}
        choices = {self.b.seat.get(k): str(v).casefold() for k, v in votes.items()}  # type: ignore[union-attr]
        if None in choices or not set(choices.values()) <= {"approve", "reject"}:
            return "team_vote_tally naming a player or a vote outside the roster"
        approvals = sum(1 for v in choices.values() if v == "approve")
        approved = bool(rec.get("approved"))
        self.rejected = 0 if approved else self.rejected + 1
        self.add(
            "team_vote_tally", rnd, ts, choices=dict(sorted(choices.items())), approvals=approvals,
            approved=approved, attempt=self.attempt.get(rnd, 1), rejected_in_row=self.rejected,
        )  # fmt: skip
        return None

    def game_over(self, rec: dict[str, Any], rnd: int, ts: Any) -> str | None:
        winner = _WINNER.get(str(rec.get("winner")))
        if winner is None:
            return f"game_over with an unknown winner {rec.get('winner')!r}"
        reason = "rejections" if winner == "mafia" and self.rejected >= self.n_to_lose else "missions"
        b = self.b
        self.add("game_end", rnd, ts, phase="end", winner=winner, reason=reason, rounds=rnd,
                 alive=list(b.alive), roles=b.roles)  # fmt: skip
        return None
