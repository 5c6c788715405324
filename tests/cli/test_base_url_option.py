"""``play --base-url`` is checked as an http(s) URL and is never silently ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


@pytest.mark.parametrize("url", ["notaurl", "localhost:8000/v1", "ftp://h/v1", "http://"])
def test_a_base_url_that_is_not_an_http_url_is_refused(tmp_path: Path, url: str) -> None:
    res = runner.invoke(app, ["play", "-a", "scripted", "--base-url", url, "-o", str(tmp_path / "r")])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        f"error: --base-url: expected an http(s) URL (e.g. http://localhost:8000/v1), got {url!r}"
    ]
    assert not (tmp_path / "r").exists()


def test_a_base_url_no_seat_reads_is_warned_about_once(tmp_path: Path) -> None:
    res = runner.invoke(
        app,
        ["play", "-a", "scripted", "-r", "mafiascope7", "--base-url", "http://localhost:8000/v1", "-o", str(tmp_path)],
    )
    assert res.exit_code == 0, res.output
    warning = "warning: --base-url is not used: it applies to openai/ models and no seat plays one"
    assert res.stderr.count(warning) == 1
