"""One episode of the environment: the engine driven one decision at a time, observed and logged.

No PettingZoo or Gymnasium here: the AEC and parallel classes wrap an :class:`Episode`.
The engine is step-wise already (``GameState.pending()`` / ``apply()``), so the environment
holds the state and feeds it actions; nothing runs in a thread.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import numpy as np

from mafialab._words import count
from mafialab.agents import Renderer, load_prompt_pack
from mafialab.engine import MAX_TEXT_CHARS, Action, Decision, DecisionKind, GameState
from mafialab.harness import GATE_THRESHOLD, default_game_id, make_header
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE, VERDICTS_FILE, GameStatus, JsonlWriter
from mafialab.render import EventRenderer, load_event_templates
from mafialab.rules import RuleSet

log = logging.getLogger(__name__)

KINDS: tuple[DecisionKind, ...] = get_args(DecisionKind)
"""Decision kinds in the order of the observation's ``decision.kind`` (``kind`` ``i + 1`` is
``KINDS[i]``; ``0``: the seat has no decision pending)."""

PHASES = ("setup", "intro", "night", "day", "end")
"""Phases in the order of the observation's ``decision.phase``."""

ENV_META = "pettingzoo"
"""The header's ``meta.env`` of a game recorded by the environment."""


def text_cap(rules: RuleSet) -> int:
    """Longest action text (characters): the rule set's speech length ``day.text_chars``."""
    return rules.day.text_chars


def obs_text_chars(rules: RuleSet) -> int:
    """An upper bound on an observation's text (characters), from the rule set.

    Every round (the cap, plus the intro day) holds at most ``n × (discussion rounds + 4) + 10``
    lines (speeches, chat, votes, night actions, moderator lines), each at most twice the
    longest player text (JSON quoting doubles a quote or newline) plus 200 characters; 20,000
    more for the rules, the seat's identity and the question.
    """
    n, day = rules.n_seats, rules.day
    per_round = n * (day.discussion_rounds + 4) + 10
    longest = max(day.text_chars, day.statement_chars, MAX_TEXT_CHARS)
    return (rules.round_cap + 1) * per_round * (2 * longest + 200) + 20_000


@dataclass(frozen=True)
class Rewards:
    """Rewards of the environment.

    At the game's end every seat gets :meth:`final` (by default ``win`` for a seat of the
    winning team, dead or alive, and ``loss`` for the others); during the game, a seat whose
    action was not legal (and was replaced by a seeded-random legal one) gets ``invalid``
    at that step. Subclass and override :meth:`final` for another scheme.

    Attributes:
        win: Final reward of a seat of the winning team.
        loss: Final reward of a seat of a losing team.
        invalid: Reward for an action that was not legal (0: none).
    """

    win: float = 1.0
    loss: float = -1.0
    invalid: float = 0.0

    def final(self, state: GameState, seat: int) -> float:
        """The reward of ``seat`` when ``state`` is over (``state.winner`` is set)."""
        return self.win if state.teams[seat] == state.winner else self.loss


def _game_dir(out: Path, game_id: str) -> tuple[str, Path]:
    """``(game id, directory)``: the first of ``game_id``, ``game_id-2``, … with no log file under ``out``."""
    k = 1
    while True:
        gid = game_id if k == 1 else f"{game_id}-{k}"
        path = out / gid
        if not any((path / f).exists() for f in (GAME_FILE, PROBES_FILE, CALLS_FILE, VERDICTS_FILE)):
            return gid, path
        k += 1


class Episode:
    """One game played through the environment.

    Args:
        rules: The rule set.
        seed: The game seed (the engine's: deal, speaking order, ties, fallbacks).
        out: Parent directory of the game's log directory, or ``None`` for no log.
        agent_labels: The roster's agent label per seat.
        pack: Prompt pack whose text the observations use (as an LLM seat's prompt).
        rewards: The reward scheme.

    Raises:
        ValueError: ``agent_labels`` of the wrong length.
    """

    def __init__(
        self,
        rules: RuleSet,
        seed: int,
        *,
        out: Path | None,
        agent_labels: Sequence[str],
        pack: str | Path,
        rewards: Rewards,
    ):
        n = rules.n_seats
        if len(agent_labels) != n:
            raise ValueError(f"agent_labels: {count(len(agent_labels), 'label')} for {count(n, 'seat')}")
        self.rules = rules
        self.rewards = rewards
        self.state = GameState(rules, seed)
        self.decisions = 0
        self.fallbacks = 0
        prompt_pack = load_prompt_pack(pack)
        self._renderers = [Renderer(prompt_pack, rules) for _ in range(n)]
        self._cap = text_cap(rules)
        self._obs_cap = obs_text_chars(rules)
        self._written = 0
        self._writer: JsonlWriter | None = None
        self.game_id = default_game_id(rules, self.state.seed, agent_labels, {"env": ENV_META})
        self.path: Path | None = None
        if out is not None:
            self.game_id, self.path = _game_dir(Path(out), self.game_id)
            self._writer = JsonlWriter(self.path / GAME_FILE)
            self._writer.write(make_header(self.state, self.game_id, agent_labels, {"env": ENV_META}))
        self._flush()

    # ------------------------------------------------------------------ reading
    @property
    def over(self) -> bool:
        """Whether the game is over."""
        return self.state.is_terminal

    def decision(self, seat: int) -> Decision | None:
        """The seat's earliest pending decision, or ``None``."""
        return next((d for d in self.state.pending() if d.seat == seat), None)

    def next_seat(self) -> int | None:
        """The seat of the earliest pending decision (``None`` when the game is over)."""
        pending = self.state.pending()
        return min(pending, key=lambda d: d.id).seat if pending else None

    def mask(self, seat: int) -> np.ndarray:
        """Legal ``choice`` values of the seat's pending decision (``int8``, ``n_seats + 1``; all 0 without one)."""
        n = self.rules.n_seats
        m = np.zeros(n + 1, dtype=np.int8)
        d = self.decision(seat)
        if d is None:
            return m
        if d.wants_target:
            m[list(d.options)] = 1
            if d.no_vote:
                m[n] = 1
        else:
            m[n] = 1
        return m

    def observation(self, seat: int) -> dict[str, Any]:
        """The seat's observation: its view as text and the structured fields (``docs/env.md``)."""
        view = self.state.view(seat)
        r = self._renderers[seat]
        msgs, _, _ = r.context(view)
        parts = [m.content for m in msgs]
        d = self.decision(seat)
        if d is not None:
            parts.append(r.decision_prompt(d, view, min(d.max_chars, self._cap)))
        text = "\n\n".join(parts)
        if len(text) > self._obs_cap:  # beyond the bound obs_text_chars computes; the latest text is kept
            text = text[-self._obs_cap :]
        events = view.events
        phase = d.phase if d is not None else (events[-1].phase if events else "setup")
        rnd = d.round if d is not None else (events[-1].round if events else 0)
        alive = np.zeros(self.rules.n_seats, dtype=np.int8)
        alive[list(view.alive)] = 1
        return {
            "text": text,
            "decision": {
                "kind": np.int64(KINDS.index(d.kind) + 1 if d is not None else 0),
                "phase": np.int64(PHASES.index(phase)),
                "round": np.int64(min(rnd, self.rules.round_cap)),
                "needs_text": np.int64(d.needs_text if d is not None else 0),
                "max_chars": np.int64(min(d.max_chars, self._cap) if d is not None else 0),
            },
            "role": np.int64([x.name for x in self.rules.roles].index(view.role)),
            "alive": alive,
            "choice_mask": self.mask(seat),
        }

    def transcript(self) -> str:
        """Every event so far as text, roles included (the ``transcript`` style of the event templates)."""
        return "\n".join(self.transcript_lines())

    def transcript_lines(self) -> list[str]:
        """The lines of :meth:`transcript`."""
        renderer = EventRenderer(load_event_templates().transcript, self.rules.lexicon, self.state.names)
        return [ln.text for ln in renderer.render_all(self.state.events)]

    def final_rewards(self) -> list[float]:
        """Every seat's final reward (:meth:`Rewards.final`); only when the game is over."""
        return [float(self.rewards.final(self.state, s)) for s in range(self.rules.n_seats)]

    # ------------------------------------------------------------------ acting
    def act(self, seat: int, action: Any) -> str | None:
        """Answer the seat's earliest pending decision with ``action``.

        An action that is not legal (a ``choice`` outside the mask, missing or empty text, text
        with characters outside the action space) is replaced by a seeded-random legal action
        from the engine's ``fallback`` stream, as ``play`` replaces an unusable model answer;
        the game logs it as a fallback. Text longer than the decision allows is cut to its
        length.

        Returns:
            ``None`` when the action was played; why it was not, when a fallback was.

        Raises:
            ValueError: The seat has no pending decision.
        """
        d = self.decision(seat)
        if d is None:
            raise ValueError(f"seat {seat} has no pending decision")
        a, why = self._action(d, action)
        if a is not None:
            res = self.state.apply(a)
            why = res.reason if res is not None else None
        self.decisions += 1
        if why is not None:
            log.warning("seat %d decision %d (%s): %s; falling back", seat, d.id, d.kind, why)
            fb = self.state.random_action(d)
            bad = self.state.apply(fb)
            assert bad is None, bad
            self.fallbacks += 1
        self._flush()
        if self.over:
            self._finish()
        return why

    def _action(self, d: Decision, action: Any) -> tuple[Action | None, str | None]:
        """The engine action for ``action`` (a mapping with ``choice`` and ``text``), or why there is none."""
        if not isinstance(action, Mapping):
            return None, f"not an action: {type(action).__name__} (expected a dict with 'choice' and 'text')"
        n = self.rules.n_seats
        target: int | None = None
        if d.wants_target:
            choice = action.get("choice")
            if isinstance(choice, bool) or not isinstance(choice, (int, np.integer)):
                return None, f"choice: {choice!r} is not a seat number"
            target = None if int(choice) == n else int(choice)
        text: str | None = None
        if d.needs_text:
            raw = action.get("text")
            if not isinstance(raw, str):
                return None, f"text: {type(raw).__name__} is not a string"
            outside = sum(1 for c in raw if c != "\n" and not c.isprintable())
            if outside:
                return None, f"text holds {count(outside, 'character')} outside the action space (not printable)"
            text = raw[: min(d.max_chars, self._cap)]
        return Action(decision=d.id, seat=d.seat, target=target, text=text), None

    # ------------------------------------------------------------------ the log
    def _flush(self) -> None:
        if self._writer is not None:
            for ev in self.state.events[self._written :]:
                self._writer.write(ev)
        self._written = len(self.state.events)

    def _finish(self) -> None:
        """Close the log: the integrity note when some action was replaced (as ``play`` writes it)."""
        if self._writer is None:
            return
        if self.fallbacks:
            share = (self.decisions - self.fallbacks) / self.decisions
            self._writer.write(
                GameStatus(
                    seq=len(self.state.events) + 1,
                    degraded=share < GATE_THRESHOLD,
                    answered_share=share,
                    decisions=self.decisions,
                    fallbacks=self.fallbacks,
                    detail={"env": ENV_META, "gate_threshold": GATE_THRESHOLD},
                )
            )
        self.close()

    def close(self) -> None:
        """Close the log file (an unfinished game's log stays as written)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
