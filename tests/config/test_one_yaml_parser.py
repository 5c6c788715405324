"""No module outside ``mafialab.config`` parses YAML: every YAML input goes through its limits.

Other modules may write YAML (``yaml.safe_dump``) but never load, compose, parse or scan it,
nor name a PyYAML loader class (``SafeLoader``, ``CSafeLoader``, ...).
"""

from __future__ import annotations

import ast
from pathlib import Path

import mafialab

SRC = Path(mafialab.__file__).parent
WRITERS = {"safe_dump", "safe_dump_all", "dump", "dump_all", "YAMLError"}
"""The PyYAML names a module outside ``config`` may use."""


def _is_yaml_name(node: ast.Attribute, aliases: set[str]) -> bool:
    """Whether ``node`` is ``yaml.NAME`` (or an alias of the module) with a name not in :data:`WRITERS`."""
    return isinstance(node.value, ast.Name) and node.value.id in aliases and node.attr not in WRITERS


def yaml_uses(path: Path, root: Path = SRC) -> list[str]:
    """``file:line: yaml.NAME`` for each PyYAML name a module uses that is not in :data:`WRITERS`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = {"yaml"}  # names bound to the yaml module (``import yaml as y``)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == "yaml" or a.name.startswith("yaml.")}
            found += [f"import {a.name}" for a in node.names if a.name.startswith("yaml.")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "yaml":
            found += [f"from {node.module} import {a.name}" for a in node.names if a.name not in WRITERS]
        elif isinstance(node, ast.Attribute) and _is_yaml_name(node, aliases):
            found.append(f"{ast.unparse(node)}")
    rel = path.relative_to(root)
    return [f"{rel}: {f}" for f in found]


def test_only_config_parses_yaml() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] != "config":
            offenders += yaml_uses(path)
    assert offenders == []


def test_the_check_finds_a_yaml_parser(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text(
        "import yaml\nimport yaml as y\nfrom yaml import CSafeLoader, safe_dump\n"
        "a = yaml.safe_load('x')\nb = y.load('x', Loader=y.SafeLoader)\nc = yaml.safe_dump(a)\n",
        encoding="utf-8",
    )
    assert sorted(yaml_uses(f, tmp_path)) == sorted(
        ["m.py: from yaml import CSafeLoader", "m.py: yaml.safe_load", "m.py: y.load", "m.py: y.SafeLoader"]
    )
    assert yaml_uses(SRC / "config" / "_load.py")  # the one parser, found by the same check
