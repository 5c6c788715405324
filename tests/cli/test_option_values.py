"""Option values (types, ranges, JSON, URLs, repeats) are checked by the declared option types and refused in one line naming the option."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import Annotated, Any, get_type_hints

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

from mafialab.agents import parse_seat_overrides
from mafialab.cli import COMMANDS, app
from mafialab.cli._app import _OneLineErrors
from mafialab.cli._fork import parse_intervention
from mafialab.cli._options import Choice, InPath, Keys, OptionType, OutDir, OutFile, checked
from mafialab.cli._play import unused_openai_options
from mafialab.config import ConfigError, read_config
from mafialab.models import ModelSpecError, parse_model_spec

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})


seen: list[tuple[str, object]] = []


demo = typer.Typer(cls=_OneLineErrors, add_completion=False)


@demo.command("go")
@checked
def go(
    src: Annotated[Path, InPath("a folder", "folder")] = typer.Argument(..., metavar="DIR"),
    out: Annotated[Path, OutDir(not_above="src")] = typer.Option(Path("o"), "--out", "-o"),
    keys: Annotated[list[str], Keys(["a", "b"])] = typer.Option([], "--key"),
    how: Annotated[str | None, Choice("x", "y")] = typer.Option(None, "--how"),
) -> None:
    seen.append(("ran", (src, out, keys, how)))


@demo.command("other")
def other() -> None:
    """A second command, so that ``go`` is a sub-command (as every mafialab command is)."""


def _err(args: list[str]) -> str:
    res = runner.invoke(demo, args)
    assert res.exit_code == 2, res.output
    (line,) = [x for x in res.output.splitlines() if x.strip()]
    return line


def test_the_output_is_refused_before_a_missing_input_whatever_the_order(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    for args in (["go", str(tmp_path / "nope"), "-o", str(tmp_path / "f.txt")],
                 ["go", "-o", str(tmp_path / "f.txt"), str(tmp_path / "nope")]):  # fmt: skip
        assert _err(args) == f"error: --out: {tmp_path / 'f.txt'} is a file; give a folder (it is created when missing)"
    assert _err(["go", str(tmp_path / "nope"), "--key", "z"]) == (
        f"error: DIR: {tmp_path / 'nope'} does not exist: expected a folder"
    )


def test_values_are_checked_after_paths_item_by_item_and_not_when_absent(tmp_path: Path) -> None:
    seen.clear()
    assert _err(["go", str(tmp_path), "-o", str(tmp_path / "o"), "--key", "a,b", "--key", "a,c"]) == (
        "error: --key: unknown key 'c'; use one of a, b"
    )
    assert _err(["go", str(tmp_path), "-o", str(tmp_path / "o"), "--how", "z"]) == (
        "error: --how: expected x or y, got 'z'"
    )
    assert seen == []
    res = runner.invoke(demo, ["go", str(tmp_path), "-o", str(tmp_path / "o"), "--key", "b,a"])
    assert res.exit_code == 0, res.output
    assert seen == [("ran", (tmp_path, tmp_path / "o", ["b,a"], None))]


def test_an_output_folder_above_the_input_names_both(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    assert _err(["go", str(tmp_path / "logs"), "--out", str(tmp_path)]) == (
        f"error: --out: {tmp_path} holds the input DIR ({tmp_path / 'logs'}); its output would be written among "
        "the input's files: choose another folder"
    )


def _output_options() -> list[tuple[str, str, list[OptionType]]]:
    """``(COMMAND, PARAMETER, TYPES)`` of every ``--out``/``--plots`` option of the tree."""
    out = []
    for name, (module, attr, _) in COMMANDS.items():
        obj = getattr(import_module(f"mafialab.cli.{module}"), attr)
        infos = obj.registered_commands if isinstance(obj, typer.Typer) else [None]
        for info in infos:
            fn = obj if info is None else info.callback
            hints = get_type_hints(fn, include_extras=True)
            for param, p in inspect.signature(fn).parameters.items():
                if {"--out", "--plots"} & set(getattr(p.default, "param_decls", None) or ()):
                    kinds = [k for k in getattr(hints[param], "__metadata__", ()) if isinstance(k, OptionType)]
                    out.append((f"{name} {getattr(info, 'name', None) or ''}".strip(), param, kinds))
    return out


OUTPUTS = _output_options()


def test_the_tree_has_the_outputs_checked_below() -> None:
    names = {(c, p) for c, p, _ in OUTPUTS}
    assert {("play", "out"), ("report", "plots"), ("export tgn", "out"), ("beliefshift freeze", "out")} <= names
    assert len(names) >= 14


@pytest.mark.parametrize(("command", "param", "kinds"), OUTPUTS, ids=[f"{c} {p}" for c, p, _ in OUTPUTS])
def test_every_output_option_of_the_tree_is_declared_as_an_output(
    command: str, param: str, kinds: list[OptionType]
) -> None:
    assert any(isinstance(k, OutDir | OutFile) for k in kinds), (command, param, kinds)


# A value Click/Typer refuses while parsing (out of range, wrong type, missing) is one line


runner_option_errors = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


def _commands(cmd: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every leaf command of the tree with its path (``("fork", "run")``)."""
    cmd = cmd if cmd is not None else get_command(app)
    subs = getattr(cmd, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, cmd


def _bounded() -> list[tuple[tuple[str, ...], str, Any, Any]]:
    out = []
    for path, cmd in _commands():
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option" or p.is_flag:
                continue
            lo, hi = getattr(p, "min", None), getattr(p, "max", None)
            if lo is not None or hi is not None:
                name = next((o for o in p.opts if o.startswith("--")), p.opts[0])
                out.append((path, name, lo, hi))
    return out


BOUNDED = _bounded()


SEEDED = [path for path, cmd in _commands() if any(p.name == "seed" for p in cmd.params)]


def _one_error_line(args: list[str]) -> str:
    res = runner_option_errors.invoke(app, args)
    assert res.exit_code == 2, (args, res.output)
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1, (args, res.output)
    assert "Usage:" not in res.output and "╭" not in res.output
    return lines[0]


def test_the_tree_has_the_options_checked_below() -> None:
    assert {("play",), ("fork", "run"), ("fork", "sweep"), ("bifurcate", "run"), ("report",)} <= set(SEEDED)
    assert ("beliefshift", "run") in SEEDED or any(p[0] == "beliefshift" for p in SEEDED)
    assert any(name == "--games" for _, name, _, _ in BOUNDED)


@pytest.mark.parametrize("path", SEEDED, ids=lambda p: " ".join(p))
def test_a_negative_seed_is_refused_on_every_command_that_takes_one(path: tuple[str, ...]) -> None:
    line = _one_error_line([*path, "--seed", "-1"])
    assert line == "error: --seed: -1 is out of range (allowed: 0 or more)"


@pytest.mark.parametrize(
    ("path", "name", "lo", "hi"), BOUNDED, ids=lambda x: " ".join(x) if isinstance(x, tuple) else x
)
def test_a_value_out_of_range_names_the_option_and_the_allowed_range(path, name, lo, hi) -> None:
    allowed = (
        f"{lo} to {hi}" if lo is not None and hi is not None else f"{lo} or more" if lo is not None else f"at most {hi}"
    )
    bad = lo - 1 if lo is not None else hi + 1
    line = _one_error_line([*path, name, str(bad)])
    assert line == f"error: {name}: {bad} is out of range (allowed: {allowed})"


def test_a_value_of_the_wrong_type_names_the_option_and_the_value() -> None:
    line = _one_error_line(["play", "--games", "x"])
    assert line.startswith("error: --games: 'x' is not valid: input should be a valid integer")


def test_a_missing_argument_or_option_is_one_line_naming_it() -> None:
    assert _one_error_line(["report"]).startswith("error: DIR: missing (see `")
    assert _one_error_line(["season", "run"]).startswith("error: FILE: missing (see `")


def test_a_seed_in_a_season_file_is_refused_below_zero() -> None:
    from mafialab.arena import SeasonConfigError, season_from_dict

    with pytest.raises(SeasonConfigError, match=r"seed: Input should be greater than or equal to 0"):
        season_from_dict({"name": "s", "games": 1, "seed": -1, "roster": ["scripted"]})


# A JSON value given on the command line (``fork run --inject``) that does not parse is worded as


NAMES = ["Alex", "Bailey", "Casey"]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("{bad", "at line 1 column 2"),
        ('{"target": "Casey",}', "at line 1 column 20"),
        ('{"target": "Casey",\n "text": }', "at line 2 column 10"),
        ("", "at line 1 column 1"),
    ],
)
def test_an_inject_json_error_has_the_config_file_wording_with_line_and_column(
    tmp_path: Path, text: str, where: str
) -> None:
    with pytest.raises(ValueError) as err:
        parse_intervention(NAMES, text, False, None, None)
    msg = str(err.value)
    f = tmp_path / "same.json"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as cerr:
        read_config(f)
    file_words = str(cerr.value).removeprefix(f"{f}: ")
    assert file_words.startswith("not valid JSON (") and file_words.endswith(f" {where})")
    assert msg.startswith(f"--inject: {file_words}; e.g. "), msg
    assert "\n" not in msg


def test_an_inject_target_may_be_a_seat_number() -> None:
    """``--inject '{"target": 1}'`` said "target: Input should be a valid string"."""
    from mafialab.counterfactual import Inject

    assert parse_intervention(NAMES, '{"target": 1}', False, None, None) == Inject(target="Bailey")
    assert parse_intervention(NAMES, '{"target": "Casey", "text": "x"}', False, None, None) == Inject(
        target="Casey", text="x"
    )
    assert parse_intervention(NAMES, '{"target": null}', False, None, None) == Inject(no_vote=True)
    with pytest.raises(ValueError, match=r"--inject: unknown target '7' \(a seat number 0\.\.2 or a name: Alex"):
        parse_intervention(NAMES, '{"target": 7}', False, None, None)
    with pytest.raises(ValueError) as err:
        parse_intervention(NAMES, '{"target": ["Casey"]}', False, None, None)
    assert str(err.value) == (
        "--inject: target: give the player's name or seat number (Alex, Bailey, Casey), "
        'or null for no vote; got ["Casey"]'
    )
    assert "valid string" not in str(err.value)


# ``play --base-url`` is checked as an http(s) URL; it and ``--api-key-env`` (the options only


runner_base_url_option = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


@pytest.mark.parametrize("url", ["notaurl", "localhost:8000/v1", "ftp://h/v1", "http://"])
def test_a_base_url_that_is_not_an_http_url_is_refused(tmp_path: Path, url: str) -> None:
    res = runner_base_url_option.invoke(app, ["play", "-a", "scripted", "--base-url", url, "-o", str(tmp_path / "r")])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        f"error: --base-url: expected an http(s) URL (e.g. http://localhost:8000/v1), got {url!r}"
    ]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("option", "value"), [("--base-url", "http://localhost:8000/v1"), ("--api-key-env", "MY_KEY")])
def test_an_openai_only_option_no_seat_reads_is_warned_about_once(tmp_path: Path, option: str, value: str) -> None:
    res = runner_base_url_option.invoke(
        app, ["play", "-a", "scripted", "-r", "mafiascope7", option, value, "-o", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    warnings = [ln for ln in res.stderr.splitlines() if ln.startswith("warning: ") and "is not used" in ln]
    assert warnings == [f"warning: {option} is not used: it applies to openai/ models and no seat plays one"]


OPTS = {"base_url": "http://h/v1", "api_key_env": "K"}


@pytest.mark.parametrize(
    ("given", "want"),
    [
        (["scripted", "mock/m"], ["--base-url is not used: it applies to openai/ models and no seat plays one",
                                  "--api-key-env is not used: it applies to openai/ models and no seat plays one"]),
        (["scripted", "openai/m"], []),
        (["openai/m?api_key_env=MINE", "scripted"],
         ["--api-key-env is not used: every openai/ seat sets its own api_key_env"]),
        (["openai/m?api_key_env=MINE", "openai/n"], []),
    ],
)  # fmt: skip
def test_an_option_is_unused_only_when_no_seat_reads_it(given: list[str], want: list[str]) -> None:
    from mafialab.agents import with_model_options

    specs = [with_model_options(g, OPTS) for g in given]
    assert unused_openai_options(OPTS, given, specs) == want
    assert unused_openai_options({}, given, specs) == []


# A setting given twice is refused, naming it: one line, rc 2, no traceback.


runner_repeated_settings = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


def test_a_model_option_given_twice_is_refused() -> None:
    with pytest.raises(ModelSpecError, match=r"option 'timeout' is given twice in 'openai/m\?timeout=1&timeout=2'"):
        parse_model_spec("openai/m?timeout=1&timeout=2")
    assert parse_model_spec("openai/m?timeout=1&max_tokens=2") == ("openai/m", {"timeout": 1, "max_tokens": 2})


def test_a_seat_given_twice_is_refused() -> None:
    with pytest.raises(ValueError, match=r"seat 0 is given twice \(0=random and 0=scripted\)"):
        parse_seat_overrides(["0=random", "0=scripted"], 7)
    assert parse_seat_overrides(["0=random", "1=scripted"], 7) == {0: "random", 1: "scripted"}


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (["--agents", "openai/m?timeout=1&timeout=2"], "error: --agents: model: option 'timeout' is given twice"),
        (
            ["--agents", "scripted", "--seat", "0=random", "--seat", "0=scripted"],
            "error: --seat: seat 0 is given twice",
        ),
        (
            ["--agents", "scripted", "--seat", "2=mock/m?max_tokens=5&max_tokens=6"],
            "option 'max_tokens' is given twice",
        ),
        (["--agents", "scripted", "--seat", "0=remote?timeout=1&timeout=2"], "option 'timeout' is given twice"),
    ],
)
def test_play_refuses_a_repeated_setting(tmp_path: Path, args: list[str], want: str) -> None:
    res = runner_repeated_settings.invoke(app, ["play", *args, "--out", str(tmp_path / "runs")])
    assert res.exit_code == 2, res.output
    assert want in res.output and res.output.startswith("error: "), res.output
    assert res.output.count("\n") == 1 and "Traceback" not in res.output
    assert not (tmp_path / "runs").exists()
