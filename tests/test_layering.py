"""Imports follow the layers: no package imports a later one, no two files import each other.

Every import counts, wherever it is written: at the top of a file, inside a function (a lazy
import still ties the two files together) or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import mafialab

SRC = Path(mafialab.__file__).parent
README = SRC.parents[1] / "README.md"

LAYERS = (
    "config",
    "rules",
    "engine",
    "render",
    "models",
    "agents",
    "record",
    "harness",
    "env",
    "probes",
    "analysis",
    "judge",
    "beliefshift",
    "arena",
    "counterfactual",
    "remote",
    "viewer",
    "cli",
)
"""The packages in the order data flows (README's layout); each may import only earlier ones."""


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the package that ``module`` imports (``from pkg import submodule`` names the submodule)."""
    own_pkg = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = own_pkg.split(".")[: len(own_pkg.split(".")) - (node.level - 1)]
                base = ".".join([*up, *([node.module] if node.module else [])])
            subs = [f"{base}.{a.name}" for a in node.names]
            targets = [s for s in subs if s in known] + ([base] if any(s not in known for s in subs) else [])
        else:
            continue
        for t in targets:
            parts = t.split(".")
            # importing a.b.c runs a and a.b first (a package this module is inside is already running)
            for i in range(1, len(parts) + 1):
                name = ".".join(parts[:i])
                if name in known and name != module and not module.startswith(name + "."):
                    out.add(name)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


@functools.cache
def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {m: _imports(m, p, known) for m, p in known.items()}


def test_no_two_files_import_each_other_even_lazily() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_lazy_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_package_imports_a_later_layer() -> None:
    upward = sorted(
        f"{m} -> {t}"
        for m, targets in _graph().items()
        for t in targets
        if _package(m) in LAYERS and _package(t) in LAYERS and LAYERS.index(_package(t)) > LAYERS.index(_package(m))
    )
    assert upward == []


def test_analysis_reads_logs_without_models_or_agents() -> None:
    """JSON repair and language data come from shared modules; call records from ``record``."""
    found = sorted(
        f"{m} -> {t}" for m, targets in _graph().items() if _package(m) == "analysis" for t in targets
        if _package(t) in ("models", "agents")
    )  # fmt: skip
    assert found == []


def test_readme_layout_names_every_package_and_shared_module() -> None:
    text = README.read_text(encoding="utf-8")
    layout = text[text.index("## Layout\n") :]
    layout = layout[: layout.index("\n## ", 1)]
    named = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", layout))
    packages = {p.parent.name for p in SRC.glob("*/__init__.py")}
    shared = {p.stem for p in SRC.glob("_*.py")} - {"__init__", "__main__"}
    assert sorted((packages | shared) - named) == []
    assert set(LAYERS) <= packages
