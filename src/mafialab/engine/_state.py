"""The game state machine.

A game is a function of (rule set, seed, the agents' answers). The rules are played by a
generator (``_script``) that yields batches of decisions and receives their answers; a batch
holds decisions that do not depend on each other (simultaneous night actions, secret votes),
so a harness may ask for them concurrently. Events of a batch are emitted in a fixed order
(seat order, then ability), never in the order answers arrived, so logs are reproducible.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Generator, Iterable, Sequence
from typing import Any

from mafialab._words import count
from mafialab.engine._decisions import Action, Decision, DecisionKind, Invalid, check_action
from mafialab.engine._events import (
    PUBLIC,
    Bid,
    BidResult,
    Elimination,
    Event,
    GameEnd,
    InvestigationResult,
    KillChosen,
    MafiaChat,
    NightAction,
    NightResult,
    PhaseStarted,
    PrivateNote,
    RoleAssigned,
    SeatingEvent,
    Speech,
    TeamRevealed,
    Visibility,
    Vote,
    VoteTally,
    only,
    team,
)
from mafialab.engine._missions import play_missions
from mafialab.engine._rng import stream
from mafialab.engine._view import PlayerView, player_view
from mafialab.rules import RuleSet, Team

_Script = Generator[list[Decision], dict[int, Action], None]


class _SideAbilities:
    """Night abilities independent of the kill (protect, investigate).

    They are asked together with the first hidden-team decision of the night (so every
    night decision of a round is one batch where the rules allow), and their events are
    emitted after the kill votes.
    """

    def __init__(self, decisions: list[Decision]) -> None:
        self.decisions = decisions
        self.answers: dict[int, Action] = {}
        self.asked = False

    def attach(self, batch: list[Decision]) -> list[Decision]:
        """``batch`` plus the side decisions, the first time only."""
        return batch if self.asked else batch + self.decisions

    def take(self, answers: dict[int, Action], own: set[int]) -> None:
        """Keep the side answers from the first answered batch (all answers not in ``own``)."""
        if not self.asked:
            self.answers = {k: v for k, v in answers.items() if k not in own}
            self.asked = True


class _GameOver(Exception):
    pass


def _rotated(seats: list[int], first: int) -> list[int]:
    """``seats`` (ascending) rotated to start at the first seat at or after ``first`` (wrapping)."""
    k = next((i for i, s in enumerate(seats) if s >= first), 0)
    return seats[k:] + seats[:k]


def deal_roles(rules: RuleSet, seed: int) -> list[str]:
    """The role per seat that game ``seed`` deals (the ``deal`` stream), without playing it."""
    deck = rules.deck()
    stream(int(seed), "deal").shuffle(deck)
    return deck


class GameState:
    """State of one game: pending decisions, legal options, events, terminal check.

    Args:
        rules: The rule set.
        seed: Game seed (any int); every random choice derives from it.
        labels: Optional public label per seat (e.g. a model name), shown in the seating.
        roles: A recorded deal: the role name per seat (a permutation of ``rules.deck()``),
            used instead of dealing from the seed (imported games, which have no seed).
        names: Recorded seat names (default: the rule set's ``seat_names``).

    Raises:
        ValueError: ``labels``, ``roles`` or ``names`` of the wrong length, ``roles`` that are
            not the rule set's deck, or names that are not unique (the message names the field).

    Example:
        >>> from mafialab.rules import WEREWOLF7
        >>> s = GameState(WEREWOLF7, seed=1)
        >>> d = s.pending()[0]
        >>> s.apply(Action(decision=d.id, seat=d.seat, target=d.options[0]))  # doctest: +SKIP
    """

    def __init__(
        self,
        rules: RuleSet,
        seed: int,
        labels: Sequence[str | None] | None = None,
        *,
        roles: Sequence[str] | None = None,
        names: Sequence[str] | None = None,
    ):
        self.rules = rules
        self.seed = int(seed)
        n = rules.n_seats
        self.names: list[str] = list(rules.seat_names[:n])
        if names is not None:
            if len(names) != n or len(set(names)) != n:
                raise ValueError(f"names: expected {n} unique seat names, got {list(names)}")
            self.names = [str(x) for x in names]
        if labels is not None and len(labels) != n:
            raise ValueError(f"labels: {count(len(labels), 'label')} for {count(n, 'seat')}")
        if roles is not None and sorted(roles) != sorted(rules.deck()):
            raise ValueError(f"roles: {list(roles)} is not a deal of {rules.id} ({sorted(rules.deck())})")
        self.labels: list[str | None] = list(labels) if labels is not None else []
        self._rng: dict[str, random.Random] = {
            s: stream(self.seed, s) for s in ("speaking_order", "tie_break", "fallback")
        }
        self.roles: list[str] = list(roles) if roles is not None else deal_roles(rules, self.seed)
        self.continuation_seed: int | None = None
        self.teams: list[Team] = [rules.role(r).team for r in self.roles]
        self.alive: list[bool] = [True] * n
        self.events: list[Event] = []
        self.round = 0
        self.winner: Team | None = None
        self.actions: list[Action] = []
        self._next_decision = 0
        self._msg_index = 0
        self._pending: dict[int, Decision] = {}
        self._answers: dict[int, Action] = {}
        self._cursors: dict[str, int] = {}
        self._script: _Script = self._play()
        self._advance(None)

    # ------------------------------------------------------------------ public API
    def pending(self) -> list[Decision]:
        """Decisions waiting for an answer (empty when the game is over)."""
        return [d for i, d in self._pending.items() if i not in self._answers]

    @property
    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self.winner is not None

    @property
    def n_seats(self) -> int:
        """Number of seats."""
        return len(self.roles)

    def alive_seats(self) -> list[int]:
        """Seats alive now, ascending."""
        return [s for s, a in enumerate(self.alive) if a]

    def apply(self, action: Action) -> Invalid | None:
        """Apply an answer to a pending decision.

        Returns:
            ``None`` on success; an :class:`Invalid` value (and an untouched state) when the
            action does not answer a pending decision or is not legal.
        """
        decision = self._pending.get(action.decision)
        if decision is None or action.decision in self._answers:
            return Invalid(reason=f"decision {action.decision} is not pending", decision=action.decision)
        why = check_action(decision, action)
        if why is not None:
            return Invalid(reason=why, decision=decision.id)
        self._answers[action.decision] = action
        if len(self._answers) == len(self._pending):
            answers, self._answers, self._pending = self._answers, {}, {}
            self.actions.extend(answers[i] for i in sorted(answers))
            self._advance(answers)
        return None

    def view(self, seat: int) -> PlayerView:
        """The player's view of the events so far (see :func:`player_view`)."""
        return player_view(self.events, seat)

    def random_action(self, decision: Decision, text: str = "(no comment)") -> Action:
        """A seeded-random legal answer drawn from the ``fallback`` stream, marked fallback."""
        rng = self._rng["fallback"]
        target = rng.choice(decision.options) if decision.wants_target else None
        needs_text = decision.needs_text
        return Action(
            decision=decision.id,
            seat=decision.seat,
            target=target,
            text=text if needs_text else None,
            fallback=True,
            choice=rng.choice(decision.choices) if decision.choices else None,
        )

    def reseed(self, seed: int) -> None:
        """Draw every later engine choice (speaking order, ties, fallbacks) from ``seed``'s streams.

        A fork's continuation calls this at the fork step, so replicas of one fork point
        differ in their own draws while the prefix stays the parent's. Recorded as
        :attr:`continuation_seed`.
        """
        self.continuation_seed = int(seed)
        self._rng = {s: stream(int(seed), s) for s in ("speaking_order", "tie_break", "fallback")}

    def add_private_note(self, seat: int, text: str, source: str = "intervention") -> PrivateNote:
        """Append a :class:`PrivateNote` visible to ``seat`` only (a fork's injected belief).

        Raises:
            ValueError: ``seat`` out of range, or empty ``text``.
        """
        if not 0 <= seat < self.n_seats:
            raise ValueError(f"seat: {seat} out of range 0..{self.n_seats - 1}")
        if not text.strip():
            raise ValueError("text: an injected belief needs text")
        phase = self.events[-1].phase if self.events else "setup"
        return self._emit(PrivateNote, only(seat), phase=phase, seat=seat, text=text, source=source)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ internals
    def _advance(self, answers: dict[int, Action] | None) -> None:
        try:
            batch = self._script.send(answers)  # type: ignore[arg-type]
        except StopIteration:
            self._pending = {}
            return
        if not batch:
            raise RuntimeError("engine yielded an empty batch of decisions")
        self._pending = {d.id: d for d in batch}

    def _emit(self, event_cls: type[Any], visibility: Visibility, **fields: Any) -> Any:
        phase = fields.pop("phase", self._phase)
        ev = event_cls(
            seq=len(self.events) + 1,
            round=self.round,
            phase=phase,
            visibility=visibility,
            **fields,
        )
        self.events.append(ev)
        return ev

    def _decision(self, seat: int, kind: DecisionKind, options: Iterable[int] = (), **kw: Any) -> Decision:
        d = Decision(
            id=self._next_decision,
            seat=seat,
            kind=kind,
            round=self.round,
            phase=self._phase if self._phase != "setup" else "intro",  # type: ignore[arg-type]
            options=tuple(sorted(options)),
            **kw,
        )
        self._next_decision += 1
        return d

    def _next_index(self) -> int:
        self._msg_index += 1
        return self._msg_index

    def _mafia_alive(self) -> list[int]:
        return [s for s in self.alive_seats() if self.teams[s] == "mafia"]

    def _town_alive(self) -> list[int]:
        return [s for s in self.alive_seats() if self.teams[s] == "town"]

    def _kill(self, seat: int, cause: str) -> None:
        self.alive[seat] = False
        role = self.roles[seat] if self.rules.reveal_role_on_death else None
        shown_team = self.teams[seat] if self.rules.reveal_team_on_death and role is None else None
        self._emit(Elimination, PUBLIC, seat=seat, cause=cause, role=role, team=shown_team)
        mafia, town = len(self._mafia_alive()), len(self._town_alive())
        if mafia == 0:
            self._end("town", "mafia_eliminated")
        elif mafia >= town:
            self._end("mafia", "parity")

    def _end(self, winner: Team, reason: str) -> None:
        self.winner = winner
        self._emit(
            GameEnd,
            PUBLIC,
            phase="end",
            winner=winner,
            reason=reason,
            rounds=self.round,
            alive=self.alive_seats(),
            roles=list(self.roles),
        )
        raise _GameOver

    # ------------------------------------------------------------------ the script
    def _play(self) -> _Script:
        self._phase = "setup"
        try:
            yield from self._setup_and_rounds()
        except _GameOver:
            return

    def _setup_and_rounds(self) -> _Script:
        r = self.rules
        self._emit(SeatingEvent, PUBLIC, names=self.names, labels=self.labels)
        for s in range(self.n_seats):
            self._emit(RoleAssigned, only(s), seat=s, role=self.roles[s], team=self.teams[s])
        members = [s for s in range(self.n_seats) if self.teams[s] == "mafia"]
        self._emit(TeamRevealed, team("mafia"), team="mafia", members=members)
        if r.mission is not None:  # mission games: who knows the hidden team, then the missions
            seers = [s for s in range(self.n_seats) if self.roles[s] in r.mission.knows_spies]
            if seers:
                self._emit(TeamRevealed, only(*seers), team="mafia", members=members)
        if r.intro_day:
            self.round, self._phase, self._msg_index = 0, "intro", 0
            self._emit(PhaseStarted, PUBLIC, alive=self.alive_seats())
            for s in self.alive_seats():
                yield from self._speak(s, discussion=1)
        if r.mission is not None:
            yield from play_missions(self)
        self._last_protect: int | None = None
        for rnd in range(1, r.round_cap + 1):
            self.round, self._msg_index = rnd, 0
            self._phase = "night"
            self._emit(PhaseStarted, PUBLIC, alive=self.alive_seats())
            yield from self._night()
            self._phase = "day"
            self._emit(PhaseStarted, PUBLIC, alive=self.alive_seats())
            yield from self._day()
        mafia, town = len(self._mafia_alive()), len(self._town_alive())
        self._end("mafia" if mafia > town else "town", "round_cap")

    def _speak(self, seat: int, discussion: int) -> _Script:
        d = self._decision(seat, "speak", needs_text=True, discussion=discussion, max_chars=self.rules.day.text_chars)
        a = (yield [d])[d.id]
        self._emit(
            Speech,
            PUBLIC,
            seat=seat,
            text=a.text or "",
            index=self._next_index(),
            discussion=discussion,
            decision=d.id,
            fallback=a.fallback,
        )

    # ---- night
    def _protect_options(self, seat: int) -> list[int]:
        n = self.rules.night
        opts = []
        for t in self.alive_seats():
            if t == seat and not n.protect_self:
                continue
            if t == self._last_protect and t == seat and not n.protect_self_consecutive:
                continue
            if t == self._last_protect and t != seat and not n.protect_repeat:
                continue
            opts.append(t)
        return opts

    def _night(self) -> _Script:
        """One night: the hidden team's chat and kill votes, the independent abilities, the outcome."""
        side = _SideAbilities(self._side_decisions())
        if self.rules.night.mafia_chat:
            yield from self._mafia_chat(side)
        kill_votes = yield from self._kill_votes(side)
        target = self._resolve_kill(kill_votes)
        protected = self._resolve_side_abilities(side)
        self._announce_night(target, protected)

    def _side_decisions(self) -> list[Decision]:
        """Protect and investigate decisions of every alive holder, in seat order."""
        side: list[Decision] = []
        for s in self.alive_seats():
            ability = self.rules.role(self.roles[s]).ability
            if ability == "protect":
                side.append(self._decision(s, "protect", self._protect_options(s)))
            elif ability == "investigate":
                others = [t for t in self.alive_seats() if t != s]
                side.append(self._decision(s, "investigate", others))
        return side

    def _mafia_chat(self, side: _SideAbilities) -> _Script:
        """The hidden team's private chat: one message per member, in seat order."""
        for s in self._mafia_alive():
            d = self._decision(s, "mafia_chat", needs_text=True)
            ans = yield side.attach([d])
            side.take(ans, {d.id})
            a = ans[d.id]
            self._emit(MafiaChat, team("mafia"), seat=s, text=a.text or "", decision=d.id, fallback=a.fallback)

    def _kill_votes(self, side: _SideAbilities) -> Generator[list[Decision], dict[int, Action], list[tuple[int, int]]]:
        """Ask the hidden team for kill targets (sequentially or simultaneously); ``(seat, target)`` pairs."""
        kill_options = self._town_alive()
        kill_votes: list[tuple[int, int]] = []
        mafia = self._mafia_alive()
        groups = [[s] for s in mafia] if self.rules.night.kill_vote == "sequential" else [mafia]
        for seats in groups:
            ds = [self._decision(s, "kill", kill_options) for s in seats]
            ans = yield side.attach(ds)
            side.take(ans, {d.id for d in ds})
            for d in ds:
                a = ans[d.id]
                assert a.target is not None
                kill_votes.append((d.seat, a.target))
                self._emit(
                    NightAction,
                    team("mafia"),
                    seat=d.seat,
                    ability="kill",
                    target=a.target,
                    decision=d.id,
                    fallback=a.fallback,
                )
        return kill_votes

    def _resolve_kill(self, kill_votes: list[tuple[int, int]]) -> int | None:
        """The night's target: the most-named seat; a tie by the rule set's ``kill_tie``."""
        counts = Counter(t for _, t in kill_votes)
        top = max(counts.values())
        tied = [t for t in counts if counts[t] == top]
        target: int | None
        if len(tied) > 1 and self.rules.night.kill_tie == "none":
            target = None
        elif len(tied) == 1 or self.rules.night.kill_tie == "first_named":
            target = next(t for _, t in kill_votes if t in tied)
        else:
            target = self._rng["tie_break"].choice(sorted(tied))
        self._emit(KillChosen, team("mafia"), target=target, votes={s: t for s, t in kill_votes})
        return target

    def _resolve_side_abilities(self, side: _SideAbilities) -> int | None:
        """Emit the protect/investigate actions and results; returns the protected seat, if any."""
        protected: int | None = None
        for d in side.decisions:
            a = side.answers[d.id]
            assert a.target is not None
            self._emit(
                NightAction,
                only(d.seat),
                seat=d.seat,
                ability=d.kind,
                target=a.target,
                decision=d.id,
                fallback=a.fallback,
            )
            if d.kind == "protect":
                protected = a.target
                self._last_protect = a.target
            else:
                t = a.target
                result = self.teams[t] if self.rules.night.investigate_result == "team" else self.roles[t]
                self._emit(InvestigationResult, only(d.seat), seat=d.seat, target=t, result=result)
        if not any(d.kind == "protect" for d in side.decisions):
            self._last_protect = None
        return protected

    def _announce_night(self, target: int | None, protected: int | None) -> None:
        """The public night result: a save (announced or not) or the kill."""
        if target is None:
            self._emit(NightResult, PUBLIC, killed=None, saved=None)
        elif protected == target:
            self._emit(NightResult, PUBLIC, killed=None, saved=target if self.rules.night.announce_save else None)
        else:
            self._emit(NightResult, PUBLIC, killed=target, saved=None)
            self._kill(target, "night")

    # ---- day
    def _order(self, first: int | None = None) -> list[int]:
        """Alive seats in speaking order; ``first``: the seat a ``seeded_first`` order starts from."""
        order = self.alive_seats()
        if self.rules.day.speaking_order == "seeded":
            self._rng["speaking_order"].shuffle(order)
        if first is not None:
            order = _rotated(order, first)
        return order

    def _first(self, how: str, cursor: str) -> int | None:
        """First seat of a ``seeded_first`` or ``rotate`` order (Kaggle's ``PivotSelector``), else ``None``.

        ``seeded_first``: drawn from the ``speaking_order`` stream over every seat, dead or alive;
        ``rotate``: the first alive seat from the cursor named ``cursor``, which then moves past it.
        """
        if how == "seeded_first":
            return self._rng["speaking_order"].randrange(self.n_seats)
        if how != "rotate":
            return None
        start = self._cursors.get(cursor, 0)
        first = next((s for s in _rotated(list(range(self.n_seats)), start) if self.alive[s]), 0)
        self._cursors[cursor] = (first + 1) % self.n_seats
        return first

    def _bid_discussion(self) -> _Script:
        """Bid to speak (Kaggle's ``TurnByTurnBiddingDiscussion``): a round of bids before every turn."""
        for turn in range(1, self.rules.day.bid_turns + 1):
            ds = [self._decision(s, "bid", range(5), discussion=turn) for s in self.alive_seats()]
            ans = yield ds
            bids: dict[int, int] = {}
            for d in ds:
                a = ans[d.id]
                assert a.target is not None
                bids[d.seat] = a.target
                self._emit(
                    Bid, only(d.seat), seat=d.seat, amount=a.target, turn=turn, decision=d.id, fallback=a.fallback
                )
            top = max(bids.values())
            if top == 0:
                self._emit(BidResult, PUBLIC, bids=bids, speaker=None, turn=turn)
                return
            tied = sorted(s for s, b in bids.items() if b == top)
            speaker = tied[0] if len(tied) == 1 else self._rng["speaking_order"].choice(tied)
            self._emit(BidResult, PUBLIC, bids=bids, speaker=speaker, turn=turn, tie=len(tied) > 1)
            yield from self._speak(speaker, discussion=turn)

    def _vote_options(self, seat: int, among: Iterable[int] | None = None) -> list[int]:
        pool = self.alive_seats() if among is None else list(among)
        return [t for t in pool if t != seat or self.rules.day.self_vote]

    def _day(self) -> _Script:
        r = self.rules.day
        if r.speaking_order == "bid":
            yield from self._bid_discussion()
        else:
            first = self._first(r.speaking_order, "speak")
            for k in range(1, r.discussion_rounds + 1):
                for s in self._order(first):
                    yield from self._speak(s, discussion=k)
        if r.vote == "nomination_runoff":
            yield from self._nomination_runoff()
            return
        votes: dict[int, int] = {}
        if r.vote == "public_sequential":
            voters = self.alive_seats()
            first = self._first(r.vote_order, "vote")
            if first is not None:
                voters = _rotated(voters, first)
            for s in voters:
                d = self._decision(
                    s,
                    "vote",
                    self._vote_options(s),
                    needs_text=r.vote_statement,
                    max_chars=r.statement_chars,
                    no_vote=r.no_vote,
                )
                a = (yield [d])[d.id]
                assert a.target is not None or r.no_vote
                if a.target is not None:
                    votes[s] = a.target
                self._emit(
                    Vote, PUBLIC, stage="vote", seat=s, target=a.target,
                    statement=a.text if r.vote_statement else None,
                    index=self._next_index(), decision=d.id, fallback=a.fallback,
                )  # fmt: skip
        else:
            ds = [
                self._decision(
                    s,
                    "vote",
                    self._vote_options(s),
                    needs_text=r.vote_statement,
                    max_chars=r.statement_chars,
                    no_vote=r.no_vote,
                )
                for s in self.alive_seats()
            ]
            ans = yield ds
            for d in ds:
                a = ans[d.id]
                assert a.target is not None or r.no_vote
                if a.target is not None:
                    votes[d.seat] = a.target
                self._emit(
                    Vote, only(d.seat), stage="vote", seat=d.seat, target=a.target,
                    statement=a.text if r.vote_statement else None, decision=d.id, fallback=a.fallback,
                )  # fmt: skip
        tally = Counter(votes.values())
        outcome: int | None = None
        tie = False
        if tally:
            top = max(tally.values())
            tied = sorted(t for t in tally if tally[t] == top)
            if len(tied) == 1:
                outcome = tied[0]
            else:
                tie = True
                if r.tie == "seeded":
                    outcome = self._rng["tie_break"].choice(tied)
        # public votes name their voters anyway; a secret vote's result names them only when the
        # rules say so (day.tally_names_voters), else each vote stays known to its voter alone
        shown = votes if r.vote == "public_sequential" or r.tally_names_voters else {}
        self._emit(
            VoteTally, PUBLIC, stage="vote", votes=shown, tally=dict(sorted(tally.items())),
            tie=tie, outcome=outcome,
        )  # fmt: skip
        if outcome is not None:
            self._kill(outcome, "vote")

    def _nomination_runoff(self) -> _Script:
        order = self.alive_seats()
        self._rng["speaking_order"].shuffle(order)
        noms: dict[int, int] = {}
        for s in order:
            d = self._decision(s, "nominate", self._vote_options(s))
            a = (yield [d])[d.id]
            assert a.target is not None
            noms[s] = a.target
            self._emit(
                Vote, PUBLIC, stage="nomination", seat=s, target=a.target,
                index=self._next_index(), decision=d.id, fallback=a.fallback,
            )  # fmt: skip
        counts = Counter(noms.values())
        alive = self.alive_seats()
        # rank every alive player by nominations; ties for a place are seeded
        keys = {s: self._rng["tie_break"].random() for s in alive}
        ranked = sorted(alive, key=lambda s: (-counts.get(s, 0), keys[s]))
        candidates = sorted(ranked[:2])
        third = counts.get(ranked[2], 0) if len(ranked) > 2 else -1
        tie = counts.get(ranked[1], 0) == third
        self._emit(
            VoteTally, PUBLIC, stage="nomination", votes=noms,
            tally=dict(sorted(counts.items())), candidates=candidates, tie=tie,
        )  # fmt: skip
        voters = [s for s in order if s not in candidates]
        ds = [self._decision(s, "runoff_vote", candidates) for s in voters]
        ans = (yield ds) if ds else {}
        runoff: dict[int, int] = {}
        for d in ds:
            a = ans[d.id]
            assert a.target is not None
            runoff[d.seat] = a.target
            self._emit(
                Vote, only(d.seat), stage="runoff", seat=d.seat, target=a.target, decision=d.id, fallback=a.fallback
            )
        tally = Counter(runoff.values())
        a_votes, b_votes = tally.get(candidates[0], 0), tally.get(candidates[1], 0)
        tie = a_votes == b_votes
        if tie:
            outcome = self._rng["tie_break"].choice(candidates)
        else:
            outcome = candidates[0] if a_votes > b_votes else candidates[1]
        self._emit(
            VoteTally, PUBLIC, stage="runoff", votes=runoff if self.rules.day.tally_names_voters else {},
            tally=dict(sorted(tally.items())),
            candidates=candidates, tie=tie, outcome=outcome,
        )  # fmt: skip
        self._kill(outcome, "vote")
