r"""Seats played by agents written to TextArena's agent interface (``textarena:MODULE.NAME``).

A TextArena agent is any object called with the observation string and returning the action
string (``agent(observation: str) -> str``, TextArena's ``ta.Agent.__call__``). The bridge
renders the seat's view as TextArena's ``SecretMafia-v0`` shows a player its game (textarena
0.7.4: ``textarena/envs/SecretMafia/env.py`` messages, joined as its ``LLMObservationWrapper``
joins them: ``"\n[GAME] ..."``, ``"\n[Player 3] ..."``) and reads the answer as SecretMafia
does (the first ``[N]`` or ``[Player N]`` names the target; speech is the whole text). Nothing
here imports textarena, and the agent's module need not either.

An agent that names a mafialab model string in its ``mafialab_model`` attribute
(``"openai/gpt-4o-mini"``) is probed with that model like an LLM seat (the probe sees the
seat's view through mafialab's prompt pack); any other is not probed, and the header's
agent settings say so (``probed: false``).
"""

from __future__ import annotations

import asyncio
import importlib
import re
from typing import Any

from mafialab.agents._protocol import AgentSpecError
from mafialab.engine import (
    Action,
    Decision,
    Elimination,
    Event,
    InvestigationResult,
    MafiaChat,
    NightAction,
    NightResult,
    PhaseStarted,
    PlayerView,
    Speech,
    Vote,
)
from mafialab.rules import RuleSet

PREFIX = "textarena:"
"""Agent specs ``textarena:MODULE.NAME`` run the TextArena agent ``NAME`` of ``MODULE``."""

MODEL_ATTRIBUTE = "mafialab_model"
"""The agent attribute naming the mafialab model string its seat is probed with."""

VOTE_PATTERN = re.compile(r".*\[(?:player\s*)?(\d+)\].*", re.IGNORECASE)
"""SecretMafia's ``voting_pattern`` (textarena 0.7.4): the target of a vote or night action."""

_GAME = "GAME"


def _role_prompt(view: PlayerView, rules: RuleSet) -> str:
    """The role message TextArena sends each player at the start (its ``Role.get_prompt`` texts).

    A role is shown as the SecretMafia role of its ability (kill: Mafia, protect: Doctor,
    investigate: Detective, none: Villager), under its own name and its team's name in the
    rule set's lexicon; for ``secretmafia6`` that is TextArena's text word for word.
    """
    role = next((r for r in rules.roles if r.name == view.role), None)
    ability = role.ability if role is not None else None
    team = rules.lexicon.mafia_team if view.team == "mafia" else rules.lexicon.town_team
    n = len(view.names)
    head = (
        f"Welcome to Secret Mafia! You are Player {view.seat}.\n"
        f"Your role: {view.role}\nTeam: {team}\nDescription: {_DESCRIPTIONS.get(ability, _DESCRIPTIONS[None])}\n\n"
        f"Players: {', '.join(f'Player {i}' for i in range(n))}\n\n"
    )
    if ability == "kill":
        mates = sorted({*view.teammates, view.seat})
        return head + (
            f"Your teammates are: {', '.join(f'Player {p}' for p in mates)}.\n\n"
            "During DAY phase: Speak freely and vote.\n"
            "During NIGHT phase: '[Player X]' to vote and eliminate a villager.\n"
            "Win by eliminating villagers until Mafia equal or outnumber them.\n"
        )
    if ability == "protect":
        return head + ("During DAY phase: Speak freely and vote.\n"
                       "During NIGHT phase: '[Player X]' to protect a player.\n"
                       "Win by identifying and eliminating all Mafia members.\n")  # fmt: skip
    if ability == "investigate":
        return head + ("During DAY phase: Speak freely and vote.\n"
                       "During NIGHT phase: '[Player X]' to investigate.\n"
                       "You'll learn immediately if the target is Mafia.\n"
                       "Win by identifying and eliminating all Mafia members.\n")  # fmt: skip
    return head + (
        "The game progresses through Day and Night phases.\n"
        f"- During the Day phase, there are {rules.day.discussion_rounds} rounds of discussion followed by voting.\n"
        "- During discussions, everything you say is automatically broadcasted to all players.\n"
        "- After discussions, all players must vote to eliminate one player.\n"
        "- During the Night phase, you have no special actions.\n\n"
        "The game ends when either all Mafia members are eliminated (Village wins) or\n"
        "Mafia members equal or outnumber Villagers (Mafia wins).\n"
    )


_DESCRIPTIONS: dict[str | None, str] = {
    "kill": "A Mafia member. Eliminate villagers and gain majority.",
    "protect": "Protect one player each night from Mafia elimination.",
    "investigate": "Investigate players to find Mafia members.",
    None: "A regular villager. Your goal is to identify and eliminate all Mafia members through voting during the day.",
}


def _player_text(text: str, n_seats: int) -> str:
    """A player's message as TextArena relays it: the role tags ``[Player N]`` and ``[GAME]`` removed."""
    for tag in [*(f"Player {i}" for i in range(n_seats)), _GAME]:
        text = text.replace(f"[{tag}]", "")
    return text


def _targets(options: list[int]) -> str:
    return ", ".join(f"[{t}]" for t in options)


def _action_text(target: int | None, statement: str | None) -> str:
    """What a vote or night action of another seat looks like in TextArena: the answer naming ``[target]``."""
    if statement and VOTE_PATTERN.search(statement) and parse_target(statement) == target:
        return statement
    return " ".join(x for x in (f"[{target}]" if target is not None else "", statement or "") if x)


def parse_target(action: str) -> int | None:
    """The seat an action string names, as SecretMafia's ``VoteHandler.parse`` reads it (``None``: none)."""
    m = VOTE_PATTERN.search(action)
    return int(m.group(1)) if m else None


def render_observation(view: PlayerView, rules: RuleSet, decision: Decision | None = None) -> str:
    r"""The seat's view as the observation string TextArena's SecretMafia gives its agent.

    Args:
        view: The seat's view (only what the engine lets it see).
        rules: The rule set (role abilities, discussion rounds, team names).
        decision: The pending decision: a day vote gets the voting message when no vote of
            the day is visible yet.

    Returns:
        ``"\n[SENDER] message"`` per message, oldest first (TextArena's full observation).
    """
    n = len(view.names)
    mafia = {view.seat, *view.teammates} if view.team == "mafia" else set()
    lines: list[tuple[str, str]] = [(_GAME, _role_prompt(view, rules))]
    role = next((r for r in rules.roles if r.name == view.role), None)
    ability = role.ability if role is not None else None
    vote_day: int | None = None
    for ev in view.events:
        lines.extend(_event_lines(ev, view, rules, n, mafia, ability))
        if ev.kind == "vote" and vote_day != ev.round:
            vote_day = ev.round
            alive = [s for s in _alive_at(view, ev.seq)]
            lines.insert(
                len(lines) - 1, (_GAME, f"Voting phase - submit one vote in format [X]. Valid: {_targets(alive)}")
            )
    if decision is not None and decision.kind == "vote" and vote_day != decision.round:
        lines.append(
            (_GAME, f"Voting phase - submit one vote in format [X]. Valid: {_targets(list(decision.options))}")
        )
    return "".join(f"\n[{who}] {msg}" for who, msg in lines)


def _alive_at(view: PlayerView, seq: int) -> list[int]:
    """Seats alive just before event ``seq`` as the view tells (its last ``phase_started``, minus deaths since)."""
    alive: list[int] = list(range(len(view.names)))
    for ev in view.events:
        if ev.seq >= seq:
            break
        if isinstance(ev, PhaseStarted):
            alive = list(ev.alive)
        elif isinstance(ev, Elimination):
            alive = [s for s in alive if s != ev.seat]
    return alive


def _event_lines(ev: Event, view: PlayerView, rules: RuleSet, n: int, mafia: set[int],
                 ability: str | None) -> list[tuple[str, str]]:  # fmt: skip
    """TextArena's messages for one visible event (none for events SecretMafia does not show)."""
    if isinstance(ev, PhaseStarted):
        return _phase_lines(ev, view, rules, mafia, ability)
    if isinstance(ev, (Speech, MafiaChat)):
        return [(f"Player {ev.seat}", _player_text(ev.text, n))]
    if isinstance(ev, Vote):
        return [(f"Player {ev.seat}", _player_text(_action_text(ev.target, ev.statement), n))]
    if isinstance(ev, NightAction) and ev.ability != "investigate":
        return [(f"Player {ev.seat}", _player_text(f"[{ev.target}]", n))]
    if isinstance(ev, InvestigationResult):
        bad = ev.result in ("mafia", *(r.name for r in rules.roles if r.team == "mafia"))
        return [(_GAME, f"Player {ev.target} IS{' ' if bad else ' NOT '}a Mafia member.")]
    if isinstance(ev, NightResult) and ev.killed is None:
        return [(_GAME, "No one was killed tonight.")]
    if isinstance(ev, Elimination):
        how = "was killed during the night" if ev.cause == "night" else "was eliminated by vote"
        return [(_GAME, f"Player {ev.seat} {how}.")]
    return []


def _phase_lines(ev: PhaseStarted, view: PlayerView, rules: RuleSet, mafia: set[int],
                 ability: str | None) -> list[tuple[str, str]]:  # fmt: skip
    """The night's prompt of the seat's role, or the day's opening (TextArena's ``_send_phase_prompts``)."""
    if ev.phase == "day":
        return [(_GAME, f"Day breaks. Discuss for {rules.day.discussion_rounds} rounds, then a vote will follow.")]
    alive = list(ev.alive)
    if ev.phase != "night" or view.seat not in alive:
        return []
    if ability == "kill":
        return [(_GAME, "Night has fallen. Mafia, agree on a victim.\n"
                        f"Valid targets: {_targets([t for t in alive if t not in mafia])}")]  # fmt: skip
    if ability in ("protect", "investigate"):
        others = _targets([t for t in alive if t != view.seat])
        return [(_GAME, f"Night phase - choose one player to {ability}: {others}")]
    return []


class TextArenaSeat:
    """A seat played by a TextArena-interface agent (``agent(observation) -> action``).

    Each decision calls the agent (in a worker thread: TextArena agents are synchronous) with
    :func:`render_observation` of the seat's view; a targeted decision takes the seat the
    answer names (:func:`parse_target`; none, or one that is not a legal option, is an illegal
    action: the harness retries, then falls back, and logs it), a speech or a vote statement
    the answer's text (cut at the decision's ``max_chars``).

    Args:
        agent: The TextArena agent.
        label: Its spec (``textarena:MODULE.NAME``).
        seat, rules, seed: As for every agent factory.
        prober: The LLM agent answering the seat's probes (from :data:`MODEL_ATTRIBUTE`), or
            ``None``: the seat is not probed.
    """

    def __init__(self, agent: Any, label: str, seat: int, rules: RuleSet, seed: int, prober: Any = None):
        self.agent = agent
        self.label = label
        self.seat = seat
        self.rules = rules
        self.seed = seed
        self._prober = prober
        if prober is not None:  # the probe runner probes an agent that has a `probe` method
            self.probe = prober.probe
            self.set_call_sink = prober.set_call_sink

    def describe(self) -> dict[str, Any]:
        """Settings recorded in the game header: the agent, its model (if any) and whether it is probed."""
        model = getattr(self.agent, MODEL_ATTRIBUTE, None)
        return {"textarena": self.label.removeprefix(PREFIX), "model": model if isinstance(model, str) else None,
                "probed": self._prober is not None}  # fmt: skip

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        """Call the agent with the rendered observation and read its answer as SecretMafia does."""
        obs = render_observation(view, self.rules, decision)
        answer = await asyncio.to_thread(self.agent, obs)
        text = answer if isinstance(answer, str) else str(answer)
        target = parse_target(text) if decision.wants_target else None
        said = text[: decision.max_chars] if decision.needs_text else None
        return Action(decision=decision.id, seat=decision.seat, target=target, text=said)


def is_textarena_spec(spec: str) -> bool:
    """Whether ``spec`` is ``textarena:...``."""
    return spec.startswith(PREFIX)


def textarena_factory(spec: str, seat: int, rules: RuleSet, seed: int) -> TextArenaSeat:
    """Build the seat of ``textarena:MODULE.NAME``: ``NAME`` of ``MODULE``, called with no argument when a class.

    Raises:
        AgentSpecError: No ``MODULE.NAME``, the module cannot be imported, it has no ``NAME``,
            the agent is not callable, or its ``mafialab_model`` is not a usable model string
            (the message names the spec).
    """
    from mafialab.agents._llm import make_llm_agent

    target = spec.removeprefix(PREFIX)
    module, _, name = target.rpartition(".")
    if not module or not name:
        raise AgentSpecError(f"{spec!r}: expected textarena:MODULE.NAME (a class or an agent object of MODULE)")
    try:
        obj = getattr(importlib.import_module(module), name)
    except ImportError as err:
        raise AgentSpecError(f"{spec!r}: cannot import {module}: {err}") from None
    except AttributeError:
        raise AgentSpecError(f"{spec!r}: {module} has no {name}") from None
    agent = obj() if isinstance(obj, type) else obj
    if not callable(agent):
        raise AgentSpecError(f"{spec!r}: {name} is not a TextArena agent (agent(observation) -> action)")
    model = getattr(agent, MODEL_ATTRIBUTE, None)
    prober = None
    if model is not None:
        if not isinstance(model, str):
            raise AgentSpecError(f"{spec!r}: {MODEL_ATTRIBUTE} is {model!r}, not a model string PROVIDER/MODEL")
        try:
            prober = make_llm_agent(model, seat, rules, seed)
        except (ValueError, ImportError) as err:
            raise AgentSpecError(f"{spec!r}: {MODEL_ATTRIBUTE} {model!r}: {err}") from None
    return TextArenaSeat(agent, spec, seat, rules, seed, prober)
