"""A value Click/Typer refuses while parsing (out of range, wrong type, missing) is one line
``error: OPTION: …`` with exit code 2, like every other input error: no usage box. Seeds are
integers >= 0 on every command that takes one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from mafialab.cli import app

runner = CliRunner(env={"COLUMNS": "400", "NO_COLOR": "1"})


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
    res = runner.invoke(app, args)
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
