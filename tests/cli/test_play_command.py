import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.record import iter_game_dirs, read_game
from tests.helpers import scripted_play

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


def test_play_writes_k_games_and_summary(tmp_path):
    res = runner.invoke(app, scripted_play(tmp_path, "--seed", "5", "--games", "3"))
    assert res.exit_code == 0, res.output
    dirs = iter_game_dirs(tmp_path)
    assert len(dirs) == 3
    logs = [read_game(d) for d in dirs]
    assert sorted(log.header.seed for log in logs) == [5, 6, 7]
    for log in logs:
        assert log.winner in ("town", "mafia")
        assert log.game_id in res.output
    assert "3 games of mafiascope7-v1" in res.output


def test_play_mixed_seats_and_yaml_rules(tmp_path):
    rules = tmp_path / "ww.yaml"
    rules.write_text("extends: werewolf7\nname: wwreveal\nreveal_role_on_death: true\n")
    res = runner.invoke(
        app,
        [
            "play",
            "--rules",
            str(rules),
            "--agents",
            "random",
            "--seat",
            "0=scripted",
            "--seat",
            "3=scripted",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert res.exit_code == 0, res.output
    log = read_game(iter_game_dirs(tmp_path / "o")[0])
    assert [s.agent for s in log.header.roster] == [
        "scripted",
        "random",
        "random",
        "scripted",
        "random",
        "random",
        "random",
    ]
    assert log.header.rules.name == "wwreveal"
    assert any(e.kind == "elimination" and e.role for e in log.events)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "chess"], "unknown rule set 'chess'"),
        (["--agents", "wizard"], "unknown agent spec 'wizard'"),
        (["--agents", "nosuch/model"], "unknown model provider 'nosuch'"),
        (["--seat", "9=scripted"], "seat 9 out of range"),
        (["--seat", "x"], "expected N=SPEC"),
        (["--games", "0"], "--games"),
    ],
)
def test_play_bad_input_is_a_clear_error(tmp_path, args, message):
    res = runner.invoke(app, ["play", "--agents", "scripted", *args, "--out", str(tmp_path)])
    assert res.exit_code != 0
    assert message in res.output
    assert "Traceback" not in res.output


def test_bad_yaml_rules_exit_code_no_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "extends: mafiascope7\nroles: [{name: M, count: 3, team: mafia, ability: kill}, {name: V, count: 2, team: town}]\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mafialab", "play", "--rules", str(bad), "--agents", "scripted", "--out", str(tmp_path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "roles" in proc.stderr and "parity" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_rules_list_and_show():
    res = runner.invoke(app, ["rules", "list"])
    assert res.exit_code == 0
    for name in ("mafiascope7", "werewolf7", "arena12"):
        assert name in res.output
    # every version is listed (a user looking for the benchmark setting finds werewolf7-v2), the default marked
    for rid in ("mafiascope7-v2", "werewolf7-v2", "werewolf7-v1 (default)"):
        assert rid in res.output
    res = runner.invoke(app, ["rules", "show", "arena12"])
    assert res.exit_code == 0
    import yaml

    shown = yaml.safe_load(res.output)
    assert shown["day"]["vote"] == "nomination_runoff" and shown["roles"][0] == {
        "name": "Mafia",
        "count": 3,
        "team": "mafia",
        "ability": "kill",
    }
    res = runner.invoke(app, ["rules", "show", "nope"])
    assert res.exit_code == 2 and "unknown rule set" in res.output


def test_help_explains_commands():
    res = runner.invoke(app, ["play", "--help"])
    assert res.exit_code == 0 and "--rules" in res.output and "--seed" in res.output


def test_a_second_run_goes_to_a_new_directory_and_says_where(tmp_path):
    out = tmp_path / "runs"
    res = runner.invoke(app, ["play", "--agents", "scripted", "--seed", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    before = {p: (p / "game.jsonl").read_bytes() for p in out.iterdir()}
    res = runner.invoke(app, ["play", "--agents", "scripted", "--seed", "2", "--games", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "already holds this game" in flat and f"this run writes to {tmp_path / 'runs-2'}/" in flat
    assert {p: (p / "game.jsonl").read_bytes() for p in out.iterdir()} == before  # the first run is untouched
    assert len(list((tmp_path / "runs-2").glob("*/game.jsonl"))) == 3
    res = runner.invoke(app, ["play", "--agents", "scripted", "--seed", "3", "--out", str(out)])
    assert res.exit_code == 0 and len(list((tmp_path / "runs-3").glob("*/game.jsonl"))) == 1  # a third run


def test_play_ends_by_saying_how_to_look_at_the_result(tmp_path):
    out = tmp_path / "runs"
    res = runner.invoke(app, ["play", "--agents", "scripted", "--out", str(out)])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert f"mafialab view {out} --out {tmp_path / 'runs-site'}" in flat and f"mafialab report {out}" in flat


def test_cli_bad_max_tokens_no_traceback_no_orphan_log(tmp_path) -> None:
    out = tmp_path / "o"
    result = CliRunner().invoke(app, ["play", "--agents", "mock/x?max_tokens=abc", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "max_tokens" in result.output
    assert not isinstance(result.exception, TypeError)
    assert not list(out.rglob("game.jsonl"))


def test_cli_mock_exhausted_is_a_clear_error(tmp_path) -> None:
    out = tmp_path / "o"
    spec = 'mock/x?outputs=[{"target":"Alex"}]'
    result = CliRunner().invoke(app, ["play", "--agents", spec, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "no scripted output left" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert list(out.rglob("game.jsonl"))  # what was recorded is kept


@pytest.mark.parametrize("name", ["x[/]w", "r[old]", "b[bold]x"])
def test_output_paths_with_brackets_are_printed_as_written(tmp_path, name):
    # square brackets in a path are text, not console markup: no crash, and the printed log folder exists
    out = tmp_path / name
    res = runner.invoke(app, ["play", "--agents", "scripted", "--out", str(out)])
    assert res.exit_code == 0, res.output
    (game,) = iter_game_dirs(out)
    assert f"  seed 0: {game.resolve()}" in res.output.splitlines()


@pytest.mark.parametrize(("games", "listed"), [(3, 3), (23, 20)])
def test_play_prints_each_games_folder_whole_one_per_line(tmp_path, monkeypatch, games, listed):
    # at 80 columns too: a folder is never cut ("werewolf7-s0-d2c…") nor wrapped inside its path
    monkeypatch.chdir(tmp_path)
    res = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"}).invoke(
        app, ["play", "--agents", "scripted", "--games", str(games), "--out", "runs"]
    )
    assert res.exit_code == 0, res.output
    dirs = {d.name: d for d in iter_game_dirs(tmp_path / "runs")}
    assert len(dirs) == games
    lines = res.output.splitlines()
    shown = [m.groups() for m in map(re.compile(r"^  seed (\d+): (.+)$").match, lines) if m]
    assert len(shown) == listed
    for seed, folder in shown:
        path = Path(folder)
        assert path.is_absolute() and path.parent == (tmp_path / "runs").resolve()
        assert path.name in dirs and (path / "game.jsonl").exists()
        assert read_game(path).header.seed == int(seed)
    if games > listed:
        assert f"... and {games - listed} more, each a folder of {(tmp_path / 'runs').resolve()}/" in res.output
    assert "Logs in runs/" not in res.output


def test_an_unknown_agent_spec_lists_every_spec_the_factory_accepts(tmp_path, monkeypatch):
    """It said "known: random, scripted, or a model string": human, human-web, remote and bus were missing."""
    from mafialab.agents import _protocol, agent_spec_forms, register_agent_resolver
    from mafialab.models import backend_names
    from mafialab.remote import SEAT_KINDS

    res = runner.invoke(app, ["play", "--agents", "nonsense", "--out", str(tmp_path)])
    assert res.exit_code == 2
    flat = " ".join(res.output.split())
    providers = ", ".join(backend_names())
    assert "bus" in backend_names()
    # other tests in this process may have registered their own specs: the list is the registry's
    names = [f for f in agent_spec_forms() if not f.startswith("a model string")]
    assert f"unknown agent spec 'nonsense' (known: {', '.join(names)}, or a model string" in flat
    assert all(x in names for x in ("random", "scripted", *SEAT_KINDS))
    assert f"or a model string PROVIDER/MODEL (PROVIDER: {providers}))" in flat
    # one list, from the registry: a factory registered later is named too
    monkeypatch.setattr(_protocol, "_RESOLVERS", list(_protocol._RESOLVERS))
    register_agent_resolver(lambda s: s == "tiny-bot", lambda *a: None, ("tiny-bot",))  # type: ignore[arg-type,return-value]
    assert "tiny-bot" in agent_spec_forms()
    res = runner.invoke(app, ["play", "--agents", "nonsense", "--out", str(tmp_path)])
    assert "human-web, tiny-bot, or a model string" in " ".join(res.output.split())
