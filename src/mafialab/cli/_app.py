"""The ``mafialab`` Typer application and shared CLI helpers."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.errors import MarkupError
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from mafialab._words import count as count  # commands import it from here; the library from mafialab._words
from mafialab._words import duration_words, noun_for
from mafialab._words import shell_word as shell_word  # commands to copy, quoted for the shell
from mafialab.cli import COMMANDS  # the package, loaded first, does not import this module

if TYPE_CHECKING:
    pass

_RANGE_ERRORS = ("greater_than_equal", "greater_than", "less_than_equal", "less_than")
"""Pydantic error types Typer raises for a number outside an option's ``min``/``max``."""


def _param_name(param: Any) -> str:
    """How the command line names ``param``: its long option (``--games``) or its argument (``DIR``)."""
    if getattr(param, "param_type_name", "") == "argument":
        return str(param.metavar or param.name or "ARGUMENT").upper().rstrip(".")
    opts = list(getattr(param, "opts", None) or [])
    return next((o for o in opts if o.startswith("--")), opts[0] if opts else str(getattr(param, "name", "?")))


def _allowed_range(param: Any) -> str:
    """``1 or more``, ``at most 9`` or ``0 to 65535`` from an option's ``min``/``max``."""
    lo, hi = getattr(param, "min", None), getattr(param, "max", None)
    if lo is not None and hi is not None:
        return f"{lo} to {hi}"
    return f"{lo} or more" if lo is not None else f"at most {hi}"


def param_error_message(err: typer.BadParameter) -> str:
    """One line for a value Click/Typer refused while parsing: ``OPTION: what is wrong``.

    A number outside the option's range reads ``--games: 0 is out of range (allowed: 1 or
    more)``; a value of the wrong type ``--games: 'x' is not valid: input should be a valid
    integer …``; a missing argument or option ``DIR: missing (see `mafialab view -h`)``.
    """
    from pydantic import ValidationError

    param = err.param
    name = _param_name(param) if param is not None else (err.param_hint or "value")
    if any(c.__name__ == "MissingParameter" for c in type(err).__mro__):  # click's, or Typer's copy of click
        where = err.ctx.command_path if err.ctx is not None else "mafialab"
        return f"{name}: missing (see `{where} -h`)"
    cause = err.__cause__
    detail = cause.errors()[0] if isinstance(cause, ValidationError) and cause.errors() else None
    bounded = param is not None and (getattr(param, "min", None) is not None or getattr(param, "max", None) is not None)
    if detail is not None and detail["type"] in _RANGE_ERRORS and bounded:
        return f"{name}: {detail['input']} is out of range (allowed: {_allowed_range(param)})"
    msg = err.message.rstrip(".")
    msg = msg[:1].lower() + msg[1:]
    return f"{name}: {detail['input']!r} is not valid: {msg}" if detail is not None else f"{name}: {msg}"


def _close(word: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` close to ``word`` (a typo of it: difflib ratio >= 0.75), else ``None``."""
    from difflib import get_close_matches

    best = get_close_matches(word, sorted(set(choices)), n=1, cutoff=0.75)
    return best[0] if best else None


_ARGV_KEY = "mafialab.argv"
"""Where the root group keeps the arguments after its own options (Click clears them before invoking)."""


def _command_of(ctx: Any) -> tuple[str, Any]:
    """The path (``mafialab fork run``) and the command object the root context's arguments name."""
    path, cmd = [ctx.command_path], ctx.command
    for tok in ctx.meta.get(_ARGV_KEY, []):
        subs = getattr(cmd, "commands", None)
        if not subs or tok not in subs:
            break
        path.append(tok)
        cmd = subs[tok]
    return " ".join(path), cmd


def usage_error_message(err: Exception, where: str = "mafialab", command: Any = None) -> str:
    """One line for a mistake in the command line's shape: an unknown option or command, an extra argument.

    ``no such option: --bogus (see `mafialab play -h`)``; a did-you-mean only when one of the
    command's own options (or commands) is close to the typo (:func:`_close`), never Click's
    loose "Possible options" guess; ``unexpected extra argument: b (see …)``; an option given
    without its value named by its long form as every other option error names it
    (``--seed: requires an argument``, also when typed as ``-s``); the like for the rest of
    Click's usage errors.

    Args:
        err: The usage error Click raised.
        where: The command's path for the help hint, when ``err`` carries no context.
        command: The command being parsed, when ``err`` carries no context (Click's parser
            raises its errors without one); its options give the long names.
    """
    import re

    ctx = getattr(err, "ctx", None)
    where = ctx.command_path if ctx is not None else where
    command = ctx.command if ctx is not None else command
    see = f"(see `{where} -h`)"
    kinds = {c.__name__ for c in type(err).__mro__}
    msg = str(getattr(err, "message", err)).strip()
    unknown = re.match(r"No such command '(.+?)'\.", msg)
    if "NoSuchOption" in kinds:
        name = str(getattr(err, "option_name", ""))
        opts = [o for p in (ctx.command.params if ctx is not None else []) for o in (*p.opts, *p.secondary_opts)]
        near = _close(name, [o for o in opts if o.startswith("-")] + (["-h", "--help"] if ctx is not None else []))
        return f"no such option: {name}" + (f" (did you mean {near}?)" if near else "") + f" {see}"
    if "NoSuchCommand" in kinds or unknown:
        name = str(getattr(err, "command_name", None) or (unknown.group(1) if unknown else ""))
        cmds = ctx.command.list_commands(ctx) if ctx is not None and hasattr(ctx.command, "list_commands") else []
        near = _close(name, cmds)
        return f"no such command: {name}" + (f" (did you mean {near}?)" if near else "") + f" {see}"
    msg = msg.rstrip(".")
    msg = msg[:1].lower() + msg[1:]
    extra = re.fullmatch(r"got unexpected extra argument(?:\(s\)|s)? \((.*)\)", msg)
    if extra:  # Typer's copy of Click says "argument(s)"; words are counted here as everywhere
        given = extra.group(1).split()
        return f"unexpected extra {noun_for(len(given), 'argument')}: {extra.group(1)} {see}"
    opt = getattr(err, "option_name", None)
    if not opt:
        return f"{msg} {see}"
    msg = msg.replace(f"option {opt!r} ", "")
    return f"{_long_name(command, opt)}: {msg} {see}"


def _long_name(command: Any, opt: str) -> str:
    """How the messages name the option typed as ``opt``: its long form (``-n`` → ``--games``) when it has one.

    ``command`` is the command whose option it is (``None``: unknown, ``opt`` is kept).
    """
    params = getattr(command, "params", None) or []
    param = next((p for p in params if opt in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))), None)
    if param is None or opt.startswith("--"):  # a long form (``--no-x`` too) is named as typed
        return opt
    return _param_name(param)


@contextmanager
def _one_line_bad_parameter(ctx: Any = None) -> Iterator[None]:
    """Turn a :class:`typer.BadParameter` or a Click usage error raised inside into :func:`fail`'s one line (code 2).

    A request for help (``NoArgsIsHelpError``: a group given no command) is left to Click.
    """
    try:
        yield
    except typer.BadParameter as err:
        fail(param_error_message(err))
    except Exception as err:
        kinds = {c.__name__ for c in type(err).__mro__}
        if "UsageError" not in kinds or "NoArgsIsHelpError" in kinds:
            raise
        where, command = _command_of(ctx) if ctx is not None else ("mafialab", None)
        fail(usage_error_message(err, where, command))


class _OneLineErrors(TyperGroup):
    """The root command group: a value Click refuses (range, type, missing) is one ``error:`` line.

    Every sub-command's options are parsed inside the root group's :meth:`invoke`, so one
    class here covers every command (no per-option handling); an unknown option or command
    and an extra argument are one line too (:func:`usage_error_message`), never Click's
    usage box.
    """

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        with _one_line_bad_parameter():
            return super().make_context(info_name, args, parent, **extra)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        rest: list[str] = super().parse_args(ctx, args)
        ctx.meta[_ARGV_KEY] = [*getattr(ctx, "_protected_args", []), *ctx.args]
        return rest

    def invoke(self, ctx: Any) -> Any:
        with _one_line_bad_parameter(ctx):
            return super().invoke(ctx)


def _build_command(name: str) -> Any:
    """The Click command of :data:`mafialab.cli.COMMANDS` ``name``, its module imported now.

    Built as ``app.command(name)(function)`` or ``app.add_typer(sub_app, name=name)`` would
    build it when the whole tree is built at once.
    """
    from importlib import import_module

    from typer.main import get_command_from_info, get_group_from_info
    from typer.models import CommandInfo, TyperInfo

    module, attr, _ = COMMANDS[name]
    obj = getattr(import_module(f"mafialab.cli.{module}"), attr)
    if isinstance(obj, typer.Typer):
        return get_group_from_info(
            TyperInfo(obj, name=name),
            pretty_exceptions_short=app.pretty_exceptions_short,
            suggest_commands=app.suggest_commands,
            rich_markup_mode=app.rich_markup_mode,
        )
    return get_command_from_info(
        CommandInfo(name=name, callback=obj),
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


class _CommandTable(MutableMapping[str, Any]):
    """The root group's commands by name: those of :data:`mafialab.cli.COMMANDS`, each built on first look-up.

    Listing the names (``in``, iteration, ``len``) builds nothing; looking one up builds that
    one (:func:`_build_command`); a command added otherwise is kept as given.
    """

    def __init__(self, built: Mapping[str, Any]) -> None:
        self.built: dict[str, Any] = dict(built)

    def __getitem__(self, name: str) -> Any:
        if name not in self.built and name in COMMANDS:
            self.built[name] = _build_command(name)
        return self.built[name]

    def __setitem__(self, name: str, cmd: Any) -> None:
        self.built[name] = cmd

    def __delitem__(self, name: str) -> None:
        del self.built[name]

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self.built

    def __iter__(self) -> Iterator[str]:
        return iter([*COMMANDS, *(n for n in self.built if n not in COMMANDS)])

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _LazyCommands(_OneLineErrors):
    """The root group: a command's module is imported when the command is first looked up.

    ``mafialab play`` loads what ``play`` needs and nothing of ``report`` or ``view``. The
    group's own help lists each command by its summary in :data:`mafialab.cli.COMMANDS`
    without loading it; any other look-up (running a command, its help, walking the tree as
    ``docs/cli.md`` is written) gets the real command.
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.commands = _CommandTable(self.commands)
        self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names only: TyperGroup's own reads every command

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        table = self.commands
        if self._listing and isinstance(table, _CommandTable) and cmd_name not in table.built and cmd_name in COMMANDS:
            return TyperCommand(name=cmd_name, help=COMMANDS[cmd_name][2])  # a row of this group's help
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    cls=_LazyCommands,
    name="mafialab",
    help="mafialab: play, probe, measure and view Mafia-family games between LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
console = Console()
err_console = Console(stderr=True)


def _print_version(value: bool) -> None:
    if value:
        from mafialab import __version__

        console.print(f"mafialab {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the mafialab version and exit."
    ),
) -> None:
    """mafialab: play, probe, measure and view Mafia-family games between LLM agents."""


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``code`` (no traceback).

    The message is one line (the terminal wraps it, Rich does not cut it into lines).
    ``message`` is plain text: square brackets in it (``mafialab[embedded]``, a path, model
    text) are printed as they are, never read as Rich markup.
    """
    close_progress_bars()
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(code)


_open_bars: list[Progress] = []

PROGRESS_EVERY_S = 5.0
"""Seconds between two plain progress lines (output not a terminal)."""

PROGRESS_HEARTBEAT_S = 30.0
"""Seconds without a plain progress line after which one is printed anyway (a long phase)."""

PROGRESS_BEAT_POLL_S = 1.0
"""Seconds of wall time between two looks of the heartbeat thread at the progress clock."""

_clock: Callable[[], float] = time.monotonic
"""The clock of the progress display (seconds); tests put a fake one here."""


class _Bar(Progress):
    """A :class:`rich.progress.Progress` that :func:`close_progress_bars` can find while it runs.

    With ``lines`` (a console), the bar is not drawn; instead, at most one plain line every
    ``every`` seconds of ``get_time`` goes to ``lines`` (see :meth:`progress_line`), when a
    task is added, advanced or updated; a heartbeat line (:meth:`heartbeat`, from a
    background thread) when ``quiet_after`` seconds passed without a line, so a long phase
    still shows the work is alive; and, when a line was printed, one last line when the bar
    stops unless it would repeat the line printed last (its elapsed time aside).

    A task added with ``phase=True`` (``add_task("seed 4: setup", total=None, phase=True)``)
    is a phase: its description is shown as it is. Any other task without a total is a
    count, shown once something is counted (``probes 12``; never a bare ``probes``).
    """

    def __init__(
        self,
        *columns: Any,
        lines: Console | None = None,
        every: float = PROGRESS_EVERY_S,
        quiet_after: float = PROGRESS_HEARTBEAT_S,
        **kw: Any,
    ):
        super().__init__(*columns, **kw)
        self.lines = lines
        self.every = every
        self.quiet_after = quiet_after
        self._started_at: float | None = None
        self._last_line: float | None = None
        self._last_text: str | None = None
        self._beat_stop = threading.Event()
        self._beat_thread: threading.Thread | None = None

    def start(self) -> None:
        self._started_at = self.get_time()
        self._last_line = None
        self._last_text = None
        super().start()
        _open_bars.append(self)
        if self.lines is not None and self._beat_thread is None:
            self._beat_stop.clear()
            self._beat_thread = threading.Thread(target=self._beat_loop, name="progress-heartbeat", daemon=True)
            self._beat_thread.start()

    def stop(self) -> None:
        if self in _open_bars:
            _open_bars.remove(self)
        self._beat_stop.set()
        if self._beat_thread is not None and self._beat_thread is not threading.current_thread():
            self._beat_thread.join()
        self._beat_thread = None
        super().stop()
        if self.lines is not None and self._last_line is not None:
            self._last_line = None  # a second stop (an error after the end) prints nothing more
            text = self.progress_line()
            said = self._says(self._last_text) if self._last_text is not None else None
            if said not in (self._says(text), self._says(self.progress_line(waiting=True))):
                self._emit(text)  # else the last line printed already says it (its elapsed time aside)

    def add_task(self, *args: Any, **kw: Any) -> TaskID:
        task = super().add_task(*args, **kw)
        self._tick()
        return task

    def update(self, task_id: TaskID, **kw: Any) -> None:
        super().update(task_id, **kw)
        self._tick()

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._tick()

    @staticmethod
    def _says(line: str) -> str:
        """A progress line without its ``progress H:MM:SS:`` head."""
        return line.split(": ", 1)[-1]

    def _emit(self, text: str) -> None:
        self._last_text = text
        assert self.lines is not None
        self.lines.print(text, highlight=False, markup=False, soft_wrap=True)

    def _tick(self) -> None:
        """Print a plain line when ``every`` seconds passed since the start or the last line.

        No line while nothing is shown but empty counts (a count task before its first
        result): the heartbeat speaks for such a wait.
        """
        if self.lines is None or self._started_at is None:
            return
        now = self.get_time()
        with self._lock:
            if now - (self._last_line if self._last_line is not None else self._started_at) < self.every:
                return
            if not self._parts():
                return
            self._last_line = now
        self._emit(self.progress_line())

    def heartbeat(self) -> bool:
        """Print the line when ``quiet_after`` seconds passed without one (since the start or the last line).

        Called every second or so by the bar's background thread; a line names the elapsed
        time and every task (a count not begun yet as ``probes (none yet)``).

        Returns:
            Whether a line was printed.
        """
        if self.lines is None or self._started_at is None:
            return False
        now = self.get_time()
        with self._lock:
            if now - (self._last_line if self._last_line is not None else self._started_at) < self.quiet_after:
                return False
            self._last_line = now
        self._emit(self.progress_line(waiting=True))
        return True

    def _beat_loop(self) -> None:
        while not self._beat_stop.wait(PROGRESS_BEAT_POLL_S):
            self.heartbeat()

    def _parts(self, *, waiting: bool = False) -> list[str]:
        """The shown tasks' words; with ``waiting``, a count not begun yet as ``NAME (none yet)``."""
        parts = []
        for t in list(self._tasks.values()):
            if not t.visible:
                continue
            try:
                name = Text.from_markup(t.description).plain
            except MarkupError:  # a description with brackets that are no markup
                name = t.description
            if t.total:
                done = int(t.completed)
                parts.append(f"{name} {done}/{int(t.total)} ({100 * t.completed / t.total:.0f} %)")
            elif t.fields.get("phase"):
                parts.append(name)
            elif t.completed:
                parts.append(f"{name} {int(t.completed)}")
            elif waiting:
                parts.append(f"{name} (none yet)")
        return parts

    def progress_line(self, *, waiting: bool = False) -> str:
        """``progress 0:01:05: games 1/3 (33 %); probes 120; seed 4: day 2 (5 alive)``.

        Elapsed time since the start, then every visible task: ``done/total (percent)`` when
        its total is known, its description when it is a phase (``phase=True``), its count
        when something is counted (a count still at zero is left out, or, with ``waiting``,
        shown as ``NAME (none yet)``).
        """
        start = self._started_at if self._started_at is not None else self.get_time()
        secs = max(0, int(self.get_time() - start))
        with self._lock:
            parts = self._parts(waiting=waiting)
        elapsed = f"{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}"
        return f"progress {elapsed}: " + ("; ".join(parts) or "starting")


def close_progress_bars() -> None:
    """Stop (and clear) every progress bar still drawn, so the next line printed starts clean.

    An error raised inside ``with progress_bar():`` used to be printed while the bar was live:
    on a terminal the message was glued to the bar's line and the bar then cleared below it,
    leaving a stray or blank line before the error. :func:`fail` calls this first.
    """
    for bar in reversed(list(_open_bars)):
        bar.stop()


def progress_bar(*, quiet: bool = False, get_time: Callable[[], float] | None = None) -> Progress:
    """The progress display every long-running command shows.

    On a terminal (stdout), a bar: description, bar, n/total, elapsed. When stdout is a pipe
    or a file (``mafialab play … > log 2>&1``), no bar (Rich's transient bar printed an empty
    line there each time it started or stopped); instead plain lines on stderr, at most one
    every :data:`PROGRESS_EVERY_S` seconds (phase, game, done/total and percent, elapsed),
    one after :data:`PROGRESS_HEARTBEAT_S` seconds without a line however long a phase lasts,
    and a last one when the work ends if any was printed (unless it repeats the line before).
    Its tasks are counted either way; ``add_task(..., phase=True)`` marks a phase (its
    description is the news), any other task without a total is a count.

    Args:
        quiet: Show nothing (a person types at this terminal).
        get_time: The clock in seconds (default: the module's ``_clock``, monotonic).
    """
    plain = not console.is_terminal
    return _Bar(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=quiet or plain,
        lines=err_console if plain and not quiet else None,
        get_time=get_time or _clock,
    )


def time_words(seconds: float | None) -> str:
    """A ``--dry-run``'s time estimate: ``time about 3 h 20 min (calls one after another)`` or ``time unknown``."""
    if seconds is None:
        return "time unknown"
    return f"time about {duration_words(seconds)} (calls one after another)"


def program() -> str:
    """How to call ``mafialab`` again in a command this one suggests, pasted in the same shell.

    ``mafialab`` when that is on ``PATH``; otherwise the path it was started by
    (``.venv/bin/mafialab`` after ``scripts/setup.sh``, where the virtual environment is not
    activated), quoted for the shell.
    """
    import shutil
    import sys

    arg0 = sys.argv[0] if sys.argv else ""
    if Path(arg0).name != "mafialab" or shutil.which("mafialab") is not None:
        return "mafialab"
    return shell_word(arg0)


_checked_outputs: list[tuple[str, Path]] = []
"""``(OPTION, PATH)`` of each output checked by ``mafialab.cli._options`` (``OutDir``, ``OutFile``) in this run."""


def output_option_for(filename: str | os.PathLike[str] | None) -> str | None:
    """The option (``--out``, ``--plots``) whose output ``filename`` is, is inside, or is a missing folder above.

    Used for an ``OSError`` no command caught (``/proc/nope: No such file or directory`` while
    creating ``--out /proc/nope/ann.jsonl``), so the error line names the option as a checked
    one does. ``None`` when ``filename`` is not one of this run's outputs.
    """
    if not filename:
        return None
    f = os.path.abspath(os.fspath(filename))
    for option, path in reversed(_checked_outputs):
        p = os.path.abspath(path)
        above = p.startswith(f.rstrip(os.sep) + os.sep) and not os.path.exists(f)  # a folder it could not make
        if f == p or f.startswith(p.rstrip(os.sep) + os.sep) or above:
            return option
    return None


def os_error_message(err: OSError, option: str = "--out") -> str:
    """An ``OSError`` raised while writing, as ``OPTION: PATH: reason`` (no ``[Errno N]``)."""
    where = f"{err.filename}: " if err.filename else ""
    return f"{option}: {where}{err.strerror or err}"


RAY_SEATS = "--ray: remote and human seats are served by this process; play them without --ray"
"""Why a remote or human seat cannot go with ``--ray`` (no worker serves the agent API)."""


def refuse_seats_on_ray(ray: str | None, specs: list[str]) -> None:
    """Fail (code 2) when ``ray`` is given and one of the agent ``specs`` is a remote or human seat."""
    from mafialab.remote import is_seat_spec

    if ray is not None and any(is_seat_spec(sp) for sp in specs):
        fail(RAY_SEATS)
