"""The suite stands alone: real recordings are optional, except under CI=true."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, require_real

pytest_plugins = ["pytester"]

QUIET = ("-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:asyncio")
"""Plugins an inner run needs not (they would read this project's settings, or warn without them)."""


def test_missing_real_data_skips_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as exc:
        require_real(tmp_path / "nope")
    assert str(tmp_path / "nope") in str(exc.value) and "MAFIALAB_SHARED" in str(exc.value)


@pytest.mark.parametrize("ci", ["true", "1"])
def test_missing_real_data_fails_under_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_real(tmp_path / "nope")


def test_present_data_is_returned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CI", "true")
    (tmp_path / "corpus").mkdir()
    assert require_real(tmp_path) == tmp_path
    labels = tmp_path / "labels.jsonl"  # a data file (the dev set's labels) counts as present too
    labels.write_text("{}\n")
    assert require_real(labels) == labels


def test_fixtures_never_point_at_shared_data():
    # our fixtures are self-contained: no file refers to the shared folder or its game ids
    for p in FIXTURES.rglob("*"):
        if p.is_file():
            text = p.read_text(encoding="utf-8")
            assert "../shared" not in text and "36594b66" not in text, p


INNER = """
from pathlib import Path

import pytest

from tests.conftest import require_real

NOPE = Path("/nonexistent-mafialab-shared")


@pytest.fixture(scope="session")
def real():
    return require_real(NOPE)


def test_in_the_body():
    require_real(NOPE / "data")


def test_through_a_fixture(real):
    pass


def test_through_the_same_cached_fixture(real):
    pass


@pytest.mark.parametrize("x", [1, 2])
def test_parametrized(x):
    require_real(NOPE / str(x))


@pytest.mark.skipif(True, reason="root writes into any folder")
def test_root_only():
    pass


def test_worded_alike():
    pytest.skip("shared data not found in the cache: another cause")


def test_passes():
    assert True
"""


def test_the_footer_counts_exactly_the_tests_the_shared_data_rule_skipped(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 5 tests skipped by require_real (in a body, through a session fixture twice, parametrized),
    # 2 skipped for other causes (one worded like the shared-data reason): pytest says 7 skipped
    monkeypatch.delenv("CI", raising=False)
    pytester.makeconftest("from tests.conftest import pytest_runtest_makereport, pytest_terminal_summary\n")
    pytester.makepyfile(test_inner=INNER)
    res = pytester.runpytest_inprocess(*QUIET, "-rs")
    res.assert_outcomes(passed=1, skipped=7)
    reasons = [ln for ln in res.outlines if ln.startswith("SKIPPED") and "nonexistent-mafialab-shared" in ln]
    assert len(reasons) == 5 and all(": shared data not found at /nonexistent-mafialab-shared" in r for r in reasons)
    assert not any("SharedDataMissing" in r for r in reasons), reasons
    (line,) = [ln for ln in res.outlines if "on the shared data skipped" in ln]
    assert line.startswith("5 tests on the shared data skipped: no real MafiaScope recordings or dev set at ")
    assert line.endswith("; 2 other skipped tests (see why with -rs)")


def test_the_footer_is_silent_without_shared_data_skips_and_singular_for_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    pytester.makeconftest("from tests.conftest import pytest_runtest_makereport, pytest_terminal_summary\n")
    pytester.makepyfile(test_a="import pytest\n\ndef test_other():\n    pytest.skip('shared data not found')\n")
    res = pytester.runpytest_inprocess(*QUIET)
    res.assert_outcomes(skipped=1)
    assert "reference data" not in res.stdout.str()
    pytester.makepyfile(
        test_a="from pathlib import Path\n\nfrom tests.conftest import require_real\n\n"
        "def test_one():\n    require_real(Path('/nonexistent-mafialab-shared'))\n"
    )
    res = pytester.runpytest_inprocess(*QUIET)
    (line,) = [ln for ln in res.outlines if "on the shared data skipped" in ln]
    assert line.startswith("1 test on the shared data skipped: ") and "other skipped" not in line
