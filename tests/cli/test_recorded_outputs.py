"""No ``--out`` may overwrite a recorded game's logs or the command's own input.

Every command that writes a file or a folder from ``--out`` (or ``--plots``) refuses, before
any work, a path that is a recorded log of a game's folder (``game.jsonl``, ``calls.jsonl``,
``probes.jsonl`` …, :data:`mafialab.record.RECORDED_FILES`), also through a symlink or a
``..`` path, and a path that is one of its own input files; the message names the option.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE, RECORDED_FILES
from tests.cli.test_output_paths import FILE_OUT, FOLDER_OUT, _run

GAME_TEXT = '{"type": "header"}\n{"type": "event"}\n'
CALLS_TEXT = '{"type": "call"}\n'

ALL_OUT = {name: (args, option) for name, (args, option) in FOLDER_OUT.items()}
ALL_OUT.update({name: (args, "--out") for name, args in FILE_OUT.items()})


def _game(tmp_path: Path) -> Path:
    g = tmp_path / "runs" / "G"
    g.mkdir(parents=True)
    (g / GAME_FILE).write_text(GAME_TEXT)
    (g / CALLS_FILE).write_text(CALLS_TEXT)
    return g


def test_the_recorded_names_come_from_the_record_package() -> None:
    assert {GAME_FILE, CALLS_FILE, PROBES_FILE, "verdicts.jsonl", "retest.jsonl"} <= RECORDED_FILES


@pytest.mark.parametrize("name", sorted(ALL_OUT))
@pytest.mark.parametrize("target", ["runs/G/game.jsonl", "runs/G/calls.jsonl", "runs/G/probes.jsonl",
                                    "runs/G/../G/game.jsonl", "link.jsonl"])  # fmt: skip
def test_a_recorded_log_is_never_an_output(tmp_path: Path, name: str, target: str) -> None:
    g = _game(tmp_path)
    (tmp_path / "link.jsonl").symlink_to(g / GAME_FILE)
    args, option = ALL_OUT[name]
    code, out = _run(tmp_path, [*args, option, target])
    assert code == 2, out
    assert out.startswith(f"error: {option}: "), out
    assert target in out
    assert (g / GAME_FILE).read_text() == GAME_TEXT
    assert (g / CALLS_FILE).read_text() == CALLS_TEXT
    assert not (g / PROBES_FILE).exists()


def test_annotate_refuses_the_game_log_and_writes_nothing(tmp_path: Path) -> None:
    g = _game(tmp_path)
    code, out = _run(tmp_path, ["beliefshift", "annotate", "runs/G", "--out", "runs/G/game.jsonl"])
    assert code == 2
    assert out == (
        "error: --out: runs/G/game.jsonl is a recorded log (game.jsonl); a recorded game is never overwritten: "
        "choose another path"
    )
    assert (g / GAME_FILE).read_text() == GAME_TEXT


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["beliefshift", "freeze", "runs", "A.jsonl", "--out", "A.jsonl"], "ANNOTATIONS"),
        (["beliefshift", "freeze", "runs", "A.jsonl", "--out", "sub/../A.jsonl"], "ANNOTATIONS"),
        (["beliefshift", "freeze", "runs", "A.jsonl", "--out", "alias.jsonl"], "ANNOTATIONS"),
        (["beliefshift", "run", "A.jsonl", "--out", "A.jsonl"], "BENCH"),
        (["beliefshift", "run", "A.jsonl", "--out", "./alias.jsonl"], "BENCH"),
    ],
)
def test_an_input_file_is_never_the_output(tmp_path: Path, args: list[str], name: str) -> None:
    (tmp_path / "A.jsonl").write_text("mine\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "alias.jsonl").symlink_to(tmp_path / "A.jsonl")
    code, out = _run(tmp_path, args)
    assert code == 2, out
    assert out.startswith(f"error: --out: {Path(args[-1])} is the input {name}; writing it would replace it"), out
    assert (tmp_path / "A.jsonl").read_text() == "mine\n"


def test_annotate_still_writes_beside_a_recorded_game(tmp_path: Path) -> None:
    code, out = _run(tmp_path, ["play", "-r", "mafiascope7", "-a", "scripted", "-s", "2", "-o", "runs"])
    assert code == 0, out
    g = next((tmp_path / "runs").glob(f"*/{GAME_FILE}")).parent
    before = (g / GAME_FILE).read_bytes()
    code, out = _run(tmp_path, ["beliefshift", "annotate", str(g), "--out", str(g / "ann.jsonl")])
    assert code == 0, out
    assert (g / "ann.jsonl").stat().st_size > 0
    assert (g / GAME_FILE).read_bytes() == before
