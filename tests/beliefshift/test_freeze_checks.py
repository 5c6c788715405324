"""Freezing refuses impossible annotations and takes speakers from the log."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.beliefshift import load_logs
from mafialab.cli import app
from mafialab.record import LogFormatError


def _tampered(ann: Path, out: Path, edit: Callable[[dict], list[dict]]) -> Path:
    lines = [json.loads(x) for x in ann.read_text(encoding="utf-8").splitlines()]
    out.write_text("\n".join(json.dumps(r) for r in [lines[0], *edit(lines[1])]) + "\n", encoding="utf-8")
    return out


def _with_target(a: dict, seat: int) -> dict:
    return a | {"target": a["target"] | {"seat": seat}}


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        # a target seat the game lacks raised StopIteration (a traceback)
        (lambda a: [_with_target(a, 99)], "target.seat 99 is not a seat of the game"),
        # the speaker as its own target was frozen as an item
        (lambda a: [_with_target(a, a["accuser"]["seat"])], "is the speaker"),
        # a hand-merged file with the same (message, target) twice gave two items with one item_id
        (lambda a: [a, a], "a second annotation of target.seat"),
    ],
)
def test_freeze_refuses_impossible_annotations(
    bench: Path, tmp_path: Path, edit: Callable[[dict], list[dict]], expected: str
) -> None:
    root = bench.parent
    bad = _tampered(root / "ann.jsonl", tmp_path / "bad.jsonl", edit)
    res = CliRunner().invoke(
        app, ["beliefshift", "freeze", str(root / "logs"), str(bad), "--out", str(tmp_path / "b.jsonl")]
    )
    assert res.exit_code == 2, res.output
    assert expected in " ".join(res.output.split())
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_freeze_names_the_speaker_from_the_log(bench: Path, tmp_path: Path) -> None:
    # the message line took the accuser's name from the annotation, so a hand-made file could
    # put another name in every model's prompt
    root = bench.parent
    good = json.loads((root / "ann.jsonl").read_text(encoding="utf-8").splitlines()[1])
    bad = _tampered(
        root / "ann.jsonl", tmp_path / "bad.jsonl", lambda a: [a | {"accuser": a["accuser"] | {"name": "Mallory"}}]
    )
    out = tmp_path / "b.jsonl"
    res = CliRunner().invoke(app, ["beliefshift", "freeze", str(root / "logs"), str(bad), "--out", str(out)])
    assert res.exit_code == 0, res.output
    item = json.loads(out.read_text(encoding="utf-8").splitlines()[1])
    assert "Mallory" not in item["message"]
    assert item["message"].startswith(f"[day {good['round']}, message {good['index']}] {good['accuser']['name']}: ")


# The benchmark refuses two directories holding one game id, naming both (never drops one).


def test_a_copied_game_is_refused_by_name(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["play", "-r", "werewolf7-v2", "-a", "scripted", "-o", str(tmp_path / "src")])
    assert res.exit_code == 0, res.output
    (game,) = [p for p in (tmp_path / "src").iterdir() if p.is_dir()]
    for part in ("a", "b"):
        shutil.copytree(game, tmp_path / "logs" / part / game.name)
    with pytest.raises(LogFormatError, match="is in both") as err:
        load_logs([tmp_path / "logs"])
    assert str(tmp_path / "logs" / "a" / game.name) in str(err.value)
    assert str(tmp_path / "logs" / "b" / game.name) in str(err.value)
    res = CliRunner().invoke(
        app, ["beliefshift", "annotate", str(tmp_path / "logs"), "--out", str(tmp_path / "a.jsonl")]
    )
    assert res.exit_code == 2 and "is in both" in " ".join(res.output.split())
    assert len(load_logs([tmp_path / "logs" / "a"])) == 1
