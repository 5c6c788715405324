"""The ``mafialab`` command line: parses and prints; the work lives in the library."""

from mafialab.cli import _beliefshift, _export, _import, _models, _play, _report, _rules  # noqa: F401  (registers commands)
from mafialab.cli._app import app


def main() -> None:
    """Console-script entry point."""
    app()


__all__ = ["app", "main"]
