"""``mafialab retest``: re-ask a probe battery on frozen contexts (the test-retest floor)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mafialab.cli._app import console, count, fail
from mafialab.cli._options import AgentSpec, Battery, OneGame, OutDir, checked, game_log, refusing, seed_option


@checked
def retest(
    game: Annotated[Path, OneGame()] = typer.Argument(..., help="A probed game directory that replays."),
    points: int = typer.Option(40, "--points", "-K", min=1, help="Frozen probe points, drawn (seeded)."),
    repeats: int = typer.Option(5, "--repeats", "-R", min=2, help="Repeats of the battery per point."),
    battery: Annotated[str, Battery()] = typer.Option(
        "suspicion", "--battery", "-b", help="Probe battery (name or YAML path)."
    ),
    agents: Annotated[str | None, AgentSpec()] = typer.Option(
        None, "--agents", "-a", help="Agent spec for every seat (default: the game's)."
    ),
    temperature: float | None = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature."),
    seed: int = seed_option("Seed of the draw and of the repeats.", "-s"),
    out: Annotated[Path, OutDir()] = typer.Option(..., "--out", "-o", help="Directory for retest.jsonl."),
) -> None:
    """Re-ask a probe battery on frozen contexts: the test-retest floor of top-suspect flips.

    `mafialab report` prints the floor beside the observed flip rate (--retest OUT, or put
    OUT under the report's directory).
    """
    from mafialab.analysis import retest_floor
    from mafialab.harness import PreflightError, ReplayMismatch, freeze_startup_heap
    from mafialab.probes import logprob_retest_floor, run_retest
    from mafialab.record import PROBES_FILE, RETEST_FILE, LogFormatError, read_retests

    log = game_log(game)
    freeze_startup_heap()  # a long driver: keep the start-up heap out of full GC passes
    with refusing(LogFormatError, ReplayMismatch, ValueError, PreflightError):
        if not (log.path / PROBES_FILE).is_file():  # after the options, before any work: named as GAME
            fail(f"GAME: {game}: no {PROBES_FILE}; retest needs a probed game (mafialab play --probes)")
        n = asyncio.run(
            run_retest(
                game,
                out,
                points=points,
                repeats=repeats,
                battery=battery,
                agents=agents,
                temperature=temperature,
                seed=seed,
            )
        )
    floor = retest_floor(read_retests([out / RETEST_FILE]))
    rate = "-" if floor is None else f"{floor['flip_rate']:.3f} over {floor['pairs']} repeat pairs"
    console.print(
        f"{count(n, 'answer')} written to {escape(str(out / RETEST_FILE))}; "
        f"top-suspect flip rate between repeats {rate}"
    )
    lp = logprob_retest_floor(read_retests([out / RETEST_FILE]))
    if lp is not None:
        console.print(
            f"logprob readout: top-suspect flip rate between repeats {lp['flip_rate']:.3f} over {lp['pairs']} "
            f"repeat pairs, largest distance between repeats {lp['max_tv']:.2g} (no sampling: the floor is zero)"
        )
