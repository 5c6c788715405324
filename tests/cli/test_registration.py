"""The CLI registers its commands in one place and keeps the work in the library."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import mafialab.cli

CLI = Path(mafialab.cli.__file__).parent


def test_only_the_package_init_registers_commands() -> None:
    pattern = re.compile(r"@app\.|\bapp\.(command|add_typer|callback)\(")
    for path in sorted(CLI.glob("_*.py")):
        if path.name in ("__init__.py", "_app.py"):
            continue
        hits = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
        assert hits == [], f"{path.name} lines {hits}: register commands in mafialab/cli/__init__.py"


def test_every_command_module_is_registered() -> None:
    modules = sorted(p.stem for p in CLI.glob("_*.py") if p.stem not in ("__init__", "_app", "_docs", "_options"))
    assert sorted({module for module, _, _ in mafialab.cli.COMMANDS.values()}) == modules
    for name, (module, attr, _) in mafialab.cli.COMMANDS.items():
        assert hasattr(importlib.import_module(f"mafialab.cli.{module}"), attr), name
