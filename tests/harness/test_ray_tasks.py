"""``ray_map`` / ``ray_run``: the one Ray helper behind every ``--ray`` command."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mafialab.harness import ray_map, ray_run
from mafialab.models import _cluster


def _square(x: int) -> int:
    return x * x


def _refuse(x: int) -> int:
    if x == 2:
        raise ValueError(f"--inject: target {x} is not a legal option")
    return x


def _limits_are_cluster_wide(_: int) -> bool:
    return _cluster.active() is not None


def test_every_task_runs_inside_the_cluster_limits(ray_local: Any) -> None:
    # the one worker entry holds cluster_limits(): a task's fn need not open its own block
    assert dict(ray_map(_limits_are_cluster_wide, [(0,), (1,)], address="local")) == {0: True, 1: True}
    assert asyncio.run(ray_run(_limits_are_cluster_wide, 0, address="local")) is True
    assert _cluster.active() is None  # the driver's own calls stay per process outside a block


def test_ray_map_yields_every_result_with_its_index(ray_local: Any) -> None:
    got = dict(ray_map(_square, [(3,), (4,), (5,)], address="local"))
    assert got == {0: 9, 1: 16, 2: 25}
    assert list(ray_map(_square, [], address="local")) == []


def test_a_task_error_is_raised_as_the_worker_raised_it(ray_local: Any) -> None:
    with pytest.raises(ValueError, match=r"^--inject: target 2 is not a legal option$"):
        dict(ray_map(_refuse, [(1,), (2,)], address="local"))

    async def go() -> list[int]:
        return list(await asyncio.gather(ray_run(_square, 6, address="local"), ray_run(_refuse, 1, address="local")))

    assert asyncio.run(go()) == [36, 1]
    with pytest.raises(ValueError, match=r"^--inject: target 2 is not a legal option$"):
        asyncio.run(ray_run(_refuse, 2, address="local"))


def _slow_first(x: int) -> int:
    if x == 0:
        import time

        time.sleep(0.5)  # the first job finishes last; its result still comes first
    return x * 10


def test_ray_map_with_a_window_reads_jobs_lazily_and_yields_in_order(ray_local: Any) -> None:
    pulled = [0]

    def jobs() -> Any:
        for i in range(7):
            pulled[0] += 1
            yield (i,)

    got = []
    for i, r in ray_map(_slow_first, jobs(), address="local", window=3, ordered=True):
        assert pulled[0] - len(got) <= 3 + 1  # at most the window in flight (+ the one read ahead)
        got.append((i, r))
    assert got == [(i, i * 10) for i in range(7)]
    assert sorted(ray_map(_square, iter([(2,), (3,)]), address="local", window=1)) == [(0, 4), (1, 9)]
    with pytest.raises(ValueError, match=r"^window: must be >= 1, got 0$"):
        list(ray_map(_square, [(1,)], address="local", window=0))
