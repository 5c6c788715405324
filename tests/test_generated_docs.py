"""Docs generated from the code must match it: the CLI reference, the log schemas, the API list."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
from typer.testing import CliRunner

from mafialab._api_docs import api_markdown, public_names
from mafialab.agents import make_agent
from mafialab.cli import app
from mafialab.cli._docs import cli_reference_markdown
from mafialab.harness import play_game
from mafialab.record import CALLS_FILE, GAME_FILE, GameHeader, read_records
from mafialab.record._docs import GENERATED_MARKER, log_format_document, record_schemas
from mafialab.record._schema import EVENT_ADAPTER
from mafialab.rules import WEREWOLF7

DOCS = Path(__file__).resolve().parents[1] / "docs"
HINT = "is out of date: run `python scripts/gen_docs.py` and commit the result"


def test_cli_reference_matches_the_commands() -> None:
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == cli_reference_markdown(), f"docs/cli.md {HINT}"


def test_log_format_schemas_match_the_records() -> None:
    text = (DOCS / "log-format.md").read_text(encoding="utf-8")
    assert GENERATED_MARKER in text
    assert text == log_format_document(text), f"docs/log-format.md {HINT}"


def test_api_list_matches_every_all() -> None:
    assert (DOCS / "api.md").read_text(encoding="utf-8") == api_markdown(), f"docs/api.md {HINT}"


def test_every_command_is_in_the_cli_reference() -> None:
    text = cli_reference_markdown()
    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200", "NO_COLOR": "1"}).output
    top = [
        line.split()[1]
        for line in out.splitlines()
        if line.startswith("│ ") and len(line.split()) > 2 and not line.split()[1].startswith("-")
    ]
    assert {"play", "report", "view", "rules", "beliefshift"} <= set(top)
    for name in top:
        assert f"### `mafialab {name}`" in text, name


def test_the_schemas_validate_real_records(tmp_path: Path) -> None:
    agents = [make_agent("scripted", s, WEREWOLF7, 3) for s in range(WEREWOLF7.n_seats)]
    res = asyncio.run(play_game(WEREWOLF7, agents, 3, out=tmp_path))
    assert res.path is not None
    schemas = {kind: s for file, kind, s in record_schemas() if file == GAME_FILE}
    recs = read_records(res.path / GAME_FILE)
    kinds = {r["kind"] for r in recs}
    assert {"game_start", "speech", "vote", "game_end"} <= kinds
    for r in recs:
        jsonschema.validate(json.loads(json.dumps(r)), schemas[r["kind"]])
    # every event kind the engine can emit has its schema, plus the header and the other files
    assert len(schemas) == len(EVENT_ADAPTER.json_schema()["oneOf"]) + 2
    assert {f for f, _, _ in record_schemas()} >= {GAME_FILE, CALLS_FILE}
    assert schemas["game_start"] == GameHeader.model_json_schema()


def test_every_package_lists_public_names() -> None:
    names = public_names()
    assert {"engine", "rules", "agents", "models", "record", "harness", "testing"} <= set(names)
    assert all(names.values())


def test_rules_reference_matches_the_rules_model() -> None:
    from mafialab.agents._rules_docs import RULES_MARKER, rule_field_rows, rules_document
    from mafialab.rules import RuleSet, rule_fields

    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    assert RULES_MARKER in text
    assert text == rules_document(text), f"docs/rules.md {HINT}"
    # every rule field of every section has a row, with its values and a prompt sentence per value
    rows = {path: (values, said) for path, values, _, _, said in rule_field_rows()}
    for path, value, _ in rule_fields(WEREWOLF7):
        _, said = rows[path]
        key = str(value).lower() if isinstance(value, bool) else str(value)
        assert f"`{key}`:" in said or "`*`:" in said, path
    assert set(RuleSet.model_fields) <= set(rows)
    assert "`public_sequential`, `secret_simultaneous`, `nomination_runoff`" in rows["day.vote"][0]
