"""No function in the package is over cyclomatic complexity 40 (radon's measure).

Functions, methods and closures all count (radon scores a closure apart from the function
around it). A function over the limit is split into named helpers, not allowed here; the
allow-list only holds functions that another branch is splitting now, and an entry that is
no longer over the limit fails the test, so the list cannot go stale.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import mafialab

radon_visitors = pytest.importorskip("radon.visitors", reason="radon is in the dev extra")

SRC = Path(mafialab.__file__).parent
LIMIT = 40

ALLOWED: frozenset[str] = frozenset()
"""Functions over the limit that are being split on other branches; remove an entry when it lands."""


def _walk(functions: list, classes: list, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(qualified name, complexity) of every function, method and closure below radon's top-level blocks."""
    for function in functions:
        name = f"{prefix}{function.name}"
        yield name, function.complexity
        yield from _walk(function.closures, [], f"{name}.")
    for cls in classes:
        yield from _walk(cls.methods, cls.inner_classes, f"{prefix}{cls.name}.")


def _blocks(code: str) -> dict[str, int]:
    """Qualified name -> complexity for one module's source (the larger score where a name repeats)."""
    visitor = radon_visitors.ComplexityVisitor.from_code(code)
    found: dict[str, int] = {}
    for name, score in _walk(visitor.functions, visitor.classes):
        found[name] = max(score, found.get(name, 0))
    return found


def _scores() -> dict[str, int]:
    """'<path under src/mafialab> <qualified name>' -> complexity, for every function of the package."""
    scores: dict[str, int] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for name, score in _blocks(path.read_text(encoding="utf-8")).items():
            scores[f"{rel} {name}"] = score
    return scores


@pytest.fixture(scope="module")
def scores() -> dict[str, int]:
    return _scores()


def test_no_function_over_the_limit(scores: dict[str, int]) -> None:
    over = {key: score for key, score in scores.items() if score > LIMIT and key not in ALLOWED}
    assert not over, f"over cyclomatic complexity {LIMIT} (split into named helpers):\n" + "\n".join(
        f"  {key}: {score}" for key, score in sorted(over.items(), key=lambda kv: -kv[1])
    )


def test_allow_list_is_not_stale(scores: dict[str, int]) -> None:
    stale = sorted(key for key in ALLOWED if scores.get(key, 0) <= LIMIT)
    assert not stale, f"no longer over complexity {LIMIT}, remove from ALLOWED:\n" + "\n".join(
        f"  {key}: {scores.get(key, 'not found')}" for key in stale
    )


def test_the_measure_counts_branches() -> None:
    """The walk reaches methods and closures and reads radon's score (a guard on the two tests above)."""
    branches = "\n".join(f"            if x == {i}:\n                return {i}" for i in range(LIMIT))
    code = f"class A:\n    def m(self, x):\n        def inner(x):\n{branches}\n            return -1\n        return inner(x)\n"
    found = _blocks(code)
    assert found["A.m.inner"] == LIMIT + 1
    assert found["A.m"] == 1
