"""A command given the wrong kind of input path says what it was given and what it wants.

Commands reading many games (view, report, judge, export, beliefshift annotate) name a file
that is not a game log, or a folder without games; commands reading one game (fork, retest,
bifurcate run) given a runs folder list the games in it so the user can pick one."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import LogFormatError, read_game

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


MANY_GAMES = {
    "view": ["view", "{x}", "--out", "{tmp}/site"],
    "report": ["report", "{x}"],
    "judge": ["judge", "{x}", "--judge", "mock/x"],
    "export parquet": ["export", "parquet", "{x}", "--out", "{tmp}/tables"],
    "export tgn": ["export", "tgn", "{x}"],
    "beliefshift annotate": ["beliefshift", "annotate", "{x}", "--out", "{tmp}/ann.jsonl"],
}


ONE_GAME = {
    "fork steps": ["fork", "steps", "{x}"],
    "fork run": ["fork", "run", "{x}", "--at", "1", "--out", "{tmp}/b"],
    "fork sweep": ["fork", "sweep", "{x}", "-n", "1", "--out", "{tmp}/b"],
    "retest": ["retest", "{x}", "--out", "{tmp}/r"],
    "bifurcate run": ["bifurcate", "run", "{x}", "--points", "1", "--out", "{tmp}/b"],
}


def _invoke(template: list[str], x: Path, tmp: Path) -> tuple[int, str]:
    res = runner.invoke(app, [a.format(x=x, tmp=tmp) for a in template])
    return res.exit_code, " ".join(res.output.split())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "runs"
    res = runner.invoke(app, ["play", "--agents", "scripted", "--rules", "mafiascope7", "-k", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.mark.parametrize("name", sorted(MANY_GAMES))
def test_a_file_that_is_not_a_game_log_is_named_with_what_is_expected(tmp_path: Path, name: str) -> None:
    notes = tmp_path / "README.md"
    notes.write_text("# my notes\n")
    code, out = _invoke(MANY_GAMES[name], notes, tmp_path)
    assert code == 2, out
    assert f"{notes} is a file, not a game log: expected a game's folder (holding game.jsonl)" in out
    assert "no game.jsonl found" not in out and "Traceback" not in out


@pytest.mark.parametrize("name", sorted(MANY_GAMES))
def test_a_folder_without_games_says_so_and_what_is_expected(tmp_path: Path, name: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = _invoke(MANY_GAMES[name], empty, tmp_path)
    assert code == 2, out
    assert f"{empty} is a folder with no game.jsonl in it or below: expected a game's folder" in out
    assert "mafialab import mafiascope" in out


@pytest.mark.parametrize("name", sorted(ONE_GAME))
def test_a_runs_folder_given_for_one_game_lists_its_games(runs: Path, tmp_path: Path, name: str) -> None:
    games = sorted(p.name for p in runs.iterdir())
    assert len(games) == 2
    code, out = _invoke(ONE_GAME[name], runs, tmp_path)
    assert code == 2, out
    assert f"{runs} is a folder of games (2 found), not one game's folder: give one of" in out
    for g in games:
        assert str(runs / g) in out
    assert "cannot open" not in out


def test_a_folder_of_many_games_lists_a_few_and_counts_the_rest(tmp_path: Path) -> None:
    for i in range(7):
        (tmp_path / f"g{i}").mkdir()
        (tmp_path / f"g{i}" / "game.jsonl").write_text("{}\n")
    with pytest.raises(LogFormatError) as err:
        read_game(tmp_path)
    msg = str(err.value)
    assert "(7 found)" in msg and str(tmp_path / "g4") in msg and str(tmp_path / "g5") not in msg
    assert msg.endswith("… 2 more")


def test_a_file_that_is_not_a_game_log_is_named_for_one_game(tmp_path: Path) -> None:
    notes = tmp_path / "README.md"
    notes.write_text("# my notes\n")
    code, out = _invoke(ONE_GAME["fork steps"], notes, tmp_path)
    assert code == 2, out
    assert "README.md is not a game log: expected one game's folder, holding game.jsonl" in out


FILE_INPUTS = {
    "season plan": (["season", "plan", "{x}"], "YAML"),
    "rules show": (["rules", "show", "{x}"], "YAML"),
    "play --prices": (["play", "--agents", "scripted", "--prices", "{x}", "--out", "{tmp}/runs"], "YAML"),
    "beliefshift run": (["beliefshift", "run", "{x}", "--model", "mock/x", "--out", "{tmp}/r.jsonl"], "JSONL"),
    "beliefshift agreement": (["beliefshift", "agreement", "{x}", "{x}"], "JSONL"),
    "beliefshift report": (["beliefshift", "report", "{x}", "--out", "{tmp}/rep"], "JSONL"),
}


@pytest.mark.parametrize("name", sorted(FILE_INPUTS))
def test_a_folder_given_for_an_input_file_says_a_file_is_expected(tmp_path: Path, name: str) -> None:
    template, kind = FILE_INPUTS[name]
    folder = tmp_path / "conf"
    folder.mkdir()
    code, out = _invoke(template, folder, tmp_path)
    assert code == 2, out
    assert f"{folder} is a folder, not a file: expected a {kind} file" in out
    assert "Is a directory" not in out


# Bad input is named by the option or argument it was given as: one line, rc 2, no traceback.


BAD_MODEL = "mock/x?context_window=abc"


@pytest.fixture(scope="module")
def runs_named_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("named") / "runs_named_inputs"
    res = runner.invoke(app, ["play", "--agents", "scripted", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def game(runs_named_inputs: Path) -> Path:
    (g,) = [p for p in runs_named_inputs.iterdir() if p.is_dir()]
    return g


def _run(args: list[str]) -> tuple[int, str]:
    res = runner.invoke(app, args)
    assert "Traceback" not in res.output, res.output
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.output


def _one_error_line(out: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, out
    return lines[0]


MODEL_OPTIONS = {
    "play --agents": (["play", "--agents", BAD_MODEL, "--out", "{tmp}/o"], "--agents: "),
    "play --seat": (
        ["play", "--agents", "scripted", "--seat", f"2={BAD_MODEL}", "--out", "{tmp}/o"],
        f"--seat 2={BAD_MODEL}: ",
    ),
    "play --seat unknown spec": (
        ["play", "--agents", "scripted", "--seat", "1=bogus", "--out", "{tmp}/o"],
        "--seat 1=bogus: unknown agent spec 'bogus'",
    ),
    "play --agents unknown provider": (
        ["play", "--agents", "bogus/x", "--out", "{tmp}/o"],
        "--agents: 'bogus/x': unknown model provider 'bogus'",
    ),
    "fork run --agents": (
        ["fork", "run", "{game}", "--at", "1", "--agents", BAD_MODEL, "--out", "{tmp}/b"],
        "--agents: ",
    ),
    "fork run --seat": (
        ["fork", "run", "{game}", "--at", "1", "--seat", "3=bogus/x", "--out", "{tmp}/b"],
        "--seat 3=bogus/x: 'bogus/x': unknown model provider 'bogus'",
    ),
    "fork sweep --agents": (
        ["fork", "sweep", "{game}", "-n", "1", "--agents", BAD_MODEL, "--out", "{tmp}/b"],
        "--agents: ",
    ),
    "bifurcate run --agents": (
        ["bifurcate", "run", "{game}", "--points", "1", "--agents", BAD_MODEL, "--out", "{tmp}/b"],
        "--agents: ",
    ),
    "bifurcate run --sampler": (
        ["bifurcate", "run", "{game}", "--points", "1", "--sampler", "bogus", "--out", "{tmp}/b"],
        "--sampler: unknown agent spec 'bogus'",
    ),
    "retest --agents": (
        ["retest", "{game}", "--agents", BAD_MODEL, "--out", "{tmp}/r"],
        "--agents: ",
    ),
    "bus worker --model": (
        ["bus", "worker", "--model", BAD_MODEL, "--hub", "http://127.0.0.1:9", "--max-jobs", "1"],
        "--model: ",
    ),
    "judge --judge": (["judge", "{runs_named_inputs}", "--judge", BAD_MODEL], "--judge: "),
    "play --probes": (
        ["play", "--agents", "scripted", "--probes", "nope", "--out", "{tmp}/o"],
        "--probes: 'nope' is neither a built-in battery",
    ),
    "retest --battery": (
        ["retest", "{game}", "--battery", "nope", "--out", "{tmp}/r"],
        "--battery: 'nope' is neither a built-in battery",
    ),
    "play --rules": (
        ["play", "--agents", "scripted", "--rules", "nope", "--out", "{tmp}/o"],
        "--rules: unknown rule set",
    ),
    "rules show": (["rules", "show", "nope"], "NAME: unknown rule set 'nope'"),
}


@pytest.mark.parametrize("name", sorted(MODEL_OPTIONS))
def test_a_bad_model_string_or_spec_names_its_option_and_field(
    runs_named_inputs: Path, game: Path, tmp_path: Path, name: str
) -> None:
    template, want = MODEL_OPTIONS[name]
    code, out = _run([a.format(tmp=tmp_path, game=game, runs_named_inputs=runs_named_inputs) for a in template])
    assert code == 2, out
    line = _one_error_line(out)
    assert line.startswith(f"error: {want}"), out
    if want.endswith(": "):  # a BAD_MODEL case
        assert "context_window" in line and "'abc'" in line, line  # the bad field and its value
    assert "agents: " not in line.replace("--agents: ", ""), line  # the library's own word is not shown


def test_fail_prints_one_line_even_on_a_narrow_terminal(tmp_path: Path) -> None:
    narrow = CliRunner(env={"COLUMNS": "40", "NO_COLOR": "1"})
    res = narrow.invoke(app, ["play", "--agents", BAD_MODEL, "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --agents: ") and len(lines[0]) > 40, lines


MISSING = {
    "fork compare DIR_A": (["fork", "compare", "{nope}", "{nope}2"], "DIR_A: {nope} does not exist"),
    "fork compare DIR_B": (["fork", "compare", "{runs_named_inputs}", "{nope}"], "DIR_B: {nope} does not exist"),
    "fork steps": (["fork", "steps", "{nope}"], "GAME: {nope} does not exist: expected one game's folder"),
    "fork run": (["fork", "run", "{nope}", "--at", "1", "--out", "{tmp}/b"], "GAME: {nope} does not exist"),
    "fork sweep": (["fork", "sweep", "{nope}", "-n", "1", "--out", "{tmp}/b"], "GAME: {nope} does not exist"),
    "bifurcate run": (
        ["bifurcate", "run", "{nope}", "--points", "1", "--out", "{tmp}/b"],
        "GAME: {nope} does not exist",
    ),
    "bifurcate report": (["bifurcate", "report", "{nope}"], "PATH: {nope} does not exist: expected a bifurcation"),
    "retest": (["retest", "{nope}", "--out", "{tmp}/r"], "GAME: {nope} does not exist"),
    "play --prices": (
        ["play", "--agents", "scripted", "--prices", "{nope}.yaml", "--out", "{tmp}/o"],
        "--prices: {nope}.yaml does not exist",
    ),
    "fork run --prices": (
        ["fork", "run", "{game}", "--at", "1", "--prices", "{nope}.yaml", "--out", "{tmp}/b"],
        "--prices: {nope}.yaml does not exist",
    ),
    "season run": (["season", "run", "{nope}.yaml", "--out", "{tmp}/s"], "FILE: {nope}.yaml does not exist"),
    "season plan": (["season", "plan", "{nope}.yaml"], "FILE: {nope}.yaml does not exist"),
    "season resume": (["season", "resume", "{nope}"], "OUT: {nope} does not exist: expected a season folder"),
    "season leaderboard": (["season", "leaderboard", "{nope}"], "OUT: {nope} does not exist"),
    "report --retest": (["report", "{runs_named_inputs}", "--retest", "{nope}"], "--retest: {nope} does not exist"),
    "beliefshift run": (
        ["beliefshift", "run", "{nope}.jsonl", "--model", "mock/x", "--out", "{tmp}/r.jsonl"],
        "BENCH: {nope}.jsonl does not exist",
    ),
    "beliefshift report": (["beliefshift", "report", "{nope}.jsonl"], "RESULTS: {nope}.jsonl does not exist"),
    "beliefshift agreement": (
        ["beliefshift", "agreement", "{nope}.jsonl", "{nope}.jsonl"],
        "ANN_A: {nope}.jsonl does not exist",
    ),
    "beliefshift freeze": (
        ["beliefshift", "freeze", "{runs_named_inputs}", "{nope}.jsonl", "--out", "{tmp}/b.jsonl"],
        "ANNOTATIONS: {nope}.jsonl does not exist",
    ),
    "judge": (["judge", "{nope}", "--judge", "mock/j"], "GAME_DIR: {nope} does not exist: expected a game's folder"),
    "export parquet": (["export", "parquet", "{nope}", "--out", "{tmp}/t"], "DIRECTORY: {nope} does not exist"),
    "export tgn": (["export", "tgn", "{nope}"], "DIRECTORY: {nope} does not exist"),
    "beliefshift annotate": (
        ["beliefshift", "annotate", "{runs_named_inputs}", "{nope}", "--out", "{tmp}/a.jsonl"],
        "LOGS: {nope} does not exist: expected a game's folder",
    ),
    "beliefshift freeze LOGS": (
        ["beliefshift", "freeze", "{nope}", "{nope}.jsonl", "--out", "{tmp}/b.jsonl"],
        "LOGS: {nope} does not exist",
    ),
    "import mafiascope": (
        ["import", "mafiascope", "{nope}", "--out", "{tmp}/i"],
        "SRC: {nope} does not exist: expected a MafiaScope folder",
    ),
}


@pytest.mark.parametrize("name", sorted(MISSING))
def test_a_missing_input_names_its_argument_and_the_path(
    runs_named_inputs: Path, game: Path, tmp_path: Path, name: str
) -> None:
    template, want = MISSING[name]
    fill = {"tmp": tmp_path, "game": game, "runs_named_inputs": runs_named_inputs, "nope": tmp_path / "nope"}
    code, out = _run([a.format(**fill) for a in template])
    assert code == 2, out
    assert _one_error_line(out).startswith("error: " + want.format(**fill)), out
    assert "no branches" not in out and "cannot read" not in out and "cannot open" not in out


def test_fork_compare_given_a_file_says_a_folder_of_branches_is_expected(game: Path, runs_named_inputs: Path) -> None:
    code, out = _run(["fork", "compare", str(game / "game.jsonl"), str(runs_named_inputs)])
    assert code == 2
    assert _one_error_line(out).startswith(
        f"error: DIR_A: {game / 'game.jsonl'} is a file, not a folder: expected a folder of branches"
    )


def test_a_bad_prices_entry_names_the_option_the_file_and_the_field(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/m: {input: lots, output: 1}\n")
    code, out = _run(["play", "--agents", "scripted", "--prices", str(prices), "--out", str(tmp_path / "o")])
    assert code == 2
    line = _one_error_line(out)
    assert line.startswith(f"error: --prices: {prices}: ") and "input" in line, line


@pytest.mark.parametrize("text", ["", "\n# only a comment\n"])
def test_an_empty_prices_file_is_refused_like_every_other_empty_config(tmp_path: Path, text: str) -> None:
    # it was taken silently as "no prices"; rules, batteries and season files say it is empty
    prices = tmp_path / "prices.yaml"
    prices.write_text(text)
    code, out = _run(["play", "--agents", "scripted", "--prices", str(prices), "--out", str(tmp_path / "o")])
    assert code == 2
    assert _one_error_line(out).startswith(f"error: --prices: {prices}: the file is empty (expected a price table")
    assert not (tmp_path / "o").exists()


def test_import_mafiascope_given_a_file_says_a_folder_is_expected(game: Path, tmp_path: Path) -> None:
    f = game / "game.jsonl"
    code, out = _run(["import", "mafiascope", str(f), "--out", str(tmp_path / "i")])
    assert code == 2
    assert _one_error_line(out).startswith(f"error: SRC: {f} is a file, not a folder: expected a MafiaScope folder")
    assert "no such directory" not in out


@pytest.mark.parametrize("which", ["runs_named_inputs", "game"])
def test_import_mafiascope_given_a_mafialab_log_folder_says_so(
    runs_named_inputs: Path, game: Path, tmp_path: Path, which: str
) -> None:
    src = runs_named_inputs if which == "runs_named_inputs" else game
    code, out = _run(["import", "mafiascope", str(src), "--out", str(tmp_path / "i")])
    assert code == 2
    line = _one_error_line(out)
    assert line.startswith(f"error: SRC: {src} is already a mafialab log folder (1 game with a game_start header)")
    assert "nothing to import" in line
    assert not (tmp_path / "i").exists() or not list((tmp_path / "i").rglob("game.jsonl"))


def test_view_prints_a_bad_line_warning_once(game: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    logs = tmp_path / "logs" / "g"
    logs.mkdir(parents=True)
    text = (game / "game.jsonl").read_text()
    (logs / "game.jsonl").write_text(text[: text.rindex("\n", 0, len(text) - 1) + 40])  # a torn last line
    with caplog.at_level(logging.WARNING):
        res = runner.invoke(app, ["view", str(tmp_path / "logs"), "--out", str(tmp_path / "site"), "-j", "1"])
    assert res.exit_code == 0, res.output
    torn = [r.getMessage() for r in caplog.records if "not valid JSON" in r.getMessage()]
    assert len(torn) == 1 and torn[0].startswith(f"{logs / 'game.jsonl'}:"), torn


def test_an_option_the_mock_backend_does_not_take_is_named_not_a_traceback(runs_named_inputs: Path) -> None:
    code, out = _run(["judge", str(runs_named_inputs), "--judge", "mock/x?max_tokens=3"])
    assert code == 2
    assert _one_error_line(out) == (
        "error: --judge: mock/x: unknown option 'max_tokens' (known: calls_network, context_window, logprobs, outputs)"
    )


def test_a_bad_agent_in_a_season_file_is_named_by_file_and_field_only(tmp_path: Path) -> None:
    season = tmp_path / "season.yaml"
    season.write_text(
        "name: s\nrules: werewolf7\ngames: 1\nroster:\n  - agent: scripted\n  - agent: bogus\n"
        "judges:\n  - model: mock/j\n"
    )
    code, out = _run(["season", "plan", str(season)])
    assert code == 2
    line = _one_error_line(out)
    assert line.startswith(f"error: FILE: {season}: roster[1].agent: unknown agent spec 'bogus'"), line
    assert "agents:" not in line


def test_a_model_option_given_as_its_own_option_is_named_by_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    monkeypatch.delenv("OTHER_KEY_VAR", raising=False)
    out = str(tmp_path / "o")
    code, text = _run(["play", "--agents", "openai/m", "--api-key-env", "NO_SUCH_KEY_VAR", "--out", out])
    assert code == 2
    assert _one_error_line(text) == "error: --api-key-env: environment variable NO_SUCH_KEY_VAR is not set"
    # the model string's own option wins over the shared one, and is named as part of --agents
    spec = "openai/m?api_key_env=OTHER_KEY_VAR"
    code, text = _run(["play", "--agents", spec, "--api-key-env", "NO_SUCH_KEY_VAR", "--out", out])
    assert code == 2
    assert _one_error_line(text) == "error: --agents: api_key_env: environment variable OTHER_KEY_VAR is not set"


MODEL_STRING_OPTIONS = {
    "play --agents": (["play", "--agents", "{spec}", "--out", "{tmp}/o"], "--agents"),
    "play --seat": (["play", "--agents", "scripted", "--seat", "2={spec}", "--out", "{tmp}/o"], "--seat 2={spec}"),
    "judge --judge": (["judge", "{runs_named_inputs}", "--judge", "{spec}"], "--judge"),
    "bus worker --model": (
        ["bus", "worker", "--model", "{spec}", "--hub", "http://127.0.0.1:9", "--max-jobs", "1"],
        "--model",
    ),
    "beliefshift annotate --annotator": (
        ["beliefshift", "annotate", "{runs_named_inputs}", "--annotator", "{spec}", "--out", "{tmp}/a.jsonl"],
        "--annotator",
    ),
}


@pytest.mark.parametrize("spec", ["bogus/x", "openai/"])
@pytest.mark.parametrize("name", sorted(MODEL_STRING_OPTIONS))
def test_every_model_option_words_a_bad_provider_as_the_one_model_string_parser(
    runs_named_inputs: Path, tmp_path: Path, name: str, spec: str
) -> None:
    from mafialab.models import ModelSpecError, parse_model_spec

    with pytest.raises(ModelSpecError) as parsed:
        parse_model_spec(spec)
    template, option = MODEL_STRING_OPTIONS[name]
    code, out = _run([a.format(tmp=tmp_path, runs_named_inputs=runs_named_inputs, spec=spec) for a in template])
    assert code == 2, out
    assert _one_error_line(out) == f"error: {option.format(spec=spec)}: {parsed.value}"


def test_a_season_judge_with_an_unknown_provider_has_the_same_wording() -> None:
    from mafialab.arena import SeasonConfigError, season_from_dict
    from mafialab.models import ModelSpecError, parse_model_spec

    with pytest.raises(ModelSpecError) as parsed:
        parse_model_spec("bogus/x")
    with pytest.raises(SeasonConfigError) as err:
        season_from_dict({"name": "s", "games": 1, "roster": ["scripted"], "judges": ["bogus/x"]})
    assert str(err.value).endswith(f"judges[0].model: {parsed.value}")


# ``--cache`` of ``report`` and ``view`` names a folder: a file there is refused before any work.


GAME = Path(__file__).resolve().parents[1] / "data" / "viewer_branches" / "parent"


@pytest.mark.parametrize("command", [["report", str(GAME)], ["view", str(GAME), "--out", "SITE"]])
def test_a_file_given_as_the_cache_folder_is_refused(command: list[str], tmp_path: Path) -> None:
    cache = tmp_path / "cache.txt"
    cache.write_text("mine\n", encoding="utf-8")
    args = [str(tmp_path / "site") if a == "SITE" else a for a in command]
    res = CliRunner().invoke(app, [*args, "--cache", str(cache)])
    assert res.exit_code == 2, res.output
    assert "--cache" in res.output and "file" in res.output
    assert cache.read_text(encoding="utf-8") == "mine\n"
    assert not (tmp_path / "site").exists()
