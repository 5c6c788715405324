"""The project's own docs never point at files outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "examples").glob("*.md"))]  # fmt: skip
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
OUTSIDE = re.compile(r"\.\./shared|shared/reference|shared/data|/work/|SCHEMA\.md")


def test_links_resolve_inside_the_repository() -> None:
    bad = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            where = (doc.parent / target).resolve()
            if ROOT.resolve() not in where.parents and where != ROOT.resolve():
                bad.append(f"{doc.relative_to(ROOT)}: {target}")
    assert bad == []


def test_no_doc_sends_the_reader_to_files_outside_the_repository() -> None:
    bad = [
        f"{doc.relative_to(ROOT)}:{n}: {line.strip()[:80]}"
        for doc in DOCS
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1)
        if OUTSIDE.search(line)
    ]
    assert bad == []
