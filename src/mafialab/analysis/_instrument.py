"""The instrument's own cost and loss: model calls, tokens and the fate of every probe answer.

Per game and pooled: game calls and probe calls (and the multiplier, MafiaScope's
``call_multiplier`` = (probe calls + game calls) / game calls, ``src/metrics_lib.py``
``probe_cost``), tokens, probe answers parsed as given / after repair / unusable, why
answers were lost, and per probe id the answers lost because none came (``probe_failures``).
Sources: ``calls.jsonl`` and ``probes.jsonl`` for our games; for games without ``calls.jsonl``
(imported games, scripted agents) the agents' turns recorded in ``game.jsonl`` are the game
calls and the probe records are the probe calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from mafialab._jsonrepair import is_cut_off
from mafialab.analysis._data import GameData, Probe
from mafialab.analysis._metrics import Method, answer
from mafialab.analysis._quality import game_quality, pooled_quality
from mafialab.record import CALLS_FILE

LOSS_CAUSES = ("transport_error", "empty", "truncated", "unparseable", "wrong_shape", "schema_failed")
"""Why a probe answer was unusable, in the order the checks are made (first match wins)."""

NOT_GAME_CALLS = frozenset({"probe", "judge", "preflight"})
"""``calls.jsonl`` purposes that are not game decisions."""

_LIST_PROBES = ("role_assessment", "suspicion_ranking")


def _informative(p: Probe, value: Any) -> bool:
    """Whether a parsed answer has its probe's shape and carries information (see :func:`usable`; schema aside)."""
    if p.probe_id in _LIST_PROBES:
        return isinstance(value, list) and any(isinstance(x, dict) for x in value)
    if p.probe_id == "social_map":
        return (
            isinstance(value, dict)
            and isinstance(value.get("toward_me"), list)
            and any(isinstance(x, dict) for x in value["toward_me"])
        )
    return not (isinstance(value, list | dict | str) and not value)  # an empty list, object or string says nothing


def usable(p: Probe, method: Method) -> bool:
    """Whether a probe answer is usable: it parses and carries information.

    The one definition of "usable" in mafialab: the report's ``coverage.answers`` ("usable
    answers") and its instrument table (``raw`` + ``repaired``), the viewer's per-game
    ``usable`` count and its per-step series all count with it. An answer is usable when
    :func:`~mafialab.analysis._metrics.answer` reads a value from it (the stored parse, else
    the raw text re-parsed with ``method``'s repair rule) and that value carries information
    of the probe's shape: ``role_assessment`` and ``suspicion_ranking`` a list holding at
    least one object, ``social_map`` an object whose ``toward_me`` list holds at least one
    object, any other probe a value that is not an empty list, object or string; and, for
    every probe, the record's own schema check did not fail (``schema_ok`` is not ``False``:
    a suspicion score of -2 where the schema allows 0-100 is not usable). An empty ranking
    (``[]``) parses but is not usable.

    Args:
        p: One probe answer.
        method: The reading (its repair rule re-parses answers stored without a parse).
    """
    value = answer(p, method)
    return value is not None and _informative(p, value) and p.schema_ok is not False


def probe_fate(p: Probe, method: Method) -> str:
    """What became of one probe answer: ``raw``, ``repaired`` or a cause in :data:`LOSS_CAUSES`.

    ``raw``: the answer text is JSON as given (whitespace aside) of the expected shape;
    ``repaired``: usable only after repair (fences, trailing prose, a cut-off end closed:
    ``method.repair``). Loss causes: ``transport_error`` (no answer: the call failed, or an
    imported answer is the source's ``ERROR`` string), ``empty`` (the model answered
    nothing), ``truncated`` (cut off at the token cap: the backend said so (``length``), or the
    text opens a JSON value that never closes, and no repair recovered it), ``unparseable``,
    ``wrong_shape`` (JSON, but not usable: not the probe's shape or empty, :func:`usable`;
    ``role_assessment`` and ``suspicion_ranking`` need a non-empty list of objects,
    ``social_map`` an object with a non-empty ``toward_me`` list, other probes a non-empty
    value), ``schema_failed`` (of the probe's shape, but the record says it failed the probe's JSON
    schema: ``schema_ok`` false). ``raw`` and ``repaired`` are exactly the :func:`usable` answers.
    """
    text = p.raw.strip()
    value = answer(p, method)
    if value is not None and _informative(p, value):
        if p.schema_ok is False:
            return "schema_failed"
        try:
            json.loads(text)
        except ValueError:
            return "repaired"
        return "repaired" if p.repaired else "raw"
    if text.startswith("ERROR") or (not text and p.error is not None and p.error != "empty answer"):
        return "transport_error"
    if not text:
        return "empty"
    if value is not None:
        return "wrong_shape"
    if (p.error is not None and "(length)" in p.error) or is_cut_off(text):
        return "truncated"
    return "unparseable"


def _tokens(prompt: int, completion: int, recorded: bool) -> dict[str, int] | None:
    return {"prompt": prompt, "completion": completion} if recorded else None


def game_instrument(game: GameData, method: Method) -> dict[str, Any]:
    """The instrument's cost and loss in one game (shape: ``docs/report-format.md``).

    Returns:
        ``{"game_id", "calls_source", "game_calls", "probe_calls", "multiplier",
        "tokens": {"game", "probe"}, "probe_answers": {"records", "raw", "repaired",
        "unusable"}, "lost": {cause: count}, "probe_failures": {probe id: count}, "quality":
        {...}}`` (``quality``: :func:`~mafialab.analysis._quality.game_quality`);
        ``multiplier`` is ``None`` without game calls, a token block is ``None`` when the logs
        record no tokens for it; ``probe_failures`` counts, per probe id (sorted; only ids
        with a failure), the answers lost because none came (``transport_error``: the call
        failed or raised, or the probe task failed and left an error record in its place).
    """
    fates = {k: 0 for k in ("raw", "repaired", *LOSS_CAUSES)}
    failures: dict[str, int] = {}
    for p in game.probes:
        fate = probe_fate(p, method)
        fates[fate] += 1
        if fate == "transport_error":
            failures[p.probe_id] = failures.get(p.probe_id, 0) + 1
    if game.calls is not None:
        game_calls = [c for c in game.calls if c.purpose not in NOT_GAME_CALLS]
        probe_calls = [c for c in game.calls if c.purpose == "probe"]
        n_game, n_probe = len(game_calls), len(probe_calls)
        if not probe_calls and game.probes:  # probes of scripted agents make no model call
            n_probe = len(game.probes)
        gp = sum(c.prompt_tokens for c in game_calls)
        gc = sum(c.completion_tokens for c in game_calls)
        pp = sum(c.prompt_tokens for c in probe_calls)
        pc = sum(c.completion_tokens for c in probe_calls)
        tokens = {"game": _tokens(gp, gc, gp + gc > 0), "probe": _tokens(pp, pc, pp + pc > 0)}
        source = CALLS_FILE  # the label the report prints for where the counts come from
    else:
        n_game, n_probe = game.agent_turns, len(game.probes)
        pp = sum(p.prompt_tokens for p in game.probes)
        pc = sum(p.completion_tokens for p in game.probes)
        tokens = {"game": None, "probe": _tokens(pp, pc, pp + pc > 0)}
        source = "game log"
    unusable = sum(fates[c] for c in LOSS_CAUSES)
    return {
        "game_id": game.game_id,
        "calls_source": source,
        "game_calls": n_game,
        "probe_calls": n_probe,
        "multiplier": (n_game + n_probe) / n_game if n_game else None,
        "tokens": tokens,
        "probe_answers": {
            "records": len(game.probes),
            "raw": fates["raw"],
            "repaired": fates["repaired"],
            "unusable": unusable,
        },
        "lost": {c: fates[c] for c in LOSS_CAUSES},
        "probe_failures": dict(sorted(failures.items())),
        "quality": game_quality(game, method),
    }


def _add_tokens(a: dict[str, int] | None, b: dict[str, int] | None) -> dict[str, int] | None:
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return a
    return {k: a[k] + b[k] for k in a}


def instrument(games: Sequence[GameData], method: Method) -> dict[str, Any]:
    """Per-game :func:`game_instrument` rows and their pooled sums.

    Pooled counts are sums over games; the pooled ``multiplier`` is (all probe calls + all
    game calls) / all game calls; a pooled token block sums the games that record tokens
    (``tokens_games`` says how many do).

    Returns:
        ``{"pooled": {...same keys as a game row, without game_id and calls_source, plus
        "games" and "tokens_games"}, "games": [per-game rows]}``.
    """
    return pooled_instrument([game_instrument(g, method) for g in games])


def pooled_instrument(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """:func:`instrument` from the games' :func:`game_instrument` rows (kept, in order, as its ``games``)."""
    rows = list(rows)
    n_game = sum(r["game_calls"] for r in rows)
    n_probe = sum(r["probe_calls"] for r in rows)
    tokens: dict[str, Any] = {"game": None, "probe": None}
    for r in rows:
        for k in tokens:
            tokens[k] = _add_tokens(tokens[k], r["tokens"][k])
    pooled = {
        "games": len(rows),
        "game_calls": n_game,
        "probe_calls": n_probe,
        "multiplier": (n_game + n_probe) / n_game if n_game else None,
        "tokens": tokens,
        "tokens_games": sum(1 for r in rows if r["tokens"]["game"] is not None or r["tokens"]["probe"] is not None),
        "probe_answers": {
            k: sum(r["probe_answers"][k] for r in rows) for k in ("records", "raw", "repaired", "unusable")
        },
        "lost": {c: sum(r["lost"][c] for r in rows) for c in LOSS_CAUSES},
        "probe_failures": _sum_counts(r["probe_failures"] for r in rows),
        "quality": pooled_quality(r.get("quality") for r in rows),
    }
    return {"pooled": pooled, "games": rows}


def _sum_counts(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    """Sums per key of several ``{key: count}`` maps, sorted by key."""
    total: dict[str, int] = {}
    for c in counts:
        for k, n in c.items():
            total[k] = total.get(k, 0) + n
    return dict(sorted(total.items()))
