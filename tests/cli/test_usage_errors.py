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
        (["view", "a", "b"], "error: got unexpected extra argument(s) (b) (see `mafialab view -h`)"),
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
