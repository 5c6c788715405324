"""The option types of ``mafialab.cli._options``: a command declares what it takes, ``checked`` checks it.

Outputs are checked before inputs and inputs before values, whatever the order on the command
line; a refusal names the parameter as the command line does (``--out`` also when typed
``-o``; an argument by its metavar); every ``--out``/``--plots`` of the tree is declared as an
output, so a new command cannot forget the checks a recorded game relies on.
"""

from __future__ import annotations

import inspect
from importlib import import_module
from pathlib import Path
from typing import Annotated, get_type_hints

import pytest
import typer
from typer.testing import CliRunner

from mafialab.cli import COMMANDS
from mafialab.cli._app import _OneLineErrors
from mafialab.cli._options import Choice, InPath, Keys, OptionType, OutDir, OutFile, checked

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
