"""Counted nouns read ``1 game`` / ``2 games`` everywhere, through one helper below every layer
(``mafialab._words``): no message of the library, the command line or the viewer writes
``game(s)``, ``step(s)``, ``branch(es)``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import mafialab
from mafialab._words import count, noun_for
from mafialab.cli import _app
from mafialab.record import none_readable_message
from mafialab.render import STYLES, EventTemplates

SRC = Path(mafialab.__file__).parent
PLURAL_IN_PARENS = re.compile(r"[A-Za-z]\((?:s|es|ies)\)")
"""``game(s)``, ``branch(es)``: a noun left for the reader to count."""
NOT_A_PLURAL = ("http(s)",)


def _messages(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module (f-string parts too), bare string statements (docstrings) left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bare = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare
    ]


def _plural_in_parens(text: str) -> list[str]:
    for ok in NOT_A_PLURAL:
        text = text.replace(ok, "")
    return PLURAL_IN_PARENS.findall(text)


@pytest.mark.parametrize(
    ("n", "noun", "plural", "want"),
    [(0, "game", None, "0 games"), (1, "game", None, "1 game"), (2, "game", None, "2 games"),
     (1, "branch", "branches", "1 branch"), (3, "branch", "branches", "3 branches"),
     (1, "model call", None, "1 model call"), (2, "model call", None, "2 model calls")],
)  # fmt: skip
def test_count_and_noun_for(n: int, noun: str, plural: str | None, want: str) -> None:
    assert count(n, noun, plural) == want
    assert noun_for(n, noun, plural) == want.split(" ", 1)[1]


def test_the_command_line_uses_the_same_helper() -> None:
    assert _app.count is count


def test_no_message_in_the_package_leaves_a_plural_in_parentheses() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}: {text!r}"
        for path in sorted(SRC.rglob("*.py"))
        for line, text in _messages(path)
        if _plural_in_parens(text)
    ]
    assert found == [], "use mafialab._words.count (or noun_for)"


def test_the_viewer_scripts_count_their_nouns_too() -> None:
    found = []
    for path in sorted(SRC.rglob("static/*.js")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            strings = re.findall(r'"((?:[^"\\]|\\.)*)"', line)
            found += [f"{path.relative_to(SRC)}:{n}: {s!r}" for s in strings if _plural_in_parens(s)]
    assert found == []


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    mod.write_text('"""A docstring about game(s) is prose."""\n\nx = f"{n} game(s) left"\ny = "http(s) URL"\n')
    assert [(line, _plural_in_parens(t)) for line, t in _messages(mod) if _plural_in_parens(t)] == [(3, ["e(s)"])]


def test_library_messages_count_one_and_many(tmp_path: Path) -> None:
    one = none_readable_message(tmp_path, [tmp_path / "g"], ["g/game.jsonl: torn"])
    assert one.startswith(f"none of the 1 game under {tmp_path} can be read: ")
    two = none_readable_message(tmp_path, [tmp_path / "g", tmp_path / "h"], ["a", "b"])
    assert two.startswith(f"none of the 2 games under {tmp_path} can be read: ")
    with pytest.raises(ValueError, match=r"prompt: unknown event kind nope \(known: "):
        EventTemplates.model_validate({s: {"kinds": {"nope": "x"} if s == "prompt" else {}} for s in STYLES})
    with pytest.raises(ValueError, match=r"prompt: unknown event kinds nope, zap \(known: "):
        EventTemplates.model_validate(
            {s: {"kinds": {"nope": "x", "zap": "y"} if s == "prompt" else {}} for s in STYLES}
        )
