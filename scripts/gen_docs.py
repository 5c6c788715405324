"""Regenerate the docs that are generated from the code.

Usage: python scripts/gen_docs.py

- ``docs/cli.md``: every command's help, usage, arguments and options.
- ``docs/log-format.md``: the part below the generated-marker line (the JSON schema of every
  record); the hand-written part above it is kept.
- ``docs/api.md``: the public names of every package (its ``__all__``).
- ``docs/rules.md``: the part below the generated-marker line (every rule field, its values and
  prompt sentence, and the built-in rule sets); the hand-written part above it is kept.

``tests/test_generated_docs.py`` fails when a file differs from what this script writes.
"""

from __future__ import annotations

from pathlib import Path

from mafialab._api_docs import api_markdown
from mafialab.agents._rules_docs import rules_document
from mafialab.cli._docs import cli_reference_markdown
from mafialab.record._docs import log_format_document

DOCS = Path(__file__).resolve().parents[1] / "docs"


def main() -> None:
    (DOCS / "cli.md").write_text(cli_reference_markdown(), encoding="utf-8")
    path = DOCS / "log-format.md"
    path.write_text(log_format_document(path.read_text(encoding="utf-8")), encoding="utf-8")
    (DOCS / "api.md").write_text(api_markdown(), encoding="utf-8")
    path = DOCS / "rules.md"
    path.write_text(rules_document(path.read_text(encoding="utf-8")), encoding="utf-8")
    for name in ("cli.md", "log-format.md", "api.md", "rules.md"):
        print(f"wrote {DOCS / name}")


if __name__ == "__main__":
    main()
