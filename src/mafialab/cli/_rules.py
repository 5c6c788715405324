"""``mafialab rules``: list and show rule sets."""

from __future__ import annotations

from typing import Annotated

import typer
import yaml
from rich.table import Table

from mafialab.cli._app import console
from mafialab.cli._options import RuleSetId, checked
from mafialab.rules import BUILTIN, BUILTIN_VERSIONS, load_rules

rules_app = typer.Typer(help="List and show rule sets.", no_args_is_help=True)


@rules_app.command("list")
def rules_list() -> None:
    """List every built-in rule-set version; the one a bare name selects is marked as the default."""
    t = Table("name", "id", "seats", "roles", "description")
    for r in sorted(BUILTIN_VERSIONS.values(), key=lambda r: (r.name, r.version)):
        roles = ", ".join(f"{x.count}× {x.name}" for x in r.roles)
        default = BUILTIN.get(r.name) is r
        t.add_row(r.name, r.id + (" (default)" if default else ""), str(r.n_seats), roles, r.description)
    console.print(t)


@rules_app.command("show")
@checked
def rules_show(
    name: Annotated[str, RuleSetId()] = typer.Argument(..., help="Built-in name, versioned id, or YAML path."),
) -> None:
    """Print a rule set as YAML (usable as a starting point for your own)."""
    r = load_rules(name)
    console.print(yaml.safe_dump(r.model_dump(mode="json"), sort_keys=False, allow_unicode=True), highlight=False)
