"""A command loads only what it uses: ``mafialab --help`` no library package, ``play`` no analysis stack.

Each check runs a fresh interpreter and reads its ``sys.modules``: for ``--help`` when it
exits, for ``play`` at its first connection to the model server (an audit hook on
``socket.connect``), so what loads after the first model call (the metrics of the closing
summary) does not count. Timings are in ``benchmarks/startup.py``, not here.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mafialab.cli import COMMANDS, app
from mafialab.testing import OpenAIStub

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "100"}

NOT_AT_START = (
    "pandas",
    "scipy",
    "statsmodels",
    "sklearn",
    "matplotlib",
    "pyarrow",
    "fastapi",
    "starlette",
    "uvicorn",
    "ray",
    "inspect_ai",
    "llama_cpp",
    "duckdb",
    "polars",
)
"""Packages no command loads before it needs them (``openai`` too, except for an ``openai/`` model's call)."""

_RUN = """
import json, sys
dump, port = sys.argv[1], int(sys.argv[2])
written = []
def write():
    if not written:
        written.append(dump)
        with open(dump, "w") as f:
            json.dump(sorted(sys.modules), f)
def at_connect(event, args):
    if event == "socket.connect" and port and isinstance(args[1], tuple) and args[1][:2] == ("127.0.0.1", port):
        write()
sys.addaudithook(at_connect)
sys.argv = ["mafialab", *sys.argv[3:]]
from mafialab.cli import main
try:
    main()
finally:
    if not port:
        write()
"""
"""Run ``mafialab ARGS`` and write ``sys.modules`` to DUMP at the first connection to 127.0.0.1:PORT
(PORT 0: at exit)."""


def _modules_of(tmp_path: Path, port: int, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    dump = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, str(dump), str(port), *args],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc, json.loads(dump.read_text(encoding="utf-8"))


def _loaded(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules} & set(packages))


def test_help_loads_no_library_package_and_no_heavy_dependency(tmp_path: Path) -> None:
    proc, modules = _modules_of(tmp_path, 0, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "play" in proc.stdout and "beliefshift" in proc.stdout
    assert _loaded(modules, (*NOT_AT_START, "openai", "numpy", "httpx")) == []
    library = [m for m in modules if m.startswith("mafialab.") and not m.startswith(("mafialab.cli", "mafialab._"))]
    assert library == []
    assert [m for m in modules if m.startswith("mafialab.cli.")] == ["mafialab.cli._app"]


def test_play_reaches_its_first_openai_call_without_the_analysis_or_server_stack(tmp_path: Path) -> None:
    with OpenAIStub().in_thread() as stub:
        port = int(stub.base_url.rsplit(":", 1)[1].split("/")[0])
        proc, modules = _modules_of(
            tmp_path,
            port,
            *("play", "-r", "mafiascope7", "--probes", "none", "--out", str(tmp_path / "out")),
            *("--agents", f"openai/stub?base_url={stub.base_url}"),
        )
        assert stub.requests, proc.stderr  # the dump was taken at a model call
    assert proc.returncode == 0, proc.stderr
    assert "openai" in modules  # the backend's SDK: the one dependency loaded for the call
    assert _loaded(modules, NOT_AT_START) == []
    assert not any(m.startswith(("mafialab.analysis", "mafialab.viewer", "mafialab.beliefshift")) for m in modules)


@pytest.mark.parametrize(
    "package", ["mafialab.analysis", "mafialab.beliefshift", "mafialab.arena", "mafialab.counterfactual"]
)
def test_library_packages_load_scipy_and_statsmodels_only_when_a_statistic_needs_them(package: str) -> None:
    code = f"import sys, {package}; print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    proc = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert _loaded(proc.stdout.split(), ("scipy", "statsmodels", "pandas", "polars", "pyarrow")) == []


def test_each_summary_in_the_table_is_the_first_paragraph_of_the_command_s_help() -> None:
    from typer.main import get_command

    root = get_command(app)
    for name, (_, _, summary) in COMMANDS.items():
        cmd = root.get_command(None, name)  # type: ignore[attr-defined]
        assert cmd is not None, name
        assert inspect.cleandoc(cmd.help or "").split("\n\n")[0] == summary, name
