"""``season run --ray``: the season's games as Ray tasks give the local run's season directory."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.cli._app import RAY_SEATS
from mafialab.harness import RAY_HINT
from mafialab.record import GAME_FILE, PROBES_FILE, probe_sort_key, read_records, read_verdicts, strip_clock
from tests.helpers import unreachable_ray

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})

VERDICT = {
    "headline": "A short werewolf7 game",
    "recap": "The votes followed the first accusation.",
    "mvp": "Alex",
    "players": [{"name": "Alex", "deception": 5, "detection": 6, "influence": 7, "note": "Led the votes."}],
}


def _season(tmp_path: Path, games: int = 4) -> Path:
    f = tmp_path / "season.yaml"
    f.write_text(
        yaml.safe_dump(
            {
                "name": "ray-season",
                "rules": "werewolf7",
                "games": games,
                "seed": 11,
                "roster": [{"agent": "scripted", "name": n} for n in ("s-a", "s-b", "s-c", "s-d")]
                + [{"agent": "random", "name": n} for n in ("r-a", "r-b", "r-c", "r-d")],
                # the same canned verdict for every game: judging order does not change the verdicts
                "judges": [{"model": "mock/judge", "options": {"outputs": {"judge": [VERDICT] * games}}}],
                "probes": "suspicion",
                "parallelism": {"games": 2, "judge_calls": 1},
            }
        )
    )
    return f


def _games(out: Path) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]]:
    found = {}
    for d in sorted((out / "games").iterdir()):
        probes = sorted(read_records(d / PROBES_FILE), key=probe_sort_key)
        for p in probes:
            p.pop("ts", None)
            p.pop("latency_ms", None)
        verdicts = [v.headline for v in read_verdicts(d)]
        found[d.name] = (strip_clock(read_records(d / GAME_FILE)), probes, verdicts)
    return found


def _slots(out: Path) -> list[dict[str, Any]]:
    return [
        {k: s[k] for k in ("slot", "seed", "seating", "game_id", "status", "winner", "rounds", "answered_share")}
        for s in json.loads((out / "season.json").read_text())["slots"]
    ]


def test_ray_season_equals_the_local_season_and_resumes_the_same_way(
    tmp_path: Path, ray_local: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mafialab.arena._season as season_module

    f = _season(tmp_path)
    local = runner.invoke(app, ["season", "run", str(f), "--out", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    tasks: list[str] = []
    real = season_module.ray_run

    async def spy(fn: Any, *args: Any, **kwargs: Any) -> Any:
        tasks.append(args[4])  # the game id
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(season_module, "ray_run", spy)
    fanned = runner.invoke(app, ["season", "run", str(f), "--out", str(tmp_path / "ray"), "--ray", "local"])
    assert fanned.exit_code == 0, fanned.output
    assert len(tasks) == 4  # every game went through a Ray task
    a, b = _games(tmp_path / "local"), _games(tmp_path / "ray")
    assert len(a) == 4 and sorted(a) == sorted(b)
    for gid in a:
        assert a[gid][0] == b[gid][0], gid  # game.jsonl, clock fields aside
        assert a[gid][1] == b[gid][1] and a[gid][1], gid  # probes.jsonl in key order
        assert a[gid][2] == b[gid][2] == [VERDICT["headline"]], gid  # judged once, on the driver
    assert _slots(tmp_path / "local") == _slots(tmp_path / "ray")
    board = [json.loads((tmp_path / d / "index.json").read_text())["leaderboard"] for d in ("local", "ray")]
    assert board[0] == board[1] and board[0]

    # resume under Ray: a game cut short by a killed worker is rerun, a finished one never replayed
    ray_out = tmp_path / "ray"
    gids = sorted(b)
    cut = ray_out / "games" / gids[1] / GAME_FILE
    lines = cut.read_text().splitlines(keepends=True)
    cut.write_text("".join(lines[: len(lines) // 2]))
    manifest = json.loads((ray_out / "season.json").read_text())
    manifest["slots"][1]["status"] = "pending"
    (ray_out / "season.json").write_text(json.dumps(manifest))
    kept = ray_out / "games" / gids[0] / GAME_FILE
    before = kept.stat().st_mtime_ns, kept.read_bytes()
    again = runner.invoke(app, ["season", "resume", str(ray_out), "--ray", "local"])
    assert again.exit_code == 0, again.output
    assert (kept.stat().st_mtime_ns, kept.read_bytes()) == before  # finished: not replayed
    assert tasks[4:] == [gids[1]]  # one task: the unfinished game
    assert _games(ray_out)[gids[1]][0] == a[gids[1]][0]  # rerun from its own seed: the same game
    assert (ray_out / "incomplete" / gids[1] / GAME_FILE).is_file()  # the cut attempt is kept aside
    history = json.loads((ray_out / "season.json").read_text())["slots"][1]["history"]
    assert [h["outcome"] for h in history] == ["incomplete"]


def test_without_ray_season_run_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    res = runner.invoke(app, ["season", "run", str(_season(tmp_path)), "--out", str(tmp_path / "x"), "--ray", "auto"])
    assert res.exit_code != 0 and RAY_HINT in res.output
    assert not (tmp_path / "x").exists()  # nothing started
    f = tmp_path / "remote.yaml"  # a remote seat is served by this process's agent API: refused as `play` does
    f.write_text(_season(tmp_path).read_text().replace("agent: random", "agent: remote", 1))
    res = runner.invoke(app, ["season", "run", str(f), "--out", str(tmp_path / "y"), "--ray", "auto"])
    assert res.exit_code == 2 and RAY_SEATS in res.output
    assert not (tmp_path / "y").exists()


def test_an_unreachable_cluster_is_named_as_the_ray_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    unreachable_ray(monkeypatch, ConnectionError("Failed to connect to GCS at 10.0.0.1:6379"))
    res = runner.invoke(
        app, ["season", "run", str(_season(tmp_path)), "--out", str(tmp_path / "x"), "--ray", "10.0.0.1:6379"]
    )
    assert res.exit_code == 2, res.output
    assert "--ray 10.0.0.1:6379: cannot connect to a Ray cluster: Failed to connect to GCS" in res.output
    assert "Traceback" not in res.output
