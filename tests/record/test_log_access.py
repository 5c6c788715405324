"""No package but ``record`` opens a log file: every read goes through record's readers.

The check is on the source's syntax tree: outside ``src/mafialab/record/``, no ``open``,
``read_text``, ``read_bytes``, ``write_text``, ``write_bytes``, ``json.load``/``json.loads``,
``os.replace`` or ``Path.replace`` may take a path built from a log file's name (one of the
name constants, or the literal name), directly or through a variable assigned from one.
"""

from __future__ import annotations

import ast
from pathlib import Path

from mafialab.record import RECORDED_FILES

SRC = Path(__file__).resolve().parents[2] / "src" / "mafialab"

LOG_NAME_CONSTANTS = frozenset(
    {
        "GAME_FILE",
        "PROBES_FILE",
        "CALLS_FILE",
        "VERDICTS_FILE",
        "SNAPSHOTS_FILE",
        "RETEST_FILE",
        "BIFURCATION_FILE",
        "POINTS_FILE",
        "FORKS_FILE",
    }
)
LOG_NAMES = frozenset(RECORDED_FILES) | {"points.json", "fork_results.jsonl"}
FILE_METHODS = frozenset({"open", "read_text", "read_bytes", "write_text", "write_bytes", "replace"})


def _names_log_file(node: ast.AST, tainted: set[str]) -> bool:
    """Whether ``node`` mentions a log file's name, or a variable built from one."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and (sub.id in LOG_NAME_CONSTANTS or sub.id in tainted):
            return True
        if isinstance(sub, ast.Attribute) and sub.attr in LOG_NAME_CONSTANTS:
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value in LOG_NAMES:
            return True
    return False


SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _walk(scope: ast.AST) -> list[ast.AST]:
    """The nodes of ``scope`` that are not inside a function of their own (each is a scope of its own)."""
    out: list[ast.AST] = []
    todo = [scope]
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, SCOPES))
    return out


def _bound(target: ast.AST) -> list[str]:
    """The variables an assignment target binds (names, also inside tuples; not attributes or items)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _bound(elt)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return []


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        return [n for t in node.targets for n in _bound(t)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
        return _bound(node.target)
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return _bound(node.optional_vars)
    if isinstance(node, (ast.For, ast.comprehension)):
        return _bound(node.target)
    return []


def _value(node: ast.AST) -> ast.AST | None:
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
        return node.value
    if isinstance(node, ast.withitem):
        return node.context_expr
    if isinstance(node, (ast.For, ast.comprehension)):
        return node.iter
    return None


def _tainted(scope: ast.AST) -> set[str]:
    """Variables of ``scope`` that hold (or are opened from) a path built from a log file's name."""
    tainted: set[str] = set()
    changed = True
    while changed:  # a fixpoint: ``p = d / PROBES_FILE; tmp = p.with_suffix(...)``
        changed = False
        for node in _walk(scope):
            value = _value(node)
            if value is None or not _names_log_file(value, tainted):
                continue
            for name in _targets(node):
                if name not in tainted:
                    tainted.add(name)
                    changed = True
    return tainted


def _call_problem(call: ast.Call, tainted: set[str]) -> str | None:
    func = call.func
    args = [*call.args, *(k.value for k in call.keywords)]
    if isinstance(func, ast.Name) and func.id == "open" and any(_names_log_file(a, tainted) for a in args):
        return "open()"
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name) and owner.id in ("json", "os"):
            named = (owner.id, func.attr) in (("json", "load"), ("json", "loads"), ("os", "replace"), ("os", "rename"))
            if named and any(_names_log_file(a, tainted) for a in args):
                return f"{owner.id}.{func.attr}()"
            return None
        if isinstance(owner, (ast.Constant, ast.JoinedStr)):
            return None  # a string's replace
        if func.attr in FILE_METHODS and (
            _names_log_file(owner, tainted)
            or (func.attr == "replace" and any(_names_log_file(a, tainted) for a in args))
        ):
            return f".{func.attr}()"
    return None


def log_file_access(path: Path) -> list[str]:
    """``file:line: what`` for each direct read, write or replace of a log file in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, SCOPES))]
    found: set[tuple[int, str]] = set()
    for scope in scopes:
        tainted = _tainted(scope)
        for node in _walk(scope):
            if isinstance(node, ast.Call):
                what = _call_problem(node, tainted)
                if what is not None:
                    found.add((node.lineno, what))
    rel = path.relative_to(SRC.parent)
    return [f"{rel}:{line}: {what} on a path built from a log file's name" for line, what in sorted(found)]


def test_no_package_but_record_opens_a_log_file() -> None:
    outside = [p for p in sorted(SRC.rglob("*.py")) if "record" not in p.relative_to(SRC).parts[:1]]
    assert len(outside) > 100  # the whole package is scanned
    found = [msg for p in outside for msg in log_file_access(p)]
    assert found == [], "read and write logs through mafialab.record:\n" + "\n".join(found)


def test_the_check_finds_the_ways_a_log_file_is_opened() -> None:
    code = """
import json, os
from pathlib import Path
from mafialab.record import PROBES_FILE, CALLS_FILE

def a(d):
    path = Path(d) / PROBES_FILE
    with path.open("rb") as fh:
        return [json.loads(line) for line in fh]

def b(d):
    return (d / "calls.jsonl").read_text()

def c(d):
    dst = d / PROBES_FILE
    tmp = dst.with_suffix(".tmp")
    tmp.write_text("")
    tmp.replace(dst)
    os.replace(tmp, dst)

def d(x):
    return json.loads(open(x / CALLS_FILE).read())

def fine(d):
    return (d / PROBES_FILE).is_file(), (d / "notes.txt").read_text()
"""
    tree = ast.parse(code)
    got = []
    for scope in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        tainted = _tainted(scope)
        got += [(scope.name, _call_problem(n, tainted)) for n in ast.walk(scope) if isinstance(n, ast.Call)]
    found = sorted((name, what) for name, what in got if what is not None)
    assert found == [
        ("a", ".open()"),
        ("a", "json.loads()"),
        ("b", ".read_text()"),
        ("c", ".replace()"),
        ("c", ".write_text()"),
        ("c", "os.replace()"),
        ("d", "json.loads()"),
        ("d", "open()"),
    ]
