"""A "billion laughs" YAML file given to any command is refused at once: one ``error:`` line, code 2.

A 482-byte probe battery of anchors nested nine deep once made ``play --probes`` allocate over
4 GB (the data was walked to print a bad value); every YAML input now goes through the
config loader, which refuses it while composing, naming the file and the limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})
REFUSED = "line 3: more than 100 alias expansions (YAML anchors); refused"


def bomb(levels: int = 9, width: int = 10) -> str:
    """``levels`` anchors, each a list referencing the previous one ``width`` times."""
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


COMMANDS = {
    "play --probes": (["play", "--agents", "scripted", "--probes", "{f}", "--out", "{tmp}/runs"], "--probes: "),
    "play --rules": (["play", "--agents", "scripted", "--rules", "{f}", "--out", "{tmp}/runs"], "--rules: "),
    "rules show": (["rules", "show", "{f}"], "NAME: "),
    "season plan": (["season", "plan", "{f}"], "FILE: "),
    "season run": (["season", "run", "{f}", "--out", "{tmp}/season"], ""),
    "beliefshift report --models": (
        ["beliefshift", "report", "{tmp}/results.jsonl", "--models", "{f}", "--out", "{tmp}/report"],
        "",
    ),
    "beliefshift freeze --prompts": (
        ["beliefshift", "freeze", "{tmp}/games", "{tmp}/ann.jsonl", "--prompts", "{f}", "--out", "{tmp}/bench.jsonl"],
        "",
    ),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_yaml_bomb_is_refused_with_one_error_line(tmp_path: Path, name: str) -> None:
    f = tmp_path / "bomb.yaml"
    f.write_text(bomb(), encoding="utf-8")
    (tmp_path / "results.jsonl").touch()
    (tmp_path / "ann.jsonl").touch()
    (tmp_path / "games" / "g1").mkdir(parents=True)
    (tmp_path / "games" / "g1" / "game.jsonl").touch()
    args, label = COMMANDS[name]
    res = runner.invoke(app, [a.format(f=f, tmp=tmp_path) for a in args])
    out = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert out.startswith("error: ") and out.count("error:") == 1, res.output
    assert f"{label}{f}: {REFUSED}" in out, res.output
    assert "Traceback" not in res.output
