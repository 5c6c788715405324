"""A mistake in the command line's shape is one ``error:`` line with exit code 2, no usage box.

An unknown option, an unknown command, an extra argument and an option without its value
each say what is wrong and where help is (``see `mafialab play -h```); a did-you-mean is
given only when one of the command's own options or commands is close to the typo.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from tests.cli.test_option_errors import _commands

runner = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"})

LEAVES = sorted(" ".join(path) for path, _cmd in _commands())


def _err(args: list[str]) -> tuple[int, list[str]]:
    res = runner.invoke(app, args)
    return res.exit_code, res.output.strip().splitlines()


@pytest.mark.parametrize("command", LEAVES)
def test_an_unknown_option_is_one_line_on_every_command(command: str) -> None:
    code, lines = _err([*command.split(), "--bogus"])
    assert code == 2
    assert lines == [f"error: no such option: --bogus (see `mafialab {command} -h`)"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["play", "--bogus"], "error: no such option: --bogus (see `mafialab play -h`)"),
        (["play", "--ou", "x"], "error: no such option: --ou (did you mean --out?) (see `mafialab play -h`)"),
        (["play", "--seeds", "2"], "error: no such option: --seeds (did you mean --seed?) (see `mafialab play -h`)"),
        (["--bogus"], "error: no such option: --bogus (see `mafialab -h`)"),
        (["plya"], "error: no such command: plya (did you mean play?) (see `mafialab -h`)"),
        (["zzz"], "error: no such command: zzz (see `mafialab -h`)"),
        (
            ["beliefshift", "annotat"],
            "error: no such command: annotat (did you mean annotate?) (see `mafialab beliefshift -h`)",
        ),
        (["view", "a", "b"], "error: unexpected extra argument: b (see `mafialab view -h`)"),
        (["play", "--out"], "error: --out: requires an argument (see `mafialab play -h`)"),
        (["fork", "run", "--at"], "error: --at: requires an argument (see `mafialab fork run -h`)"),
    ],
)
def test_usage_mistakes_are_one_line(args: list[str], line: str) -> None:
    code, lines = _err(args)
    assert code == 2
    assert lines == [line]


def test_a_group_without_its_command_still_prints_its_help() -> None:
    res = runner.invoke(app, ["beliefshift"])
    assert "annotate" in res.output and "error:" not in res.output


def _short_forms() -> list[tuple[str, str, str]]:
    """``(command, -x, --long)`` for every option taking a value that has a short and a long form."""
    out = []
    for path, cmd in _commands():
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option" or p.is_flag or p.count:
                continue
            long = next((o for o in p.opts if o.startswith("--")), None)
            out += [(" ".join(path), o, long) for o in p.opts if long and not o.startswith("--")]
    return out


SHORT_FORMS = _short_forms()


def test_the_tree_has_short_forms_to_check() -> None:
    assert ("play", "-s", "--seed") in SHORT_FORMS and len({c for c, _, _ in SHORT_FORMS}) >= 5


@pytest.mark.parametrize(("command", "short", "long"), SHORT_FORMS)
def test_a_short_option_without_its_value_is_named_by_its_long_form(command: str, short: str, long: str) -> None:
    code, lines = _err([*command.split(), short])
    assert code == 2
    assert lines == [f"error: {long}: requires an argument (see `mafialab {command} -h`)"]


def test_extra_arguments_are_counted_in_words() -> None:
    assert _err(["view", "a", "b", "c"]) == (2, ["error: unexpected extra arguments: b c (see `mafialab view -h`)"])
