"""``mafialab bus``: the model-bus hub and a worker that serves any model through it."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import httpx
import typer
import uvicorn

from mafialab._http import server_config
from mafialab.cli._app import console, count, fail
from mafialab.cli._options import EnvVar, checked, option_message, refusing
from mafialab.models import ModelSpecError
from mafialab.remote import LOOPBACK, BusHub, check_bind, create_bus_app, serve_jobs, served_hosts

bus_app = typer.Typer(
    help="The model bus (MafiaScope-compatible): a hub routing seats' chat calls to workers.", no_args_is_help=True
)


@bus_app.command("serve")
@checked
def bus_serve(
    host: str = typer.Option(LOOPBACK, "--host", help="Interface to bind (other than loopback only with a token)."),
    port: int = typer.Option(8766, "--port", min=0, max=65535, help="TCP port (the viewer uses 8765)."),
    token_env: Annotated[str | None, EnvVar("is not set")] = typer.Option(
        None, "--token-env", help="Environment variable holding a shared bearer token required on every request."
    ),
    timeout: float = typer.Option(
        120.0, "--timeout", min=0.1, help="Seconds a call waits for a worker when it names no timeout."
    ),
) -> None:
    """Run the hub: workers register and long-poll for jobs; games post calls to it (bus/KEY?base_url=...)."""
    token = os.environ.get(token_env) if token_env is not None else None
    with refusing(ValueError):
        check_bind(host, token, "the bus hub")
    app = create_bus_app(BusHub(token=token), default_timeout=timeout, allowed_hosts=served_hosts(host))
    console.print(f"bus hub on http://{host}:{port} (status: /status; seats use bus/KEY?base_url=http://{host}:{port})")
    uvicorn.Server(server_config(app, host, port)).run()


@bus_app.command("worker")
@checked
def bus_worker(
    hub: str = typer.Option("http://127.0.0.1:8766", "--hub", help="The hub's URL."),
    key: list[str] = typer.Option(["*"], "--key", help="Routing key served (repeatable; * serves every key)."),
    model: str = typer.Option(..., "--model", "-m", help="Model string answering the jobs (e.g. local/smollm2)."),
    token_env: Annotated[str | None, EnvVar("is not set")] = typer.Option(
        None, "--token-env", help="Environment variable holding the hub's token."
    ),
    worker_id: str | None = typer.Option(None, "--id", help="Worker id (default HOST-PID)."),
    concurrency: int = typer.Option(1, "--concurrency", min=1, help="Jobs answered at once."),
    max_jobs: int | None = typer.Option(None, "--max-jobs", min=1, help="Exit after this many jobs."),
) -> None:
    """Serve MODEL to games through HUB under routing keys KEY (until Ctrl-C)."""
    token = os.environ.get(token_env) if token_env is not None else None
    console.print(f"bus worker for {', '.join(key)} on {hub} with {model}")
    try:
        n = asyncio.run(
            serve_jobs(hub, key, model, worker_id=worker_id, token=token, concurrency=concurrency, max_jobs=max_jobs)
        )
    except (ModelSpecError, ImportError) as err:
        fail(option_message("--model", err))
    except ValueError as err:
        fail(str(err))
    except httpx.HTTPError as err:
        fail(f"--hub: could not register with {hub}: {err}")
    except KeyboardInterrupt:
        console.print("worker stopped")
        return
    console.print(f"{count(n, 'job')} answered")
