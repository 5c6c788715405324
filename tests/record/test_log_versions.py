"""Schema versions: a committed v1 log keeps loading, newer logs are refused, older ones migrate."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import mafialab.record._io as record_io
import mafialab.record._migrate as migrate
from mafialab.analysis import load_games
from mafialab.arena._leaderboard import read_calls
from mafialab.cli import app
from mafialab.harness import replay
from mafialab.record import (
    CALLS_FILE,
    GAME_FILE,
    PROBES_FILE,
    SCHEMA_VERSION,
    VERDICTS_FILE,
    LogFormatError,
    LogVersionError,
    iter_probe_records,
    read_game,
    read_verdicts,
)
from mafialab.record._migrate import MIGRATIONS
from mafialab.viewer import read_probes

V1 = Path(__file__).resolve().parents[1] / "data" / "logs-v1" / "v1-werewolf7"

# The fixture is frozen: a log written by mafialab at schema v1 must load in every later
# version. Never regenerate these files; add a migration instead (docs/log-format.md).
V1_SHA256 = {
    GAME_FILE: "be321affef8bbe91a3f391e64e4aa3b6b86a289f6204b9e2e644e26f6c317889",
    PROBES_FILE: "f8959057994cb43b436b1be2d4a929dc5ba277124844fa802e6e382144b9f1c8",
    CALLS_FILE: "32571d5d1fb00a89c1d699786054cd23d4174f848949cacf648c43a764c0e0a6",
    VERDICTS_FILE: "1ae9beaad626b81b9f8a7b05a443115a13d0916f36c9b6f1d45496d6437dac81",
}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@pytest.fixture
def v1_copy(tmp_path: Path) -> Path:
    dst = tmp_path / V1.name
    shutil.copytree(V1, dst)
    return dst


def test_v1_fixture_is_unchanged_and_at_v1():
    for name, digest in V1_SHA256.items():
        assert hashlib.sha256((V1 / name).read_bytes()).hexdigest() == digest, f"{name} of the v1 fixture changed"
    assert _lines(V1 / GAME_FILE)[0]["schema_version"] == 1
    assert {v["schema_version"] for v in _lines(V1 / VERDICTS_FILE)} == {1}


def test_v1_log_loads_through_every_reader():
    log = read_game(V1)
    assert log.schema_version == 1 and log.header.schema_version == SCHEMA_VERSION
    assert log.problems == [] and log.winner in ("town", "mafia")
    assert log.header.rules_id == "werewolf7-v1" and len(log.header.roster) == 7
    assert log.status is not None and log.status.decisions > 0
    replay(log)  # the recorded actions still rebuild the same events
    (g,) = load_games(V1)
    assert len(g.probes) == len(_lines(V1 / PROBES_FILE)) > 0
    problems: list[str] = []
    assert len(read_probes(V1, problems)) == len(g.probes) and problems == []
    calls = read_calls(V1)
    assert len(calls) == len(_lines(V1 / CALLS_FILE)) > 0
    (v,) = read_verdicts(V1)
    assert v.status == "ok" and v.schema_version == SCHEMA_VERSION and len(v.players) == 7


def test_every_older_version_has_a_migration_step():
    assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION))


def _bump(path: Path, version: int) -> None:
    recs = _lines(path)
    recs[0]["schema_version"] = version
    recs[0]["a_field_from_the_future"] = {"x": 1}  # a newer header may hold unknown fields
    _write(path, recs)


def test_newer_game_log_refused_naming_file_and_versions(v1_copy: Path):
    newer = SCHEMA_VERSION + 1
    _bump(v1_copy / GAME_FILE, newer)
    with pytest.raises(LogVersionError) as err:
        read_game(v1_copy)
    msg = str(err.value)
    assert str(v1_copy / GAME_FILE) in msg and f"v{newer}" in msg and f"v{SCHEMA_VERSION}" in msg
    assert isinstance(err.value, LogFormatError)  # every reader's handling of bad logs covers it
    with pytest.raises(LogVersionError, match=str(v1_copy / PROBES_FILE)):
        list(iter_probe_records(v1_copy))
    with pytest.raises(LogVersionError):
        read_probes(v1_copy, [])
    with pytest.raises(LogVersionError):
        read_calls(v1_copy)


def test_newer_verdict_refused(v1_copy: Path):
    recs = _lines(v1_copy / VERDICTS_FILE)
    recs[0]["schema_version"] = SCHEMA_VERSION + 3
    _write(v1_copy / VERDICTS_FILE, recs)
    with pytest.raises(LogVersionError, match=rf"{VERDICTS_FILE}:1: written with log schema v{SCHEMA_VERSION + 3}"):
        read_verdicts(v1_copy)


@pytest.mark.parametrize("bad", ["2", -1, 0, True, 1.5, None])
def test_unusable_schema_version_named(v1_copy: Path, bad: Any):
    recs = _lines(v1_copy / GAME_FILE)
    recs[0]["schema_version"] = bad
    _write(v1_copy / GAME_FILE, recs)
    with pytest.raises(LogVersionError, match="schema_version"):
        read_game(v1_copy)


def test_cli_report_refuses_newer_log_in_one_line(v1_copy: Path):
    _bump(v1_copy / GAME_FILE, SCHEMA_VERSION + 1)
    res = CliRunner().invoke(app, ["report", str(v1_copy)])
    assert res.exit_code != 0
    assert "newer than this mafialab reads" in res.output and "Traceback" not in res.output


def test_registered_migration_applies_to_every_record(v1_copy: Path, monkeypatch: pytest.MonkeyPatch):
    # pretend this mafialab writes v2 and knows one step from v1: each record goes through it once
    seen: list[str] = []

    def v1_to_v2(rec: dict[str, Any]) -> dict[str, Any]:
        seen.append(rec["kind"])
        if rec["kind"] == "game_start":
            rec["meta"]["migrated"] = True
        return rec

    monkeypatch.setattr(migrate, "SCHEMA_VERSION", 2)
    monkeypatch.setattr(record_io, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(MIGRATIONS, 1, v1_to_v2)
    log = read_game(v1_copy)
    n_game = len(_lines(v1_copy / GAME_FILE))
    assert log.schema_version == 1 and log.header.schema_version == 2 and log.header.meta["migrated"] is True
    assert len(seen) == n_game and seen[0] == "game_start"
    seen.clear()
    assert len(list(iter_probe_records(v1_copy))) == len(seen) > 0 and set(seen) == {"probe"}
    (v,) = read_verdicts(v1_copy)
    assert v.schema_version == 2


def test_missing_migration_step_refused(v1_copy: Path, monkeypatch: pytest.MonkeyPatch):
    # pretend this mafialab writes the next version but nobody registered the step to it
    nxt = SCHEMA_VERSION + 1
    monkeypatch.setattr(migrate, "SCHEMA_VERSION", nxt)
    monkeypatch.setattr(record_io, "SCHEMA_VERSION", nxt)
    assert SCHEMA_VERSION not in MIGRATIONS
    with pytest.raises(LogVersionError, match=f"no migration from v{SCHEMA_VERSION} to v{nxt}"):
        read_game(v1_copy)


def test_migration_registry_refuses_duplicates_and_out_of_range():
    with pytest.raises(ValueError, match="versions run"):
        migrate.migration(SCHEMA_VERSION)(lambda r: r)
