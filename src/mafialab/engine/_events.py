"""Typed engine events. Every event says who may see it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from mafialab.rules import Team

Phase = Literal["setup", "intro", "night", "day", "end"]


class Visibility(BaseModel):
    """Who may see an event.

    A seat sees an event when ``public`` is true, when its team is in ``teams``, or when the
    seat is in ``seats``. An event with all three empty is visible to nobody in the game (the
    moderator only). Team membership is read from the seat's own ``role_assigned`` event.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    public: bool = False
    teams: tuple[Team, ...] = ()
    seats: tuple[int, ...] = ()


PUBLIC = Visibility(public=True)


def only(*seats: int) -> Visibility:
    """Visibility for the given seats only."""
    return Visibility(seats=tuple(seats))


def team(t: Team) -> Visibility:
    """Visibility for the members of team ``t``."""
    return Visibility(teams=(t,))


class _Event(BaseModel):
    """Fields shared by every engine event.

    Attributes:
        seq: Position in the game's event stream (1-based; the log header is 0).
        round: Round number (a round is night r then day r; round 0 is the intro day).
        phase: Phase the event belongs to.
        visibility: Who may see it.
        ts: Wall-clock time (Unix seconds) set by the log writer, never by the engine;
            a "clock field" ignored by determinism checks.
    """

    model_config = ConfigDict(extra="forbid")

    seq: int = Field(ge=1)
    round: int = Field(ge=0)
    phase: Phase
    visibility: Visibility
    ts: float | None = None


class SeatingEvent(_Event):
    """Public seating: seat names (and optional public labels such as the model)."""

    kind: Literal["seating"] = "seating"
    names: list[str]
    labels: list[str | None] = Field(default_factory=list)


class RoleAssigned(_Event):
    """A seat learns its own role (visible to that seat)."""

    kind: Literal["role_assigned"] = "role_assigned"
    seat: int
    role: str
    team: Team


class TeamRevealed(_Event):
    """The hidden team learns its members (visible to that team)."""

    kind: Literal["team_revealed"] = "team_revealed"
    team: Team
    members: list[int]


class PhaseStarted(_Event):
    """A phase begins; ``alive`` lists the living seats."""

    kind: Literal["phase_started"] = "phase_started"
    alive: list[int]


class Speech(_Event):
    """A public message in the intro or a discussion round.

    Attributes:
        index: Public message index within the round (1-based).
        discussion: Discussion round within the day (1-based; 1 on the intro day).
        decision: Id of the decision this answers.
        fallback: Whether the action was a recorded fallback, not the agent's answer.
    """

    kind: Literal["speech"] = "speech"
    seat: int
    text: str
    index: int
    discussion: int = 1
    decision: int
    fallback: bool = False


class MafiaChat(_Event):
    """A private message of the hidden team at night (visible to that team).

    Attributes:
        index: Imported logs only: the source's per-round message counter (``None`` and left
            out of the JSON in native logs).
    """

    kind: Literal["mafia_chat"] = "mafia_chat"
    seat: int
    text: str
    decision: int
    fallback: bool = False
    index: int | None = None

    @model_serializer(mode="wrap")
    def _drop_unset_index(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # ``index`` only exists on imported logs (the source's per-round message counter);
        # leaving it out when unset keeps native logs byte-identical to earlier versions.
        data: dict[str, Any] = handler(self)
        if data.get("index", 0) is None:
            del data["index"]
        return data


class NightAction(_Event):
    """A night action: a kill vote (hidden team), a protection or an investigation (actor)."""

    kind: Literal["night_action"] = "night_action"
    seat: int
    ability: Literal["kill", "protect", "investigate"]
    target: int
    decision: int
    fallback: bool = False


class InvestigationResult(_Event):
    """What an investigator learns (visible to the investigator only).

    ``result`` is the target's team id (``"mafia"``/``"town"``) or its exact role name,
    per ``NightRules.investigate_result``.
    """

    kind: Literal["investigation_result"] = "investigation_result"
    seat: int
    target: int
    result: str


class KillChosen(_Event):
    """The hidden team's resolved kill target (visible to that team).

    ``target`` is ``None`` when a tied vote kills nobody (``night.kill_tie: none``).
    """

    kind: Literal["kill_chosen"] = "kill_chosen"
    target: int | None
    votes: dict[int, int]


class NightResult(_Event):
    """Public announcement of the night: who died, or who was saved if saves are announced."""

    kind: Literal["night_result"] = "night_result"
    killed: int | None = None
    saved: int | None = None


class Vote(_Event):
    """A day vote, nomination or runoff vote.

    Attributes:
        stage: ``vote`` (plurality vote), ``nomination`` or ``runoff``.
        index: Public message index when the vote is a public message, else ``None``.
        statement: The short public statement accompanying a vote, if the rules ask for one.
        target: The seat voted for, or ``None`` when the seat cast **no vote** (rules with
            ``day.no_vote``; the vote is left out of the tally).
    """

    kind: Literal["vote"] = "vote"
    stage: Literal["vote", "nomination", "runoff"]
    seat: int
    target: int | None
    statement: str | None = None
    index: int | None = None
    decision: int
    fallback: bool = False


class VoteTally(_Event):
    """Public result of a vote stage: counts per target and, when published, every vote.

    ``votes`` (voter seat -> target seat) is filled for public votes and nominations, and for
    secret votes when the rules say so (``day.tally_names_voters``); otherwise it is empty and
    each secret vote stays known to its voter alone.
    """

    kind: Literal["vote_tally"] = "vote_tally"
    stage: Literal["vote", "nomination", "runoff"]
    votes: dict[int, int]
    tally: dict[int, int]
    candidates: list[int] = Field(default_factory=list)
    tie: bool = False
    outcome: int | None = None


class TeamPick(_Event):
    """Mission games: the leader puts one player on the proposed team (public).

    Attributes:
        seat: The leader.
        target: The player picked.
        attempt: Proposal number within the mission (1-based).
    """

    kind: Literal["team_pick"] = "team_pick"
    seat: int
    target: int
    attempt: int
    decision: int
    fallback: bool = False


class TeamProposal(_Event):
    """Mission games: the leader's complete team for the mission of this round (public)."""

    kind: Literal["team_proposal"] = "team_proposal"
    leader: int
    members: list[int]
    attempt: int


class TeamVote(_Event):
    """Mission games: one player's approve/reject vote on the proposed team.

    Public when the rules vote in public (``mission.team_vote``), else visible to the voter
    until the tally. ``choice`` is ``None`` for a blank vote (counted as a reject under
    ``mission.blank_rejects``).
    """

    kind: Literal["team_vote"] = "team_vote"
    seat: int
    choice: Literal["approve", "reject"] | None
    attempt: int
    statement: str | None = None
    index: int | None = None
    decision: int
    fallback: bool = False


class TeamVoteTally(_Event):
    """Mission games: the public result of a team vote, every voter's counted choice.

    Attributes:
        choices: Voter seat -> ``"approve"`` or ``"reject"`` (a blank vote as counted).
        approvals: Approvals counted.
        approved: Whether the team goes on the mission.
        rejected_in_row: Proposals rejected in a row in this mission after this vote.
    """

    kind: Literal["team_vote_tally"] = "team_vote_tally"
    choices: dict[int, str]
    approvals: int
    approved: bool
    attempt: int
    rejected_in_row: int = 0


class MissionCard(_Event):
    """Mission games: a team member's secret success or fail card (visible to that member)."""

    kind: Literal["mission_card"] = "mission_card"
    seat: int
    choice: Literal["success", "fail"]
    decision: int
    fallback: bool = False


class MissionResult(_Event):
    """Mission games: a mission's public result (how many fails, never whose).

    Attributes:
        members: The team that went.
        fails: Fail cards played.
        succeeded: Whether the mission succeeded.
        successes: Missions succeeded so far.
        failures: Missions failed so far.
    """

    kind: Literal["mission_result"] = "mission_result"
    members: list[int]
    fails: int
    succeeded: bool
    successes: int
    failures: int


class Assassination(_Event):
    """Mission games: the assassin names one player after the town team's last success (public)."""

    kind: Literal["assassination"] = "assassination"
    seat: int
    target: int
    hit: bool
    decision: int
    fallback: bool = False


class Elimination(_Event):
    """A death.

    ``role`` is set only when the rules reveal roles on death, ``team`` only when they reveal
    the team alone (``reveal_team_on_death``).
    """

    kind: Literal["elimination"] = "elimination"
    seat: int
    cause: Literal["night", "vote"]
    role: str | None = None
    team: Team | None = None

    @model_serializer(mode="wrap")
    def _drop_unset_team(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # written only when revealed, so logs of rule sets without it read as before
        data: dict[str, Any] = handler(self)
        if data.get("team") is None:
            data.pop("team", None)
        return data


class Bid(_Event):
    """A bid to speak (rules with ``day.speaking_order: bid``), known to its bidder alone.

    Attributes:
        seat: The bidder.
        amount: The bid, 0-4 (0: pass).
        turn: The day's speaking turn bid for (1-based).
    """

    kind: Literal["bid"] = "bid"
    seat: int
    amount: int
    turn: int
    decision: int
    fallback: bool = False


class BidResult(_Event):
    """The public result of a round of bids: every bid and who speaks (``None``: all passed).

    Attributes:
        bids: Bidder seat -> amount.
        speaker: The seat that speaks next, or ``None`` when every bid was 0 (the discussion ends).
        turn: The day's speaking turn (1-based).
        tie: Whether the highest bid was tied (the speaker then drawn from the ``speaking_order`` stream).
    """

    kind: Literal["bid_result"] = "bid_result"
    bids: dict[int, int]
    speaker: int | None = None
    turn: int
    tie: bool = False


class GameEnd(_Event):
    """The game is over. Roles of every seat are revealed to all.

    Attributes:
        winner: Winning team id.
        reason: ``mafia_eliminated``, ``parity`` or ``round_cap``; in mission games ``missions``
            (a team won its missions), ``rejections`` (too many rejected proposals in a row) or
            ``assassination`` (the assassin named its target).
        rounds: Last round played.
        alive: Seats alive at the end.
        roles: Role name per seat.
    """

    kind: Literal["game_end"] = "game_end"
    winner: Team
    reason: Literal["mafia_eliminated", "parity", "round_cap", "missions", "rejections", "assassination"]
    rounds: int
    alive: list[int]
    roles: list[str]


class PrivateNote(_Event):
    """A line added to one seat's context by an intervention (a fork's injected belief).

    Visible to that seat only; the engine itself never emits it (see
    :meth:`GameState.add_private_note`).

    Attributes:
        seat: The seat whose context gets the line.
        text: The line (untrusted text; quoted where rendered).
        source: What added it (``"intervention"``).
    """

    kind: Literal["private_note"] = "private_note"
    seat: int
    text: str
    source: str = "intervention"


class Imported(_Event):
    """A record of an imported log that has no engine event of its own.

    Importers use it for foreign record kinds (e.g. the Resistance variant's team votes), for
    turns that failed in the source game (transport errors, empty responses: kept and marked,
    never played as moves) and for private texts the engine has no event for (a Doctor's
    reasoning). The engine itself never emits it.

    Attributes:
        source_kind: The record's kind in the source log (``"team_vote"``, ``"day_vote"``).
        seat: Seat the record belongs to, if any.
        text: Verbatim text of the record (a model's response), if any.
        note: Why the record is kept this way: ``"foreign_kind"``, ``"transport_error"``,
            ``"empty_response"``, ``"private_text"`` or ``"unresolved"``.
        record: The source record verbatim (minus fields held above).
    """

    kind: Literal["imported"] = "imported"
    source_kind: str
    seat: int | None = None
    text: str | None = None
    note: str = "foreign_kind"
    record: dict[str, Any] = Field(default_factory=dict)


Event = Annotated[
    SeatingEvent
    | RoleAssigned
    | TeamRevealed
    | PhaseStarted
    | Speech
    | MafiaChat
    | NightAction
    | InvestigationResult
    | KillChosen
    | NightResult
    | Vote
    | VoteTally
    | Elimination
    | GameEnd
    | PrivateNote
    | Imported
    | Bid
    | BidResult
    | TeamPick
    | TeamProposal
    | TeamVote
    | TeamVoteTally
    | MissionCard
    | MissionResult
    | Assassination,
    Field(discriminator="kind"),
]
"""Union of every engine event kind, discriminated by ``kind``."""

PUBLIC_MESSAGE_KINDS = ("speech", "vote", "team_vote")
