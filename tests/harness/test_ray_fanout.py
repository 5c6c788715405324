"""``play --games N --ray``: games as Ray tasks give the same logs as a local run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.harness import RAY_HINT, RayConnectError, connect_ray
from mafialab.record import GAME_FILE, PROBES_FILE, iter_game_dirs, probe_sort_key, read_records, strip_clock
from tests.helpers import unreachable_ray

runner = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})

ARGS = ["play", "-r", "werewolf7", "-a", "scripted", "-s", "4", "--games", "3", "--probes", "suspicion"]


def _logs(root: Path) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    out = {}
    for d in iter_game_dirs(root):
        probes = sorted(read_records(d / PROBES_FILE), key=probe_sort_key)
        for p in probes:
            p.pop("ts", None)
            p.pop("latency_ms", None)
        out[d.name] = (strip_clock(read_records(d / GAME_FILE)), probes)
    return out


def test_ray_games_equal_the_local_run(ray_local: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mafialab.cli._play as play_module
    from mafialab.models import _cluster

    checked: list[bool] = []  # whether the cluster's limits held the driver's preflight calls
    real_preflight = play_module.preflight

    async def preflight(*args: Any, **kwargs: Any) -> Any:
        checked.append(_cluster.active() is not None)
        return await real_preflight(*args, **kwargs)

    monkeypatch.setattr(play_module, "preflight", preflight)
    local = runner.invoke(app, [*ARGS, "-o", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    fanned_out: list[int] = []
    real = play_module.play_games_ray

    def spy(*args: Any, **kwargs: Any) -> Any:
        res = real(*args, **kwargs)
        fanned_out.append(len(res))
        return res

    monkeypatch.setattr(play_module, "play_games_ray", spy)
    fanned = runner.invoke(app, [*ARGS, "--ray", "local", "-o", str(tmp_path / "ray")])
    assert fanned.exit_code == 0, fanned.output
    assert fanned_out == [3]  # the three games went through Ray tasks
    assert checked == [False, True] and _cluster.active() is None
    a, b = _logs(tmp_path / "local"), _logs(tmp_path / "ray")
    assert len(a) == 3 and sorted(a) == sorted(b)
    for gid in a:
        assert a[gid][0] == b[gid][0], gid  # game.jsonl, clock fields aside
        assert a[gid][1] == b[gid][1] and len(a[gid][1]) > 0, gid  # probes.jsonl in key order
    # the results table is the same (winners, rounds, eliminations)
    table = [ln for ln in local.output.splitlines() if ln.startswith("│")]
    assert len(table) >= 3 and table == [ln for ln in fanned.output.splitlines() if ln.startswith("│")]


def test_without_ray_the_option_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(ImportError, match=r"pip install 'mafialab\[ray\]'"):
        connect_ray("local")
    res = runner.invoke(app, [*ARGS, "--ray", "auto", "-o", str(tmp_path / "x")])
    assert res.exit_code != 0 and RAY_HINT in res.output
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "error", [ConnectionError("Failed to connect to GCS at 10.0.0.1:6379"), ValueError("Invalid address format: x")]
)
def test_an_unreachable_cluster_is_named_as_the_ray_option(
    error: Exception, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    unreachable_ray(monkeypatch, error)
    with pytest.raises(RayConnectError, match=r"^--ray 10\.0\.0\.1:6379: cannot connect to a Ray cluster: "):
        connect_ray("10.0.0.1:6379")
    res = runner.invoke(app, [*ARGS, "--ray", "10.0.0.1:6379", "-o", str(tmp_path / "x")])
    assert res.exit_code == 2, res.output
    assert "--ray 10.0.0.1:6379: cannot connect to a Ray cluster" in res.output and str(error) in res.output
    assert "--out" not in res.output  # a connection error is not a problem with the output folder


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_address_where_nothing_listens_fails_at_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Ray retries such an address for a minute or more; the TCP check refuses it before ray.init
    import types

    inits: list[dict[str, object]] = []
    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False  # type: ignore[attr-defined]
    fake.init = lambda **kw: inits.append(kw)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", fake)
    port = _closed_port()
    with pytest.raises(RayConnectError, match=rf"^--ray 127\.0\.0\.1:{port}: .*nothing listens at 127\.0\.0\.1:{port}"):
        connect_ray(f"127.0.0.1:{port}")
    res = runner.invoke(app, [*ARGS, "--ray", f"ray://127.0.0.1:{port}", "-o", str(tmp_path / "x")])
    assert res.exit_code == 2, res.output
    assert f"nothing listens at 127.0.0.1:{port}" in res.output
    assert not (tmp_path / "x").exists()
    assert inits == []


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("auto", None),
        ("local", None),
        ("justahost", None),  # no port: Ray's own message says what is wrong
        ("host:notaport", None),
        ("bad host name with spaces.invalid:6379", "cannot resolve the host bad host name with spaces.invalid"),
    ],
)
def test_which_addresses_are_checked(address: str, reason: str | None) -> None:
    from mafialab.harness._ray import address_unreachable

    got = address_unreachable(address, timeout=1.0)
    assert (got is None) if reason is None else (got is not None and got.startswith(reason)), got
