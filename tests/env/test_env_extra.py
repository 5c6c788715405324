"""mafialab.env imports without PettingZoo; building an environment then names the extra."""

from __future__ import annotations

import importlib
import sys

import pytest


def test_package_imports_without_pettingzoo_and_env_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pettingzoo", None)  # `import pettingzoo` now raises ImportError
    for name in [m for m in sys.modules if m.startswith("mafialab.env")]:
        monkeypatch.delitem(sys.modules, name)
    pkg = importlib.import_module("mafialab.env")
    assert pkg.Rewards().win == 1.0 and "speak" in pkg.KINDS
    with pytest.raises(ImportError, match=r"pip install 'mafialab\[env\]'"):
        pkg.env("werewolf7")
    with pytest.raises(ImportError, match=r"pip install 'mafialab\[env\]'"):
        pkg.parallel_env("werewolf7")
