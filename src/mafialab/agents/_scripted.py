"""The scripted baseline agent: an explicit belief state and templated English.

Belief: a suspicion score per seat (higher = more likely on the hidden team), updated from
public accusations, votes, investigation results (own and claimed), deaths and revealed
roles. Town votes for its most suspected living player; ties go to the lowest seat, so
scripted town players who share the same public information vote together. The hidden team
knows its members, pushes the table towards a town player and kills whoever hurts it most.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from typing import Any

from mafialab.agents._scripted_mission import MISSION_KINDS, mission_decide, observe_mission
from mafialab.agents._scripted_probe import ANSWERS, CLEARED, KNOWN_HIDDEN
from mafialab.engine import (
    Action,
    Decision,
    Elimination,
    Event,
    InvestigationResult,
    MafiaChat,
    NightAction,
    NightResult,
    PlayerView,
    Speech,
    Vote,
    VoteTally,
    stream,
)
from mafialab.models import ChatResponse
from mafialab.rules import RuleSet


class ScriptedAgent:
    """Rule-based baseline with an explicit suspicion score per seat.

    Templated phrases (parsed back by every scripted agent, and readable by people):

    * soft suspicion: ``"I have doubts about {name}."``
    * direct accusation: ``"{name} is {Mafia}."`` (the rule set's hidden-team name)
    * investigation claim: ``"I checked {name}: {name} is {Mafia|Town}."``

    Args:
        seat: The seat played.
        rules: The rule set (for the lexicon).
        seed: The game seed; the agent draws from its own stream ``agent:<seat>``.
    """

    label = "scripted"

    def __init__(self, seat: int, rules: RuleSet, seed: int):
        self.seat = seat
        self.rules = rules
        self._rng = stream(seed, f"agent:{seat}")
        self.suspicion: dict[int, float] = {}
        self._seen = 0
        self._claims: dict[int, str] = {}  # own investigation results: seat -> "mafia"/"town"
        self._claimed: set[int] = set()  # results already announced
        self._accused_us: Counter[int] = Counter()  # hidden team: who pushed against us
        self._investigators: set[int] = set()  # seats that claimed an investigation
        self._evidence = False  # whether anything public (a reveal, a claim, a vote) backs pushes yet
        self._said: dict[int, dict[int, float]] = {}  # speaker -> target -> strength of its pushes
        self._mafia_word = rules.lexicon.mafia_team
        self._town_word = rules.lexicon.town_team
        self._patterns: tuple[re.Pattern[str], ...] = ()
        self._frozen = False  # a probe copy (probe_snapshot): never plays

    # ---------------------------------------------------------------- belief
    def beliefs(self) -> dict[int, float]:
        """Current suspicion per seat (higher = more suspected; ±100 = known)."""
        return dict(self.suspicion)

    def belief_snapshot(self, view: PlayerView) -> ScriptedAgent:
        """A detached copy of this agent that has observed ``view`` (read-only for ``self``).

        The copy shares no mutable state with the playing agent, so asking it anything
        (probes) cannot change the agent's game behaviour. Its random stream must not be
        used; nothing that answers probes draws from it.
        """
        if self._frozen and view.events and self._seen >= view.events[-1].seq:
            return self  # a frozen probe copy that has seen this view: nothing to observe or protect
        shadow = copy.copy(self)
        for key, value in vars(self).items():
            if isinstance(value, (dict, set, list)):  # every mutable belief container, nested too
                setattr(shadow, key, copy.deepcopy(value))
        shadow._observe(view)
        return shadow

    def probe_snapshot(self, view: PlayerView) -> ScriptedAgent:
        """A frozen copy that answers probes as of ``view`` (for probes asked later, off the game's path).

        The probe runner takes it when a trigger is seen, so answers asked while the game
        has moved on still come from the belief state at the trigger.
        """
        shadow = self.belief_snapshot(view)
        shadow._frozen = True
        return shadow

    async def probe(
        self,
        question: str,
        view: PlayerView,
        json_schema: dict[str, Any] | None,
        max_tokens: int,
        probe_id: str,
        *,
        preamble: str = "",
    ) -> ChatResponse:
        """Answer a standard probe from the belief state (the probe protocol of ``mafialab.probes``).

        The answer depends on ``probe_id`` only (``role_assessment``, ``suspicion_ranking``,
        ``social_map``, ``personality_profile``, ``planned_action``, ``role_beliefs``; see
        ``mafialab.agents._scripted_probe``) and on a :meth:`belief_snapshot` for ``view``;
        the question text, preamble, schema and token cap are not read. The agent that plays is not
        changed and no random stream is drawn from.

        Returns:
            The answer as JSON text and parsed value (model ``scripted``), or an error
            response (``error_kind="unsupported"``) for any other probe id.
        """
        build = ANSWERS.get(probe_id)
        if build is None:
            known = ", ".join(sorted(ANSWERS))
            return ChatResponse(
                error=f"scripted agents answer only the standard probes ({known}), not {probe_id!r}",
                error_kind="unsupported",
                model="scripted",
            )
        answer = build(self.belief_snapshot(view), view)
        return ChatResponse(text=json.dumps(answer, ensure_ascii=False), parsed=answer, model="scripted")

    def _compile(self, names: tuple[str, ...]) -> None:
        alt = "|".join(re.escape(n) for n in names)
        m, t = re.escape(self._mafia_word), re.escape(self._town_word)
        self._patterns = (
            re.compile(rf"I checked ({alt}): \1 is ({m}|{t})\."),
            re.compile(rf"\b({alt}) is {m}\."),
            re.compile(rf"I have doubts about ({alt})\."),
        )
        self._name_to_seat = {n: i for i, n in enumerate(names)}

    def _bump(self, seat: int, by: float) -> None:
        cur = self.suspicion.get(seat, 0.0)
        if cur in (CLEARED, KNOWN_HIDDEN):
            return
        self.suspicion[seat] = max(CLEARED + 1, min(KNOWN_HIDDEN - 1, cur + by))

    def _set(self, seat: int, value: float) -> None:
        self.suspicion[seat] = value

    def _observe(self, view: PlayerView) -> None:
        if not self._patterns:
            self._compile(view.names)
            self.suspicion = {s: 0.0 for s in range(len(view.names))}
            self._set(self.seat, CLEARED)
            if view.team == "mafia":
                for m in view.teammates:
                    self._set(m, CLEARED)  # never suspect a partner
        for ev in view.events:
            if ev.seq <= self._seen:
                continue
            self._update(ev, view)
        if view.events:
            self._seen = view.events[-1].seq

    def _note(self, speaker: int, target: int, strength: float) -> None:
        said = self._said.setdefault(speaker, {})
        said[target] = max(said.get(target, 0.0), strength)

    def _credibility(self, speaker: int) -> float:
        s = self.suspicion.get(speaker, 0.0)
        if s <= CLEARED:
            return 1.0
        return max(0.1, 1.0 - s / 4)

    def _update(self, ev: Event, view: PlayerView) -> None:
        mafia_team = view.team == "mafia"
        if self.rules.mission is not None:
            observe_mission(self, ev, view)
        if isinstance(ev, (Speech, MafiaChat)):
            if isinstance(ev, MafiaChat) or ev.seat == self.seat:
                return
            self._hear(ev, view)
        elif isinstance(ev, InvestigationResult) and ev.seat == self.seat:
            hidden = ev.result in ("mafia", self._mafia_word) or (
                ev.result in {r.name for r in self.rules.roles if r.team == "mafia"}
            )
            self._claims[ev.target] = "mafia" if hidden else "town"
            self._set(ev.target, KNOWN_HIDDEN if hidden else CLEARED)
        elif isinstance(ev, NightResult) and ev.killed is not None and not mafia_team:
            # the hidden team kills town players: the victim is cleared, and whoever it
            # suspected gains suspicion (the hidden team silences its accusers)
            self._set(ev.killed, CLEARED)
            for target, weight in self._said.get(ev.killed, {}).items():
                if target != self.seat:
                    self._bump(target, 1.5 * weight)
        elif isinstance(ev, Elimination) and ev.role is not None and not mafia_team:
            hidden = self.rules.role(ev.role).team == "mafia"
            self._set(ev.seat, KNOWN_HIDDEN if hidden else CLEARED)
        elif isinstance(ev, VoteTally) and ev.outcome is not None and not mafia_team:
            self._judge_voters(ev, view)
        elif (
            isinstance(ev, Vote)
            and mafia_team
            and ev.seat != self.seat
            and (ev.target in view.teammates or ev.target == self.seat)
        ):
            self._accused_us[ev.seat] += 1

    def _hear(self, ev: Speech, view: PlayerView) -> None:
        """Read another player's public speech: investigation claims, then accusations, then doubts."""
        claim, accuse, doubt = self._patterns
        for m in claim.finditer(ev.text):
            self._hear_claim(ev.seat, self._name_to_seat[m.group(1)], m.group(2) == self._mafia_word, view)
        for m in accuse.finditer(ev.text):
            self._hear_push(ev.seat, self._name_to_seat[m.group(1)], view, strength=1.0, against_us=2, at_me=1.0,
                            weight=0.8, unbacked=0.6)  # fmt: skip
        for m in doubt.finditer(ev.text):
            self._hear_push(ev.seat, self._name_to_seat[m.group(1)], view, strength=0.5, against_us=1, at_me=0.5,
                            weight=0.3, unbacked=0.2)  # fmt: skip

    def _hear_claim(self, speaker: int, target: int, says_hidden: bool, view: PlayerView) -> None:
        """``speaker`` claimed an investigation of ``target`` (hidden team or not)."""
        self._investigators.add(speaker)
        self._evidence = True
        if view.team == "mafia":
            if says_hidden:
                self._accused_us[speaker] += 3
            return
        if target == self.seat:
            return
        self._bump(target, (3.0 if says_hidden else -2.0) * self._credibility(speaker))

    def _hear_push(self, speaker: int, target: int, view: PlayerView, *, strength: float, against_us: int,
                   at_me: float, weight: float, unbacked: float) -> None:  # fmt: skip
        """``speaker`` pushed against ``target`` (an accusation or a doubt of the given ``strength``).

        The hidden team counts a push on one of its own (``against_us``). A town player who is
        the target suspects the speaker (``at_me``); otherwise the target gains ``weight`` times
        the speaker's credibility, and a push with nothing public behind it yet makes the
        speaker look worse (``unbacked``).
        """
        self._note(speaker, target, strength)
        if view.team == "mafia":
            if target in view.teammates or target == self.seat:
                self._accused_us[speaker] += against_us
            return
        if target == self.seat:
            self._bump(speaker, at_me)  # pushing against me, whom I know is town
        else:
            self._bump(target, weight * self._credibility(speaker))
            if not self._evidence:
                self._bump(speaker, unbacked)  # a flat push with nothing public behind it

    def _judge_voters(self, ev: VoteTally, view: PlayerView) -> None:
        """After a vote: who voted for a player later shown town looks worse, and vice versa."""
        self._evidence = True
        revealed = next(
            (e for e in view.events if isinstance(e, Elimination) and e.seat == ev.outcome and e.role),
            None,
        )
        if revealed is not None and revealed.role is not None:
            hidden = self.rules.role(revealed.role).team == "mafia"
            for voter, target in ev.votes.items():
                if voter != self.seat and target == ev.outcome:
                    self._bump(voter, -0.5 if hidden else 0.7)

    # ---------------------------------------------------------------- choices
    def _top_suspect(self, options: tuple[int, ...]) -> int:
        return max(options, key=lambda s: (self.suspicion.get(s, 0.0), -s))

    def _town_pick(self, options: tuple[int, ...]) -> int:
        opts = tuple(o for o in options if o != self.seat) or options
        return self._top_suspect(opts)

    def _mafia_pick(self, view: PlayerView, options: tuple[int, ...]) -> int:
        """Most dangerous town player: claimed investigators, then our accusers, then the lowest seat.

        Partners apply the same rule to the same information, so they agree without talking.
        """
        ours = set(view.teammates) | {self.seat}
        opts = [o for o in options if o not in ours] or list(options)
        return max(opts, key=lambda s: (s in self._investigators, self._accused_us.get(s, 0), -s))

    def _bandwagon(self, view: PlayerView, options: tuple[int, ...]) -> int:
        """Hidden team's day target: the town player the table already suspects most."""
        ours = set(view.teammates) | {self.seat}
        pushes: Counter[int] = Counter()
        for ev in view.events:
            if isinstance(ev, Speech) and ev.round == view.events[-1].round and ev.seat not in ours:
                for pat in self._patterns[1:]:
                    for m in pat.finditer(ev.text):
                        pushes[self._name_to_seat[m.group(1)]] += 1
        opts = [o for o in options if o not in ours] or list(options)
        return max(
            opts, key=lambda s: (pushes.get(s, 0) - 0.5 * (s in self._investigators), self._accused_us.get(s, 0), -s)
        )

    def _speech(self, view: PlayerView) -> str:
        names = view.names
        alive = [s for s in view.alive if s != self.seat]
        parts: list[str] = []
        if view.team == "mafia":
            target = self._bandwagon(view, tuple(alive))
            if self._rng.random() < 0.5:
                parts.append(f"I have doubts about {names[target]}.")
            else:
                parts.append(f"{names[target]} is {self._mafia_word}.")
            return " ".join(parts)
        for t, verdict in sorted(self._claims.items()):
            if t not in self._claimed:
                self._claimed.add(t)
                word = self._mafia_word if verdict == "mafia" else self._town_word
                parts.append(f"I checked {names[t]}: {names[t]} is {word}.")
        if alive:
            top = self._top_suspect(tuple(alive))
            score = self.suspicion.get(top, 0.0)
            if score >= KNOWN_HIDDEN or score >= 2.0:
                parts.append(f"{names[top]} is {self._mafia_word}.")
            elif score > 0:
                parts.append(f"I have doubts about {names[top]}.")
        if not parts:
            parts.append("I have no strong read yet; I will watch the votes.")
        return " ".join(parts)

    async def decide(self, decision: Decision, view: PlayerView) -> Action:
        """Answer from the belief state (see the class docstring; mission games: :mod:`._scripted_mission`)."""
        self._observe(view)
        k = decision.kind
        if k in MISSION_KINDS:
            return mission_decide(self, decision, view)
        opts = decision.options
        target: int | None = None
        text: str | None = None
        if k == "speak":
            text = self._speech(view) if decision.phase != "intro" else f"Hello, I am {view.name}."
        elif k == "mafia_chat":
            pick = self._mafia_pick(view, tuple(view.alive))
            text = f"Let us {self.rules.lexicon.kill} {view.names[pick]} tonight."
        elif k == "kill":
            target = self._mafia_pick(view, opts)
            # follow a partner's earlier pick if there is one (sequential kill votes)
            picks = [e.target for e in view.events if isinstance(e, NightAction) and e.ability == "kill"
                     and e.round == decision.round and e.target in opts]  # fmt: skip
            if picks:
                target = picks[0]
        elif k == "protect":
            target = self._protect(view, opts)
        elif k == "investigate":
            unknown = [o for o in opts if o not in self._claims]
            pool = tuple(unknown) or opts
            best = max(self.suspicion.get(o, 0.0) for o in pool)
            target = self._rng.choice([o for o in pool if self.suspicion.get(o, 0.0) == best])
        elif k == "bid":  # bid to speak: never pass, so every turn of the day is spoken
            target = self._rng.choice([o for o in opts if o > 0] or list(opts))
        elif k in ("vote", "nominate", "runoff_vote"):
            target = self._bandwagon(view, opts) if view.team == "mafia" else self._town_pick(opts)
            if decision.needs_text:
                text = f"I vote for {view.names[target]}."
        return Action(decision=decision.id, seat=decision.seat, target=target, text=text)

    def _protect(self, view: PlayerView, opts: tuple[int, ...]) -> int:
        claimed = [s for s in self._investigators if s in opts and self.suspicion.get(s, 0.0) <= 0]
        if claimed:
            return min(claimed)
        if self.seat in opts:
            return self.seat
        trusted = sorted(opts, key=lambda s: (self.suspicion.get(s, 0.0), s))
        return trusted[0]


def scripted_factory(spec: str, seat: int, rules: RuleSet, seed: int) -> ScriptedAgent:
    """Agent factory for the ``scripted`` spec."""
    return ScriptedAgent(seat, rules, seed)
