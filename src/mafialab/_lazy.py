"""Names of a package that load their module on first use (PEP 562), for packages whose modules are heavy.

A package lists ``{name: module}`` and gets its module-level ``__getattr__`` and ``__dir__``
from :func:`lazy_names`; the same names are imported under ``if TYPE_CHECKING:`` for type
checkers and the API docs (``tests/test_public_api.py`` checks that both lists agree).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(
    package: str, names: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for its lazily loaded ``names``.

    Args:
        package: The package's ``__name__`` (relative module names resolve against it).
        names: Public name -> module that defines it (absolute, or relative such as ``._api``).
        namespace: The package's ``globals()``; a name is kept there once loaded.

    Returns:
        ``(__getattr__, __dir__)``: the first imports the name's module on first use and
        raises ``AttributeError`` for a name not in ``names``; the second lists the loaded
        names and the lazy ones.
    """

    def getattr_(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *names})

    return getattr_, dir_
