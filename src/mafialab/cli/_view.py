"""``mafialab view``: build the static viewer site and optionally serve it."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mafialab.cli._app import console, count, fail, progress_bar
from mafialab.cli._options import (
    EnvVar,
    InPath,
    OutDir,
    Prices,
    cache_option,
    checked,
    load_price_option,
    no_cache_option,
    ray_option,
    refusing,
    summary_cache,
)
from mafialab.harness import RayConnectError, connect_ray
from mafialab.record import iter_game_dirs
from mafialab.viewer import HOST, SiteServer, ViewerError, build_site, check_allowed_agents, check_host, replace_notes


@checked
def view(
    directory: Annotated[Path, InPath()] = typer.Argument(
        ..., metavar="DIR", help="Log directory (searched recursively for game.jsonl)."
    ),
    out: Annotated[Path, OutDir(not_above="directory")] = typer.Option(
        Path("site"),
        "--out",
        "-o",
        help="Site directory to write (an earlier build there is updated: only new or changed games are built).",
    ),
    serve: bool = typer.Option(
        False, "--serve", help="Serve the site and its fork API (Branch button) after building (Ctrl-C stops)."
    ),
    port: int = typer.Option(8765, "--port", "-p", min=0, max=65535, help="Port for --serve (0 picks a free one)."),
    host: str = typer.Option(HOST, "--host", help="Interface for --serve; other than 127.0.0.1 only with --token-env."),
    token_env: Annotated[str | None, EnvVar()] = typer.Option(
        None, "--token-env", help="Environment variable holding the bearer token the fork API requires."
    ),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, help="Worker processes (0: one per CPU, at most 4)."),
    include_branches: bool = typer.Option(
        False,
        "--include-branches",
        help="Count forks (branches) in the corpus figures and calibration, as report --include-branches does.",
    ),
    cache: Path | None = cache_option("Folder of per-game summaries for the corpus figures, shared with report"),
    no_cache: bool = no_cache_option(),
    allow_agents: str | None = typer.Option(
        None,
        "--allow-agents",
        metavar="SPEC,...",
        help="Agent specs the Branch dialog may give beside the parent's roster, and the only ones the Arena panel "
        "may seat (a request never sets a model option).",
    ),
    max_arena_games: int = typer.Option(
        20,  # mafialab.viewer.SiteServer's default (a test checks they agree)
        "--max-arena-games",
        min=1,
        help="Most Arena-panel games in flight (launched, not finished) on this server; a launch past it gets 429.",
    ),
    prices: Annotated[Path | None, Prices()] = typer.Option(
        None,
        "--prices",
        help="YAML price table (MODEL: {input, output} USD per million tokens) for the Arena panel's estimates.",
    ),
    ray: str | None = ray_option(
        "Compute the per-game summaries behind the corpus figures",
        "workers read DIR at the same path (shared storage); the games' pages are built here",
    ),
) -> None:
    """Build a static, offline viewer site from the game logs under DIR (open OUT/index.html).

    With --serve the site is served with a fork API: a Branch button on each step starts
    background fork jobs whose branches (written to DIR/forks) appear in the page. A fork job
    plays the parent's roster, one spec of it, or a spec given in --allow-agents. The Arena
    panel (#/arena) launches batches and seasons of the --allow-agents specs only (games
    written to DIR/arena), with an estimated cost first and at most --max-arena-games games
    in flight.

    Corpus figures and calibration count what `report` counts: fork branches and degraded
    games are left out (--include-branches adds branches); every game, branches too, keeps
    its own page. They come from per-game summaries cached as report caches them (--cache);
    with --ray the summaries are made on a Ray cluster (docs/scaling.md).

    Run again over the same OUT, only new or changed games are built; the files of removed
    games are removed. The dashboard shows 200 games a page.
    """
    store = summary_cache(cache, no_cache)
    table = load_price_option(prices)
    token = os.environ.get(token_env) if token_env is not None else None
    allowed = tuple(a for a in (allow_agents or "").split(",") if a.strip())
    if serve:
        with refusing(ValueError):
            check_host(host, token)
            check_allowed_agents(allowed)
    if ray is not None:
        with refusing(ImportError, RayConnectError):  # before the site's data/ is replaced
            connect_ray(ray)
    for why in replace_notes(directory, out):
        console.print(f"[yellow]note:[/] {escape(str(why))}", highlight=False, soft_wrap=True)
    total = len(iter_game_dirs(directory))
    t0 = time.perf_counter()
    with progress_bar() as progress:
        task = progress.add_task("building", total=total)
        with refusing(ViewerError):
            summary = build_site(
                directory,
                out,
                on_game=lambda _name: progress.advance(task),
                jobs=jobs or None,
                include_branches=include_branches,
                ray=ray,
                cache=store,
            )
    dt = time.perf_counter() - t0
    for path, reason in summary.skipped:
        console.print(f"[yellow]skipped[/] {escape(str(path))}: {escape(str(reason))}", highlight=False, soft_wrap=True)
    for why in summary.warnings:
        console.print(f"[yellow]warning:[/] {escape(str(why))}", highlight=False, soft_wrap=True)
    changes = ""
    if summary.reused or summary.removed:
        changes = f" ({len(summary.built)} built, {summary.reused} unchanged" + (
            f", {summary.removed} removed)" if summary.removed else ")"
        )
    console.print(
        f"Built {count(len(summary.games), 'game')}{changes} into {escape(str(out))}/ in {dt:.1f} s "
        f"({summary.bytes_written / 1e6:.1f} MB of data). Open {(out / 'index.html').resolve().as_uri()}",
        highlight=False,
        soft_wrap=True,  # a URL is never cut in two (a pipe is 80 columns wide)
    )
    if not serve:
        return
    try:
        server = SiteServer(
            out,
            port,
            host=host,
            logs=directory,
            token=token,
            allow_agents=allowed,
            arena_games=max_arena_games,
            prices=table,
        ).start()
    except (OSError, ValueError) as err:
        fail(f"--port: cannot listen on {host}:{port}: {err}")
    where = (
        f"{host} only"
        if host == HOST
        else f"{host}, reachable from other machines: the fork API needs the bearer token from {token_env}"
    )
    console.print(
        f"Serving on {server.url} ({where}; fork API at {server.url}api/docs; Ctrl-C to stop)",
        highlight=False,
        soft_wrap=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        console.print("stopped")
    finally:
        server.stop()
