"""What a cluster-wide in-flight limit costs per call: the slot keeper's round trip under Ray.

Starts a small local Ray instance (two CPUs, no dashboard) and, in one Ray task, takes and
gives back a slot of an ``InFlightLimit`` ``--calls`` times, once with per-process limits
and once inside ``cluster_limits()`` (each slot then also comes from the backend's slot
keeper actor): one call after another (the added latency of a call), and ``--parallel``
calls at a time through a limit of ``--limit`` (the keeper's throughput). Prints JSON:
microseconds per slot for each, and the overhead per call.

Usage: nice -n 15 python benchmarks/ray_limits.py [--calls 2000] [--parallel 32] [--limit 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import uuid
from contextlib import nullcontext

from mafialab.models import InFlightLimit, cluster_limits


async def _slots(limit: InFlightLimit, calls: int, parallel: int) -> float:
    """Seconds to take and give back ``calls`` slots, ``parallel`` at a time."""
    per_worker = calls // parallel

    async def worker() -> None:
        for _ in range(per_worker):
            async with limit():
                pass

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(parallel)))
    return time.perf_counter() - t0


def _measure(calls: int, parallel: int, limit: int) -> dict[str, float]:
    """Microseconds per slot (sequential and parallel), per-process and cluster-wide."""
    key = f"bench|{uuid.uuid4().hex[:8]}"
    out: dict[str, float] = {}
    for name in ("process", "cluster"):
        with cluster_limits() if name == "cluster" else nullcontext(False):
            lim = InFlightLimit(limit, key=key)
            asyncio.run(_slots(lim, 20, 1))  # warm up: the keeper is created on first use
            seq = asyncio.run(_slots(lim, calls, 1))
            par = asyncio.run(_slots(lim, calls, parallel))
        out[f"{name}_sequential_us"] = round(seq / calls * 1e6, 1)
        out[f"{name}_parallel_us"] = round(par / (calls // parallel * parallel) * 1e6, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--parallel", type=int, default=32)
    ap.add_argument("--limit", type=int, default=8)
    args = ap.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=80 * 1024 * 1024, log_to_driver=False)
    try:
        res = ray.get(ray.remote(_measure).remote(args.calls, args.parallel, args.limit))
    finally:
        ray.shutdown()
    res["overhead_per_call_ms"] = round((res["cluster_sequential_us"] - res["process_sequential_us"]) / 1000, 3)
    print(json.dumps({"calls": args.calls, "parallel": args.parallel, "limit": args.limit, **res}, indent=2))


if __name__ == "__main__":
    main()
