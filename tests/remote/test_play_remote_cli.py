"""``mafialab play --seat N=remote``: the agent API, tokens printed once and kept out of the log."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import iter_game_dirs
from tests.helpers import scripted_play

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


def test_play_with_an_unanswered_remote_seat_falls_back_and_keeps_the_token_private(tmp_path: Path) -> None:
    res = runner.invoke(
        app, scripted_play(tmp_path, "--seat", "2=remote:bot", "--remote-port", "0", "--remote-timeout", "0.1")
    )
    assert res.exit_code == 0, res.output
    tokens = re.findall(r"seat 2 \(remote\): token (\S+)", res.output)
    assert len(tokens) == 1, res.output
    (game,) = iter_game_dirs(tmp_path)
    token_file = game / ".seats" / "2.token"
    assert token_file.read_text().strip() == tokens[0]
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(game / ".seats").st_mode) == 0o700
    for name in ("game.jsonl", "calls.jsonl"):
        assert tokens[0] not in (game / name).read_text()
    header = json.loads((game / "game.jsonl").read_text().splitlines()[0])
    assert header["roster"][2]["agent"] == "remote:bot"
    assert header["meta"]["agents"]["2"] == {"external": "remote", "name": "bot", "timeout_s": 0.1, "probed": False}
    calls = [c for c in map(json.loads, (game / "calls.jsonl").read_text().splitlines()) if c["kind"] == "call"]
    assert calls and {c["status"] for c in calls if c["seat"] == 2} == {"fallback"}
    # the cause of the seat's fallbacks is on the console too, not only in calls.jsonl
    n = sum(1 for c in calls if c["seat"] == 2)
    said = " ".join(res.output.split())
    assert f"{game.name} seat 2 {header['roster'][2]['name']} (remote:bot): no answer within 0.1 s" in said
    assert said.count("(remote:bot): no answer within 0.1 s") == 1 and (n == 1 or f"0.1 s (x{n})" in said)
    # view and export never read .seats: the token reaches none of their files
    site, table = tmp_path.parent / "site", tmp_path.parent / "tables"
    assert runner.invoke(app, ["view", str(tmp_path), "--out", str(site), "--jobs", "1"]).exit_code == 0
    assert runner.invoke(app, ["export", "parquet", str(tmp_path), "--out", str(table)]).exit_code == 0
    written = [p for d in (site, table) for p in d.rglob("*") if p.is_file()]
    assert written and not [p for p in written if tokens[0].encode() in p.read_bytes()]


def test_bad_seat_spec_is_refused_before_playing(tmp_path: Path) -> None:
    res = runner.invoke(app, ["play", "--agents", "scripted", "--seat", "1=remote?timeout=abc", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "timeout" in res.output
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "args", [["--seat", "1=remote?timeout=inf"], ["--seat", "1=remote", "--remote-timeout", "inf"]]
)
def test_an_endless_remote_timeout_is_refused_before_playing(tmp_path: Path, args: list[str]) -> None:
    res = runner.invoke(app, ["play", "--agents", "scripted", *args, "--out", str(tmp_path)])
    assert res.exit_code == 2 and "timeout" in res.output and "seconds" in res.output, res.output
    assert not list(tmp_path.iterdir())
