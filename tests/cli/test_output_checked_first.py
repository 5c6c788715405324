"""Every output path is checked before any work or warning, named by its option, and never a game's folder.

* A place where nothing can be created (``/proc/…``: ``os.access`` says yes to root there)
  is refused by every writer before it reads or prints anything, as ``error: OPTION: …``.
* A recorded game's folder (one holding ``game.jsonl``) is refused as an output folder by
  every command the same way (``cli._app.refuse_game_folder``); a new, empty or earlier
  output folder of the command itself still works.
* A library error about the output (``out: … already exists``) names ``--out``.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path

import pytest

from mafialab.record import CALLS_FILE, GAME_FILE
from tests.cli.test_output_paths import FILE_OUT, FOLDER_OUT, _run

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
