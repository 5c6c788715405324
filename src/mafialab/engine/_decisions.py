"""Decisions the engine asks for, actions that answer them, and invalid-action values."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DecisionKind = Literal[
    "speak", "mafia_chat", "vote", "nominate", "runoff_vote", "kill", "protect", "investigate", "bid",
    "propose", "team_vote", "mission", "assassinate",
]  # fmt: skip
"""What a decision asks for. ``speak`` and ``mafia_chat`` want free text; ``team_vote`` and
``mission`` (mission games) one of the decision's ``choices``; ``bid`` (rules with
``day.speaking_order: bid``) an amount 0-4 in ``target``, its options being the amounts; the
others a target seat (``vote`` and a public ``team_vote`` also a statement when the rules ask
for one; ``propose`` is one pick of the leader's team)."""

MAX_TEXT_CHARS = 1200
"""Longest free text (characters) the engine accepts in a speech, chat or vote statement."""

MAX_STATEMENT_CHARS = 300
"""Longest vote statement (characters)."""


class Decision(BaseModel):
    """A pending decision of one seat.

    Attributes:
        id: Step number of the decision in the game (0-based, increasing).
        seat: Seat that must act.
        kind: What is asked.
        round: Round number.
        phase: ``intro``, ``night`` or ``day``.
        options: Legal target seats, ascending (empty for free-text decisions).
        needs_text: Whether the action must carry free text (speech, chat, vote statement).
        max_chars: Longest accepted text.
        discussion: Discussion round within the day (1-based) for ``speak``.
        no_vote: Whether the answer may name no target (a ``vote`` under rules with
            ``day.no_vote``): the seat then casts no vote; for a ``team_vote`` under
            ``mission.blank_rejects``, no choice (a blank vote, counted as a reject).
        choices: The words a choice decision takes (``("approve", "reject")``); empty for
            the others.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int = Field(ge=0)
    seat: int = Field(ge=0)
    kind: DecisionKind
    round: int = Field(ge=0)
    phase: Literal["intro", "night", "day"]
    options: tuple[int, ...] = ()
    needs_text: bool = False
    max_chars: int = MAX_TEXT_CHARS
    discussion: int = 1
    no_vote: bool = False
    choices: tuple[str, ...] = ()

    @property
    def wants_target(self) -> bool:
        """Whether the action must name a target seat."""
        return self.kind not in ("speak", "mafia_chat") and not self.choices


class Action(BaseModel):
    """An answer to a decision.

    Attributes:
        decision: Id of the decision answered.
        seat: Acting seat.
        target: Target seat for targeted decisions.
        text: Free text (speech, chat) or the vote statement.
        choice: One of the decision's ``choices`` (choice decisions only).
        fallback: Set by the harness when this action is a recorded fallback rather than
            the agent's own answer (the engine only records it).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: int
    seat: int
    target: int | None = None
    text: str | None = None
    fallback: bool = False
    choice: str | None = None


class Invalid(BaseModel):
    """An action the engine rejected; the state was not touched.

    Attributes:
        reason: Why, in words (e.g. ``"target 3 is not a legal option (0, 1, 2)"``).
        decision: Id of the decision concerned (or -1 if none matched).
    """

    model_config = ConfigDict(frozen=True)

    reason: str
    decision: int = -1


def check_action(decision: Decision, action: Action) -> str | None:
    """Return why ``action`` is not a legal answer to ``decision``, or ``None`` if it is."""
    if action.decision != decision.id:
        return f"answers decision {action.decision}, pending is {decision.id}"
    if action.seat != decision.seat:
        return f"seat {action.seat} acted on seat {decision.seat}'s decision"
    if decision.wants_target:
        if action.target is None:
            if not decision.no_vote:
                return "missing target"
        elif action.target not in decision.options:
            return f"target {action.target} is not a legal option {decision.options}"
    elif action.target is not None:
        return "this decision takes no target"
    why = _check_choice(decision, action)
    if why is not None:
        return why
    if decision.needs_text:
        if action.text is None or not action.text.strip():
            return "missing text"
        if len(action.text) > decision.max_chars:
            return f"text longer than {decision.max_chars} characters"
    elif action.text is not None and len(action.text) > decision.max_chars:
        return f"text longer than {decision.max_chars} characters"
    return None


def _check_choice(decision: Decision, action: Action) -> str | None:
    """Why ``action``'s choice does not answer ``decision`` (a choice decision or not), or ``None``."""
    if not decision.choices:
        return None if action.choice is None else "this decision takes no choice"
    if action.choice is None:
        return None if decision.no_vote else f"missing choice (one of {', '.join(decision.choices)})"
    if action.choice not in decision.choices:
        return f"choice {action.choice!r} is not one of {', '.join(decision.choices)}"
    return None
