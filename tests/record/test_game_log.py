import asyncio
import json
from pathlib import Path

import pytest

from mafialab.agents import make_agent
from mafialab.engine import GameState
from mafialab.harness import ReplayMismatch, play_game, recorded_actions, replay, resume
from mafialab.record import GAME_FILE, SCHEMA_VERSION, JsonlWriter, LogFormatError, read_game, read_records, strip_clock
from mafialab.rules import BUILTIN, BUILTIN_VERSIONS, MAFIASCOPE7, WEREWOLF7
from mafialab.testing import golden_diff, golden_name, golden_records, read_golden

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _play(rules, seed, out, spec="scripted"):
    agents = [make_agent(spec, s, rules, seed) for s in range(rules.n_seats)]
    return asyncio.run(play_game(rules, agents, seed, out=out))


def test_header_holds_rules_seed_roster_version(tmp_path):
    res = _play(WEREWOLF7, 4, tmp_path)
    log = read_game(res.path)
    h = log.header
    assert h.schema_version == SCHEMA_VERSION and h.seq == 0 and h.kind == "game_start"
    assert h.rules == WEREWOLF7 and h.rules_id == "werewolf7-v1" and h.seed == 4
    assert [s.role for s in h.roster] == res.state.roles
    assert all(s.agent == "scripted" for s in h.roster)
    assert h.software.startswith("mafialab ")
    assert log.winner == res.winner
    assert [e.seq for e in log.events] == list(range(1, len(log.events) + 1))
    assert all(isinstance(e.ts, float) for e in log.events)


@pytest.mark.parametrize("rules", list(BUILTIN.values()), ids=lambda r: r.name)
def test_same_seed_identical_logs_clock_aside(tmp_path, rules):
    a = _play(rules, 8, tmp_path / "a")
    b = _play(rules, 8, tmp_path / "b")
    ra, rb = (strip_clock(read_records(r.path / GAME_FILE)) for r in (a, b))
    assert ra == rb and len(ra) > 10


@pytest.mark.parametrize("rules", list(BUILTIN_VERSIONS.values()), ids=lambda r: r.id)
def test_golden_playthrough(tmp_path, rules):
    golden = read_golden(GOLDEN / golden_name(rules))
    fresh = asyncio.run(golden_records(rules, tmp_path))
    fresh = json.loads(json.dumps(fresh))  # same JSON normalisation as the file
    diff = golden_diff(golden, fresh)
    assert diff is None, f"engine behaviour changed ({diff}): review, then run scripts/regen_golden.py"
    assert fresh == golden


def test_writer_flushes_every_record(tmp_path):
    p = tmp_path / "g" / "x.jsonl"
    w = JsonlWriter(p, clock=lambda: 1.0)
    assert not p.exists()  # lazy: nothing created before the first write
    w.write({"kind": "a"})
    assert read_records(p) == [{"kind": "a"}]  # readable while still open
    w.write({"kind": "b"})
    assert [r["kind"] for r in read_records(p)] == ["a", "b"]
    w.close()


def test_torn_last_line_is_reported_and_skipped(tmp_path):
    res = _play(MAFIASCOPE7, 2, tmp_path)
    f = res.path / GAME_FILE
    full = read_game(res.path)
    with f.open("a") as fh:
        fh.write('{"kind": "speech", "seq": 9')  # crash mid-record
    log = read_game(res.path)
    assert len(log.events) == len(full.events)
    assert len(log.problems) == 1 and f"{GAME_FILE}:{len(full.events) + 2}" in log.problems[0]


def test_invalid_record_named_and_rest_kept(tmp_path):
    res = _play(MAFIASCOPE7, 2, tmp_path)
    f = res.path / GAME_FILE
    lines = f.read_text().splitlines()
    bad = json.loads(lines[5])
    bad["visibility"] = "everyone"
    lines[5] = json.dumps(bad)
    f.write_text("\n".join(lines) + "\n")
    log = read_game(res.path)
    assert len(log.events) == len(lines) - 2
    assert ":6: invalid" in log.problems[0] and "visibility" in log.problems[0]


def test_missing_header_is_an_error(tmp_path):
    (tmp_path / GAME_FILE).write_text('{"kind": "speech"}\n')
    with pytest.raises(LogFormatError, match="no valid game_start"):
        read_game(tmp_path)
    with pytest.raises(LogFormatError, match="nope does not exist: expected one game's folder"):
        read_game(tmp_path / "nope")


def test_existing_game_dir_is_not_overwritten(tmp_path):
    _play(WEREWOLF7, 1, tmp_path)
    with pytest.raises(ValueError, match="already exists"):
        _play(WEREWOLF7, 1, tmp_path)


@pytest.mark.parametrize("rules", list(BUILTIN.values()), ids=lambda r: r.name)
def test_replay_without_agents_reproduces_the_log(tmp_path, rules):
    res = _play(rules, 6, tmp_path, spec="random")
    log = read_game(res.path)
    state = replay(log)
    assert state.is_terminal and state.winner == log.winner
    assert [e.model_dump(exclude={"ts"}) for e in state.events] == [e.model_dump(exclude={"ts"}) for e in log.events]


def test_replay_detects_a_tampered_log(tmp_path):
    res = _play(WEREWOLF7, 6, tmp_path)
    log = read_game(res.path)
    i = next(i for i, e in enumerate(log.events) if e.kind == "vote_tally")
    log.events[i] = log.events[i].model_copy(update={"outcome": None})
    with pytest.raises(ReplayMismatch):
        replay(log)


def test_resume_from_a_step_with_live_agents(tmp_path):
    res = _play(WEREWOLF7, 6, tmp_path)
    log = read_game(res.path)
    acts = recorded_actions(log.events)
    step = acts[len(acts) // 2].decision
    partial = replay(log, upto=step)
    assert not partial.is_terminal and partial.pending()[0].id == step
    # the same agents reproduce the original ending; other agents may change it
    same = asyncio.run(resume(log, step, [make_agent("scripted", s, WEREWOLF7, 6) for s in range(7)]))
    assert same.is_terminal
    prefix = [e.model_dump(exclude={"ts"}) for e in partial.events]
    assert [e.model_dump(exclude={"ts"}) for e in same.events[: len(prefix)]] == prefix
    other = asyncio.run(resume(log, step, [make_agent("random", s, WEREWOLF7, 99) for s in range(7)]))
    assert other.is_terminal


def test_engine_state_exposes_roles_consistent_with_header(tmp_path):
    res = _play(MAFIASCOPE7, 12, tmp_path)
    assert GameState(MAFIASCOPE7, 12).roles == [s.role for s in read_game(res.path).header.roster]


def test_raw_mafiascope_log_is_refused_at_once_with_a_hint(tmp_path, mafiascope_dir):
    src = sorted(p for p in (mafiascope_dir / "en_demo").iterdir() if p.is_dir())[0]
    (tmp_path / GAME_FILE).write_bytes((src / GAME_FILE).read_bytes())
    with pytest.raises(LogFormatError, match=r":1: |line 1 is 'setup'") as exc:
        read_game(tmp_path)
    assert "mafialab import mafiascope" in str(exc.value)
    assert str(exc.value).count("\n") == 0  # one line, not one error per record


def test_log_reader_skips_a_line_nested_too_deeply(tmp_path: Path) -> None:
    from mafialab.record import iter_jsonl

    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n' + '{"b": ' + "[" * 5000 + "]" * 5000 + "}\n" + '{"c": 3}\n')
    problems: list[str] = []
    assert [obj for _, obj in iter_jsonl(p, problems)] == [{"a": 1}, {"c": 3}]
    assert len(problems) == 1 and ":2:" in problems[0] and "nested too deeply" in problems[0]
