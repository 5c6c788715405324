"""``mafialab play``: play K seeded games (P at a time) and log them."""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn
from urllib.parse import parse_qsl, urlencode

import typer
from rich.markup import escape
from rich.progress import Progress, TaskID
from rich.table import Table

from mafialab._quality import NONE_FIRED
from mafialab._words import noun_for
from mafialab.agents import Agent, make_agent, parse_seat_overrides, with_model_options
from mafialab.cli._app import (
    console,
    count,
    err_console,
    fail,
    os_error_message,
    program,
    progress_bar,
    refuse_seats_on_ray,
    shell_word,
)
from mafialab.cli._options import (
    Battery,
    Finite,
    HttpUrl,
    OutDir,
    Prices,
    RuleSetId,
    check_agent_spec,
    checked,
    library_message,
    load_price_option,
    option_message,
    ray_option,
    refusing,
    seat_option,
    seed_option,
)
from mafialab.engine import Elimination, GameState, PhaseStarted
from mafialab.harness import (
    GameObserver,
    GameResult,
    PreflightError,
    RayConnectError,
    driver_limits,
    freeze_startup_heap,
    play_games,
    play_games_ray,
    preflight,
)
from mafialab.models import DEFAULT_LOCAL_MODEL, EMBEDDED_NOTE, MockExhausted, is_embedded_model, merge_summaries
from mafialab.probes import GameSetup, ProbeBattery, resolve_battery
from mafialab.record import CALLS_FILE, GAME_FILE, PROBES_FILE, LogFormatError, PriceTable
from mafialab.remote import is_seat_spec, parse_seat_spec
from mafialab.rules import RuleSet, load_rules, winner_name, winners_line

if TYPE_CHECKING:  # the agent API (FastAPI) loads only for a game with served seats
    from mafialab.remote import SeatServer, SeatTicket

_OPTION_OF = {"base_url": "--base-url", "api_key_env": "--api-key-env", "max_tokens": "--max-tokens",
              "temperature": "--temperature"}  # fmt: skip
"""The option each shared model option comes from (an error about it names that option)."""


_OPENAI_ONLY = ("base_url", "api_key_env")
"""Shared model options that only ``openai/`` models read (:func:`mafialab.agents.with_model_options`)."""


def unused_openai_options(opts: dict[str, Any], given: Sequence[str], specs: Sequence[str]) -> list[str]:
    """One warning line for each ``openai/``-only option given that no seat reads (``--base-url``, ``--api-key-env``).

    A seat reads such an option when its spec as finally built has the key and the spec as given
    did not (the option was added to it): an ``openai/`` model without its own value. The
    option is otherwise ignored, so the user is told rather than left to find out.

    Args:
        opts: The shared model options given on the command line (``{"base_url": …}``).
        given: Each seat's agent spec as given (``--agents`` or ``--seat N=…``).
        specs: Each seat's spec with the shared options added.

    Returns:
        E.g. ``["--api-key-env is not used: it applies to openai/ models and no seat plays one"]``;
        empty when every given option is read by some seat.
    """
    lines = []
    for key in _OPENAI_ONLY:
        if key not in opts:
            continue
        has = [key in dict(parse_qsl(sp.partition("?")[2])) for sp in given]
        if any(key in dict(parse_qsl(sp.partition("?")[2])) and not h for sp, h in zip(specs, has, strict=True)):
            continue
        why = (
            f"every openai/ seat sets its own {key}"
            if any(sp.startswith("openai/") for sp in given)
            else "it applies to openai/ models and no seat plays one"
        )
        lines.append(f"{_OPTION_OF[key]} is not used: {why}")
    return lines


def _seat_options(spec: str, timeout: float, probe: bool) -> str:
    """``spec`` with ``timeout``/``probe`` added when it is a remote or human seat (options given win)."""
    if not is_seat_spec(spec):
        return spec
    head, _, query = spec.partition("?")
    pairs = parse_qsl(query, keep_blank_values=True)
    given = dict(pairs)
    if len(given) < len(pairs):  # an option given twice: left for parse_seat_spec to refuse by name
        return spec
    opts = {"timeout": f"{timeout:g}", **({"probe": "1"} if probe else {}), **given}
    return f"{head}?{urlencode(opts)}"


def _advance(progress: Progress, task: TaskID, _record: object) -> None:
    progress.advance(task)


def _unprobed_seats(specs: list[str], rules: RuleSet, seed: int) -> list[int]:
    """Seats (from 0) of ``specs`` whose agents cannot answer probes (no ``probe`` method)."""
    return [s for s, sp in enumerate(specs) if not callable(getattr(make_agent(sp, s, rules, seed), "probe", None))]


class _PhaseProgress:
    """Shows the phase of every running game, and deaths as they happen."""

    def __init__(self, progress: Progress, rules: RuleSet, verbose: bool):
        self.progress = progress
        self.rules = rules
        self.verbose = verbose
        self.tasks: dict[int, Any] = {}
        self.seen: dict[int, int] = {}

    def start(self, seed: int) -> None:
        self.tasks[seed] = self.progress.add_task(f"seed {seed}: setup", total=None, phase=True)
        self.seen[seed] = 0

    def __call__(self, seed: int, state: GameState) -> None:
        new = state.events[self.seen[seed] :]
        self.seen[seed] = len(state.events)
        for ev in new:
            if isinstance(ev, PhaseStarted):
                desc = f"seed {seed}: {ev.phase} {ev.round} ({len(ev.alive)} alive)"
                self.progress.update(self.tasks[seed], description=desc)
            elif isinstance(ev, Elimination) and self.verbose:
                how = "voted out" if ev.cause == "vote" else f"{self.rules.lexicon.kill} victim"
                role = f", {ev.role}" if ev.role else ""
                self.progress.console.print(f"  seed {seed} round {ev.round}: {state.names[ev.seat]} ({how}{role})")

    def done(self, seed: int) -> None:
        self.progress.remove_task(self.tasks.pop(seed))


async def _play_many(
    rules: RuleSet,
    specs: list[str],
    seeds: list[int],
    out: Path,
    progress: Progress,
    parallel: int,
    prices: PriceTable,
    battery: ProbeBattery | None = None,
    allow_degraded: bool = False,
    seats: SeatServer | None = None,
) -> list[GameResult]:
    """:func:`mafialab.harness.play_games` with progress bars (games, probes, phase per game).

    With ``seats``, the agent API serves the games' remote and human-web seats: it starts
    before the first game and stops after the last; each game's seat tokens are printed once.
    """
    if seats is not None:
        await seats.start()
        progress.console.print(f"agent API on {seats.url} (OpenAPI schema: {seats.url}/openapi.json)")
    try:
        return await _play_all(rules, specs, seeds, out, progress, parallel, prices, battery, allow_degraded, seats)
    finally:
        if seats is not None:
            await seats.stop()


def _play_on_ray(
    rules: RuleSet,
    specs: list[str],
    seeds: list[int],
    out: Path,
    progress: Progress,
    prices: PriceTable,
    battery: ProbeBattery | None,
    allow_degraded: bool,
    address: str,
) -> list[GameResult]:
    """:func:`mafialab.harness.play_games_ray` with a progress bar of finished games."""
    freeze_startup_heap()  # the driver writes every game: keep its start-up heap out of full GC passes
    games_task = progress.add_task(f"games (ray {address})", total=len(seeds))
    return play_games_ray(
        rules,
        specs,
        seeds,
        out=out,
        address=address,
        observers=partial(GameSetup(battery).observers, rules) if battery is not None else None,
        prices=prices,
        allow_degraded=allow_degraded,
        on_done=lambda seed, res: progress.advance(games_task),
    )


def _print_ticket(progress: Progress, t: SeatTicket) -> None:
    where = f" (also in {t.token_file})" if t.token_file else ""
    progress.console.print(f"game {t.game_id} seat {t.seat} ({t.kind}): token {t.token}{where}", highlight=False)
    if t.kind == "human-web":
        progress.console.print(f"  open {t.page}", highlight=False)


async def _play_all(
    rules: RuleSet,
    specs: list[str],
    seeds: list[int],
    out: Path,
    progress: Progress,
    parallel: int,
    prices: PriceTable,
    battery: ProbeBattery | None,
    allow_degraded: bool,
    seats: SeatServer | None,
) -> list[GameResult]:
    games_task = progress.add_task("games", total=len(seeds))
    probe_task = progress.add_task("probes", total=None) if battery is not None else None
    phases = _PhaseProgress(progress, rules, verbose=len(seeds) <= 3)

    setup = GameSetup(
        battery,
        seats=seats,
        on_probe_record=partial(_advance, progress, probe_task) if probe_task is not None else None,
        on_ticket=partial(_print_ticket, progress),
    )

    def game_observers(seed: int, agents: Sequence[Agent]) -> list[GameObserver]:
        return setup.observers(rules, seed, agents, out)

    def start(seed: int) -> None:
        freeze_startup_heap()  # the agents are built: the backends' imports are done
        phases.start(seed)

    def done(seed: int, result: GameResult | None) -> None:
        phases.done(seed)
        if result is not None:
            progress.advance(games_task)

    return await play_games(
        rules,
        specs,
        seeds,
        out=out,
        parallel=parallel,
        prices=prices,
        observers=game_observers,
        on_start=start,
        on_batch=phases,
        on_done=done,
        allow_degraded=allow_degraded,
    )


MAX_FALLBACK_LINES = 20
"""Most lines of fallback causes ``play`` prints (the rest are counted; all are in calls.jsonl)."""


def fallback_lines(results: Sequence[GameResult], specs: Sequence[str]) -> list[str]:
    """One line per game, seat and cause of the decisions that fell back, for the console.

    Every kind of seat is covered the same way: a model that answered unusably, a bus worker
    that timed out, a remote or human seat that did not answer in time. The cause is the
    ``error`` of the seat's ``fallback`` call record (the same text as in ``calls.jsonl``).

    Args:
        results: The games played.
        specs: The agent spec of each seat (its options are left out of the line).

    Returns:
        ``"<game> seat <N> <name> (<agent>): <cause> (xK)"`` lines, at most
        :data:`MAX_FALLBACK_LINES`, then one line counting the rest.
    """
    lines: list[str] = []
    for r in results:
        causes = Counter((c.seat, c.error or "no cause recorded") for c in r.calls if c.status == "fallback")
        for (seat, cause), n in sorted(causes.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])):
            name = r.state.names[seat] if 0 <= seat < len(r.state.names) else "?"
            agent = specs[seat].partition("?")[0] if 0 <= seat < len(specs) else "?"
            lines.append(f"{r.game_id} seat {seat} {name} ({agent}): {cause}" + (f" (x{n})" if n > 1 else ""))
    if len(lines) > MAX_FALLBACK_LINES:
        more = len(lines) - MAX_FALLBACK_LINES
        lines = [*lines[:MAX_FALLBACK_LINES], f"... and {more} more (see calls.jsonl beside each game)"]
    return lines


def quality_summary_lines(results: Sequence[GameResult]) -> list[str]:
    """The quality signals that fired in the games played, one line each (a warning, not a gate).

    Each written game is read back through the log readers and counted by
    :func:`mafialab.analysis.game_quality` (copied speeches, constant answers, off-roster
    names; definitions in ``docs/metrics.md``), so ``play``, ``report`` and the viewer say
    the same. A game that cannot be read back is passed over (its folder is listed anyway).

    Returns:
        ``"<game id>: <signal line>"`` lines (:func:`mafialab.analysis.quality_lines`),
        at most :data:`MAX_FALLBACK_LINES`, then one line counting the rest.
    """
    from mafialab.analysis import DEFAULT, game_data, game_quality, quality_lines
    from mafialab.record import LogFormatError, read_game

    lines: list[str] = []
    for r in results:
        if r.path is None:
            continue
        try:
            g = game_data(read_game(r.path, warn=False))
        except (LogFormatError, OSError):
            continue
        lines += [f"{r.game_id}: {line}" for line in quality_lines(game_quality(g, DEFAULT))]
    if len(lines) > MAX_FALLBACK_LINES:
        more = len(lines) - MAX_FALLBACK_LINES
        lines = [*lines[:MAX_FALLBACK_LINES], f"... and {more} more (mafialab report shows them all)"]
    return lines


EMBEDDED_BATTERY = "light"
"""The built-in battery ``play`` asks when ``--probes`` is not given and every seat is an embedded model."""


def default_probes(specs: Sequence[str]) -> str:
    """The ``--probes`` value ``play`` uses when none is given.

    A game played by the embedded models alone (the main job, ``mafialab play`` with no
    options) is probed with the :data:`EMBEDDED_BATTERY` (a suspicion ranking from every alive
    seat at each round end), so its first game shows beliefs at a small cost; any other line-up
    is not probed unless asked.

    Args:
        specs: Every seat's agent spec (options allowed).

    Returns:
        :data:`EMBEDDED_BATTERY` when every seat is an embedded model
        (:func:`mafialab.models.is_embedded_model`), else ``"none"``.
    """
    return EMBEDDED_BATTERY if specs and all(is_embedded_model(sp) for sp in specs) else "none"


def _triggers(battery: ProbeBattery) -> str:
    """When ``battery`` asks, in words (``at each round end``)."""
    when = [
        *(["after each public message"] if battery.after_each_message else []),
        *(["after a seat's own night action"] if battery.night_actions else []),
        *(["at each round end"] if battery.after_each_round else []),
    ]
    return ", ".join(when) or "at no trigger"


def recorded_lines(
    results: Sequence[GameResult], specs: Sequence[str], battery: ProbeBattery | None, *, by_default: bool
) -> list[str]:
    """What a run recorded and what it gives, for the end of ``play``'s summary (two or three lines).

    The first line counts the decisions and probe answers and names their files and the
    battery; the second (probed runs) names the metrics their usable answers give
    (:func:`mafialab.analysis.coverage_at`, as ``mafialab report`` computes them: only those
    with data) and those they do not, with the probes those need or why there is no data;
    the last (a seat played by an embedded model) says what the embedded model is for
    (:data:`mafialab.models.EMBEDDED_NOTE`).

    Args:
        results: The games played.
        specs: Every seat's agent spec.
        battery: The battery asked (``None``: no probes).
        by_default: Whether the battery was chosen by :func:`default_probes` (no ``--probes``).

    Returns:
        The lines, plain text.
    """
    decisions = sum(r.decisions for r in results)
    head = f"recorded: {count(decisions, 'decision')} ({GAME_FILE}, {CALLS_FILE})"
    lines: list[str] = []
    if battery is None:
        lines.append(
            f"{head}; no belief probes (record them with --probes suspicion, default or a battery YAML; docs/probes.md)"
        )
    else:
        asked = ", ".join(p.id for p in battery.probes)
        why = " (asked because every seat is an embedded model; --probes none turns it off)" if by_default else ""
        from mafialab.analysis import coverage_at  # loads after the games (its modules only, not numpy)

        try:
            cov = coverage_at(r.path for r in results if r.path is not None)
        except (LogFormatError, OSError) as err:
            lines.append(f"{head}; the probe answers could not be read back: {err}")
        else:
            usable = sum(cov["answers"].values())
            lines.append(
                f"{head} and {count(cov['records'], 'probe answer')}, {usable} usable ({PROBES_FILE}): "
                f"the {battery.name} battery, {asked} {_triggers(battery)}{why}"
            )
            metrics = cov["metrics"].values()
            got = [m["name"] for m in metrics if m["computed"]]
            lacking = [m["name"] for m in metrics if m["missing"]]
            needs = sorted({pid for m in metrics for pid in m["missing"]})
            # answered, yet without data (belief dynamics from one ranking per seat): say why
            other = [m["why"] for m in metrics if not m["computed"] and not m["missing"]]
            line = (
                f"metrics from them: {', '.join(got)} (mafialab report); beliefs per step in mafialab view"
                if got
                else "no metric can be computed from them (no usable answer of the probes the metrics read)"
            )
            if lacking:
                line += (
                    f"; not from them: {', '.join(lacking)} (they need {' and '.join(needs)} answers: "
                    "--probes default asks them)"
                )
            for why in other:
                line += f"; {why}"
            lines.append(line)
    embedded = sorted({sp.partition("?")[0] for sp in specs if is_embedded_model(sp)})
    if embedded:
        lines.append(f"{', '.join(embedded)}: {EMBEDDED_NOTE}")
    return lines


MAX_FOLDER_LINES = 20
"""Most game folders ``play`` lists one per line (the rest are counted: every game is a folder of OUT)."""


def game_folder_lines(results: Sequence[GameResult], out: Path) -> list[str]:
    """One line per game played: its seed and its folder's whole absolute path, for the console.

    Args:
        results: The games played, in the order of their seeds.
        out: The folder the games were written under (``OUT/<game_id>/``).

    Returns:
        ``"seed <S>: <absolute folder>"`` lines, at most :data:`MAX_FOLDER_LINES`, then one
        line counting the rest and naming the folder that holds them all.
    """
    base = out.resolve()
    lines = [f"seed {r.seed}: {base / r.game_id}" for r in results]
    if len(lines) > MAX_FOLDER_LINES:
        more = len(lines) - MAX_FOLDER_LINES
        lines = [*lines[:MAX_FOLDER_LINES], f"... and {more} more, each a folder of {base}/"]
    return lines


def _game_dirs(out: Path, rules: RuleSet, specs: list[str], seeds: range, battery: ProbeBattery | None) -> list[Path]:
    """The game directories this run would write under ``out`` (ids as ``play_game`` makes them)."""
    setup = GameSetup(battery)
    return [
        out / setup.game_id(rules, sd, [make_agent(sp, s, rules, sd) for s, sp in enumerate(specs)]) for sd in seeds
    ]


def _sibling(out: Path, suffix: str) -> Path:
    """The folder beside ``out`` named ``out``'s name plus ``suffix`` (``runs`` -> ``runs-2``).

    ``--out .`` (or ``''``) has no name of its own: the current folder's is used, as an
    absolute path; for the file system's root the new folder goes inside it.
    """
    if out.name:
        return out.with_name(out.name + suffix)
    whole = out.resolve()
    return whole.with_name(whole.name + suffix) if whole.name else whole / ("runs" + suffix)


def _free_out(out: Path, rules: RuleSet, specs: list[str], seeds: range, battery: ProbeBattery | None) -> Path:
    """``out``, or the first ``OUT-2``, ``OUT-3``, … holding none of this run's games (said so).

    A recorded game is never overwritten nor appended to: a second run of the same seeds and
    line-up goes to a new directory before anything is played.
    """
    taken = [d for d in _game_dirs(out, rules, specs, seeds, battery) if (d / GAME_FILE).exists()]
    if not taken:
        return out
    k = 2
    while True:
        alt = _sibling(out, f"-{k}")
        taken_alt = (alt / GAME_FILE).exists()  # a recorded game's own folder is never a runs folder
        if not taken_alt and not any((d / GAME_FILE).exists() for d in _game_dirs(alt, rules, specs, seeds, battery)):
            break
        k += 1
    console.print(
        f"[yellow]note:[/] {escape(str(taken[0]))} already holds this game"
        + (f" (and {len(taken) - 1} more of this run)" if len(taken) > 1 else "")
        + f"; it is kept, and this run writes to {escape(str(alt))}/"
    )
    return alt


def interrupted(out: Path | None) -> NoReturn:
    """Stop ``play`` after a Ctrl-C (SIGINT): one line on stderr saying what was kept, exit code 130.

    Args:
        out: The folder the games write into once they started, or ``None`` when the
            interrupt came before (while agents, models and the preflight were being set up,
            so nothing was written).

    Raises:
        typer.Exit: Always, with code 130 (the shell's code for SIGINT).
    """
    if out is None:
        msg = "interrupted before the first game started; nothing was written"
    else:
        msg = (
            f"interrupted; every record written so far is kept under {out}/ (an unfinished game has no "
            "game_end event; replay or resume it with mafialab.harness)"
        )
    fail(msg, code=130)


def _interruptible(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with a Ctrl-C anywhere (models, preflight, games, summary) told by :func:`interrupted`."""

    @functools.wraps(command)
    def run(**kwargs: Any) -> None:
        _writing.clear()
        try:
            command(**kwargs)
        except KeyboardInterrupt:
            interrupted(_writing[-1] if _writing else None)

    return run


_writing: list[Path] = []
"""OUT of the ``play`` that runs, once its games may write into it."""


@_interruptible
@checked
def play(
    rules: Annotated[str, RuleSetId()] = typer.Option(
        "werewolf7", "--rules", "-r", help="Rule set: mafiascope7, werewolf7, arena12, or a YAML path."
    ),
    agents: str = typer.Option(
        DEFAULT_LOCAL_MODEL,
        "--agents",
        "-a",
        help="Agent spec for every seat: scripted, random, or a model string provider/model "
        "(local/smollm2 [embedded, default], local/gemma3-270m, openai/MODEL, mock/NAME).",
    ),
    seat: list[str] = typer.Option([], "--seat", help="Per-seat override N=SPEC (seats from 0); repeatable."),
    seed: int = seed_option("Seed of the first game; game i uses seed+i.", "-s"),
    games: int = typer.Option(1, "--games", "-k", min=1, help="Number of games."),
    parallel: int = typer.Option(1, "--parallel", "-j", min=1, help="Games played at the same time."),
    out: Annotated[Path, OutDir()] = typer.Option(
        Path("runs"), "--out", "-o", help="Directory for game logs (one sub-directory per game)."
    ),
    base_url: Annotated[str | None, HttpUrl()] = typer.Option(
        None, "--base-url", help="OpenAI-compatible server for openai/ models (e.g. http://localhost:8000/v1)."
    ),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Environment variable holding the API key (default OPENAI_API_KEY)."
    ),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, help="Generation cap per model call."),
    temperature: float | None = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature."),
    prices: Annotated[Path | None, Prices()] = typer.Option(
        None, "--prices", help="YAML price table: MODEL: {input: USD/M tokens, output: USD/M tokens}."
    ),
    allow_degraded: bool = typer.Option(
        False,
        "--allow-degraded",
        help="Play even when an openai/ server gives no schema-valid answer in any structured-output "
        "dialect at preflight, or a seat is a bare mock/NAME with no outputs (expect fallbacks).",
    ),
    probes: Annotated[str | None, Battery()] = typer.Option(
        None,
        "--probes",
        "-p",
        help="Private belief probes asked during each game (when: see the battery): none, default, suspicion, "
        "light, mission (mission games), logprob-suspicion (scored by log-probabilities), or a battery "
        "YAML (a MafiaScope config with an introspection: block works too). "
        "Answers go to probes.jsonl beside game.jsonl; see docs/probes.md. Not given: light (a suspicion "
        "ranking at each round end) when every seat is an embedded model "
        "(local/...), else none; --probes none turns probes off.",
        show_default=False,
    ),
    remote_port: int = typer.Option(
        8767, "--remote-port", min=0, max=65535, help="Port of the agent API for remote and human-web seats."
    ),
    remote_host: str = typer.Option(
        "127.0.0.1", "--remote-host", help="Interface of the agent API (each seat has its own token)."
    ),
    remote_timeout: Annotated[float, Finite("seconds", 0.1)] = typer.Option(
        120.0,
        "--remote-timeout",
        min=0.1,
        help="Seconds a remote or human seat has per decision; then a logged fallback plays for it.",
    ),
    probe_remote: bool = typer.Option(
        False, "--probe-remote", help="With --probes, also probe remote and human seats (synchronously)."
    ),
    ray_address: str | None = ray_option("Play the games", "the logs land in OUT as in a local run"),
) -> None:
    """Play GAMES seeded games and write their logs under OUT/<game_id>/ (game.jsonl, calls.jsonl).

    With no options: one werewolf7 game, every seat played by the embedded model.
    """
    rs = load_rules(rules)
    table = load_price_option(prices)
    opts = {k: v for k, v in (("base_url", base_url), ("api_key_env", api_key_env), ("max_tokens", max_tokens),
                              ("temperature", temperature)) if v is not None}  # fmt: skip
    asked = probes is not None and probes.strip().lower() not in ("", "none")
    specs = _seat_specs(rs, agents, seat, seed, opts, remote_timeout, probe_remote and asked)
    external = [sp for sp in specs if is_seat_spec(sp)]
    served = [sp for sp in external if parse_seat_spec(sp).kind != "human"]
    seats: SeatServer | None = None
    if served:
        from mafialab.remote import SeatServer

        seats = SeatServer(remote_host, remote_port)
    battery = resolve_battery(probes if probes is not None else default_probes(specs))
    out = _free_out(out, rs, specs, range(seed, seed + games), battery)
    if battery is not None:
        _warn_unprobed(specs, rs, seed)
    seeds = list(range(seed, seed + games))
    refuse_seats_on_ray(ray_address, specs)
    _preflight(specs, rs, seed, allow_degraded, ray_address)
    _writing.append(out)  # from here on, records may be written under OUT
    # a person types at this terminal: no live display, no progress lines
    with progress_bar(quiet=len(served) < len(external)) as progress:
        try:
            if ray_address is not None:
                results = _play_on_ray(rs, specs, seeds, out, progress, table, battery, allow_degraded, ray_address)
            else:
                results = asyncio.run(
                    _play_many(rs, specs, seeds, out, progress, parallel, table, battery, allow_degraded, seats)
                )
        except (ImportError, RayConnectError, PreflightError) as err:
            fail(str(err))
        except OSError as err:
            fail(os_error_message(err))
        except ValueError as err:
            fail(library_message(err, out))
        except MockExhausted as err:
            fail(f"{err}; records written so far are kept under {out}/")
    _print_summary(results, rs, specs, battery, out, by_default=probes is None)


def _seat_specs(
    rs: RuleSet, agents: str, seat: list[str], seed: int, opts: dict[str, Any], timeout: float, probe: bool
) -> list[str]:
    """Every seat's agent spec with the shared model options ``opts`` added, each built once to check it.

    A spec that cannot be built is refused naming its option (``--agents``, ``--seat N=SPEC``, or
    the shared option the bad value came from); a shared ``openai/`` option no seat reads is a warning.
    """
    with refusing(ValueError):
        overrides = parse_seat_overrides(seat, rs.n_seats)
    specs: list[str] = []
    for s in range(rs.n_seats):  # validate every spec (and load models) before playing, naming its option
        option = seat_option(s, overrides)
        try:
            spec = with_model_options(overrides.get(s, agents), opts)
        except ValueError as err:
            fail(option_message(option, err))
        specs.append(_seat_options(spec, timeout, probe))
        from_options = {k: _OPTION_OF[k] for k in opts if f"{k}=" not in overrides.get(s, agents)}
        check_agent_spec(specs[-1], option, rs, s, seed, from_options)
    for line in unused_openai_options(opts, [overrides.get(s, agents) for s in range(rs.n_seats)], specs):
        err_console.print(f"[yellow]warning:[/] {escape(line)}", highlight=False, soft_wrap=True)
    return specs


def _warn_unprobed(specs: list[str], rs: RuleSet, seed: int) -> None:
    """Warn, naming them, about the seats whose agents cannot answer probes (the others are probed)."""
    mute = _unprobed_seats(specs, rs, seed)
    if not mute:
        return
    kinds = ", ".join(sorted({specs[s] for s in mute}))
    which = (
        "no seat is probed"
        if len(mute) == len(specs)
        else f"{noun_for(len(mute), 'seat')} {', '.join(map(str, mute))} "
        f"{'is' if len(mute) == 1 else 'are'} not probed (the others are)"
    )
    console.print(f"[yellow]warning:[/] {kinds} agents cannot answer probes: {which}", highlight=False)


def _preflight(specs: list[str], rs: RuleSet, seed: int, allow_degraded: bool, ray_address: str | None) -> None:
    """Choose each OpenAI-compatible server's structured-output dialect once, and say which.

    On Ray these driver calls share the cluster's per-backend limits with the workers' calls.
    """
    with refusing(PreflightError, ImportError, RayConnectError), driver_limits(ray_address):
        choices = asyncio.run(
            preflight([make_agent(sp, s, rs, seed) for s, sp in enumerate(specs)], allow_degraded=allow_degraded)
        )
    for c in choices:
        console.print(("[yellow]warning:[/] " if not c.usable else "") + escape(c.line()))


def _print_lines(title: str, lines: list[str]) -> None:
    """``title`` and ``lines`` indented below it; nothing when there are no lines."""
    if lines:
        console.print(title)
        for line in lines:
            console.print(f"  {escape(line)}", highlight=False)


def _print_summary(
    results: list[GameResult],
    rs: RuleSet,
    specs: list[str],
    battery: ProbeBattery | None,
    out: Path,
    *,
    by_default: bool,
) -> None:
    """What ``play`` prints at the end: the games, fallbacks, quality, folders, calls and what to do next."""
    t = Table("seed", "winner", "rounds", "eliminations", "fallbacks")  # the game's folder: listed below
    for r in results:
        elim = "; ".join(f"r{rnd} {name} ({cause})" for rnd, name, cause in r.eliminations)
        fb = f"{r.fallbacks}/{r.decisions}" + (" DEGRADED" if r.degraded else "")
        t.add_row(str(r.seed), winner_name(r.winner, rs), str(r.rounds), elim, fb)
    console.print(t)
    _print_lines(
        "[yellow]fallbacks[/] (a seeded-random legal move played instead), by cause:", fallback_lines(results, specs)
    )
    quality = quality_summary_lines(results)
    _print_lines("[yellow]quality signals[/] (answers that parse but carry little; see docs/metrics.md):", quality)
    if not quality and any(r.path is not None for r in results):
        console.print(NONE_FIRED, style="dim", highlight=False, soft_wrap=True)  # what was checked, not a verdict
    wins = winners_line(Counter(r.winner for r in results), rs)
    console.print(f"{count(len(results), 'game')} of {rs.id}: {wins}. Game folders:", highlight=False)
    for line in game_folder_lines(results, out):
        console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)
    _print_calls(results)
    for line in recorded_lines(results, specs, battery, by_default=by_default):
        console.print(escape(line), highlight=False, soft_wrap=True)
    person = [c for r in results for c in r.person_decisions()]
    if person:
        by_person = sum(1 for c in person if c.status == "ok")
        console.print(
            f"{count(len(person), 'decision')} at human seats: {by_person} answered by the person, "
            f"{len(person) - by_person} played by the computer (fallback)",
            highlight=False,
        )
    site = _sibling(out, "-site")
    console.print(
        f"Look at the result: [bold]{escape(program())} view {escape(shell_word(out))} --out "
        f"{escape(shell_word(site))}[/] (web viewer), [bold]{escape(program())} report {escape(shell_word(out))}[/] "
        "(metrics)",
        soft_wrap=True,  # commands to copy are never cut in two (a pipe is 80 columns wide)
    )


def _print_calls(results: list[GameResult]) -> None:
    """The model calls of the games: count, usable, time, cost, degraded games, prefix reuse (none: nothing)."""
    calls = [c for r in results for c in r.model_calls()]  # a person's decisions are no model calls
    if not calls:
        return
    ok = sum(1 for c in calls if c.status in ("ok", "retried"))
    secs = sum(c.latency_ms for c in calls) / 1000
    cost = [c.cost_usd for c in calls if c.cost_usd is not None]
    degraded = sum(r.degraded for r in results)
    console.print(
        f"{count(len(calls), 'model call')}, {ok} usable, {secs:.1f} s in calls"
        + (f", cost ${sum(cost):.4f}" if cost else "")
        + (f"; {count(degraded, 'game')} degraded" if degraded else "")
    )
    summaries = [r.call_summary for r in results if r.call_summary is not None and r.call_summary.calls]
    if summaries:
        console.print("prefix reuse: " + merge_summaries(summaries).line(), highlight=False)
