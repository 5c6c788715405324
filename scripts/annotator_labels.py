"""Dump the rules annotator's output for every day message of some games (a before/after check).

Usage::

    PYTHONPATH=src python scripts/annotator_labels.py SRC [SRC ...] -o labels.jsonl [--summary s.json]

Each ``SRC`` is a MafiaScope folder (a corpus, a game, a bifurcation folder: imported into a
temporary folder first) or a folder of mafialab logs. Every folder directly under a MafiaScope
release (``ablation_demand``, ``corpus_v2``, ...) is read as its own source. One line per day
message: where it is (``source``, ``game_id``, ``round``, ``index``, ``seat``), whether it is
English (no Cyrillic letter), and what :meth:`RulesAnnotator.label_text` returned for it (target,
category, evidence, rule of every label). The summary (``--summary``) holds per source the
message count, the label counts by category and a SHA-256 of the source's lines, so labels of
data that must not be copied can be compared without its text (tests/beliefshift/
test_annotator_pack_rules.py). ``--speed`` prints messages per second of ``label_text`` over
all messages (best of three passes, the compiled patterns warmed up first).

Two dumps are compared with ``diff`` or ``--compare OTHER.jsonl`` (prints the count compared
and every difference; exit 1 when any).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from mafialab.beliefshift._annotate import RulesAnnotator, day_messages, game_context
from mafialab.record import GameLog, import_mafiascope, iter_game_dirs, read_game

_CYRILLIC = re.compile("[\u0400-\u04ff]")


def _is_log_dir(path: Path) -> bool:
    first = next((p for p in path.rglob("game.jsonl")), None)
    if first is None:
        return False
    with first.open(encoding="utf-8") as f:
        return '"game_start"' in f.readline()


def _sources(paths: list[Path], tmp: Path) -> list[tuple[str, list[GameLog]]]:
    """(source name, games) of every source under ``paths`` (MafiaScope folders imported)."""
    out: list[tuple[str, list[GameLog]]] = []
    for p in paths:
        subs = [p]
        if not (p / "game.jsonl").exists() and (p / "LICENSE").exists():  # a release: one source per folder
            subs = sorted(d for d in p.iterdir() if d.is_dir() and any(d.rglob("game.jsonl")))
        for d in subs:
            name = d.name
            logs = d
            if not _is_log_dir(d):
                logs = tmp / f"{len(out)}-{name}"
                import_mafiascope(d, logs)
            games = sorted((read_game(g) for g in iter_game_dirs(logs)), key=lambda g: str(g.path))
            out.append((name, games))
    return out


def _messages(sources: list[tuple[str, list[GameLog]]]) -> list[tuple[dict, tuple]]:
    """(record without labels, label_text arguments) of every day message, in a stable order."""
    items = []
    for name, games in sources:
        for g in games:
            ctx = game_context(g)
            for m in day_messages(g):
                cands = {ctx.names[s]: s for s in m.candidates}
                rec = {
                    "source": name,
                    "game_id": g.game_id,
                    "round": m.round,
                    "index": m.index,
                    "seat": m.seat,
                    "speaker": ctx.names[m.seat],
                    "en": not _CYRILLIC.search(m.text),
                }
                items.append((rec, (m.text, ctx.names[m.seat], cands, ctx)))
    return items


def _label_all(items: list[tuple[dict, tuple]], ann: RulesAnnotator) -> list[dict]:
    out = []
    for rec, args in items:
        labels = ann.label_text(*args)
        out.append({**rec, "labels": [[x.target, x.category, x.evidence, x.rule] for x in labels]})
    return out


def _summary(lines: list[dict]) -> dict:
    by: dict[str, dict] = {}
    for rec in lines:
        s = by.setdefault(rec["source"], {"messages": 0, "english": 0, "labels": Counter(), "sha": hashlib.sha256()})
        s["messages"] += 1
        s["english"] += rec["en"]
        s["labels"].update(x[1] for x in rec["labels"])
        s["sha"].update((json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n").encode())
    return {
        k: {
            "messages": v["messages"],
            "english": v["english"],
            "labels": dict(sorted(v["labels"].items())),
            "sha256": v["sha"].hexdigest(),
        }
        for k, v in sorted(by.items())
    }


def _compare(lines: list[dict], other: Path) -> int:
    theirs = [json.loads(x) for x in other.read_text(encoding="utf-8").splitlines() if x.strip()]
    key = lambda r: (r["source"], r["game_id"], r["round"], r["index"])  # noqa: E731
    mine, old = {key(r): r for r in lines}, {key(r): r for r in theirs}
    diffs = [k for k in sorted(set(mine) | set(old)) if mine.get(k) != old.get(k)]
    en = sum(r["en"] for r in lines)
    print(f"compared {len(mine)} messages ({en} English) with {len(old)} in {other}: {len(diffs)} differences")
    for k in diffs[:50]:
        print("  ", k, "\n     before:", old.get(k), "\n     after: ", mine.get(k))
    return 1 if diffs else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", nargs="+", type=Path)
    ap.add_argument("-o", "--out", type=Path)
    ap.add_argument("--summary", type=Path)
    ap.add_argument("--compare", type=Path)
    ap.add_argument("--dev", type=Path, help="a beliefshift labels file: count its items found in the dump")
    ap.add_argument("--speed", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        items = _messages(_sources(args.src, Path(tmp)))
    ann = RulesAnnotator()
    lines = _label_all(items, ann)
    if args.out:
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    if args.summary:
        args.summary.write_text(json.dumps(_summary(lines), indent=1) + "\n", encoding="utf-8")
    print(
        f"{len(lines)} messages ({sum(r['en'] for r in lines)} English), {sum(len(r['labels']) for r in lines)} labels"
    )
    if args.dev:
        said = Counter((r["game_id"], r["round"], r["speaker"]) for r in lines if r["source"] == "corpus_v2")
        dev = [json.loads(x) for x in args.dev.read_text(encoding="utf-8").splitlines() if x.strip()]
        keys = [(d["game_id"], d["round"], d["speaker"]) for d in dev]
        print(
            f"development set: {sum(k in said for k in keys)} of {len(dev)} items found in corpus_v2 "
            f"({sum(said[k] for k in set(keys))} messages of their speakers and rounds)"
        )
    if args.speed:
        best = min(_timed(items, ann) for _ in range(3))
        print(f"speed: {len(items) / best:.0f} messages/s ({len(items)} messages in {best:.2f} s)")
    return _compare(lines, args.compare) if args.compare else 0


def _timed(items: list[tuple[dict, tuple]], ann: RulesAnnotator) -> float:
    t = time.process_time()
    for _, a in items:
        ann.label_text(*a)
    return time.process_time() - t


if __name__ == "__main__":
    sys.exit(main())
