"""A probed game against a fixed-latency server, run as a user would: wall time vs critical path.

A local OpenAI-compatible stub (``mafialab.testing.OpenAIStub``) answers every call after
``--latency`` seconds (valid JSON for the request's schema, chosen from the prompt). The game
is played by the command a user types, in a child process::

    mafialab play -r mafiascope7 -s 0 --agents "openai/stub?base_url=..." --probes default

with the default concurrency settings. From the run's own ``calls.jsonl``, ``probes.jsonl``
and ``game.jsonl`` the script computes:

* one-after-another time: Σ of every call's latency (preflight, game, probes), what a
  harness that makes one call at a time (as MafiaScope does) would take;
* critical path: the least time any schedule could take. The game's decisions are
  replayed batch by batch (decisions pending together are independent); a batch lasts as
  long as its slowest decision (its attempts one after another). A probe can start when its
  trigger's batch is over and the answers it splices in have arrived (``{prev_<id>}``: the
  same step's probe; ``{last_<id>}``: the seat's previous answer to that probe), so the
  path is the longest over game steps and probe chains, plus the preflight calls;
* the shared-prefix share and server-cached tokens of the closing ``call_summary`` record.

Beside them, for every run: the whole command's wall time (process start to exit), its
start-up (process start to the first request at the server), the span of its model calls
(first request at the server to the last answer), the command's CPU time (interpreter start
and imports included) and CPU per model call, its peak resident memory (``ru_maxrss`` of the
child), and the server-side shared-prefix share: Σ over the requests the server received
(preflight included) of the longest common prefix of the request's prompt text (its
messages, role and content, in order) with that of any earlier request, over Σ prompt
characters.

Each latency is run ``--runs`` times; medians are printed with the load average before and
after. Targets (issues 14 and 32): at 0.2 s latency the whole command ≤ 1.2 x the critical
path; at 0.05 s the span of calls ≤ 1.1 x the critical path; CPU ≤ 2.4 ms per model call;
peak memory ≤ 100 MB; server-side shared-prefix share ≥ 90 %.

Every child runs with compiled bytecode, as an installed package does (``PYTHONDONTWRITEBYTECODE``
dropped, ``PYTHONPYCACHEPREFIX`` a temporary folder filled by one unmeasured game first).

``--src DIR`` runs the command from another checkout's ``src`` (say one made with
``git worktree add /tmp/before BASE``), so one script measures before and after.
``--profile FILE`` runs one more game at the first latency under ``cProfile`` and saves its
profile (``python -m pstats FILE``; not part of the figures). The profile counts the process's
CPU time (``time.process_time``), not wall time: on a busy machine wall time charges whatever
function was running when the process lost its core.

Usage: nice -n 15 python benchmarks/throughput.py [--latency 0.2 0.05] [--runs 3]
       [--rules mafiascope7] [--seed 0] [--probes default] [--out DIR] [--src DIR] [--profile FILE]
Prints JSON.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mafialab.harness import initial_state, recorded_actions
from mafialab.probes import resolve_battery
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE, probe_sort_key, read_game, read_records
from mafialab.testing import OpenAIStub


def critical_path(game_dir: Path, battery: str, preflight_s: float) -> dict[str, Any]:
    """Critical path of a recorded game (seconds), from its own logs (see the module doc)."""
    log = read_game(game_dir)
    calls = [c for c in read_records(game_dir / CALLS_FILE) if c.get("kind") == "call"]
    by_decision: dict[int, float] = {}
    for c in calls:
        if c.get("decision") is not None:
            by_decision[int(c["decision"])] = by_decision.get(int(c["decision"]), 0.0) + c["latency_ms"] / 1000
    actions = {a.decision: a for a in recorded_actions(log.events)}
    state = initial_state(log)
    batch_end_of_seq: dict[int, float] = {}
    t = preflight_s
    for ev in state.events:
        batch_end_of_seq[ev.seq] = t
    steps = 0
    while not state.is_terminal:
        batch = state.pending()
        dur = max((by_decision.get(d.id, 0.0) for d in batch), default=0.0)
        before = len(state.events)
        for d in batch:
            state.apply(actions[d.id])
        t += dur
        steps += 1
        for ev in state.events[before:]:
            batch_end_of_seq[ev.seq] = t
    game_s = t
    bat = resolve_battery(battery)
    fields = {p.id: p.placeholders() for p in bat.probes} if bat is not None else {}
    probes = sorted((r for r in read_records(game_dir / PROBES_FILE) if r.get("kind") == "probe"), key=probe_sort_key)
    end: dict[tuple[int, int, str], float] = {}
    last_end: dict[tuple[int, str], float] = {}
    deepest = 0.0
    for r in probes:
        seat, pid, after = int(r["seat"]), str(r["probe_id"]), int(r["after_seq"])
        start = batch_end_of_seq.get(after, game_s)
        for f in fields.get(pid, ()):
            if f.startswith("prev_"):
                start = max(start, end.get((after, seat, f[5:]), 0.0))
            elif f.startswith("last_"):
                start = max(start, last_end.get((seat, f[5:]), 0.0))
        e = start + r["latency_ms"] / 1000
        end[(after, seat, pid)] = e
        last_end[(seat, pid)] = e  # records are in key order: later triggers see this one as "last"
        deepest = max(deepest, e)
    return {"game_steps": steps, "game_path_s": round(game_s, 3), "critical_path_s": round(max(game_s, deepest), 3)}


def prompt_text(body: dict[str, Any]) -> str:
    """The prompt of a chat request as a server sees it: each message's role and content, in order."""
    parts = []
    for m in body.get("messages", []):
        content = m.get("content")
        parts.append(f"{m.get('role')}\n{content if isinstance(content, str) else json.dumps(content)}\n")
    return "".join(parts)


def common_prefix(a: str, b: str) -> int:
    """Characters ``a`` and ``b`` share at their start."""
    n = min(len(a), len(b))
    i = 0
    step = 1024
    while i < n:  # compare blocks, then characters within the first differing block
        j = min(n, i + step)
        if a[i:j] == b[i:j]:
            i = j
            continue
        while a[i] == b[i]:
            i += 1
        return i
    return n


def server_prefix_share(prompts: list[str]) -> float | None:
    """Σ longest common prefix of each prompt with any earlier one, over Σ prompt characters.

    The longest common prefix with a set of strings is the one with its neighbours in sorted
    order, so each prompt is compared with two earlier ones only.
    """
    seen: list[str] = []
    shared = total = 0
    for p in prompts:
        i = bisect.bisect_left(seen, p)
        best = max((common_prefix(p, seen[j]) for j in (i - 1, i) if 0 <= j < len(seen)), default=0)
        shared += best
        total += len(p)
        seen.insert(i, p)
    return shared / total if total else None


_PROFILED = """
import cProfile, runpy, sys, time
dump = sys.argv[1]
sys.argv = [sys.argv[2], *sys.argv[3:]]
prof = cProfile.Profile(time.process_time)
try:
    prof.runcall(runpy.run_module, "mafialab", run_name="__main__", alter_sys=True)
except SystemExit as e:
    if e.code not in (0, None):
        raise
finally:
    prof.dump_stats(dump)
"""
"""``python -c _PROFILED DUMP MODULE ARGS``: ``python -m MODULE ARGS`` under a CPU-time ``cProfile``, saved to DUMP."""


def one_run(args: argparse.Namespace, latency: float, out: Path, profile: Path | None = None) -> dict[str, Any]:
    """Play one probed game as a child process against a stub answering after ``latency`` seconds."""
    stamps: list[float] = []
    stub = OpenAIStub(latency_s=latency)
    answer = stub._answer

    async def timed(*a: Any) -> Any:  # first request in, last answer out
        stamps.append(time.perf_counter())
        res = await answer(*a)
        stamps.append(time.perf_counter())
        return res

    stub._answer = timed  # type: ignore[method-assign]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"COLUMNS": "200", "PYTHONPYCACHEPREFIX": args.pycache}
    if args.src is not None:
        env["PYTHONPATH"] = str(args.src.resolve())
    with stub.in_thread():
        spec = f"openai/stub?base_url={stub.base_url}"
        prof = ["-c", _PROFILED, str(profile)] if profile is not None else ["-m"]
        cmd = [sys.executable, *prof, "mafialab", "play", "-r", args.rules, "-s", str(args.seed),
               "--agents", spec, "--probes", args.probes, "--out", str(out)]  # fmt: skip
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        stdout, stderr = proc.communicate()
        process_s = time.perf_counter() - t0
        usage = proc.rusage if hasattr(proc, "rusage") else None  # type: ignore[attr-defined]
        requests = list(stub.requests)
        peak = stub.max_in_flight
    if proc.returncode != 0:
        sys.exit(f"mafialab play failed:\n{stdout}\n{stderr}")
    (game_dir,) = [p.parent for p in out.rglob(GAME_FILE)]
    lines = read_records(game_dir / CALLS_FILE)
    calls = [c for c in lines if c.get("kind") == "call"]
    summary = next((c for c in lines if c.get("kind") == "call_summary"), {})
    preflight_calls = len(requests) - len(calls)
    preflight_s = preflight_calls * latency
    cp = critical_path(game_dir, args.probes, preflight_s)
    span = stamps[-1] - stamps[0]
    one_by_one = sum(c["latency_ms"] for c in calls) / 1000 + preflight_s
    cpu_s = usage.ru_utime + usage.ru_stime if usage else float("nan")
    return {
        "requests": len(requests),
        "game_calls": sum(1 for c in calls if c["purpose"] != "probe"),
        "probe_calls": sum(1 for c in calls if c["purpose"] == "probe"),
        "preflight_calls": preflight_calls,
        "peak_in_flight": peak,
        **cp,
        "whole_command_s": round(process_s, 3),
        "start_to_first_call_s": round(stamps[0] - t0, 3),
        "span_of_calls_s": round(span, 3),
        "one_after_another_s": round(one_by_one, 3),
        "whole_over_critical_path": round(process_s / c, 3) if (c := cp["critical_path_s"]) else None,
        "span_over_critical_path": round(span / c, 3) if c else None,
        "cpu_s": round(cpu_s, 3),
        "cpu_ms_per_call": round(1000 * cpu_s / len(requests), 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1) if usage else None,
        "shared_prefix_share_play": summary.get("shared_prefix_share"),
        "shared_prefix_share_server": server_prefix_share([prompt_text(b) for b in requests]),
        "cached_tokens": summary.get("cached_tokens"),
        "play_summary_line": next((ln for ln in stdout.splitlines() if "prefix reuse" in ln), ""),
        "logs": str(game_dir),
    }


class _Popen(subprocess.Popen):  # type: ignore[type-arg]
    """``Popen`` that keeps the child's resource usage (``os.wait4``) when it is reaped."""

    rusage: Any = None

    def _try_wait(self, wait_flags: int) -> tuple[int, int]:
        try:
            pid, sts, self.rusage = os.wait4(self.pid, wait_flags)
        except ChildProcessError:
            pid, sts = self.pid, 0
        return pid, sts


subprocess.Popen = _Popen  # type: ignore[misc]  # only this script's children


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latency", type=float, nargs="+", default=[0.2, 0.05], help="seconds per call at the stub")
    ap.add_argument("--runs", type=int, default=3, help="games per latency (medians are printed)")
    ap.add_argument("--rules", default="mafiascope7")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--probes", default="default")
    ap.add_argument("--out", type=Path, default=None, help="keep the logs here (default: a temporary folder)")
    ap.add_argument("--src", type=Path, default=None, help="run mafialab from this src folder (before/after)")
    ap.add_argument("--profile", type=Path, default=None, help="save a cProfile of one more game here")
    args = ap.parse_args()
    args.pycache = tempfile.mkdtemp(prefix="mafialab-throughput-pyc-")
    out = args.out or Path(tempfile.mkdtemp(prefix="mafialab-throughput-"))
    one_run(args, 0.0, out / "warm-up")  # fills the bytecode cache, as an installed package has one
    load_before = os.getloadavg()
    result: dict[str, Any] = {"rules": args.rules, "seed": args.seed, "probes": args.probes, "runs": args.runs,
                              "src": str(args.src) if args.src else None}  # fmt: skip
    for latency in args.latency:
        runs = [one_run(args, latency, out / f"{latency}-{i}") for i in range(args.runs)]

        def med(key: str, runs: list[dict[str, Any]] = runs) -> Any:
            xs = [r[key] for r in runs if r[key] is not None]
            return round(statistics.median(xs), 4) if xs else None

        keys = ("critical_path_s", "whole_command_s", "start_to_first_call_s", "span_of_calls_s",
                "whole_over_critical_path", "span_over_critical_path", "cpu_s", "cpu_ms_per_call", "peak_rss_mb",
                "peak_in_flight")  # fmt: skip
        first = runs[0]
        result[f"latency_{latency}"] = {
            "latency_s": latency,
            **{k: first[k] for k in ("requests", "game_calls", "probe_calls", "preflight_calls", "game_steps",
                                     "shared_prefix_share_play", "shared_prefix_share_server", "play_summary_line")},
            "median": {k: med(k) for k in keys},
            "all": {k: [r[k] for r in runs] for k in keys},
            "one_after_another_s": med("one_after_another_s"),
            "logs": first["logs"],
        }  # fmt: skip
    if args.profile is not None:
        one_run(args, args.latency[0], out / "profiled", profile=args.profile)
        result["profile"] = str(args.profile)
    meds = {lat: result[f"latency_{lat}"]["median"] for lat in args.latency}
    firsts = [result[f"latency_{lat}"] for lat in args.latency]
    result["load_average_before"] = [round(x, 2) for x in load_before]
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    whole, span = meds.get(0.2, {}).get("whole_over_critical_path"), meds.get(0.05, {}).get("span_over_critical_path")
    result["targets"] = {
        "whole_command_le_1.2x_critical_path_at_0.2s": whole <= 1.2 if whole is not None else None,
        "span_le_1.1x_critical_path_at_0.05s": span <= 1.1 if span is not None else None,
        "cpu_le_2.4ms_per_call": all(m["cpu_ms_per_call"] <= 2.4 for m in meds.values()),
        "peak_rss_le_100mb": all(m["peak_rss_mb"] is not None and m["peak_rss_mb"] <= 100 for m in meds.values()),
        "server_prefix_share_ge_90pct": all((f["shared_prefix_share_server"] or 0) >= 0.9 for f in firsts),
    }  # fmt: skip
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
