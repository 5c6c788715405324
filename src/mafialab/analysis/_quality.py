"""Quality signals of one game and of a corpus, per model: copied and junk speeches, constant answers, off-roster names.

The definitions are :mod:`mafialab._quality`'s (one place for every user); this module counts
them in a game's logs (``calls.jsonl`` through :class:`~mafialab.analysis._data.GameData`,
probe answers as the metrics read them) and pools games. The counts travel in the instrument
row of each game (:func:`~mafialab.analysis._instrument.game_instrument`, key ``quality``),
so ``report``, the viewer, ``play`` and seasons show the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mafialab._quality import COPY_MIN_WORDS, answer_value, common_value, is_constant, is_junk, off_roster
from mafialab._quality import NONE_FIRED as NONE_FIRED
from mafialab._words import count
from mafialab.analysis._data import GameData, Probe
from mafialab.analysis._metrics import Method, answer
from mafialab.analysis._report_model import QualityCounts

_MODEL_KEYS = tuple(QualityCounts.model_fields)
"""The per-model counts, in report order (the fields of :class:`~mafialab.analysis._report_model.QualityCounts`)."""


def _empty_row() -> dict[str, Any]:
    """A model's row before any count: every :data:`_MODEL_KEYS` count 0, no answers."""
    return {**dict.fromkeys(_MODEL_KEYS, 0), "answers": {}}


def _model_of(game: GameData, name: str) -> str:
    return game.models.get(name) or game.agents.get(name) or "?"


def _players(value: Any) -> list[Any]:
    """The ``player`` fields of an answer's items (and of its ``toward_me`` items)."""
    items = value.get("toward_me") if isinstance(value, dict) else value
    if not isinstance(items, list):
        return []
    return [x["player"] for x in items if isinstance(x, dict) and "player" in x]


def _answered(p: Probe) -> bool:
    """Whether an answer came (a failed call or a source's ``ERROR`` string is no answer)."""
    text = p.raw.strip()
    return not text.startswith("ERROR") and not (not text and p.error is not None)


def game_quality(game: GameData, method: Method) -> dict[str, Any]:
    """The quality signals of one game, per model (shape: ``docs/report-format.md``, ``instrument…quality``).

    * copied speeches: decision answers with a text (speeches, vote statements, team chat)
      whose text holds a run of 8 or more words of the seat's own prompt outside the public
      transcript (``copied_words`` of ``calls.jsonl``; games without it count none);
    * junk speeches: public texts of the game log (speeches, intros, vote statements; failed
      imported turns and blank texts left out) that :func:`~mafialab._quality.is_junk` reads
      as markup or punctuation rather than words;
    * constant answers: per model and probe id, the answers that came (failed calls left out),
      compared as :func:`~mafialab._quality.answer_value` of the answer the metrics read (the
      raw text when none parses); one distinct value over 10 or more is constant;
    * off-roster names: ``player`` fields of probe answers and decision targets
      (``off_roster`` of ``calls.jsonl``) that name no seat of the game.

    Returns:
        ``{"speeches", "copied_speeches", "public_texts", "junk_speeches", "off_roster",
        "constant": [{"model", "probe_id", "answers", "value"}], "by_model": {model:
        {"speeches", "copied_speeches", "public_texts", "junk_speeches", "off_roster",
        "answers": {probe id: {"n", "value"}}}}}``; ``speeches`` counts the answers whose
        text was measured for copying, ``public_texts`` the public texts measured for junk;
        an ``answers`` entry's ``value`` is the one value of its answers, ``None`` when
        they vary.
    """
    by: dict[str, dict[str, Any]] = {}

    def row(model: str) -> dict[str, Any]:
        return by.setdefault(model, _empty_row())

    for c in game.calls or []:
        if not 0 <= c.seat < len(game.names):
            continue
        r = row(_model_of(game, game.names[c.seat]))
        if c.copied_words is not None:
            r["speeches"] += 1
            r["copied_speeches"] += c.copied_words > 0
        r["off_roster"] += c.off_roster
    for msg in game.messages:
        if msg.failed or not msg.text.strip():
            continue
        r = row(_model_of(game, msg.speaker))
        r["public_texts"] += 1
        r["junk_speeches"] += is_junk(msg.text)
    values: dict[tuple[str, str], list[str]] = {}
    for p in game.probes:
        if not _answered(p):
            continue
        model = _model_of(game, p.player)
        value = answer(p, method)
        r = row(model)
        r["off_roster"] += sum(off_roster(n, game.names) for n in _players(value))
        values.setdefault((model, p.probe_id), []).append(answer_value(p.raw if value is None else value))
    for (model, pid), vals in sorted(values.items()):
        one = vals[0] if len(set(vals)) == 1 else None
        by[model]["answers"][pid] = {"n": len(vals), "value": one}
    return _totals(by)


def _totals(by: dict[str, dict[str, Any]]) -> dict[str, Any]:
    by = dict(sorted(by.items()))
    flagged = [
        {"model": m, "probe_id": pid, "answers": a["n"], "value": a["value"]}
        for m, r in by.items()
        for pid, a in r["answers"].items()
        if is_constant(a["n"], a["value"])
    ]
    return {
        **{k: sum(r[k] for r in by.values()) for k in _MODEL_KEYS},
        "constant": flagged,
        "by_model": by,
    }


def pooled_quality(rows: Iterable[dict[str, Any] | None]) -> dict[str, Any]:
    """The quality signals of several games (their :func:`game_quality`), per model.

    Counts add up; a model's answers to a probe id are constant when every game's are the
    same one value and they number 10 or more together (:func:`~mafialab._quality.common_value`).
    ``None`` rows (summaries computed before the signals) are skipped.
    """
    by: dict[str, dict[str, Any]] = {}
    parts: dict[tuple[str, str], list[tuple[int, str | None]]] = {}
    for q in rows:
        if q is None:
            continue
        for m, r in q["by_model"].items():
            t = by.setdefault(m, _empty_row())
            for k in _MODEL_KEYS:
                t[k] += r.get(k, 0)
            for pid, a in r["answers"].items():
                parts.setdefault((m, pid), []).append((a["n"], a["value"]))
    for (m, pid), ps in sorted(parts.items()):
        by[m]["answers"][pid] = {"n": sum(n for n, _ in ps), "value": common_value(ps)}
    return _totals(by)


def quality_lines(q: dict[str, Any] | None, *, width: int = 60) -> list[str]:
    """One line per quality signal that fired in ``q`` (a :func:`game_quality` or pooled block), else none.

    E.g. ``"copied speeches: mock/echo 4 of 6 copy 8+ words of the seat's prompt"``,
    ``"junk speeches: mock/x 5 of 12 public texts are markup or punctuation, not words"``,
    ``"constant answers: mock/zero suspicion_ranking 12 answers, all []"``,
    ``"off-roster names: mock/x 3"``. Values longer than ``width`` characters are cut with "…".
    """
    if not q:
        return []
    out = []
    for m, r in q["by_model"].items():
        if r["copied_speeches"]:
            out.append(
                f"copied speeches: {m} {r['copied_speeches']} of {count(r['speeches'], 'text')} "
                f"copy {COPY_MIN_WORDS}+ words of the seat's own prompt"
            )
    for m, r in q["by_model"].items():
        if r.get("junk_speeches"):
            out.append(
                f"junk speeches: {m} {r['junk_speeches']} of {count(r['public_texts'], 'public text')} "
                "are markup or punctuation, not words"
            )
    for f in q["constant"]:
        v = str(f["value"])
        v = v if len(v) <= width else v[: width - 1] + "…"
        out.append(f"constant answers: {f['model']} {f['probe_id']} {count(f['answers'], 'answer')}, all {v}")
    for m, r in q["by_model"].items():
        if r["off_roster"]:
            out.append(f"off-roster names: {m} {count(r['off_roster'], 'name')} that are no seat of the game")
    return out
