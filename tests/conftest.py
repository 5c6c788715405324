"""Shared test configuration: --runslow, the shared data directory, the groups of parallel workers.

The suite runs on pytest-xdist workers (`-n auto` in pyproject.toml; `-n 0` runs it in one process).
Tests that would fight over the cores or start a costly process per worker run on one worker
each: `xdist_group("embedded")` (llama.cpp in process, the llama.cpp server), `xdist_group("browser")`
(headless Chromium) and every test using the `ray_local` fixture (group "ray", set here).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab._words import count
from mafialab.cli import app
from mafialab.record import GAME_FILE

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MAFIALAB_SHARED", ROOT.parent / "shared"))
MAFIASCOPE = SHARED / "data" / "mafiascope"
FIXTURES = ROOT / "tests" / "data" / "mafiascope"
"""Our own MafiaScope-format games (tests/data/mafiascope/README.md): every record kind and trap."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):  # type: ignore[no-untyped-def]
    """Skip the slow tests (without --runslow); put the tests of one xdist group on one worker."""
    for item in items:
        if "ray_local" in getattr(item, "fixturenames", ()) and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group("ray"))  # one local Ray instance, on one worker
    if not config.getoption("--runslow"):
        skip = pytest.mark.skip(reason="slow: needs --runslow")
        for item in items:
            if "slow" in item.keywords and "smoke" not in item.keywords:
                item.add_marker(skip)
    yield  # pytest-xdist's own hook (on a worker) runs here
    if getattr(config.option, "loadgroup", False):
        for item in items:
            _keep_group_in_node_id(item)


def _keep_group_in_node_id(item: pytest.Item) -> None:
    """Give ``item``'s node id the ``@<group>`` suffix by which ``--dist loadgroup`` schedules it.

    pytest-xdist 3.8 writes the suffix to ``item._nodeid``, which pytest 9.2's structured node
    ids no longer read, so every group was silently spread over all workers (two Ray instances,
    two embedded models at once; pytest-xdist issue #1386). Where xdist's own suffix took
    effect this does nothing; where neither way takes effect the run stops with an error.
    """
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    if not names:
        return
    suffix = f"@{'_'.join(sorted(names))}"  # pytest-xdist's own form
    if item.nodeid.endswith(suffix):
        return
    want = item.nodeid + suffix
    from _pytest.nodeid import NodeId  # pytest >= 9.2

    item._id = NodeId.parse(want)  # type: ignore[attr-defined]
    if item.nodeid != want:
        raise pytest.UsageError(f"cannot put {item.nodeid} in its xdist group: run with -n 0 (one process)")


def shared_data_missing(path: Path) -> str | None:
    """Why the shared data at ``path`` (a file, or a non-empty folder) cannot be used (``None``: it can)."""
    if path.is_file() or (path.is_dir() and any(path.iterdir())):
        return None
    return f"shared data not found at {path} (set MAFIALAB_SHARED, or place shared/ beside the checkout)"


class SharedDataMissing(pytest.skip.Exception):
    """The skip :func:`require_real` raises: the footer counts the tests skipped by it, by this type.

    Counting by the type (not by words in the reason) makes the footer's number exact: a skip
    for another cause (a root-only check, a missing optional extra) is never counted in, and
    a shared-data skip is never left out because its wording changed.
    """


SHARED_SKIP = ("skipped_for", "shared data")
"""The user property :func:`pytest_runtest_makereport` puts on the report of a test skipped by :func:`require_real`."""


def require_real(path: Path) -> Path:
    """``path`` when the shared data is there; else skip the test, or fail it when ``CI=true``.

    The one rule for every test on the real recordings or the dev set: CI must run them.
    The skip is a :class:`SharedDataMissing`, which the footer counts.
    """
    why = shared_data_missing(path)
    if why is None:
        return path
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"CI=true: {why}; CI must run the tests on the shared data")
    raise SharedDataMissing(msg=why)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Mark the report of a test that :func:`require_real` skipped (in a fixture or in the test body)."""
    report = yield
    if report.skipped and call.excinfo is not None and call.excinfo.errisinstance(SharedDataMissing):
        report.user_properties = [*report.user_properties, SHARED_SKIP]
        if isinstance(report.longrepr, tuple):  # the reason as pytest.skip's reads (no class name before it)
            path, line, _ = report.longrepr
            report.longrepr = (path, line, f"Skipped: {call.excinfo.value.msg}")
    return report


@pytest.fixture(scope="session", autouse=True)
def _own_cache_folder(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """``mafialab report`` caches summaries under $XDG_CACHE_HOME: the tests use their own, never the user's."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture(autouse=True)
def _progress_clock_stands_still(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's progress lines (output not a terminal) come every 5 s of its clock: in tests the
    clock stands still, so no output depends on how fast the machine is (tests that check the
    lines give it a fake clock of their own)."""
    from mafialab.cli import _app

    monkeypatch.setattr(_app, "_clock", lambda: 0.0)


@pytest.fixture(scope="session")
def mafiascope_dir() -> Path:
    """Our MafiaScope-format fixture corpora (``tests/data/mafiascope``), present in every clone.

    Same layout as the public recordings: ``en_demo``, ``ru_clean``, ``corpus_v2``,
    ``game_family_showcase``, ``traps`` (game directories) and ``configs`` (probe batteries).
    """
    return FIXTURES


@pytest.fixture(scope="session")
def mafiascope_real() -> Path:
    """The real MafiaScope recordings (``$MAFIALAB_SHARED/data/mafiascope`` or ``../shared``).

    Reference-parity tests use it: skipped with the reason when the data is absent, a failure
    when ``CI=true``.
    """
    return require_real(MAFIASCOPE)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared data folder (``$MAFIALAB_SHARED`` or ``../shared``); same rule as :func:`mafiascope_real`."""
    return require_real(SHARED)


def shared_skip_line(reports: list[pytest.TestReport]) -> str | None:
    """The footer's line for the skipped-test ``reports`` of a run (``None``: no shared-data skip).

    Tests, not reports, are counted (one per node id), those :func:`require_real` skipped by
    their mark; the other skips are counted apart, so the two numbers add up to pytest's own
    "N skipped".
    """
    ids = {r.nodeid for r in reports}
    shared = {r.nodeid for r in reports if SHARED_SKIP in getattr(r, "user_properties", ())}
    if not shared:
        return None
    other = len(ids - shared)
    rest = f"; {count(other, 'other skipped test')} (see why with -rs)" if other else ""
    return (
        f"{count(len(shared), 'test')} on the shared data skipped: no real MafiaScope recordings or dev set at "
        f"{SHARED} (set MAFIALAB_SHARED to run them; with CI=true they fail instead){rest}"
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    line = shared_skip_line(terminalreporter.stats.get("skipped", []))
    if line is not None:
        terminalreporter.write_sep("-", "reference data")
        terminalreporter.write_line(line)


@pytest.fixture(scope="module")
def game_lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """The records of one native scripted mafiascope7 game (seed 2, no probes)."""
    out = tmp_path_factory.mktemp("g")
    res = CliRunner().invoke(app, ["play", "-r", "mafiascope7", "-a", "scripted", "-s", "2", "-o", str(out)])
    assert res.exit_code == 0, res.output
    path = next(out.glob(f"*/{GAME_FILE}"))
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="session")
def ray_local():  # type: ignore[no-untyped-def]
    """One small local Ray instance for the whole session (two CPUs, no dashboard, usage stats off)."""
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'mafialab[ray]'")
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 1024 * 1024,
        log_to_driver=False,
        configure_logging=False,
    )
    yield ray
    ray.shutdown()


@pytest.fixture
def ray_by_value(ray_local, request):  # type: ignore[no-untyped-def]
    """``ray_local`` with the requesting test module shipped by value (workers do not import ``tests``)."""
    ray_local.cloudpickle.register_pickle_by_value(request.module)
    yield ray_local
    ray_local.cloudpickle.unregister_pickle_by_value(request.module)
