"""``play --base-url`` is checked as an http(s) URL; it and ``--api-key-env`` (the options only
``openai/`` models read) are never silently ignored: one warning, in one wording, from one check."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.cli._play import unused_openai_options

runner = CliRunner(env={"COLUMNS": "240", "NO_COLOR": "1"})


@pytest.mark.parametrize("url", ["notaurl", "localhost:8000/v1", "ftp://h/v1", "http://"])
def test_a_base_url_that_is_not_an_http_url_is_refused(tmp_path: Path, url: str) -> None:
    res = runner.invoke(app, ["play", "-a", "scripted", "--base-url", url, "-o", str(tmp_path / "r")])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        f"error: --base-url: expected an http(s) URL (e.g. http://localhost:8000/v1), got {url!r}"
    ]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("option", "value"), [("--base-url", "http://localhost:8000/v1"), ("--api-key-env", "MY_KEY")])
def test_an_openai_only_option_no_seat_reads_is_warned_about_once(tmp_path: Path, option: str, value: str) -> None:
    res = runner.invoke(app, ["play", "-a", "scripted", "-r", "mafiascope7", option, value, "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    warnings = [ln for ln in res.stderr.splitlines() if ln.startswith("warning: ") and "is not used" in ln]
    assert warnings == [f"warning: {option} is not used: it applies to openai/ models and no seat plays one"]


OPTS = {"base_url": "http://h/v1", "api_key_env": "K"}


@pytest.mark.parametrize(
    ("given", "want"),
    [
        (["scripted", "mock/m"], ["--base-url is not used: it applies to openai/ models and no seat plays one",
                                  "--api-key-env is not used: it applies to openai/ models and no seat plays one"]),
        (["scripted", "openai/m"], []),
        (["openai/m?api_key_env=MINE", "scripted"],
         ["--api-key-env is not used: every openai/ seat sets its own api_key_env"]),
        (["openai/m?api_key_env=MINE", "openai/n"], []),
    ],
)  # fmt: skip
def test_an_option_is_unused_only_when_no_seat_reads_it(given: list[str], want: list[str]) -> None:
    from mafialab.agents import with_model_options

    specs = [with_model_options(g, OPTS) for g in given]
    assert unused_openai_options(OPTS, given, specs) == want
    assert unused_openai_options({}, given, specs) == []
