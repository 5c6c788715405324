"""Every command that writes somewhere refuses a wrong ``--out`` before any work, naming the option.

A file where a folder is wanted, a folder where a file is wanted, a path under a file and a
place that cannot be written each get ``error: --out: …`` (never the system's ``[Errno N]``)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab._words import shell_word
from mafialab.beliefshift import read_labels
from mafialab.cli import _app, app
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE, RECORDED_FILES, iter_jsonl

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


# commands whose --out (or --plots) is a folder: the arguments before it (inputs need not exist:
# the output is checked first)
FOLDER_OUT = {
    "play": (["play", "--agents", "scripted"], "--out"),
    "view": (["view", "."], "--out"),
    "report --plots": (["report", "."], "--plots"),
    "import mafiascope": (["import", "mafiascope", "."], "--out"),
    "season run": (["season", "run", "season.yaml"], "--out"),
    "fork run": (["fork", "run", "game", "--at", "1"], "--out"),
    "fork sweep": (["fork", "sweep", "game", "-n", "1"], "--out"),
    "bifurcate run": (["bifurcate", "run", "game", "--points", "1"], "--out"),
    "retest": (["retest", "game"], "--out"),
    "export parquet": (["export", "parquet", "."], "--out"),
    "beliefshift report": (["beliefshift", "report", "r.jsonl"], "--out"),
}


# commands whose --out is a file
FILE_OUT = {
    "beliefshift annotate": ["beliefshift", "annotate", "."],
    "beliefshift freeze": ["beliefshift", "freeze", ".", "ann.jsonl"],
    "beliefshift run": ["beliefshift", "run", "bench.jsonl"],
    "export tgn": ["export", "tgn", "."],
}


def _run(tmp_path: Path, args: list[str]) -> tuple[int, str]:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = runner.invoke(app, args)
    finally:
        os.chdir(cwd)
    return res.exit_code, " ".join(res.output.split())


@pytest.mark.parametrize("name", sorted(FOLDER_OUT))
def test_a_file_given_for_an_output_folder_is_refused_by_name(tmp_path: Path, name: str) -> None:
    args, option = FOLDER_OUT[name]
    (tmp_path / "notes.txt").write_text("mine\n")
    code, out = _run(tmp_path, [*args, option, "notes.txt"])
    assert code == 2, out
    assert f"error: {option}: notes.txt is a file; give a folder" in out or "give a directory or a FILE.parquet" in out
    assert "Errno" not in out
    assert (tmp_path / "notes.txt").read_text() == "mine\n"
    code, out = _run(tmp_path, [*args, option, "notes.txt/sub"])
    assert code == 2, out
    assert f"error: {option}: notes.txt/sub cannot be created: notes.txt is a file, not a folder" in out


@pytest.mark.parametrize("name", sorted(FILE_OUT))
def test_a_folder_given_for_an_output_file_is_refused_by_name(tmp_path: Path, name: str) -> None:
    args = FILE_OUT[name]
    (tmp_path / "results.csv").mkdir()
    code, out = _run(tmp_path, [*args, "--out", "results.csv"])
    assert code == 2, out
    assert "error: --out: results.csv is a folder; give a file name" in out
    (tmp_path / "notes.txt").write_text("mine\n")
    code, out = _run(tmp_path, [*args, "--out", "notes.txt/a.csv"])
    assert code == 2, out
    assert "error: --out: notes.txt/a.csv cannot be created: notes.txt is a file, not a folder" in out
    assert "Errno" not in out


def test_an_output_folder_that_cannot_be_written_is_refused_before_playing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    # a read-only disk (or a folder of another user): access(2) says no for writing
    monkeypatch.setattr(
        os,
        "access",
        lambda p, mode, **kw: (
            False if mode & os.W_OK and Path(p).resolve() == locked.resolve() else real_access(p, mode, **kw)
        ),
    )
    code, out = _run(tmp_path, ["play", "--agents", "scripted", "--out", "locked/runs"])
    assert code == 2, out
    assert "error: --out: cannot write the folder locked/runs: locked is not writable" in out
    code, out = _run(tmp_path, ["play", "--agents", "scripted", "--out", "locked"])
    assert code == 2, out
    assert "error: --out: cannot write into the folder locked: it is not writable" in out
    assert list(locked.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into any folder")
def test_a_read_only_folder_is_refused_by_name(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        code, out = _run(tmp_path, ["play", "--agents", "scripted", "--out", "locked/runs"])
    finally:
        locked.chmod(0o700)
    assert code == 2, out
    assert "--out: cannot write the folder locked/runs" in out


# Every output path is checked before any work or warning, named by its option, and never a game's folder.


ALL_OUT = {name: (args, option, "folder") for name, (args, option) in FOLDER_OUT.items()}


ALL_OUT.update({name: (args, "--out", "file") for name, args in FILE_OUT.items()})


on_linux = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not Path("/proc/self").is_dir(),
    reason="needs Linux /proc, where no folder can be created (not even by root)",
)


GAME_TEXT = '{"type": "header"}\n{"type": "event"}\n'


def _play(tmp_path: Path, out: str, seed: int = 0) -> Path:
    code, text = _run(tmp_path, ["play", "--agents", "scripted", "--seed", str(seed), "--out", out])
    assert code == 0, text
    (game,) = [d for d in (tmp_path / out).iterdir() if f"-s{seed}-" in d.name]
    return game


@on_linux
@pytest.mark.parametrize("name", sorted(ALL_OUT))
def test_an_output_where_nothing_can_be_created_is_refused_first_by_its_option(tmp_path: Path, name: str) -> None:
    args, option, what = ALL_OUT[name]
    target = "/proc/mafialab-nowhere/out" + (".csv" if what == "file" else "")
    code, out = _run(tmp_path, [*args, option, target])
    assert code == 2, out
    assert out.startswith(f"error: {option}: cannot write the {what} {target}: "), out
    assert "/proc" in out.removeprefix(f"error: {option}: cannot write the {what} {target}: ")
    assert "Errno" not in out and "SRC" not in out
    assert out.count("error:") == 1
    assert list(tmp_path.iterdir()) == []


@on_linux
def test_report_refuses_its_plots_folder_before_printing_the_report(tmp_path: Path) -> None:
    _play(tmp_path, "runs")
    code, out = _run(tmp_path, ["report", "runs", "--plots", "/proc/mafialab-nowhere/plots"])
    assert code == 2, out
    assert out.startswith("error: --plots: cannot write the folder /proc/mafialab-nowhere/plots: "), out
    assert "F1" not in out and "calls" not in out  # no report before the error


@on_linux
def test_season_run_refuses_its_out_before_the_roster_warning(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("name: small\ngames: 1\nroster:\n  - agent: scripted\n  - agent: random\n")
    code, out = _run(tmp_path, ["season", "run", "s.yaml", "--out", "/proc/mafialab-nowhere/season"])
    assert code == 2, out
    assert out.startswith("error: --out: cannot write the folder /proc/mafialab-nowhere/season: "), out
    assert "warning" not in out
    code, out = _run(tmp_path, ["season", "plan", "s.yaml"])  # the warning the refusal came before
    assert "warning: roster: 2 entries" in out


def test_import_names_out_for_an_error_while_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mafialab.cli._import as cmd

    def full_disk(src: Path, out: Path, **options: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(out / "g1" / GAME_FILE))

    monkeypatch.setattr(cmd, "import_mafiascope", full_disk)
    (tmp_path / "src").mkdir()
    code, out = _run(tmp_path, ["import", "mafiascope", "src", "--out", "imported"])
    assert code == 2, out
    assert out == "error: --out: imported/g1/game.jsonl: No space left on device"


def test_import_refuses_its_source_as_the_output(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    code, out = _run(tmp_path, ["import", "mafiascope", "src", "--out", "src"])
    assert code == 2, out
    assert out.startswith("error: --out: src is the input SRC; writing it would replace it"), out


@pytest.mark.parametrize("name", sorted(FOLDER_OUT))
@pytest.mark.parametrize("target", ["runs/G", "runs/G/", "runs/G/../G", "link"])
def test_a_recorded_games_folder_is_never_an_output_folder(tmp_path: Path, name: str, target: str) -> None:
    g = tmp_path / "runs" / "G"
    g.mkdir(parents=True)
    (g / GAME_FILE).write_text(GAME_TEXT)
    (g / CALLS_FILE).write_text("")
    (tmp_path / "link").symlink_to(g)
    args, option = FOLDER_OUT[name]
    code, out = _run(tmp_path, [*args, option, target])
    assert code == 2, out
    assert out == (
        f"error: {option}: {Path(target)} is a recorded game's folder (it holds game.jsonl); nothing is written "
        "into a game's folder: choose another folder"
    )
    assert sorted(p.name for p in g.iterdir()) == [CALLS_FILE, GAME_FILE]
    assert (g / GAME_FILE).read_text() == GAME_TEXT


def test_a_real_game_folder_is_refused_by_every_writer_that_reads_it(tmp_path: Path) -> None:
    game = _play(tmp_path, "runs")
    rel = str(game.relative_to(tmp_path))
    before = sorted(p.name for p in game.iterdir())
    for args in (
        ["play", "--agents", "scripted", "--seed", "1", "--out", rel],
        ["fork", "run", rel, "--at", "1", "--out", rel],
        ["bifurcate", "run", rel, "--points", "1", "--out", rel],
        ["export", "parquet", "runs", "--out", rel],
        ["import", "mafiascope", "runs", "--out", rel],
        ["view", "runs", "--out", rel],
    ):
        code, out = _run(tmp_path, args)
        assert code == 2, (args, out)
        assert out.startswith(f"error: --out: {rel} is a recorded game's folder (it holds game.jsonl)"), out
    assert sorted(p.name for p in game.iterdir()) == before


def test_the_commands_own_folders_still_take_more_output(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _play(tmp_path, "empty", seed=0)  # an empty folder
    game = _play(tmp_path, "empty", seed=1)  # the run folder the command wrote before: appended to
    assert len([d for d in (tmp_path / "empty").iterdir() if (d / GAME_FILE).is_file()]) == 2
    rel = str(game.relative_to(tmp_path))
    for seed in ("0", "1"):  # branches of one game, two batches in one folder
        code, out = _run(tmp_path, ["fork", "run", rel, "--at", "1", "--seed", seed, "--out", "branches"])
        assert code == 0, out
    assert len([d for d in (tmp_path / "branches").iterdir() if (d / GAME_FILE).is_file()]) == 2
    for _ in range(2):  # a game's own subfolder is not the game's folder (the viewer's branches go to DIR/forks)
        code, out = _run(tmp_path, ["export", "parquet", rel, "--out", f"{rel}/tables", "--force"])
        assert code == 0, out
    assert (game / "tables" / "games").is_dir()


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_fork_onto_its_own_branches_resumes_and_other_options_name_out(tmp_path: Path, command: str) -> None:
    game = str(_play(tmp_path, "runs").relative_to(tmp_path))
    args = (
        ["fork", "run", game, "--at", "1"] if command == "run" else ["fork", "sweep", game, "-n", "1", "--steps", "1"]
    )
    code, out = _run(tmp_path, [*args, "--out", "branches"])
    assert code == 0, out
    first = sorted(d.name for d in (tmp_path / "branches").iterdir())
    code, out = _run(tmp_path, [*args, "--out", "branches"])  # the command's own earlier output: resumed
    assert code == 0, out
    assert sorted(d.name for d in (tmp_path / "branches").iterdir()) == first and len(first) == 1
    if command == "run":
        assert "1 branch (1 already in branches, kept)" in out, out
        code, out = _run(tmp_path, [*args, "--probes", "suspicion", "--out", "branches"])
        assert code == 2, out
        assert out.startswith("error: --out: branches: holds fork batch "), out
        assert "with other parameters (probes); resume with the same command" in out, out


def test_season_run_onto_a_season_names_out_before_the_roster_warning(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("name: small\ngames: 1\nroster:\n  - agent: scripted\n  - agent: random\n")
    code, out = _run(tmp_path, ["season", "run", "s.yaml", "--out", "season"])
    assert code == 0, out
    manifest = (tmp_path / "season" / "season.json").read_text()
    code, out = _run(tmp_path, ["season", "run", "s.yaml", "--out", "season"])
    assert code == 2, out
    assert out == (
        "error: --out: season already holds a season; continue it with `mafialab season resume season` "
        "or choose another --out"
    )
    assert (tmp_path / "season" / "season.json").read_text() == manifest


def test_play_never_moves_its_run_into_a_games_folder(tmp_path: Path) -> None:
    _play(tmp_path, "runs")
    other = tmp_path / "runs-2"  # the next free name is a recorded game's own folder
    other.mkdir()
    (other / GAME_FILE).write_text(GAME_TEXT)
    code, out = _run(tmp_path, ["play", "--agents", "scripted", "--out", "runs"])
    assert code == 0, out
    assert "this run writes to runs-3/" in out
    assert sorted(p.name for p in other.iterdir()) == [GAME_FILE]
    assert len(list((tmp_path / "runs-3").glob(f"*/{GAME_FILE}"))) == 1


def test_bifurcate_run_resumes_in_its_own_folder_and_names_out_for_other_parameters(tmp_path: Path) -> None:
    game = str(_play(tmp_path, "runs").relative_to(tmp_path))
    args = ["bifurcate", "run", game, "--points", "random:1", "-M", "1", "--out", "bif"]
    code, out = _run(tmp_path, [*args, "-K", "2"])
    assert code == 0, out
    code, out = _run(tmp_path, [*args, "-K", "2"])  # its own folder: resumed, nothing new
    assert code == 0, out
    assert "0 new samples, 0 new forks in bif" in out
    code, out = _run(tmp_path, [*args, "-K", "3"])
    assert code == 2, out
    assert out.startswith("error: --out: bif: holds a bifurcation run with other parameters (resamples)"), out


def test_beliefshift_run_names_out_when_it_holds_another_runs_results(tmp_path: Path) -> None:
    from tests.helpers import freeze_scripted_bench

    bench = str(freeze_scripted_bench(tmp_path).relative_to(tmp_path))
    args = ["beliefshift", "run", bench, "--model", "mock/m", "--out", "r.jsonl"]
    code, out = _run(tmp_path, args)
    assert code == 0, out
    code, out = _run(tmp_path, [*args, "--protocol", "independent"])
    assert code == 2, out
    assert out.startswith("error: --out: r.jsonl: holds results of bench "), out
    assert out.endswith("choose another --out"), out


def test_view_refuses_its_logs_folder_and_a_folder_above_it_as_the_site(tmp_path: Path) -> None:
    """``view runs --out runs`` exited 0 and wrote index.html, app.js and data/ among the logs."""
    game = _play(tmp_path, "runs")
    (tmp_path / "all").mkdir()
    (tmp_path / "runs").rename(tmp_path / "all" / "runs")
    game = tmp_path / "all" / "runs" / game.name
    for dir_, site, words in (
        ("all/runs", "all/runs", "error: --out: all/runs is the input DIR; its output would be written among"),
        ("all/runs", "all/x/../runs", "error: --out: all/x/../runs is the input DIR;"),
        ("all/runs", "all", "error: --out: all holds the input DIR (all/runs); its output would be written"),
    ):
        code, out = _run(tmp_path, ["view", dir_, "--out", site])
        assert code == 2, out
        assert out.startswith(words), out
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["runs"]
    assert sorted(p.name for p in (tmp_path / "all" / "runs").iterdir()) == [game.name]
    # a folder inside the logs is no game: it is not read back, so it may hold the site
    code, out = _run(tmp_path, ["view", "all/runs", "--out", "all/runs/site"])
    assert code == 0, out
    assert (tmp_path / "all" / "runs" / "site" / "index.html").is_file()


def test_export_refuses_its_logs_folder_and_a_folder_above_it_as_the_dataset(tmp_path: Path) -> None:
    """``export parquet runs --out runs`` exited 0 and wrote games/, seats/ ... and _manifest.json among the logs."""
    game = _play(tmp_path, "runs")
    for out_dir, words in (
        ("runs", "error: --out: runs is the input DIRECTORY; its output would be written among"),
        (".", "error: --out: . holds the input DIRECTORY (runs); its output would be written"),
    ):
        code, out = _run(tmp_path, ["export", "parquet", "runs", "--out", out_dir])
        assert code == 2, out
        assert out.startswith(words), out
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [game.name]


# A file-system error while writing an output names the output's option.


ENV = {"COLUMNS": "240", "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}


needs_proc = pytest.mark.skipif(
    not Path("/proc/self").exists(), reason="needs Linux's /proc (a folder that refuses mkdir)"
)


def _mafialab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**ENV, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "mafialab", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("w")
    res = _mafialab("play", "-r", "mafiascope7", "-a", "scripted", "-s", "2", "-o", "runs", cwd=root)
    assert res.returncode == 0, res.stderr
    return root / "runs"


COMMANDS = {
    "beliefshift annotate": (["beliefshift", "annotate", "GAME"], "--out", "ann.jsonl"),
    "export tgn": (["export", "tgn", "RUNS"], "--out", "edges.csv"),
    "export parquet": (["export", "parquet", "RUNS"], "--out", "tables"),
    "play": (["play", "-a", "scripted"], "--out", "runs"),
    "view": (["view", "RUNS"], "--out", "site"),
    "report --plots": (["report", "RUNS"], "--plots", "plots"),
}


@needs_proc
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_output_that_cannot_be_created_is_named_by_its_option(runs: Path, name: str) -> None:
    args, option, leaf = COMMANDS[name]
    game = next(runs.glob(f"*/{GAME_FILE}")).parent
    argv = [str(game) if a == "GAME" else str(runs) if a == "RUNS" else a for a in args]
    res = _mafialab(*argv, option, f"/proc/nope/{leaf}", cwd=runs.parent)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert lines[-1].startswith(f"error: {option}: "), res.stderr
    assert "Errno" not in res.stderr


@needs_proc
def test_output_option_for_matches_the_path_its_missing_folders_and_its_contents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "a" / "b" / "out.jsonl"
    monkeypatch.setattr(_app, "_checked_outputs", [("--out", out), ("--plots", tmp_path / "p")])
    assert _app.output_option_for(out) == "--out"
    assert _app.output_option_for(tmp_path / "a") == "--out"  # a folder above that could not be made
    assert _app.output_option_for(tmp_path) is None  # an existing folder above: an input's error, maybe
    assert _app.output_option_for(str(tmp_path / "p" / "fig.png")) == "--plots"  # a file inside an output folder
    assert _app.output_option_for(tmp_path / "ab") is None
    assert _app.output_option_for("/elsewhere/in.jsonl") is None
    assert _app.output_option_for(None) is None


# No ``--out`` may overwrite a recorded game's logs or the command's own input.


CALLS_TEXT = '{"type": "call"}\n'


ALL_OUT_recorded_outputs = {name: (args, option) for name, (args, option) in FOLDER_OUT.items()}


ALL_OUT_recorded_outputs.update({name: (args, "--out") for name, args in FILE_OUT.items()})


def _game(tmp_path: Path) -> Path:
    g = tmp_path / "runs" / "G"
    g.mkdir(parents=True)
    (g / GAME_FILE).write_text(GAME_TEXT)
    (g / CALLS_FILE).write_text(CALLS_TEXT)
    return g


def test_the_recorded_names_come_from_the_record_package() -> None:
    assert {GAME_FILE, CALLS_FILE, PROBES_FILE, "verdicts.jsonl", "retest.jsonl"} <= RECORDED_FILES


@pytest.mark.parametrize("name", sorted(ALL_OUT_recorded_outputs))
@pytest.mark.parametrize("target", ["runs/G/game.jsonl", "runs/G/calls.jsonl", "runs/G/probes.jsonl",
                                    "runs/G/../G/game.jsonl", "link.jsonl"])  # fmt: skip
def test_a_recorded_log_is_never_an_output(tmp_path: Path, name: str, target: str) -> None:
    g = _game(tmp_path)
    (tmp_path / "link.jsonl").symlink_to(g / GAME_FILE)
    args, option = ALL_OUT_recorded_outputs[name]
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


# Files a command writes are never replaced without ``--force``; commands it suggests paste safely.


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
