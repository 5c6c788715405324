"""MafiaScope importer: every source record kept, visibility right, traps of SCHEMA.md survived."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.analysis import compute_report, load_games
from mafialab.cli import app
from mafialab.engine import visible_events
from mafialab.record import PROBES_FILE, import_mafiascope, read_game
from mafialab.record._import_mafiascope import SNAPSHOTS_FILE, import_game
from mafialab.rules import BUILTIN

# games of our MafiaScope-format fixtures (tests/data/mafiascope/README.md)
EN_GAME = "0a7f3c10-1111-4aaa-8aaa-000000000001"
SHERIFF_GAMES = ("2b7f3c10-6666-4fff-8fff-000000000006", "2c7f3c10-7777-4aaa-9aaa-000000000007")
RESISTANCE = "3c7f3c10-dddd-4aaa-aaaa-00000000000d"
FAILED_TURNS_GAME = "2a7f3c10-5555-4eee-8eee-000000000005"


def source(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def find_game(mafiascope_dir: Path, corpus: str, prefix: str) -> Path:
    (d,) = [p for p in (mafiascope_dir / corpus).iterdir() if p.name.startswith(prefix[:8])]
    return d


@pytest.fixture(scope="module")
def en_game(tmp_path_factory: pytest.TempPathFactory, mafiascope_dir: Path) -> tuple[Path, Path]:
    src = find_game(mafiascope_dir, "en_demo", EN_GAME)
    dst = tmp_path_factory.mktemp("en") / src.name
    gi = import_game(src, dst)
    assert gi.out == dst and not gi.problems
    return src, dst


def test_header_roster_and_rules(en_game: tuple[Path, Path]) -> None:
    src, dst = en_game
    setup = source(src / "game.jsonl")[0]
    log = read_game(dst)
    h = log.header
    assert h.source == "mafiascope" and h.rules_id == "mafiascope7-v1" and h.game_id == EN_GAME
    assert [s.name for s in h.roster] == [p["name"] for p in setup["players"]]
    assert [s.role for s in h.roster] == [p["role"] for p in setup["players"]]
    assert [s.team for s in h.roster] == ["mafia" if p["role"] == "Mafia" else "town" for p in setup["players"]]
    assert h.roster[0].persona == setup["players"][0]["personality"]
    assert h.ts == setup["ts"] and h.meta["finished"] is True
    assert log.winner == "mafia"  # source game_over winner "Mafia"


def test_every_source_record_is_kept_with_its_timestamp(en_game: tuple[Path, Path]) -> None:
    src, dst = en_game
    src_ts = Counter(r["ts"] for r in source(src / "game.jsonl") if r["kind"] != "setup")
    ev_ts = Counter(e.ts for e in read_game(dst).events)
    missing = {ts: n for ts, n in src_ts.items() if ev_ts[ts] < n}
    assert not missing


def test_messages_votes_and_indices(en_game: tuple[Path, Path]) -> None:
    src, dst = en_game
    recs = source(src / "game.jsonl")
    events = read_game(dst).events
    names = [p["name"] for p in recs[0]["players"]]
    speeches = [e for e in events if e.kind == "speech"]
    want = [r for r in recs if r["kind"] in ("intro", "day_discuss")]
    assert [(names[e.seat], e.text, e.index, e.round, e.ts) for e in speeches] == [
        (r["player"], r["response"], r["msg_seq"], r["round"], r["ts"]) for r in want
    ]
    votes = [e for e in events if e.kind == "vote"]
    tally = next(r for r in recs if r["kind"] == "vote_tally")
    assert {names[e.seat]: names[e.target] for e in votes if e.round == tally["round"]} == tally["votes"]
    for e, r in zip(votes, [r for r in recs if r["kind"] == "day_vote"], strict=True):
        assert e.statement == r["response"] and e.index == r["msg_seq"] and e.ts == r["ts"]
    assert all(e.visibility.public for e in speeches + votes)


def test_night_is_private(en_game: tuple[Path, Path]) -> None:
    _, dst = en_game
    log = read_game(dst)
    roles = {s.seat: s.role for s in log.header.roster}
    chats = [e for e in log.events if e.kind == "mafia_chat"]
    assert chats and all(not e.visibility.public and e.visibility.teams == ("mafia",) for e in chats)
    doctor = next(s for s, r in roles.items() if r == "Doctor")
    villager = next(s for s, r in roles.items() if r == "Villager")
    mafioso = next(s for s, r in roles.items() if r == "Mafia")
    doc_texts = [e for e in log.events if e.kind == "imported" and e.source_kind == "night_doctor"]
    assert doc_texts
    seen_by_villager = visible_events(log.events, villager)
    assert not any(e.kind in ("mafia_chat", "kill_chosen") for e in seen_by_villager)
    assert not any(e.kind == "imported" and e.source_kind == "night_doctor" for e in seen_by_villager)
    assert all(e in visible_events(log.events, doctor) for e in doc_texts)
    assert all(e in visible_events(log.events, mafioso) for e in chats)
    # each seat sees only its own role assignment
    assert [e.seat for e in seen_by_villager if e.kind == "role_assigned"] == [villager]


def test_probe_records(en_game: tuple[Path, Path]) -> None:
    src, dst = en_game
    raw = source(src / "introspection.jsonl")
    recs = source(dst / PROBES_FILE)
    assert len(recs) == len(raw)
    events = read_game(dst).events
    by_seq = {e.seq: e for e in events}
    for r, p in zip(raw, recs, strict=True):
        assert p["msg_index"] == r["public_msg_seq"] and p["position"] == r["probe_seq"]
        assert p["probe_id"] == r["probe_id"] and p["player"] == r["player_name"] and p["seat"] == r["player_idx"]
        assert p["answer_raw"] == r["answer_raw"] and p["answer_parsed"] == r["answer_parsed"]
        assert p["parse_ok"] == r["answer_parse_ok"] and p["ts"] == r["timestamp"]
        assert p["chain_used_raw_fallback"] == r["chain_used_raw_fallback"]
        assert p["trigger"] == ("round_end" if r["public_msg_seq"] == -1 else p["trigger"])
        # after_seq: the newest event already logged when the probe ran
        assert by_seq[p["after_seq"]].ts <= r["timestamp"]
        later = [e.ts for e in events if e.seq > p["after_seq"] and e.ts is not None]
        assert all(ts > r["timestamp"] for ts in later[:1])
    assert (dst / SNAPSHOTS_FILE).read_bytes() == (src / "state.jsonl").read_bytes()


def test_russian_game_text_kept(tmp_path: Path, mafiascope_dir: Path) -> None:
    rep = import_mafiascope(mafiascope_dir / "ru_clean", tmp_path)
    assert len(rep.imported) == 2 and not rep.problems
    texts = [e.text for g in rep.imported for e in read_game(g.out).events if e.kind == "speech"]
    assert any(any("а" <= ch <= "я" for ch in t) for t in texts)
    probes = source(rep.imported[0].out / PROBES_FILE)
    assert any("Ты —" in p["question"] for p in probes)


def test_transport_errors_and_empty_turns_are_marked_not_played(tmp_path: Path, mafiascope_dir: Path) -> None:
    src = find_game(mafiascope_dir, "corpus_v2", FAILED_TURNS_GAME)
    recs = source(src / "game.jsonl")
    failed = [r for r in recs if isinstance(r.get("response"), str) and r["kind"] != "setup"
              and (r["response"] == "" or r["response"].startswith("ERROR"))]  # fmt: skip
    failed = [r for r in failed if r["kind"] in ("intro", "day_discuss", "day_vote", "night_mafia", "night_doctor")]
    assert failed
    gi = import_game(src, tmp_path / "g")
    events = read_game(gi.out).events
    marked = [e for e in events if e.kind == "imported" and e.note in ("transport_error", "empty_response")]
    assert gi.failed_turns == len(failed) == len(marked)
    assert sorted(e.ts for e in marked) == sorted(r["ts"] for r in failed)
    played = [e for e in events if e.kind in ("speech", "mafia_chat")] + [e for e in events if e.kind == "vote"]
    assert not any(
        (getattr(e, "text", None) or getattr(e, "statement", None) or "").startswith("ERROR") for e in played
    )


@pytest.mark.parametrize("game", SHERIFF_GAMES)
def test_sheriff_games(tmp_path: Path, mafiascope_dir: Path, game: str) -> None:
    src = find_game(mafiascope_dir, "corpus_v2", game)
    gi = import_game(src, tmp_path / "g")
    log = read_game(gi.out)
    rules = log.header.rules
    assert rules.name == "mafiascope_sheriff"
    assert rules.role("Sheriff").ability == "investigate" and rules.role("Villager").count == 3
    results = [r for r in source(src / "game.jsonl") if r["kind"] == "night_sheriff_result"]
    inv = [e for e in log.events if e.kind == "investigation_result"]
    names = log.header.rules.seat_names
    assert [(names[e.seat], names[e.target], e.result) for e in inv] == [
        (r["sheriff"], r["checked"], "mafia" if r["result"] == "Mafia" else "town") for r in results
    ]
    assert all(e.visibility.seats == (e.seat,) and not e.visibility.public for e in inv)


def test_game_family_showcase(tmp_path: Path, mafiascope_dir: Path) -> None:
    rep = import_mafiascope(mafiascope_dir / "game_family_showcase", tmp_path)
    assert len(rep.imported) == 3 and not rep.problems
    by_id = {g.game_id: g for g in rep.imported}
    res = by_id[RESISTANCE]
    log = read_game(res.out)
    # the Resistance module maps onto the built-in mafiascope-resistance: mission events, not opaque records
    assert log.header.rules == BUILTIN["mafiascope-resistance"].model_copy(
        update={"seat_names": log.header.rules.seat_names}
    )
    assert {s.role for s in log.header.roster} == {"Resistance", "Spy"}
    assert log.winner == "mafia" and log.events[-1].reason == "rejections"
    kinds = Counter(e.kind for e in log.events)
    assert kinds["speech"] == 5 and kinds["team_proposal"] == 5 and kinds["team_pick"] == 10
    assert kinds["team_vote"] == 25 and kinds["team_vote_tally"] == 5
    # the leaders' messages are kept verbatim; two failed (empty, ERROR) and their picks are fallbacks
    kept = [e for e in log.events if e.kind == "imported"]
    assert [e.note for e in kept] == [
        "foreign_kind",
        "empty_response",
        "foreign_kind",
        "transport_error",
        "foreign_kind",
    ]
    picks = [e for e in log.events if e.kind == "team_pick"]
    assert [p.fallback for p in picks[::2]] == [False, True, False, True, False]
    assert [e.leader for e in log.events if e.kind == "team_proposal"] == [0, 1, 2, 3, 4]
    votes = [e for e in log.events if e.kind == "team_vote"]
    blanks = [(v.attempt, v.seat) for v in votes if v.choice is None]
    assert blanks == [(1, 4), (3, 1), (4, 0), (4, 2)] and all(v.fallback for v in votes if v.choice is None)
    assert all(v.visibility.public and v.statement for v in votes if v.choice is not None)
    tallies = [e for e in log.events if e.kind == "team_vote_tally"]
    assert [t.approvals for t in tallies] == [2, 2, 2, 1, 2] and [t.rejected_in_row for t in tallies] == [1, 2, 3, 4, 5]
    assert res.failed_turns == 6 and res.foreign == 3
    # and it replays under the built-in rule set
    from mafialab.harness import replay

    state = replay(log)
    assert state.winner == "mafia" and [e.kind for e in state.events].count("team_vote_tally") == 5
    ww = [read_game(g.out) for g in rep.imported if g.game_id != RESISTANCE]
    assert {g.header.rules.lexicon.mafia_team for g in ww} == {"Werewolves"}
    # the skins map onto the built-ins, roles under the names their prompts used
    assert {g.header.rules.id for g in ww} == {"mafiascope7-werewolf-v1", "mafiascope7-werewolf-seer-v1"}
    for g in ww:
        builtin = BUILTIN[g.header.rules.name]
        assert g.header.rules == builtin.model_copy(update={"seat_names": g.header.rules.seat_names})
        src = source(mafiascope_dir / "game_family_showcase" / g.header.game_id / "game.jsonl")
        raw = [p["role"] for p in src[0]["players"]]
        renamed = {"Mafia": "Werewolf", "Doctor": "Guardian", "Sheriff": "Seer", "Villager": "Villager"}
        assert [s.role for s in g.header.roster] == [renamed[r] for r in raw]
        assert [s.team for s in g.header.roster] == ["mafia" if r == "Mafia" else "town" for r in raw]
    report = compute_report(load_games(tmp_path), "mafiascope", resamples=10).model_dump(mode="json")
    assert report["games"] == 3 and report["skipped"] == []  # the Resistance game is scored as a mission game


def test_torn_lines_reported_and_skipped(tmp_path: Path, mafiascope_dir: Path) -> None:
    src = tmp_path / "src" / "g1"
    shutil.copytree(find_game(mafiascope_dir, "en_demo", EN_GAME), src)
    game_lines = (src / "game.jsonl").read_text().splitlines()
    (src / "game.jsonl").write_text("\n".join([*game_lines[:5], '{"kind": "intro", "roun', *game_lines[5:]]) + "\n")
    with (src / "introspection.jsonl").open("a") as fh:
        fh.write('{"timestamp": 1.0, "game_id": "x", "round": 0, "public_msg_s')
    n_probes = len(source_lines(src / "introspection.jsonl")) - 1
    rep = import_mafiascope(tmp_path / "src", tmp_path / "out")
    (gi,) = rep.games
    assert gi.out is not None
    assert any(p.startswith(f"{src / 'game.jsonl'}:6:") for p in rep.problems)
    n_intro = len((src / "introspection.jsonl").read_text().splitlines())
    assert any(p.startswith(f"{src / 'introspection.jsonl'}:{n_intro}:") for p in rep.problems)
    assert len(rep.problems) == 2 and gi.probes == n_probes
    assert len(read_game(gi.out).events) == len(read_game(_fresh(tmp_path, mafiascope_dir)).events)


def source_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()]


def _fresh(tmp_path: Path, mafiascope_dir: Path) -> Path:
    dst = tmp_path / "fresh"
    import_game(find_game(mafiascope_dir, "en_demo", EN_GAME), dst)
    return dst


def test_unfinished_game(tmp_path: Path, mafiascope_dir: Path) -> None:
    src = tmp_path / "src" / "g1"
    shutil.copytree(find_game(mafiascope_dir, "en_demo", EN_GAME), src)
    lines = [ln for ln in (src / "game.jsonl").read_text().splitlines() if '"kind": "game_over"' not in ln]
    (src / "game.jsonl").write_text("\n".join(lines) + "\n")
    gi = import_game(src, tmp_path / "out")
    log = read_game(gi.out)
    assert gi.finished is False and log.header.meta["finished"] is False and log.winner is None
    assert not any(e.kind == "game_end" for e in log.events)
    rep = compute_report(load_games(tmp_path / "out"), "mafiascope", resamples=10).model_dump(mode="json")
    assert rep["winners"] == {"unfinished": 1} and rep["probe_records"] == gi.probes


def test_fork_setup_round(tmp_path: Path, mafiascope_dir: Path) -> None:
    src = tmp_path / "fork"
    src.mkdir()
    recs = source(find_game(mafiascope_dir, "en_demo", EN_GAME) / "game.jsonl")
    setup = dict(recs[0], round=1, forked_from=EN_GAME, fork_point=[1, 7], fork_batch_id="b", replica_idx=0)
    rest = [r for r in recs[1:] if r["round"] >= 1]
    (src / "game.jsonl").write_text("\n".join(json.dumps(r) for r in [setup, *rest]) + "\n")
    gi = import_game(src, tmp_path / "out")
    log = read_game(gi.out)
    assert log.header.meta["forked_from"] == EN_GAME and log.header.meta["fork_point"] == [1, 7]
    assert log.header.meta["setup_round"] == 1
    assert log.events[0].kind == "seating" and log.events[0].round == 1
    assert not any(e.phase == "intro" for e in log.events)


def test_cli_import_reports_problems(tmp_path: Path) -> None:
    bad = tmp_path / "src" / "g"
    bad.mkdir(parents=True)
    (bad / "game.jsonl").write_text("not json\n")
    res = CliRunner().invoke(app, ["import", "mafiascope", str(tmp_path / "src"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1
    assert "game.jsonl:1" in res.output
    res = CliRunner().invoke(app, ["import", "mafiascope", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_whole_corpus_v2(tmp_path: Path, mafiascope_real: Path) -> None:
    """Reference: all 147 real transcript-only games: no problem, failed turns marked, votes equal the tallies."""
    rep = import_mafiascope(mafiascope_real / "corpus_v2", tmp_path)
    assert len(rep.imported) == len(rep.games) == 147 and not rep.problems
    failed_total = 0
    for gi in rep.imported:
        recs = source(gi.source / "game.jsonl")
        failed = sum(
            1
            for r in recs
            if r["kind"] in ("intro", "day_discuss", "day_vote", "night_mafia", "night_doctor", "night_sheriff")
            and (r["response"] == "" or r["response"].startswith("ERROR"))
        )
        assert gi.failed_turns == failed
        failed_total += failed
        log = read_game(gi.out)
        names = log.header.rules.seat_names
        for tally in (e for e in log.events if e.kind == "vote_tally"):
            votes = {e.seat: e.target for e in log.events if e.kind == "vote" and e.round == tally.round}
            assert {names[v]: names[t] for v, t in tally.votes.items()} == {
                names[v]: names[t] for v, t in votes.items() if v in tally.votes
            }
        assert gi.finished == any(r["kind"] == "game_over" for r in recs)
    assert failed_total >= 1528  # SCHEMA.md: 1,528 ERROR turns in corpus_v2 (plus empty ones)


def test_unrepresentable_game_is_reported_not_fatal(tmp_path: Path, mafiascope_dir: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(find_game(mafiascope_dir, "en_demo", EN_GAME), src / "ok")
    recs = source(src / "ok" / "game.jsonl")
    players = [dict(p, role="Mafia") for p in recs[0]["players"]]  # 7 Mafia: no valid rule set
    (src / "bad").mkdir()
    (src / "bad" / "game.jsonl").write_text(json.dumps(dict(recs[0], players=players)) + "\n")
    rep = import_mafiascope(src, tmp_path / "out")
    assert [g.out is not None for g in rep.games] == [False, True]
    assert len(rep.problems) == 1 and "bad/game.jsonl: game not imported" in rep.problems[0]


def test_real_resistance_showcase_imports_onto_the_builtin_and_replays(tmp_path: Path, mafiascope_real: Path) -> None:
    """Reference: MafiaScope's showcase Resistance game (five rejected teams) as mafiascope-resistance events."""
    from mafialab.harness import replay

    rep = import_mafiascope(mafiascope_real / "game_family_showcase", tmp_path)
    (res,) = [g for g in rep.imported if g.rules_id == "mafiascope-resistance-v1"]
    assert not res.problems
    log = read_game(res.out)
    kinds = Counter(e.kind for e in log.events)
    assert kinds["team_proposal"] == 5 and kinds["team_vote"] == 25 and kinds["team_vote_tally"] == 5
    assert kinds["imported"] == 5  # the leaders' (failed) proposal messages, kept and marked
    assert log.winner == "mafia" and log.events[-1].reason == "rejections"
    state = replay(log)
    assert state.winner == "mafia" and state.events[-1].reason == "rejections"
    mine = [e.choices for e in state.events if e.kind == "team_vote_tally"]
    assert mine == [e.choices for e in log.events if e.kind == "team_vote_tally"]
