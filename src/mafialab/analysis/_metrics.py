"""Belief metrics F1-F4 (MafiaScope definitions) as per-game sufficient statistics.

Definitions: the README of the MafiaScope recordings ("Metric definitions (MafiaScope F1-F4)"
and "Exact readings of the reference method"), which documents the analysis code of
MafiaScope (karpovilia/mafiascope, ``src/metrics_lib.py`` and
``src/bifurcation/coupling_lib.py``). Every statistic is a sum over observations, so games
pool by adding their arrays and the cluster bootstrap re-weights games.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from mafialab.analysis._data import GameData, Probe
from mafialab.analysis._parse import (
    ATTITUDES,
    UNKNOWN,
    RoleVocabulary,
    repair_json,
    repair_json_reference,
    to_float,
)
from mafialab.engine import resolve_name

if TYPE_CHECKING:
    import numpy as np  # loaded by the statistics below (not by the quality check, which reads answers only)

N_BINS = 5
BIN_WIDTH = 20


@dataclass(frozen=True)
class Method:
    """How the metrics read the logs. :data:`MAFIASCOPE` and :data:`DEFAULT` are the presets.

    Attributes:
        name: Preset name.
        repair: ``"reference"`` (:func:`repair_json_reference`) or ``"tolerant"``
            (:func:`repair_json`) re-parse of answers stored without a parse.
        roles: ``"reference"``: MafiaScope's fixed role vocabulary for imported MafiaScope
            games; ``"rules"``: the rule set's role names. Native games always use ``"rules"``.
        f1_targets: ``"named"``: every other player named in the answer, dead or alive
            (reading 2); ``"alive"``: only players alive at the probe's time.
        f3_order: ``"key"``: B's latest assessment by (round, public message, probe
            position) (reading 3); ``"time"``: by the probe's timestamp (event order for
            records without one), at or before A's probe.
        f3_attitude: ``"exact"``: attitude strings as stored; ``"folded"``: lower-cased and
            stripped first.
        names: ``"exact"``: a ``player`` in an answer counts only when spelled exactly as in
            the roster (the reference); ``"resolved"``: read with
            :func:`mafialab.engine.resolve_name` (emphasis, quotes, case, other scripts; never a
            guess between two names), the one resolver used wherever answers name players.
        f4_alive: ``"tally"``: the keys of the tally's ``votes`` (reading 5); ``"events"``:
            players alive at the tally from the game's eliminations.
        f4_answers: ``"stored"``: the last record with a stored parse, used as stored, no
            fallback (reading 6); ``"usable"``: the last record whose answer (re-parsed like
            F1) has the expected shape and names an alive other.
        f4_mafia_label: ``"exact"``: committed set = guessed role exactly ``"Mafia"``;
            ``"normalised"``: any guess the role vocabulary maps to the hidden team.
        f4_failed_votes: ``"count"``: a day-vote turn that failed in the source (transport
            error, empty response) still counts as the voter's own vote event, as in the
            reference; ``"skip"``: a vote the tally holds for such a turn was not the
            agent's, so it is not a unit.
        reparse_repaired: Whether an answer whose stored parse needed repair is re-parsed
            from the raw text with this method's rule (so a library repair that completed a
            cut-off item, e.g. ``json-repair`` turning a cut ``75`` into ``7``, is not used);
            the stored parse is kept when the re-parse fails.
        f4_transcript: How the transcript-only vote predictors read the public record:
            ``"reference"`` (MafiaScope's exact choices) or ``"corrected"``
            (:func:`mafialab.analysis.transcript_predictions` lists both).
        calib_width: Calibration bin width (20).
        f3_threshold: Confidence at or above which a guess implies an attitude (50).
        clock: ``"ts"``: "before"/"at" compare timestamps (the reference); ``"seq"``: compare
            the probe's ``after_seq`` with event ``seq``, timestamps where ``after_seq`` is 0.
            Native logs always use ``"seq"`` (their timestamps have millisecond resolution,
            so a probe and the event it follows can share one).
    """

    name: str
    repair: Literal["reference", "tolerant"]
    roles: Literal["reference", "rules"]
    f1_targets: Literal["named", "alive"]
    f3_order: Literal["key", "time"]
    f3_attitude: Literal["exact", "folded"]
    f4_alive: Literal["tally", "events"]
    f4_answers: Literal["stored", "usable"]
    f4_mafia_label: Literal["exact", "normalised"]
    f4_failed_votes: Literal["count", "skip"] = "count"
    names: Literal["exact", "resolved"] = "exact"
    reparse_repaired: bool = False
    f4_transcript: Literal["reference", "corrected"] = "reference"
    calib_width: int = BIN_WIDTH
    f3_threshold: float = 50.0
    clock: Literal["ts", "seq"] = "ts"

    def with_(self, **changes: Any) -> Method:
        """A copy with some options changed (for measuring one difference at a time)."""
        return replace(self, **changes)


MAFIASCOPE = Method(
    name="mafiascope",
    repair="reference",
    roles="reference",
    f1_targets="named",
    f3_order="key",
    f3_attitude="exact",
    f4_alive="tally",
    f4_answers="stored",
    f4_mafia_label="exact",
)
"""Reproduces MafiaScope's published analysis exactly (every "exact reading")."""

DEFAULT = Method(
    name="default",
    repair="tolerant",
    roles="rules",
    f1_targets="alive",
    f3_order="time",
    f3_attitude="folded",
    f4_alive="events",
    f4_answers="usable",
    f4_mafia_label="normalised",
    f4_failed_votes="skip",
    names="resolved",
    reparse_repaired=True,
    f4_transcript="corrected",
    clock="seq",
)
"""mafialab's method: the same definitions with the reference's defects corrected
(``docs/metrics.md`` lists every difference and its measured effect)."""

METHODS = {"default": DEFAULT, "mafiascope": MAFIASCOPE}


def get_method(name: str) -> Method:
    """The preset called ``name``.

    Raises:
        ValueError: If ``name`` is not ``default`` or ``mafiascope``.
    """
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"method: unknown method {name!r} (known: {', '.join(METHODS)})") from None


# ── answers ────────────────────────────────────────────────────────────────────


def answer(p: Probe, method: Method, names: Sequence[str] = ()) -> Any:
    """The answer the metrics use: the stored parse, else the raw text re-parsed (or ``None``).

    With ``method.reparse_repaired`` a stored parse that needed repair is replaced by the
    method's own re-parse of the raw text when that succeeds. With ``method.names ==
    "resolved"`` and the roster ``names`` given, every ``player`` field of the answer's items
    (and of ``toward_me`` items) is replaced by the roster name it resolves to (unchanged
    when it resolves to none).
    """
    fn = repair_json_reference if method.repair == "reference" else repair_json
    value: Any
    if p.parsed is not None:
        value = p.parsed
        if method.reparse_repaired and p.repaired:
            again, ok = fn(p.raw)
            if ok and again is not None:
                value = again
    else:
        value, ok = fn(p.raw)
        if not ok:
            return None
    if method.names == "resolved" and names:
        value = _resolve_players(value, list(names))
    return value


def _resolve_players(value: Any, names: list[str]) -> Any:
    def fix(items: Any) -> Any:
        if not isinstance(items, list):
            return items
        out = []
        for x in items:
            if isinstance(x, dict) and isinstance(x.get("player"), str) and x["player"] not in names:
                hit = resolve_name(x["player"], names).name
                x = {**x, "player": hit} if hit else x
            out.append(x)
        return out

    if isinstance(value, dict) and isinstance(value.get("toward_me"), list):
        return {**value, "toward_me": fix(value["toward_me"])}
    return fix(value)


def vocabulary(game: GameData, method: Method) -> RoleVocabulary:
    """The role vocabulary for ``game`` under ``method``."""
    if game.source == "mafiascope":
        if method.roles == "reference":
            return RoleVocabulary.reference()
        return RoleVocabulary.from_rules(game.rules)
    return RoleVocabulary.from_rules(game.rules)


def _use_seq(game: GameData, method: Method) -> bool:
    return method.clock == "seq" or game.source != "mafiascope"


def _alive_at(game: GameData, p: Probe, method: Method) -> set[str]:
    """Players alive when ``p`` was asked (deaths at or before its time)."""
    dead = set()
    use_seq = _use_seq(game, method) and p.after_seq > 0
    for ts, seq, name in game.deaths:
        if not use_seq and p.ts is not None and ts is not None:
            if ts <= p.ts:
                dead.add(name)
        elif seq <= p.after_seq:
            dead.add(name)
    return set(game.names) - dead


# ── F1 / F2 ────────────────────────────────────────────────────────────────────

# per-round F1 vector layout
F1_FIELDS = (
    "acc_hits",
    "acc_n",
    "acc_chance_sum",
    "acc_chance_n",
    "unk_hits",
    "unk_n",
    "recall_hits",
    "recall_n",
    "recall_chance_sum",
    "recall_chance_n",
)


def first_order(
    game: GameData, method: Method, observers: Collection[str] | None = None
) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """F1 per-round statistics and F2 calibration statistics of one game.

    F1 (README "F1 first-order, per round"): observers are probed players not on the hidden
    team; each recognised guess about another player in a usable ``role_assessment`` (a list
    of objects) is an observation. Committed accuracy counts non-Unknown guesses equal to
    the target's true role; its chance averages, over committed guesses, the share of alive
    others holding the target's true role. Unknown rate: Unknown guesses over all recognised
    guesses. Recall: among guesses about hidden-team targets, those naming a hidden-team role;
    its chance averages alive hidden-team / alive others.

    F2 (README "F2 calibration"): one ``(confidence, correct)`` per committed guess with a
    confidence in [0, 100], in bins of ``method.calib_width`` (100 folds into the top bin).

    Args:
        game: The game.
        method: Reading of the definitions.
        observers: Only these observers' answers (names; e.g. the seats one model played);
            ``None``: every observer.

    Returns:
        ``(per_round, calib)``: ``per_round[r]`` is a vector laid out as :data:`F1_FIELDS`;
        ``calib`` is ``[hits, n, confidence sum] * N_BINS + [brier sum, n]``.
    """
    import numpy as np

    vocab = vocabulary(game, method)
    per_round: dict[int, np.ndarray] = {}
    calib = np.zeros(calibration_size(method))
    for p in game.probes:
        if p.probe_id != "role_assessment":
            continue
        ans = answer(p, method, game.names)
        if not isinstance(ans, list):
            continue
        obs = p.player
        if obs in game.mafia or obs not in game.role or (observers is not None and obs not in observers):
            continue
        score_assessment(game, p, ans, method, vocab, per_round.setdefault(p.round, np.zeros(len(F1_FIELDS))), calib)
    # a round exists once it has a recognised guess (answers without one add no row)
    return {r: v for r, v in per_round.items() if v[5] > 0}, calib


def calibration_size(method: Method) -> int:
    """Length of an F2 calibration vector under ``method``: ``[hits, n, confidence sum] * bins + [brier sum, n]``."""
    return 3 * (100 // method.calib_width) + 2


def score_assessment(
    game: GameData,
    p: Probe,
    ans: list[Any],
    method: Method,
    vocab: RoleVocabulary,
    f1: np.ndarray,
    calib: np.ndarray,
) -> None:
    """Add one ``role_assessment`` answer's F1 and F2 observations to ``f1`` and ``calib``.

    The per-answer scoring of :func:`first_order` (which sums it over a game's answers) and
    of :func:`mafialab.analysis._steps.step_metrics` (which keeps it per answer): each
    recognised guess (:meth:`RoleVocabulary.normalise` not ``None``) about another player of
    the roster (``method.f1_targets == "alive"``: alive at the probe's time) is one
    observation; committed = not :data:`UNKNOWN`; a committed guess is correct when it is the
    target's true role; recall counts guesses about hidden-team targets naming a hidden-team
    role. The observer's own team is not checked here (F1 leaves hidden-team observers out
    when it pools).

    Args:
        game: The game.
        p: The answer's probe record (its player is the observer; its time decides who is alive).
        ans: The answer as :func:`answer` reads it (a list).
        method: Reading of the definitions.
        vocab: :func:`vocabulary` of ``game`` under ``method``.
        f1: Vector laid out as :data:`F1_FIELDS`, added to in place.
        calib: Vector of :func:`calibration_size` entries, added to in place.
    """
    nb = 100 // method.calib_width
    obs = p.player
    alive = _alive_at(game, p, method)
    others = [x for x in alive if x != obs]
    n_others = len(others)
    n_mafia = sum(1 for x in others if x in game.mafia)
    v = f1
    for item in ans:
        if not isinstance(item, dict):
            continue
        tgt = item.get("player")
        if not isinstance(tgt, str) or tgt == obs or tgt not in game.role:
            continue
        if method.f1_targets == "alive" and tgt not in alive:
            continue
        guess = vocab.normalise(item.get("guessed_role"))
        if guess is None:
            continue
        true = game.role[tgt]
        v[5] += 1
        if guess == UNKNOWN:
            v[4] += 1
        else:
            ok = guess == true
            v[0] += ok
            v[1] += 1
            if n_others:
                v[2] += sum(1 for x in others if game.role[x] == true) / n_others
                v[3] += 1
            c = to_float(item.get("confidence", -1))
            if c is not None and 0 <= c <= 100:
                b = min(int(c // method.calib_width), nb - 1)
                calib[3 * b] += ok
                calib[3 * b + 1] += 1
                calib[3 * b + 2] += c
                calib[3 * nb] += (c / 100.0 - ok) ** 2
                calib[3 * nb + 1] += 1
        if tgt in game.mafia:
            v[7] += 1
            v[6] += vocab.is_mafia(guess)
            if n_others:
                v[8] += n_mafia / n_others
                v[9] += 1


# ── F3 ─────────────────────────────────────────────────────────────────────────

SIDES = ("all", "innocents", "mafia")
# per-side F3 vector: n, correct, actual trusts/neutral/suspects, predicted trusts/neutral/suspects
F3_FIELDS = (
    "n",
    "correct",
    "act_trusts",
    "act_neutral",
    "act_suspects",
    "pred_trusts",
    "pred_neutral",
    "pred_suspects",
)


def attitude(guess: str, conf: float | None, vocab: RoleVocabulary, method: Method) -> str:
    """F3's actual attitude of B toward A from B's role guess about A and its confidence.

    README "F3 second-order": a hidden-team guess with confidence >= ``method.f3_threshold``
    (50) -> ``suspects``; any other recognised role (not :data:`UNKNOWN`) at or above it ->
    ``trusts``; otherwise (Unknown, lower or no confidence) ``neutral``.
    """
    c = 0.0 if conf is None else conf
    if c >= method.f3_threshold and vocab.is_mafia(guess):
        return "suspects"
    if c >= method.f3_threshold and guess != UNKNOWN:
        return "trusts"
    return "neutral"


def assessment_beliefs(game: GameData, ans: Any, vocab: RoleVocabulary) -> dict[str, tuple[str, float | None]]:
    """What one ``role_assessment`` answer says about each player, as F3 reads it.

    ``{player: (guess, confidence)}`` for every item naming a player of the roster with a
    recognised guess (:meth:`RoleVocabulary.normalise`); the confidence as
    :func:`~mafialab.analysis._parse.to_float` reads it (``None``: missing or not a number,
    which :func:`attitude` reads as 0). Empty when ``ans`` is not a list.
    """
    beliefs: dict[str, tuple[str, float | None]] = {}
    if not isinstance(ans, list):
        return beliefs
    for item in ans:
        if isinstance(item, dict) and isinstance(item.get("player"), str) and item["player"] in game.role:
            g = vocab.normalise(item.get("guessed_role"))
            if g:
                beliefs[item["player"]] = (g, to_float(item.get("confidence")))
    return beliefs


def social_predictions(game: GameData, p: Probe, ans: Any, method: Method) -> list[tuple[str, str]]:
    """The F3 predictions of one ``social_map`` answer: ``(B, attitude)`` per counted item.

    README "F3 second-order": each ``toward_me`` item "B trusts/neutral/suspects me (A)" with
    B another player of the roster and an attitude of :data:`ATTITUDES` (``method.f3_attitude
    == "folded"``: lower-cased and stripped first); hidden-team pairs (A and B both on the
    hidden team) are left out. Empty when ``ans`` is not an object with a ``toward_me`` list.
    """
    if not isinstance(ans, dict) or not isinstance(ans.get("toward_me"), list):
        return []
    a = p.player
    out = []
    for item in ans["toward_me"]:
        if not isinstance(item, dict):
            continue
        b = item.get("player")
        att = item.get("attitude")
        if method.f3_attitude == "folded" and isinstance(att, str):
            att = att.strip().lower()
        if not isinstance(b, str) or b not in game.role or b == a or att not in ATTITUDES:
            continue
        if a in game.mafia and b in game.mafia:
            continue
        out.append((b, att))
    return out


def second_order(game: GameData, method: Method) -> dict[str, np.ndarray]:
    """F3 second-order statistics of one game, per predictor side.

    README "F3 second-order": each ``social_map`` item "B trusts/neutral/suspects me (A)" is
    a prediction (:func:`social_predictions`); the actual attitude is B's latest usable
    ``role_assessment`` that contains an item for A, at or before A's probe (order:
    ``method.f3_order``), mapped by :func:`attitude` (hidden-team guess with confidence >= 50
    -> suspects, town-role guess with confidence >= 50 -> trusts, else neutral). Pairs
    without such an assessment are excluded; hidden-team pairs are excluded.

    Returns:
        ``{"all" | "innocents" | "mafia": vector laid out as F3_FIELDS}``.
    """
    import numpy as np

    vocab = vocabulary(game, method)
    # B -> [(order key, {A: (guess, conf)})]
    assessments: dict[str, list[tuple[tuple[Any, ...], dict[str, tuple[str, float | None]]]]] = {}
    for p in game.probes:
        if p.probe_id != "role_assessment":
            continue
        ans = answer(p, method, game.names)
        if not isinstance(ans, list):
            continue
        beliefs = assessment_beliefs(game, ans, vocab)
        assessments.setdefault(p.player, []).append((_order(p, method, _use_seq(game, method)), beliefs))
    for lst in assessments.values():
        lst.sort(key=lambda x: x[0])
    out = {s: np.zeros(len(F3_FIELDS)) for s in SIDES}
    for p in game.probes:
        if p.probe_id != "social_map":
            continue
        a = p.player
        key = _order(p, method, _use_seq(game, method))
        side = "mafia" if a in game.mafia else "innocents"
        for b, att in social_predictions(game, p, answer(p, method, game.names), method):
            cand = None
            for k, beliefs in assessments.get(b, []):
                if k > key:
                    break
                if a in beliefs:
                    cand = beliefs[a]
            if cand is None:
                continue
            actual = attitude(cand[0], cand[1], vocab, method)
            for s in ("all", side):
                v = out[s]
                v[0] += 1
                v[1] += att == actual
                v[2 + ATTITUDES.index(actual)] += 1
                v[5 + ATTITUDES.index(att)] += 1
    return out


def _order(p: Probe, method: Method, use_seq: bool) -> tuple[Any, ...]:
    if method.f3_order == "key":
        return (p.round, p.msg, p.position)
    ts = p.ts if p.ts is not None else float("-inf")
    if use_seq and p.after_seq > 0:
        return (p.after_seq, ts, p.line)
    return (ts, p.after_seq, p.line)


# ── F4 ─────────────────────────────────────────────────────────────────────────

F4_METRICS = ("top1", "committed_set", "post_vote_top1")
VOTER_SIDES = ("innocents", "mafia")


def _before(p: Probe, ts: float | None, seq: int, use_seq: bool) -> bool:
    if use_seq and p.after_seq > 0:
        return p.after_seq < seq
    if p.ts is not None and ts is not None:
        return p.ts < ts
    return p.after_seq < seq


def _ranked(ans: Any, others: list[str]) -> list[Any]:
    if not isinstance(ans, list):
        return []
    return [x.get("player") for x in ans if isinstance(x, dict) and x.get("player") in others]


@dataclass(frozen=True)
class VoteUnit:
    """One F4 unit: a counted day vote and what the probes predicted for it.

    Attributes:
        round: Round of the vote.
        tally_seq: ``seq`` of the tally the vote belongs to.
        voter: Voter's name.
        target: Vote target's name.
        side: ``"innocents"`` or ``"mafia"`` (the voter's true side).
        others: Alive other players (sorted), the candidates of every predictor.
        vote_seq: ``seq`` of the voter's own vote event (a failed source turn counts under
            ``f4_failed_votes="count"``).
        vote_index: Public message index of the voter's own vote (``None``: not a message).
        top1: First alive other of the last usable ``suspicion_ranking`` before the vote.
        committed: Alive others the last usable ``role_assessment`` labels hidden team
            (``None``: no such answer, or an empty set).
        post_top1: The same as ``top1`` with the tally as the anchor.
    """

    round: int
    tally_seq: int
    voter: str
    target: str
    side: str
    others: tuple[str, ...]
    vote_seq: int
    vote_index: int | None
    top1: str | None
    committed: frozenset[str] | None
    post_top1: str | None


@dataclass(frozen=True)
class CountedVote:
    """One counted day vote for a living player whose voter's own vote event exists.

    Attributes:
        round: Round of the vote.
        tally_ts: Clock time of the tally (``None`` when the log has none).
        tally_seq: ``seq`` of the tally event.
        voter: Voter's name.
        target: Counted target's name (alive at the tally).
        alive: Players alive at the tally, the voter included (``method.f4_alive`` decides).
        vote_ts: Clock time of the voter's own vote event (``None`` when the log has none).
        vote_seq: ``seq`` of that event (a failed source turn under ``f4_failed_votes="count"``).
        vote_index: Public message index of the vote (``None``: not a message).
    """

    round: int
    tally_ts: float | None
    tally_seq: int
    voter: str
    target: str
    alive: frozenset[str]
    vote_ts: float | None
    vote_seq: int
    vote_index: int | None


def counted_votes(game: GameData, method: Method) -> Iterator[CountedVote]:
    """The day votes F4 vote coupling and the quadrant table count, in tally then voter order.

    README "F4 vote coupling": a vote counts when its target is alive at the tally and the
    voter's own vote event exists; under ``f4_failed_votes="count"`` the voter's last vote
    record counts even when its source turn failed (as the reference does).
    """
    for rnd, tally_ts, tally_seq, votes in sorted(game.tallies, key=lambda t: (t[1] is None, t[1] or 0, t[2])):
        if method.f4_alive == "tally":
            alive = frozenset(votes)
        else:
            alive = frozenset(game.names) - {n for _, seq, n in game.deaths if seq < tally_seq}
        for voter, target in sorted(votes.items()):
            if target not in alive:
                continue
            own = game.votes.get((rnd, voter))
            index = game.vote_index.get((rnd, voter))
            if method.f4_failed_votes == "count" and (rnd, voter) in game.failed_votes:
                failed = game.failed_votes[(rnd, voter)]
                if own is None or failed[1] > own[1]:
                    own, index = failed, game.failed_vote_index.get((rnd, voter))
            if own is None:
                continue
            yield CountedVote(rnd, tally_ts, tally_seq, voter, target, alive, own[0], own[1], index)


def committed_set(ra: Any, method: Method, vocab: RoleVocabulary, others: set[str]) -> frozenset[str] | None:
    """The alive others a ``role_assessment`` answer labels hidden team (F4 "committed set").

    ``method.f4_mafia_label == "exact"`` takes the literal ``"Mafia"`` (the reference);
    otherwise any role the rule set's vocabulary puts on the hidden team. Returns ``None``
    when ``ra`` is not a list of assessments; an empty set when it labels nobody alive.
    """
    if not isinstance(ra, list):
        return None
    if method.f4_mafia_label == "exact":
        label = {x.get("player") for x in ra if isinstance(x, dict) and x.get("guessed_role") == "Mafia"}
    else:
        label = {
            x.get("player")
            for x in ra
            if isinstance(x, dict) and vocab.is_mafia(vocab.normalise(x.get("guessed_role")))
        }
    return frozenset(n for n in label if n in others)


def vote_units(game: GameData, method: Method) -> list[VoteUnit]:
    """The F4 units of one game (README "F4 vote coupling"), in tally then voter order.

    One unit per day vote whose target is alive and whose voter's own vote event exists;
    the probe predictions are filled in where the voter has a usable answer.
    """
    vocab = vocabulary(game, method)
    by_player: dict[str, list[Probe]] = {}
    for p in game.probes:
        by_player.setdefault(p.player, []).append(p)

    def usable(p: Probe, probe_id: str, others: list[str]) -> Any:
        if method.f4_answers == "stored":
            return p.parsed if p.parse_ok else _NONE
        ans = answer(p, method, game.names)
        if probe_id == "suspicion_ranking":
            return ans if _ranked(ans, others) else _NONE
        return ans if isinstance(ans, list) else _NONE

    def last(player: str, probe_id: str, ts: float | None, seq: int, others: list[str]) -> Any:
        found: Any = _NONE
        for p in by_player.get(player, []):
            if p.probe_id == probe_id and _before(p, ts, seq, _use_seq(game, method)):
                a = usable(p, probe_id, others)
                if a is not _NONE:
                    found = a
        return found

    units: list[VoteUnit] = []
    for v in counted_votes(game, method):
        others = sorted(v.alive - {v.voter})
        if not others:
            continue
        sr = last(v.voter, "suspicion_ranking", v.vote_ts, v.vote_seq, others)
        ranked = _ranked(sr, others) if sr is not _NONE and sr else []
        ra = last(v.voter, "role_assessment", v.vote_ts, v.vote_seq, others)
        mset = committed_set(ra, method, vocab, set(others))
        post = last(v.voter, "suspicion_ranking", v.tally_ts, v.tally_seq, others)
        post_ranked = _ranked(post, others) if post is not _NONE and post else []
        units.append(
            VoteUnit(
                round=v.round,
                tally_seq=v.tally_seq,
                voter=v.voter,
                target=v.target,
                side="mafia" if v.voter in game.mafia else "innocents",
                others=tuple(others),
                vote_seq=v.vote_seq,
                vote_index=v.vote_index,
                top1=ranked[0] if ranked else None,
                committed=mset or None,
                post_top1=post_ranked[0] if post_ranked else None,
            )
        )
    return units


def vote_coupling(game: GameData, method: Method) -> dict[tuple[str, str], np.ndarray]:
    """F4 vote-coupling statistics of one game.

    README "F4 vote coupling": one unit per day vote whose target is alive and whose voter's
    own vote event exists (:func:`vote_units`). Top-1: the vote equals the first alive other
    in the voter's last ``suspicion_ranking`` before its own vote (chance 1/(alive - 1));
    committed set: the vote lands among the alive others the voter's last ``role_assessment``
    before its vote labels Mafia (an empty set is not counted; chance |set|/(alive - 1));
    post-vote top-1: the last ranking before the tally.

    Mission games (approve/reject team votes, see :func:`_team_vote_coupling`) count in the
    same three measures.

    Returns:
        ``{(voter side, metric): [hits, n, chance sum]}``.
    """
    import numpy as np

    out = {(s, m): np.zeros(3) for s in VOTER_SIDES for m in F4_METRICS}
    _team_vote_coupling(game, method, out)
    for u in vote_units(game, method):
        chance = 1 / len(u.others)
        if u.top1 is not None:
            out[(u.side, "top1")] += (u.top1 == u.target, 1, chance)
        if u.committed:
            out[(u.side, "committed_set")] += (u.target in u.committed, 1, len(u.committed) / len(u.others))
        if u.post_top1 is not None:
            out[(u.side, "post_vote_top1")] += (u.post_top1 == u.target, 1, chance)
    return out


_NONE: Any = object()


def _team_vote_coupling(game: GameData, method: Method, out: dict[tuple[str, str], np.ndarray]) -> None:
    """F4 on a mission game's team votes, added to ``out``.

    A team vote is coupled with a belief when it rejects a team holding the voter's suspect and
    approves a team without one: top-1 (the first other player of the voter's last usable
    ``suspicion_ranking`` before its vote), committed set (the others its last
    ``role_assessment`` labels hidden team; an empty set is not counted), post-vote top-1 (the
    last ranking before the tally). Chance is 1/2 (a coin-flip vote). The voter itself is
    left out of the team it judges.
    """
    if not game.team_votes:
        return
    vocab = vocabulary(game, method)
    use_seq = _use_seq(game, method)

    def last(voter: str, probe_id: str, ts: float | None, seq: int, others: list[str]) -> Any:
        found: Any = None
        for p in game.probes:
            if p.player == voter and p.probe_id == probe_id and _before(p, ts, seq, use_seq):
                a = answer(p, method, game.names)
                if (probe_id == "suspicion_ranking" and _ranked(a, others)) or (
                    probe_id == "role_assessment" and isinstance(a, list)
                ):
                    found = a
        return found

    for tv in game.team_votes:
        others = sorted(set(game.names) - {tv.voter})
        side = "mafia" if tv.voter in game.mafia else "innocents"
        rejects = tv.choice == "reject"
        sr = last(tv.voter, "suspicion_ranking", tv.ts, tv.seq, others)
        if sr:
            out[(side, "top1")] += ((_ranked(sr, others)[0] in tv.members) == rejects, 1, 0.5)
        mset = committed_set(last(tv.voter, "role_assessment", tv.ts, tv.seq, others), method, vocab, set(others))
        if mset:
            out[(side, "committed_set")] += (bool(mset & tv.members) == rejects, 1, 0.5)
        post = last(tv.voter, "suspicion_ranking", tv.tally_ts, tv.tally_seq, others)
        if post:
            out[(side, "post_vote_top1")] += ((_ranked(post, others)[0] in tv.members) == rejects, 1, 0.5)


# ── counts ─────────────────────────────────────────────────────────────────────


def parse_counts(game: GameData, method: Method) -> tuple[int, int]:
    """``(probe records, parsed)``: records whose answer (stored or re-parsed) is not null."""
    return len(game.probes), sum(1 for p in game.probes if answer(p, method, game.names) is not None)
