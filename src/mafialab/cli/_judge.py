"""``mafialab judge``: judge finished games with one or more judge models."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from mafialab.cli._app import console, count, fail
from mafialab.cli._options import Games, ModelString, checked
from mafialab.harness import freeze_startup_heap, unreachable
from mafialab.judge import Ensemble, JudgeError, judge_with_ensemble
from mafialab.models import get_model
from mafialab.record import JUDGE_AXES, LogFormatError, Verdict, iter_game_dirs, read_game


def _cell(stat: object) -> str:
    if stat is None:
        return "–"
    mean, spread, n = stat.mean, stat.spread, stat.n  # type: ignore[attr-defined]
    return f"{mean:.1f}" + (f" ±{spread:.0f} ({n})" if n > 1 else "")


def _print(ens: Ensemble, verdicts: list[Verdict]) -> None:
    console.print(Text(f"{ens.game_id}: {ens.headline or '(no headline)'}", style="bold"), highlight=False)
    for v in verdicts:
        cond = " [condensed transcript]" if v.condensation else ""
        state = "ok" if v.status == "ok" else f"missing ({v.error})"
        console.print(
            f"  judge {v.judge}: {state}, {count(len(v.problems), 'problem')}{cond}", highlight=False, markup=False
        )
    if not ens.players:
        return
    t = Table("player", "role", *JUDGE_AXES, title="mean ±spread (judges)")
    for p in ens.players:
        t.add_row(Text(p.name), Text(p.role), *(_cell(getattr(p, a)) for a in JUDGE_AXES))
    console.print(t)
    if ens.mvp:
        console.print(
            f"  MVP: {ens.mvp} ({ens.mvp_votes} of {count(len(ens.judges), 'judge')})", highlight=False, markup=False
        )


@checked
def judge(
    game_dir: Annotated[Path, Games()] = typer.Argument(
        ..., help="A game directory, or a directory of game directories."
    ),
    judges: Annotated[list[str], ModelString()] = typer.Option(
        ..., "--judge", "-j", help="Judge model string (provider/model[?key=value&...]); repeat for an ensemble."
    ),
    attempts: int = typer.Option(2, "--attempts", min=1, max=10, help="Calls per verdict (first try + retries)."),
) -> None:
    """Judge finished games; verdicts are appended to verdicts.jsonl beside each game.jsonl."""
    dirs = iter_game_dirs(game_dir)
    models = [get_model(j) for j in judges]

    bad = [f"{name}: {err}" for name, err in asyncio.run(unreachable(models))]
    if bad:
        fail(
            "--judge: judge backend unreachable, nothing judged (no verdicts written): "
            + "; ".join(b.rstrip(".") for b in bad)
            + ". Check the base_url, the server and the API key variable."
        )

    async def run() -> None:
        for d in dirs:
            try:
                log = read_game(d)
                verdicts, ens = await judge_with_ensemble(log, models, attempts=attempts)
            except (JudgeError, LogFormatError) as err:
                console.print(Text(f"skipped: {err}", style="yellow"), highlight=False)
                continue
            _print(ens, verdicts)

    freeze_startup_heap()  # a long driver: keep the start-up heap out of full GC passes
    asyncio.run(run())
