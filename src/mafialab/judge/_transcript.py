"""The role-revealed transcript a judge reads, and its condensation to fit a context window."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from mafialab.engine import (
    Elimination,
    Event,
    GameEnd,
    Imported,
    InvestigationResult,
    KillChosen,
    MafiaChat,
    NightAction,
    NightResult,
    PhaseStarted,
    Speech,
    Vote,
    VoteTally,
)
from mafialab.record import GameLog

CONDENSE_RULE = "shorten-speech-oldest-first/v1"
"""Name of the condensation rule recorded in verdicts (see ``docs/arena.md``)."""

CHARS_PER_TOKEN = 3.5
"""Token estimate used when the judge model exposes no tokenizer: ``ceil(chars / 3.5)``.

Conservative for English text under BPE tokenizers (which average about 4 characters per
token), so an estimate that fits leaves some room."""

SHORT_CHARS = 80
"""Length a speech is cut to in the first condensation pass."""


@dataclass(frozen=True)
class Line:
    """One transcript line.

    Attributes:
        prefix: Fixed part (who did what); never condensed.
        text: Player-written text (speech, mafia chat, vote statement), quoted when
            rendered, or ``None``.
        state: ``full``, ``shortened`` or ``omitted``.
        group: For a vote line without text: the heading of its vote stage (e.g.
            ``"[D1 nomination votes]"``), so condensation can merge the stage's lines.
        item: For a vote line: the vote alone (``"Ellis→Dana"``).
    """

    prefix: str
    text: str | None = None
    state: str = "full"
    group: str | None = None
    item: str | None = None

    def render(self) -> str:
        """The line as shown to the judge (player text JSON-quoted so it cannot add lines)."""
        if self.text is None:
            return self.prefix
        if self.state == "omitted":
            return f"{self.prefix} [omitted]"
        body = json.dumps(self.text, ensure_ascii=False)
        if self.state == "shortened":
            body += " [shortened]"
        return f"{self.prefix} {body}"


@dataclass
class Transcript:
    """A judge transcript: ordered lines plus how it was condensed.

    Attributes:
        lines: The lines in game order.
        condensation: ``None`` when complete; otherwise the record of what was condensed
            (``rule``, ``budget_tokens``, ``original_tokens``, ``final_tokens``,
            ``shortened``, ``omitted``, ``fits``, ``tokens_per_char`` …).
    """

    lines: list[Line]
    condensation: dict[str, Any] | None = field(default=None)

    def render(self) -> str:
        """The transcript text, one line per event."""
        return "\n".join(line.render() for line in self.lines)

    def condense(self, budget_tokens: int, count_tokens: Callable[[str], int] | None = None) -> Transcript:
        """A copy that fits ``budget_tokens``, condensed by rule :data:`CONDENSE_RULE`.

        The rule: every fixed part (roster, phases, night actions, investigations, kills,
        votes, tallies, eliminations, the end) is kept verbatim. Player-written texts are
        shortened to :data:`SHORT_CHARS` characters, oldest first, until the transcript fits;
        if it still does not fit, they are replaced by ``[omitted]``, oldest first; if it
        still does not fit, the lines of each vote stage (and each night's kill votes) are
        merged into one line listing every vote in order, oldest stage first (no vote is
        dropped). Tokens are counted with
        ``count_tokens`` when given (the judge's tokenizer, used to calibrate a
        tokens-per-character ratio on the full text), else ``ceil(chars / 3.5)``.

        Args:
            budget_tokens: Tokens available for the transcript.
            count_tokens: Optional exact token counter.

        Returns:
            ``self`` when it already fits (``condensation`` stays ``None``), else a new
            transcript whose ``condensation`` records the rule and counts; ``fits`` is false
            when even the fixed parts exceed the budget.
        """
        full = self.render()
        ratio = 1.0 / CHARS_PER_TOKEN
        if count_tokens is not None and full:
            ratio = max(count_tokens(full) / len(full), 1e-6)

        def est(n_chars: int) -> int:
            return math.ceil(n_chars * ratio)

        original = est(len(full))
        if original <= budget_tokens:
            return self
        lines = list(self.lines)
        total = len(full)
        shortened = omitted = 0
        idx = [i for i, ln in enumerate(lines) if ln.text is not None]
        for i in idx:
            if est(total) <= budget_tokens:
                break
            ln = lines[i]
            assert ln.text is not None
            if len(ln.text) > SHORT_CHARS:
                new = replace(ln, text=ln.text[:SHORT_CHARS].rstrip() + "…", state="shortened")
                total += len(new.render()) - len(ln.render())
                lines[i] = new
                shortened += 1
        for i in idx:
            if est(total) <= budget_tokens:
                break
            ln = lines[i]
            new = replace(ln, state="omitted")
            if len(new.render()) >= len(ln.render()):
                continue
            total += len(new.render()) - len(ln.render())
            lines[i] = new
            omitted += 1
            if ln.state == "shortened":
                shortened -= 1
        merged = 0
        i = 0
        while i < len(lines) and est(total) > budget_tokens:
            g = lines[i].group
            j = i
            while g is not None and j < len(lines) and lines[j].group == g:
                j += 1
            if j - i >= 2:
                new = Line(f"{g} " + ", ".join(str(ln.item) for ln in lines[i:j]))
                total += len(new.render()) - sum(len(ln.render()) + 1 for ln in lines[i:j]) + 1
                lines[i:j] = [new]
                merged += 1
            i += 1
        final = est(total)
        return Transcript(
            lines=lines,
            condensation={
                "rule": CONDENSE_RULE,
                "budget_tokens": budget_tokens,
                "original_tokens": original,
                "final_tokens": final,
                "texts": len(idx),
                "shortened": shortened,
                "omitted": omitted,
                "vote_groups_merged": merged,
                "fits": final <= budget_tokens,
                "tokens_per_char": round(ratio, 4),
                "token_count": "tokenizer" if count_tokens is not None else f"chars/{CHARS_PER_TOKEN}",
            },
        )


def build_transcript(log: GameLog) -> Transcript:
    """The complete role-revealed transcript of a game, one compact line per event.

    Includes the roster with true roles, every public speech and vote (in order), the
    hidden team's private chat, every night action, investigation result, kill choice,
    night result, vote tally, elimination and the end. Lines name players only; the roster
    gives their roles. Agent labels (which model played a seat) are left out, so a judge
    cannot favour a model family by name. Player-written text is JSON-quoted.

    Args:
        log: A game log.

    Returns:
        The transcript (uncondensed).
    """
    h = log.header
    lex = h.rules.lexicon
    names = [s.name for s in h.roster]
    lines = [
        Line(f"GAME {h.game_id} (rules {h.rules_id})"),
        Line("ROSTER (true roles, hidden from players during the game):"),
    ]
    for s in h.roster:
        lines.append(Line(f"- {s.name}: {s.role} (team {lex.team_name(s.team)})"))
    lines.append(Line("EVENTS (N = night, D = day; private = seen only by the actors):"))
    for ev in log.events:
        lines.extend(_event_lines(ev, names, lex.team_name))
    return Transcript(lines)


def _event_lines(ev: Event, names: list[str], team_name: Callable[[Any], str]) -> list[Line]:
    def ns(seats: Any) -> str:
        return ", ".join(names[int(x)] for x in seats) or "nobody"

    n, d = f"N{ev.round}", f"D{ev.round}"
    if isinstance(ev, PhaseStarted):
        title = {"night": "NIGHT", "day": "DAY", "intro": "INTRO DAY"}.get(ev.phase, ev.phase.upper())
        return [Line(f"== {title} {ev.round}; alive: {ns(ev.alive)}")]
    if isinstance(ev, Speech):
        fb = " (fallback)" if ev.fallback else ""
        return [Line(f"[{d}.{ev.discussion} #{ev.index}] {names[ev.seat]}{fb}:", ev.text)]
    if isinstance(ev, MafiaChat):
        fb = " (fallback)" if ev.fallback else ""
        return [Line(f"[{n} mafia chat, private] {names[ev.seat]}{fb}:", ev.text)]
    if isinstance(ev, NightAction):
        fb = " (fallback)" if ev.fallback else ""
        verb = {"kill": "votes to kill", "protect": "protects", "investigate": "investigates"}[ev.ability]
        line = f"[{n} private] {names[ev.seat]} {verb} {names[ev.target]}{fb}"
        if ev.ability == "kill":
            item = f"{names[ev.seat]}→{names[ev.target]}{fb}"
            return [Line(line, group=f"[{n} private kill votes]", item=item)]
        return [Line(line)]
    if isinstance(ev, InvestigationResult):
        return [Line(f"[{n} private] {names[ev.seat]} learns {names[ev.target]} is {ev.result}")]
    if isinstance(ev, KillChosen):
        return [Line(f"[{n} private] mafia kill target: {names[ev.target]}")]
    if isinstance(ev, NightResult):
        if ev.killed is not None:
            return [Line(f"[{n} result] {names[ev.killed]} was killed")]
        saved = f" ({names[ev.saved]} was saved)" if ev.saved is not None else ""
        return [Line(f"[{n} result] nobody died{saved}")]
    if isinstance(ev, Vote):
        fb = " (fallback)" if ev.fallback else ""
        idx = f" #{ev.index}" if ev.index is not None else ""
        whom = names[ev.target] if ev.target is not None else "no vote"
        prefix = f"[{d} {ev.stage}{idx}] {names[ev.seat]} → {whom}{fb}"
        if ev.statement:
            return [Line(prefix + ":", ev.statement)]
        item = f"{names[ev.seat]}→{whom}{fb}"
        return [Line(prefix, group=f"[{d} {ev.stage} votes, in order]", item=item)]
    if isinstance(ev, VoteTally):
        tally = ", ".join(f"{names[t]} {c}" for t, c in sorted(ev.tally.items(), key=lambda x: (-x[1], x[0])))
        extra = f"; candidates {ns(ev.candidates)}" if ev.candidates else ""
        tie = "; tie" if ev.tie else ""
        out = f"; outcome {names[ev.outcome]}" if ev.outcome is not None else ""
        return [Line(f"[{d} {ev.stage} tally] {tally}{extra}{tie}{out}")]
    if isinstance(ev, Elimination):
        cause = "killed at night" if ev.cause == "night" else "voted out"
        return [Line(f"[elimination] {names[ev.seat]} {cause}")]
    if isinstance(ev, GameEnd):
        return [
            Line(
                f"END: {team_name(ev.winner)} wins ({ev.reason}) after round {ev.rounds}; "
                f"alive at the end: {ns(ev.alive)}"
            )
        ]
    if isinstance(ev, Imported):
        who = f" {names[ev.seat]}" if ev.seat is not None and 0 <= ev.seat < len(names) else ""
        return [Line(f"[R{ev.round} imported {ev.source_kind}, {ev.note}]{who}:", ev.text or "")]
    return []  # seating, role_assigned, team_revealed: covered by the roster
