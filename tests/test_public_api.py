"""The public surface: each package's ``__all__`` is what users call, and packages keep to it."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

from mafialab._api_docs import PACKAGES, public_names

SRC = Path(__file__).resolve().parents[1] / "src" / "mafialab"


# Duplicates being merged into one object by the "one of each" work (issue 10); remove a name
# here when its duplicate is gone (the test fails while a listed name is no longer a clash).
KNOWN_DUPLICATES: set[str] = set()


def test_no_name_is_exported_by_two_packages_as_different_objects() -> None:
    seen: dict[str, tuple[str, object]] = {}
    clashes = []
    for pkg, names in public_names().items():
        mod = importlib.import_module(f"mafialab.{pkg}")
        for n in names:
            obj = getattr(mod, n)
            if n in seen and seen[n][1] is not obj:
                clashes.append(n)
            seen.setdefault(n, (pkg, obj))
    assert sorted(set(clashes)) == sorted(KNOWN_DUPLICATES)


def test_every_exported_name_exists() -> None:
    for pkg, names in public_names().items():
        mod = importlib.import_module(f"mafialab.{pkg}")
        missing = [n for n in names if not hasattr(mod, n)]
        assert missing == [], f"mafialab.{pkg}.__all__ names {missing}"


def _type_checking_imports(init: Path) -> dict[str, str]:
    """Name -> absolute module of every ``from M import N [as N]`` under ``if TYPE_CHECKING:``."""
    pkg = f"mafialab.{init.parent.name}"
    out: dict[str, str] = {}
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom) and imp.module is not None:
                    module = importlib.util.resolve_name("." * imp.level + imp.module, pkg) if imp.level else imp.module
                    out |= {a.asname or a.name: module for a in imp.names}
    return out


def test_lazy_names_are_the_names_type_checkers_import() -> None:
    # a package that loads names on first use lists them twice: for type checkers and for _LAZY
    lazy_packages = []
    for init in sorted(SRC.glob("*/__init__.py")):
        mod = importlib.import_module(f"mafialab.{init.parent.name}")
        lazy = getattr(mod, "_LAZY", None)
        if lazy is None:
            continue
        lazy_packages.append(init.parent.name)
        resolved = {n: importlib.util.resolve_name(m, mod.__name__) for n, m in lazy.items()}
        assert resolved == _type_checking_imports(init), init
        for name, module in resolved.items():
            assert getattr(mod, name) is getattr(importlib.import_module(module), name)
    assert "analysis" in lazy_packages and "remote" in lazy_packages


def test_no_package_imports_another_packages_private_modules() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        own = path.relative_to(SRC).parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = []
            if isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            for m in mods:
                parts = m.split(".")
                if parts[0] == "mafialab" and len(parts) > 2 and parts[2].startswith("_") and parts[1] != own:
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno}: {m}")
    assert offenders == [], "import from the package instead (add the name to its __all__ if users need it)"


def test_beliefshift_exports_what_a_user_calls() -> None:
    names = set(public_names()["beliefshift"])
    pipeline = {"annotate_games", "freeze", "run_bench", "build_report", "write_report", "agreement"}
    assert pipeline <= names
    # 30, plus the record a results file holds, the one-observation call the Inspect task shares
    # the Ray fan-out of a run (run_bench_ray) and the dry-run's estimate (estimate_bench)
    assert len(names) <= 34
    assert "Rating" not in names and "load_games" not in names  # other packages' names


def test_testing_is_a_package_and_nothing_at_runtime_imports_it() -> None:
    assert "testing" in PACKAGES
    for path in SRC.rglob("*.py"):
        if path.relative_to(SRC).parts[0] == "testing":
            continue
        assert "mafialab.testing" not in path.read_text(encoding="utf-8"), path


def test_analysis_and_record_export_what_a_user_calls() -> None:
    import mafialab.analysis as analysis
    import mafialab.record as record

    names = public_names()
    a, r = set(names["analysis"]), set(names["record"])
    assert {"load_games", "compute_report", "report", "calibration", "vote_coupling", "export_parquet"} <= a
    assert {"read_game", "iter_game_dirs", "GameLog", "ProbeRecord", "LogFormatError", "import_mafiascope"} <= r
    assert len(a) <= 36 and len(r) <= 32  # were 80 and 64
    # helpers of the metrics' internals stay in their private modules
    assert not {"repair_json", "vote_units", "suspicion_vector", "percentile_ci"} & a
    assert not {"EVENT_ADAPTER", "MIGRATIONS", "import_game", "write_points"} & r
    # names other packages use are still importable from the package, outside __all__
    for mod, internal in (
        (analysis, ("same_id", "fmt_rate", "RoleVocabulary")),
        (record, ("probe_sort_key", "NO_VOTE")),
    ):
        for n in internal:
            assert n not in mod.__all__ and getattr(mod, n) is not None


MAX_PUBLIC_NAMES = 300
MAX_PER_PACKAGE = 35


def test_the_public_api_stays_small() -> None:
    # issue 31: what a user imports is listed in docs/api.md; names other packages share stay
    # importable (``X as X``) but are not part of it
    counts = {pkg: len(names) for pkg, names in public_names().items()}
    assert sum(counts.values()) <= MAX_PUBLIC_NAMES, counts
    assert {pkg: n for pkg, n in counts.items() if n > MAX_PER_PACKAGE} == {}
    # a user's pipeline is still public: the names the README and docs show
    names = public_names()
    assert {"play_game", "replay", "GameResult"} <= set(names["harness"])
    assert {"RuleSet", "load_rules", "WEREWOLF7"} <= set(names["rules"])
    assert {"run_fork", "sweep", "run_bifurcation"} <= set(names["counterfactual"])
