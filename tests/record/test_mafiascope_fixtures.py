"""Our MafiaScope-format fixtures cover every record kind and trap, and import as documented."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

from mafialab.record import import_mafiascope, read_game

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "mafiascope"
GAME_KINDS = {
    "setup", "intro", "day_discuss", "day_vote", "night_mafia", "night_doctor", "night_sheriff",
    "night_sheriff_result", "night_kill", "night_save", "night_analysis", "vote_tally", "day_eliminate",
    "game_over", "team_proposal", "team_final", "team_vote", "team_vote_tally",
}  # fmt: skip
PROBE_IDS = {"role_assessment", "suspicion_ranking", "social_map", "personality_profile", "planned_action"}


def _records(name: str) -> list[dict]:
    return [json.loads(x) for p in sorted(FIXTURES.rglob(name)) for x in p.read_text("utf-8").splitlines() if x.strip()]


def test_every_record_kind_and_field_variant_is_present():
    games = _records("game.jsonl")
    assert set(Counter(r["kind"] for r in games)) == GAME_KINDS
    setups = [r for r in games if r["kind"] == "setup"]
    assert any(set(r) == {"game_id", "kind", "round", "players", "ts"} for r in setups)  # minimal setup
    assert any({"game_type", "skin", "language", "backends"} <= set(r) for r in setups)
    assert any("intervention" in r and r["round"] == 1 for r in setups)
    assert any("fork_batch_id" in r and r.get("intervention", 1) is None for r in setups)
    responses = [r["response"] for r in games if "response" in r]
    assert "" in responses and any(x.startswith("ERROR: ") for x in responses)
    assert any("VOTE: **" in x for x in responses)
    assert any("а" <= ch <= "я" for x in responses for ch in x)  # Russian text
    results = {r["result"] for r in games if r["kind"] == "night_sheriff_result"}
    assert results == {"Mafia", "Not Mafia"}
    # a tie: vote_tally followed directly by the next night, no elimination
    pairs = itertools.pairwise(games)
    assert any(a["kind"] == "vote_tally" and b["kind"] == "night_mafia" for a, b in pairs)
    assert {r["winner"] for r in games if r["kind"] == "game_over"} == {"Mafia", "Villagers", "Spy"}


def test_every_probe_variant_is_present():
    probes = _records("introspection.jsonl")
    assert {p["probe_id"] for p in probes} == PROBE_IDS
    assert any("chain_used_raw_fallback" not in p for p in probes)  # pre-revision logger
    assert any(p["public_msg_seq"] == -1 and p["phase"] == "round_end" for p in probes)
    assert any(p["answer_raw"].startswith("ERROR") and p["answer_parsed"] is None for p in probes)
    truncated = [p for p in probes if not p["answer_parse_ok"] and not p["answer_raw"].startswith("ERROR")]
    assert truncated and all(p["answer_parsed"] is None for p in truncated)
    assert any(p["answer_raw"].startswith("```json") for p in probes)
    assert any(isinstance(p["answer_parsed"], dict) and "rankings" in p["answer_parsed"] for p in probes)
    assert any(p["question"].startswith("Ты —") for p in probes)
    assert any((FIXTURES / "traps").rglob("introspection.jsonl")) and any(
        p.stat().st_size == 0 for p in FIXTURES.rglob("introspection.jsonl")
    )


def test_fixture_corpora_import_with_only_the_planted_problems(tmp_path: Path):
    problems = []
    for corpus in ("en_demo", "ru_clean", "corpus_v2", "game_family_showcase", "traps"):
        rep = import_mafiascope(FIXTURES / corpus, tmp_path / corpus)
        problems += rep.problems
        for g in rep.imported:
            assert read_game(g.out).problems == []
        if corpus == "traps":
            assert {g.game_id[:8]: g.finished for g in rep.games} == {
                "4a7f3c10": False, "4b7f3c10": False, "4c7f3c10": True, "4d7f3c10": True,
            }  # fmt: skip
    # the only problem: the Git LFS pointer that stands in for a snapshot file
    assert len(problems) == 1 and "state.jsonl" in problems[0] and "Git LFS pointer" in problems[0]
