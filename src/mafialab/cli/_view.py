"""``mafialab view``: build the static viewer site and optionally serve it."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from mafialab.cli._app import console, fail, progress_bar
from mafialab.record import iter_game_dirs
from mafialab.viewer import SiteServer, ViewerError, build_site


def view(
    directory: Path = typer.Argument(..., metavar="DIR", help="Log directory (searched recursively for game.jsonl)."),
    out: Path = typer.Option(Path("site"), "--out", "-o", help="Site directory to write (its data/ is replaced)."),
    serve: bool = typer.Option(False, "--serve", help="Serve the site on 127.0.0.1 after building (Ctrl-C stops)."),
    port: int = typer.Option(8765, "--port", "-p", min=0, max=65535, help="Port for --serve (0 picks a free one)."),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, help="Worker processes (0: one per CPU, at most 4)."),
) -> None:
    """Build a static, offline viewer site from the game logs under DIR (open OUT/index.html)."""
    if not directory.exists():
        fail(f"DIR: {directory} does not exist")
    total = len(iter_game_dirs(directory))
    t0 = time.perf_counter()
    with progress_bar() as progress:
        task = progress.add_task("building", total=total)
        try:
            summary = build_site(directory, out, on_game=lambda _name: progress.advance(task), jobs=jobs or None)
        except ViewerError as err:
            fail(str(err))
    dt = time.perf_counter() - t0
    for path, reason in summary.skipped:
        console.print(f"[yellow]skipped[/] {path}: {reason}", highlight=False)
    for why in summary.warnings:
        console.print(f"[yellow]warning:[/] {why}", highlight=False)
    console.print(
        f"Built {len(summary.games)} game(s) into {out}/ in {dt:.1f} s "
        f"({summary.bytes_written / 1e6:.1f} MB of data). Open {(out / 'index.html').resolve().as_uri()}",
        highlight=False,
    )
    if not serve:
        return
    try:
        server = SiteServer(out, port).start()
    except OSError as err:
        fail(f"--port: cannot listen on 127.0.0.1:{port}: {err.strerror}")
    console.print(f"Serving on {server.url} (127.0.0.1 only; Ctrl-C to stop)", highlight=False)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        console.print("stopped")
    finally:
        server.stop()
