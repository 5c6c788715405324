"""``season run --ray``: the driver's own calls (preflight, judges) share the cluster's per-backend limits."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

import mafialab.arena._season as season_module
from mafialab.arena import load_season, resume_season, run_season
from mafialab.arena._season import _Runner
from mafialab.models import _cluster


def test_the_driver_judges_inside_the_cluster_limits_only_on_ray(
    tmp_path: Path, ray_local: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "season.yaml"
    roster = [{"agent": "scripted", "name": f"s-{i}"} for i in range(8)]
    f.write_text(yaml.safe_dump({"name": "limits", "rules": "werewolf7", "games": 1, "seed": 3, "roster": roster}))
    seen: list[tuple[str, bool]] = []

    async def run(self: _Runner) -> None:  # what the runner (games and judges) sees, without playing
        seen.append(("run", _cluster.active() is not None))

    async def preflight(*args: Any) -> dict[str, str]:  # what the integrity gate's calls see
        seen.append(("preflight", _cluster.active() is not None))
        return {}

    monkeypatch.setattr(_Runner, "run", run)
    monkeypatch.setattr(season_module, "preflight_season", preflight)
    asyncio.run(run_season(load_season(f), tmp_path / "ray", ray="local"))
    asyncio.run(run_season(load_season(f), tmp_path / "local"))
    assert seen == [("preflight", True), ("run", True), ("preflight", False), ("run", False)]
    assert _cluster.active() is None  # and the block ended with the run
    seen.clear()
    asyncio.run(resume_season(tmp_path / "ray", ray="local"))  # nothing judged yet: preflight, then the runner
    assert seen == [("preflight", True), ("run", True)] and _cluster.active() is None
