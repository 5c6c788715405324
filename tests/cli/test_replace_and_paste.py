"""Files a command writes are never replaced without ``--force``; commands it suggests paste safely.

Found by a new user: ``beliefshift annotate --out labels.jsonl`` replaced a hand-written labels
file without a word (and an earlier, perhaps paid, model annotation the same way);
``play --out .`` played, wrote, then crashed with a traceback; the commands ``play`` suggests
(``mafialab view OUT --out OUT-site``) were printed unquoted, so a folder named
``sp ace;$(cmd)`` ran ``cmd`` when pasted, and ``-weird`` read as an option; a labels file
saved with a UTF-8 byte-order mark was "not a JSON object".
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path

import pytest

from mafialab._words import shell_word
from mafialab.beliefshift import read_labels
from mafialab.record import iter_jsonl
from tests.cli.test_output_paths import _run  # runs a command in a folder: (code, output on one line)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("replace")
    code, out = _run(root, ["play", "--agents", "scripted", "--games", "2", "--out", "runs"])
    assert code == 0, out
    return root / "runs"


LABELS = '{"game_id": "g", "round": 1, "speaker": "Dana", "labels": [], "note": "mine"}\n'


@pytest.mark.parametrize(
    "args",
    [
        ["beliefshift", "annotate", "RUNS"],
        ["export", "tgn", "RUNS"],
    ],
    ids=["annotate", "export tgn"],
)
def test_an_existing_output_file_is_kept_unless_force(games: Path, tmp_path: Path, args: list[str]) -> None:
    args = [str(games) if a == "RUNS" else a for a in args]
    name = "labels.jsonl" if args[0] == "beliefshift" else "edges.csv"
    mine = tmp_path / name
    mine.write_text(LABELS)
    before = _sha(mine)
    code, out = _run(tmp_path, [*args, "--out", name])
    assert code == 2 and out == f"error: --out: {name} exists (use --force to replace it)", out
    assert _sha(mine) == before  # nothing written
    code, out = _run(tmp_path, [*args, "--out", name, "--force"])
    assert code == 0, out
    assert _sha(mine) != before


def test_freeze_keeps_an_existing_benchmark_file_unless_force(games: Path, tmp_path: Path) -> None:
    code, out = _run(tmp_path, ["beliefshift", "annotate", str(games), "--out", "ann.jsonl"])
    assert code == 0, out
    code, out = _run(tmp_path, ["beliefshift", "freeze", str(games), "ann.jsonl", "--out", "bench.jsonl"])
    assert code == 0, out
    first = _sha(tmp_path / "bench.jsonl")
    code, out = _run(tmp_path, ["beliefshift", "freeze", str(games), "ann.jsonl", "--out", "bench.jsonl"])
    assert code == 2 and "error: --out: bench.jsonl exists (use --force to replace it)" in out, out
    assert _sha(tmp_path / "bench.jsonl") == first
    code, out = _run(tmp_path, ["beliefshift", "freeze", str(games), "ann.jsonl", "--out", "bench.jsonl", "--force"])
    assert code == 0, out


def test_play_into_the_current_folder_works_twice(tmp_path: Path) -> None:
    here = tmp_path / "here"
    here.mkdir()
    code, out = _run(here, ["play", "--agents", "scripted", "--out", "."])
    assert code == 0, out
    assert len(list(here.glob("*/game.jsonl"))) == 1
    assert f"mafialab view . --out {tmp_path / 'here-site'} (web viewer)" in out
    # the same game again goes beside the folder, as for any --out
    code, out = _run(here, ["play", "--agents", "scripted", "--out", "."])
    assert code == 0, out
    assert len(list((tmp_path / "here-2").glob("*/game.jsonl"))) == 1
    assert f"mafialab report {tmp_path / 'here-2'} (metrics)" in out


@pytest.mark.parametrize("name", ["sp ace;$(touch pwned)", "-weird", "plain"])
def test_the_suggested_commands_paste_as_one_word_each(tmp_path: Path, name: str) -> None:
    code, out = _run(tmp_path, ["play", "--agents", "scripted", "--out", name])
    assert code == 0, out
    line = out[out.index("Look at the result: ") :]
    report = line[line.index("mafialab report ") : line.index(" (metrics)")]
    words = shlex.split(report)
    assert words[:2] == ["mafialab", "report"] and len(words) == 3, words
    assert (tmp_path / words[2]).resolve() == (tmp_path / name).resolve()
    assert not words[2].startswith("-")


def test_shell_word_quotes_what_the_shell_would_read() -> None:
    assert shell_word("runs") == "runs"
    assert shell_word(Path("/tmp/a b")) == "'/tmp/a b'"
    assert shell_word("x;$(rm -rf y)") == "'x;$(rm -rf y)'"
    assert shell_word("-weird") == "./-weird"
    assert shlex.split(shell_word("it's")) == ["it's"]


def test_a_labels_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    f = tmp_path / "bom.jsonl"
    f.write_bytes("\ufeff".encode() + LABELS.encode())
    labels = read_labels(f)
    assert [(m.game_id, m.round, m.speaker) for m in labels.messages] == [("g", 1, "Dana")]
    assert [obj for _, obj in iter_jsonl(f)] == [json.loads(LABELS)]


def test_export_parquet_leaves_out_an_unreadable_game_and_names_it(games: Path, tmp_path: Path) -> None:
    # as `report` and `view` do; it used to stop the whole export at the first such game
    import pandas as pd

    mixed = tmp_path / "mixed"
    for d in sorted(games.glob("*/game.jsonl")):
        (mixed / d.parent.name).mkdir(parents=True)
        (mixed / d.parent.name / "game.jsonl").write_bytes(d.read_bytes())
    (mixed / "broken").mkdir()
    (mixed / "broken" / "game.jsonl").write_text('{"kind": "speech"}\n')
    code, out = _run(tmp_path, ["export", "parquet", "mixed", "--out", "tables"])
    assert code == 0, out
    assert "skipped: mixed/broken/game.jsonl: line 1 is 'speech': no valid game_start header record" in out
    assert len(pd.read_parquet(tmp_path / "tables" / "games")) == 2
    (tmp_path / "only").mkdir()
    (tmp_path / "only" / "game.jsonl").write_text('{"kind": "speech"}\n')
    code, out = _run(tmp_path, ["export", "parquet", "only", "--out", "t2"])
    assert code == 2 and out.startswith("error: DIRECTORY: none of the 1 game under only can be read"), out


def test_the_suggested_commands_name_the_program_as_it_was_started(tmp_path: Path) -> None:
    # after scripts/setup.sh the virtual environment is not activated: `mafialab view …` was
    # "command not found" when pasted; the commands now start the way this run was started
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "mafialab"
    if not exe.is_file():
        pytest.skip("no mafialab script beside this Python (not installed in a virtual environment)")
    env = {**os.environ, "PATH": "/usr/bin:/bin", "COLUMNS": "300", "NO_COLOR": "1"}
    res = subprocess.run(
        [str(exe), "play", "--agents", "scripted", "--out", "runs"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    said = " ".join(res.stdout.split())
    report = said[said.index(f"{exe} report ") : said.index(" (metrics)")]
    pasted = subprocess.run(
        report + " --resamples 10", shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert pasted.returncode == 0, pasted.stderr
    assert "1 game (method default" in pasted.stdout


def test_freeze_says_when_an_annotated_game_is_a_branch_left_out(games: Path, tmp_path: Path) -> None:
    # annotate keeps fork branches, freeze leaves them out by default: the error said only that
    # the game "is not among the logs given", though it was
    runs = tmp_path / "runs"
    for d in sorted(games.glob("*/game.jsonl"))[:1]:
        (runs / d.parent.name).mkdir(parents=True)
        (runs / d.parent.name / "game.jsonl").write_bytes(d.read_bytes())
    parent = next(runs.iterdir())
    code, out = _run(tmp_path, ["fork", "run", str(parent), "--at", "5", "-n", "1", "--out", str(runs / "forks")])
    assert code == 0, out
    code, out = _run(tmp_path, ["beliefshift", "annotate", "runs", "--out", "ann.jsonl"])
    assert code == 0, out
    code, out = _run(tmp_path, ["beliefshift", "freeze", "runs", "ann.jsonl", "--out", "bench.jsonl"])
    assert code == 2 and "is not among the logs given (its id is a fork branch's" in out, out
    assert "`beliefshift freeze --include-branches`" in out
    code, out = _run(
        tmp_path, ["beliefshift", "freeze", "runs", "ann.jsonl", "--out", "bench.jsonl", "--include-branches"]
    )
    assert code == 0, out
