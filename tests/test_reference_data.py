"""The suite stands alone: real recordings are optional, except under CI=true."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, require_real


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
