"""The remote package never imports the viewer (the web seat renders with ``mafialab.render``)."""

from __future__ import annotations

import ast
from pathlib import Path

import mafialab.remote

REMOTE = Path(mafialab.remote.__file__).parent


def test_remote_never_imports_viewer() -> None:
    found = []
    for path in sorted(REMOTE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            found += [f"{path.name}: {n}" for n in names if n.startswith("mafialab.viewer")]
    assert found == []
    assert (REMOTE / "static" / "play.js").is_file()
    assert "innerHTML" not in (REMOTE / "static" / "play.js").read_text(encoding="utf-8")
