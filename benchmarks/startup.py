"""Start-up: how soon ``mafialab --help`` is done and ``mafialab play`` makes its first model call.

Each run is a fresh ``python -m mafialab`` child process, as a user types it:

* ``help``: ``mafialab --help``, process start to exit;
* ``play``: ``mafialab play -r RULES --probes none --agents openai/stub?base_url=...``
  against a local OpenAI-compatible stub (``mafialab.testing.OpenAIStub``, no latency),
  process start to the first request at the stub (the preflight call); the game then
  plays to its end and must succeed;
* ``python`` (an interpreter doing nothing) and ``import openai`` (the SDK the ``openai/``
  backend calls through, loaded before its first call) are timed the same way, for scale.

Medians of ``--runs`` runs. One more run of each command, with an audit hook, counts the
modules loaded (``--help``: at exit; ``play``: at the first connection to the stub), names
the heavy packages among them, and takes the process's CPU time at that point. The load
average is printed before and after: on a busy machine the wall times grow, the CPU times
much less and the module counts not at all.

Every child runs with compiled bytecode, as an installed package does: ``PYTHONDONTWRITEBYTECODE``
is dropped and ``PYTHONPYCACHEPREFIX`` points at a temporary folder filled by one unmeasured
run of each command first (with bytecode writing off, every import of mafialab compiles its
source again, about a third of the start-up).

Target (issue 32): ``--help`` and ``play``'s first call within 0.5 s of process start on a
quiet machine.

Usage: python benchmarks/startup.py [--runs 5] [--rules mafiascope7]
Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mafialab.testing import OpenAIStub

HEAVY = ("pandas", "scipy", "statsmodels", "sklearn", "matplotlib", "pyarrow", "fastapi", "starlette", "uvicorn",
         "openai", "httpx", "ray", "inspect_ai", "llama_cpp", "duckdb", "polars", "numpy")  # fmt: skip
"""Packages named when loaded (the rest are counted only)."""

_COUNT = """
import json, sys, time
dump, port = sys.argv[1], int(sys.argv[2])
written = []
def write():
    if not written:
        written.append(dump)
        with open(dump, "w") as f:
            json.dump({"cpu_s": time.process_time(), "modules": sorted(sys.modules)}, f)
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
"""``mafialab ARGS`` writing ``sys.modules`` and the CPU time so far to DUMP at the first connection to
127.0.0.1:PORT (0: at exit)."""


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The children's environment (``PYTHONPYCACHEPREFIX`` is added by :func:`main`)."""


def _timed(cmd: list[str]) -> float:
    """Seconds from starting ``cmd`` to its exit (it must succeed)."""
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=ENV)
    return time.perf_counter() - t0


def _cpu(code: str) -> float:
    """CPU seconds a fresh interpreter has used after running ``code``."""
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport time\nprint(time.process_time())"],
                         check=True, capture_output=True, text=True, env=ENV).stdout  # fmt: skip
    return float(out.split()[-1])


def _modules(port: int, args: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        dump = Path(d) / "modules.json"
        subprocess.run(
            [sys.executable, "-c", _COUNT, str(dump), str(port), *args], check=True, capture_output=True, env=ENV
        )
        got = json.loads(dump.read_text(encoding="utf-8"))
    mods = got["modules"]
    tops = {m.split(".")[0] for m in mods}
    return {
        "cpu_s": round(got["cpu_s"], 3),
        "modules": len(mods),
        "mafialab_modules": sum(1 for m in mods if m == "mafialab" or m.startswith("mafialab.")),
        "heavy": [h for h in HEAVY if h in tops],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of each command (the median is reported)")
    ap.add_argument("--rules", default="mafiascope7", help="rule set of the played game")
    args = ap.parse_args()
    ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="mafialab-startup-pyc-")
    load_before = os.getloadavg()
    py = sys.executable
    help_cmd = [py, "-m", "mafialab", "--help"]
    _timed([py, "-c", "import openai"])  # fills the bytecode cache (the play runs' warm-up is below)
    _timed(help_cmd)
    python_s = [_timed([py, "-c", "pass"]) for _ in range(args.runs)]
    openai_s = [_timed([py, "-c", "import openai"]) for _ in range(args.runs)]
    openai_cpu_s = [_cpu("import openai") for _ in range(args.runs)]
    help_s = [_timed(help_cmd) for _ in range(args.runs)]
    help_mods = _modules(0, ["--help"])

    first: list[float] = []
    stub = OpenAIStub()
    answer = stub.responder

    def responder(body: dict[str, Any]) -> str:  # the stub's own answer, its time noted
        first.append(time.perf_counter())
        return answer(body)

    stub.responder = responder
    play_s, first_call_s = [], []
    with stub.in_thread(), tempfile.TemporaryDirectory() as d:
        port = int(stub.base_url.rsplit(":", 1)[1].split("/")[0])
        play_args = ["play", "-r", args.rules, "--probes", "none", "--agents", f"openai/stub?base_url={stub.base_url}"]
        _timed([py, "-m", "mafialab", *play_args, "--out", str(Path(d) / "warm-up")])
        for i in range(args.runs):
            first.clear()
            t0 = time.perf_counter()
            play_s.append(_timed([py, "-m", "mafialab", *play_args, "--out", str(Path(d) / str(i))]))
            first_call_s.append(first[0] - t0)
        play_mods = _modules(port, [*play_args, "--out", str(Path(d) / "count")])

    def med(xs: list[float]) -> float:
        return round(statistics.median(xs), 3)

    print(
        json.dumps(
            {
                "runs": args.runs,
                "load_average_before": [round(x, 2) for x in load_before],
                "load_average_after": [round(x, 2) for x in os.getloadavg()],
                "python_nothing_s": med(python_s),
                "import_openai_s": med(openai_s),
                "import_openai_cpu_s": med(openai_cpu_s),
                "help_s": med(help_s),
                "help_s_all": [round(x, 3) for x in help_s],
                "help_import_set": help_mods,
                "play_first_call_s": med(first_call_s),
                "play_first_call_s_all": [round(x, 3) for x in first_call_s],
                "play_whole_command_s": med(play_s),
                "play_import_set_at_first_call": play_mods,
                "target_help_met": med(help_s) <= 0.5,
                "target_play_first_call_met": med(first_call_s) <= 0.5,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
